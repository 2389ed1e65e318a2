// The CPU backend's tracker (sample grids computed once per call, the butterfly as a tree, the FMA build, the
// tracks spread over threads) equal BIT FOR BIT to the straightforward engines it replaced
// (tests/support/cpu_oracle.hpp): LK in every mode, patch side and level count, live and stored templates, with
// gain/offset guesses, on real and generated motion; the anchor fit on real patches under generated affine
// motion; whole FeatureTracker runs with 1, 2, 3 and 8 threads (anchoring, forward-backward, first-frame
// templates); two trackers on two threads agreeing with one.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "cpu_oracle.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/lk_tracker.hpp"
#include "lk_test_util.hpp"
#include "src/track/anchor_internal.hpp"
#include "src/track/lk_internal.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using detail::LkImage;

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const LkResult& got, const LkResult& want, const std::string& what) {
    EXPECT_TRUE(same_bits(got.x, want.x) && same_bits(got.y, want.y) && same_bits(got.gain, want.gain) &&
                same_bits(got.offset, want.offset) && same_bits(got.residual, want.residual) &&
                got.status == want.status && got.iterations == want.iterations)
        << what << ": got (" << got.x << ", " << got.y << ") gain " << got.gain << " offset " << got.offset
        << " residual " << got.residual << " status " << static_cast<int>(got.status) << " it " << got.iterations
        << ", want (" << want.x << ", " << want.y << ") gain " << want.gain << " offset " << want.offset
        << " residual " << want.residual << " status " << static_cast<int>(want.status) << " it " << want.iterations;
}

std::vector<LkImage> levels_of(const std::vector<HostImage>& pyr) {
    std::vector<LkImage> v;
    for (const HostImage& im : pyr) v.push_back({im.data(), im.width(), im.height(), im.pitch()});
    return v;
}

struct Pair {
    std::string name;
    HostImage ref, cur;
};

std::vector<Pair> pairs() {
    std::vector<Pair> v;
    v.push_back({"vtest 0->3", test::real_image("vtest_000.png"), test::real_image("vtest_003.png")});
    const HostImage graf = test::crop(test::real_image("graf1.png"), 100, 80, 333, 257);
    const test::FloatImage g = test::blurred(graf, 0.8);
    v.push_back({"graf1 moved (2.3, -1.6), gain 1.2 offset -9", graf, test::moved(g, 2.3, -1.6, 1.2, -9.0)});
    v.push_back({"random 161x119 moved (-4.1, 3.7)", test::random_image(161, 119, 5),
                 test::moved(test::blurred(test::random_image(161, 119, 5), 0.0), -4.1, 3.7)});
    return v;
}

std::vector<Point2f> points_of(const HostImage& img) {
    std::vector<Point2f> pts = test::textured_points(img, 21, 8, 5.0);
    pts.push_back({0.0f, 0.0f});  // corners and edges: the border rule
    pts.push_back({static_cast<float>(img.width() - 1), 3.5f});
    pts.push_back({img.width() * 0.5f, img.height() - 1.25f});
    return pts;
}

TEST(CpuOracleTrack, StoredTemplatesEqualTheRule) {
    const HostImage img = test::real_image("aloeL.png");
    const LkImage im{img.data(), img.width(), img.height(), img.pitch()};
    int stored = 0;
    for (int n : {4, 5, 8, 12, 16})
        for (float y = -2.0f; y < img.height() + 2; y += 37.3f)
            for (float x = -2.0f; x < img.width() + 2; x += 29.7f) {
                std::vector<float> got(3 * n * n, -1.0f), want(3 * n * n, -1.0f);
                const bool g = detail::extract_template_cpu(im, x, y, n, got.data());
                const bool w = detail::extract_template(im, x, y, n, want.data(), 0, 1);
                ASSERT_EQ(g, w) << n << " at " << x << ", " << y;
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                    << n << " at " << x << ", " << y;
                stored += g;
            }
    EXPECT_GT(stored, 500);
}

TEST(CpuOracleTrack, LkEqualsOracleInEveryModePatchAndLevelCount) {
    int tracked = 0, cases = 0;
    for (const Pair& p : pairs())
        for (LkMode mode : {LkMode::Translation, LkMode::TranslationOffset, LkMode::TranslationGain,
                            LkMode::TranslationGainOffset})
            for (int patch : {16, 12, 8, 5})
                for (const PyramidConfig pyr : {PyramidConfig{3, 2.0f}, PyramidConfig{1, 2.0f}, PyramidConfig{4, 1.5f}}) {
                    LkConfig cfg;
                    cfg.mode = mode;
                    cfg.patch_size = patch;
                    cfg.coarse_patch_size = patch == 16 ? 8 : patch;
                    cfg.coarse_from_level = 2;
                    cfg.pyramid = pyr;
                    std::vector<HostImage> ref, cur;
                    try {
                        ref = build_pyramid_cpu(p.ref.view(), pyr);
                        cur = build_pyramid_cpu(p.cur.view(), pyr);
                    } catch (const InvalidArgument&) {
                        continue;
                    }
                    const std::vector<Point2f> pts = points_of(p.ref);
                    std::vector<LkGuess> guesses;
                    for (std::size_t i = 0; i < pts.size(); ++i)  // varied guesses: position, gain, offset
                        guesses.push_back({pts[i].x + 0.3f * static_cast<float>(i % 5), pts[i].y - 0.2f * (i % 3),
                                           i % 4 == 1 ? 1.1f : 1.0f, i % 4 == 2 ? 5.0f : 0.0f});
                    const std::vector<LkResult> got = lk_track_cpu(ref, cur, pts, cfg, &guesses);
                    const detail::LkSetup s = detail::make_lk_setup(cfg);
                    const std::vector<LkImage> rl = levels_of(ref), cl = levels_of(cur);
                    // Stored (first-frame) templates of every level, extracted by the rule.
                    const int per_slot = detail::store_floats_per_slot(s);
                    for (std::size_t i = 0; i < pts.size(); ++i) {
                        test::oracle::LkEngine live(s, rl.data());
                        const LkResult want = detail::lk_track_one(live, s, cl.data(), pts[i].x, pts[i].y, guesses[i]);
                        const std::string what = p.name + " mode " + std::to_string(static_cast<int>(mode)) + " patch " +
                                                 std::to_string(patch) + " levels " + std::to_string(pyr.levels) +
                                                 " point " + std::to_string(i);
                        expect_same(got[i], want, what);
                        std::vector<float> store(static_cast<std::size_t>(per_slot));
                        std::int32_t valid[kMaxLevels] = {};
                        for (int k = 0; k < s.levels; ++k)
                            valid[k] = detail::extract_template(rl[static_cast<std::size_t>(k)],
                                                                detail::to_level(pts[i].x, s.scale[k]),
                                                                detail::to_level(pts[i].y, s.scale[k]), s.patch[k],
                                                                store.data() + detail::store_level_offset(s, k), 0, 1);
                        test::oracle::LkEngine so(s, store.data(), valid);
                        detail::CpuLkEngine sn(s, store.data(), valid);
                        expect_same(detail::lk_track_one(sn, s, cl.data(), 0.0f, 0.0f, guesses[i]),
                                    detail::lk_track_one(so, s, cl.data(), 0.0f, 0.0f, guesses[i]), what + " stored");
                        tracked += want.status == TrackStatus::Tracked;
                        ++cases;
                    }
                }
    EXPECT_GT(cases, 1000);
    EXPECT_GT(tracked, cases / 4);  // real tracking, not only lost points
}

TEST(CpuOracleTrack, AnchorEqualsOracleUnderAffineMotion) {
    const HostImage first = test::crop(test::real_image("graf1.png"), 200, 150, 201, 163);
    const test::FloatImage g = test::blurred(first, 0.7);
    int fitted = 0, cases = 0;
    for (const float gain : {1.0f, 1.25f})
        for (const double dx : {0.0, 1.7, -3.2}) {
            const HostImage cur = test::moved(g, dx, 0.6 * dx, gain, gain == 1.0f ? 0.0 : -12.0);
            const LkImage cl{cur.data(), cur.width(), cur.height(), cur.pitch()};
            const LkImage fl{first.data(), first.width(), first.height(), first.pitch()};
            for (LkMode mode : {LkMode::Translation, LkMode::TranslationGainOffset, LkMode::TranslationOffset})
                for (int patch : {16, 8, 12}) {
                    TrackerConfig cfg;
                    cfg.lk.mode = mode;
                    cfg.lk.patch_size = patch;
                    const detail::AnchorSetup s = detail::make_anchor_setup(cfg);
                    for (const Point2f& p : points_of(first)) {
                        std::vector<float> tmpl(3 * patch * patch);
                        if (!detail::extract_template(fl, p.x, p.y, patch, tmpl.data(), 0, 1)) continue;
                        detail::AnchorState st;
                        st.x = p.x + static_cast<float>(dx) + 0.4f;
                        st.y = p.y + static_cast<float>(0.6 * dx) - 0.3f;
                        st.a01 = 0.01f;
                        test::oracle::AnchorEngine eo(s, tmpl.data());
                        detail::CpuAnchorEngine en(s, tmpl.data());
                        const detail::AnchorPrep prep_want = detail::anchor_prepare(eo, s);
                        const detail::AnchorPrep prep_got = detail::anchor_prepare(en, s);
                        ASSERT_EQ(std::memcmp(&prep_got, &prep_want, sizeof prep_got), 0);
                        const detail::AnchorResult want = detail::anchor_refine_one(eo, s, cl, st, prep_want);
                        const detail::AnchorResult got = detail::anchor_refine_one(en, s, cl, st, prep_got);
                        ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
                            << "point " << p.x << ", " << p.y << " patch " << patch << " mode " << static_cast<int>(mode);
                        fitted += want.status == TrackStatus::Tracked;
                        ++cases;
                    }
                }
        }
    EXPECT_GT(cases, 1000);
    EXPECT_GT(fitted, cases / 4);
}

bool same_tracks(const std::vector<Track>& a, const std::vector<Track>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const Track &p = a[i], &q = b[i];
        if (p.id != q.id || !same_bits(p.x, q.x) || !same_bits(p.y, q.y) || !same_bits(p.prev_x, q.prev_x) ||
            !same_bits(p.prev_y, q.prev_y) || p.age != q.age || !same_bits(p.gain, q.gain) ||
            !same_bits(p.offset, q.offset) || !same_bits(p.residual, q.residual) || p.status != q.status ||
            !same_bits(p.score, q.score) || p.level != q.level)
            return false;
    }
    return true;
}

std::vector<HostImage> sequence(int frames) {
    std::vector<HostImage> v;
    const std::vector<std::string> names = test::sequence_frame_names();
    for (int i = 0; i < frames && i < static_cast<int>(names.size()); ++i) v.push_back(test::real_image(names[static_cast<std::size_t>(i)]));
    return v;
}

std::vector<TrackerConfig> tracker_configs() {
    std::vector<TrackerConfig> v(4);
    v[1].anchor.enabled = false;
    v[2].forward_backward = true;
    v[2].lk.template_source = TemplateSource::FirstFrame;
    v[2].target_features = 300;
    v[3].lk.mode = LkMode::Translation;
    v[3].anchor.reanchor = false;
    v[3].lk.pyramid = {4, 1.6f};
    v[3].detector.fast.score = ScoreType::Harris;
    return v;
}

TEST(CpuOracleTrack, TrackerIsTheSameWithAnyThreadCount) {
    const std::vector<HostImage> seq = sequence(16);
    ASSERT_GE(seq.size(), 10u);
    long long live = 0;
    for (const TrackerConfig& base : tracker_configs()) {
        std::vector<FeatureTracker> trackers;
        for (int threads : {1, 2, 3, 8}) {
            TrackerConfig c = base;
            c.threads = threads;
            trackers.emplace_back(seq[0].width(), seq[0].height(), c, Backend::Cpu);
        }
        for (std::size_t f = 0; f < seq.size(); ++f) {
            const std::vector<Track> want = trackers[0].track(seq[f].view());
            const std::vector<Track> lost = trackers[0].lost_tracks();
            for (std::size_t t = 1; t < trackers.size(); ++t) {
                ASSERT_TRUE(same_tracks(trackers[t].track(seq[f].view()), want))
                    << "frame " << f << " threads " << trackers[t].config().threads;
                ASSERT_TRUE(same_tracks(trackers[t].lost_tracks(), lost)) << "frame " << f;
                ASSERT_EQ(trackers[t].redetected(), trackers[0].redetected());
            }
            live += static_cast<long long>(want.size());
        }
    }
    EXPECT_GT(live, 4 * 16 * 100);
}

TEST(CpuOracleTrack, TwoTrackersOnTwoThreadsAgreeWithOne) {
    const std::vector<HostImage> seq = sequence(12);
    ASSERT_GE(seq.size(), 10u);
    TrackerConfig c;
    c.threads = 1;
    FeatureTracker alone(seq[0].width(), seq[0].height(), c, Backend::Cpu);
    std::vector<std::vector<Track>> want;
    for (const HostImage& f : seq) want.push_back(alone.track(f.view()));
    std::vector<std::vector<Track>> got[2];
    std::thread workers[2];
    for (int w = 0; w < 2; ++w)
        workers[w] = std::thread([&, w] {
            TrackerConfig cw = c;
            cw.threads = w == 0 ? 2 : 0;  // each its own pool, of different sizes
            FeatureTracker t(seq[0].width(), seq[0].height(), cw, Backend::Cpu);
            for (const HostImage& f : seq) got[w].push_back(t.track(f.view()));
        });
    for (std::thread& t : workers) t.join();
    for (int w = 0; w < 2; ++w) {
        ASSERT_EQ(got[w].size(), want.size());
        for (std::size_t f = 0; f < want.size(); ++f) EXPECT_TRUE(same_tracks(got[w][f], want[f])) << "tracker " << w << " frame " << f;
    }
    EXPECT_GT(want.back().size(), 100u);
}

TEST(CpuOracleTrack, ThreadsSettingIsValidated) {
    TrackerConfig c;
    c.threads = -1;
    EXPECT_THROW(validate(c), InvalidArgument);
    c.threads = 257;
    EXPECT_THROW(validate(c), InvalidArgument);
    c.threads = 256;
    EXPECT_NO_THROW(validate(c));
}

}  // namespace
}  // namespace kestrel
