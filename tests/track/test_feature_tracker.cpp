// FeatureTracker (CPU backend; the CUDA backend against it in test_feature_tracker_cuda.cpp): accuracy
// on a real image moved along a known path, track bookkeeping and the re-detection policy on a real
// sequence, predictions, the forward-backward check, and every validation.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "kestrel/feature_tracker.hpp"
#include "lk_test_util.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TrackerConfig base_config() {
    TrackerConfig c;
    c.target_features = 150;
    c.detector.fast.threshold = 20;
    return c;
}

// Frames of a real image moved along a known path (cumulative), with optional illumination drift.
struct Path {
    test::FloatImage g;
    std::vector<double> dx, dy, gain, offset;
    HostImage frame(std::size_t i) const { return test::moved(g, dx[i], dy[i], gain[i], offset[i]); }
};

Path make_path(const char* name, int frames, double vx, double vy, bool illumination) {
    Path p{test::blurred(test::real_image(name), 1.0), {}, {}, {}, {}};
    for (int i = 0; i < frames; ++i) {
        p.dx.push_back(vx * i + 0.3 * std::sin(0.7 * i));
        p.dy.push_back(vy * i + 0.2 * std::cos(0.5 * i));
        p.gain.push_back(illumination ? 1.0 + 0.04 * i : 1.0);
        p.offset.push_back(illumination ? -2.0 * i : 0.0);
    }
    return p;
}

// Tracks every frame of the path; checks every live track against the true motion since its birth.
void follow_path(const Path& p, TrackerConfig cfg, double max_median_error, const std::string& what) {
    FeatureTracker tracker(p.g.width, p.g.height, cfg, Backend::Cpu);
    std::map<std::uint64_t, std::pair<Point2f, std::size_t>> birth;  // id -> (position, frame)
    for (std::size_t f = 0; f < p.dx.size(); ++f) {
        const HostImage img = p.frame(f);
        const auto& tracks = tracker.track(img.view());
        ASSERT_FALSE(tracks.empty()) << what << " frame " << f;
        std::vector<double> err;
        for (const Track& t : tracks) {
            auto it = birth.find(t.id);
            if (it == birth.end()) {
                EXPECT_EQ(t.age, 0) << what;
                birth[t.id] = {{t.x, t.y}, f};
                continue;
            }
            const auto [p0, f0] = it->second;
            EXPECT_EQ(static_cast<std::size_t>(t.age), f - f0) << what;
            const double ex = t.x - (p0.x + (p.dx[f] - p.dx[f0])), ey = t.y - (p0.y + (p.dy[f] - p.dy[f0]));
            err.push_back(std::hypot(ex, ey));
        }
        if (f > 0) {
            ASSERT_FALSE(err.empty()) << what;
            EXPECT_LE(test::median_of(err), max_median_error) << what << " frame " << f;
            EXPECT_GE(err.size(), tracks.size() * 8 / 10) << what << ": most tracks survive a clean motion";
        }
    }
}

TEST(FeatureTrackerCpu, FollowsAKnownPathPreviousFrameTemplates) {
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::Translation;
    cfg.anchor.enabled = false;  // frame-to-frame LK alone
    follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, 0.1, "translation, previous-frame");
}

TEST(FeatureTrackerCpu, FollowsAKnownPathAnchored) {
    // The default (anchoring on). Its bound is looser on this short, blurred (sigma 1) path: at half-pixel
    // phases the affine fit against the sharp birth template trades interpolation blur for a little scale
    // and shift (docs/tracker.md, "Anchoring"); on long sequences it removes the drift (Anchor.* tests).
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::Translation;
    follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, 0.15, "translation, anchored");
    cfg.lk.mode = LkMode::TranslationGainOffset;
    follow_path(make_path("aloeL.png", 8, -3.1, 2.2, true), cfg, 0.15, "gain+offset, anchored");
}

TEST(FeatureTrackerCpu, FollowsAKnownPathWithPycaRedetection) {
    // Re-detection with PyCA selection, on the tracker's pyramid and on ORB-SLAM's 8 levels of 1.2: the
    // tracks it starts are followed as accurately as the grid's.
    for (const PyramidConfig pyr : {PyramidConfig{2, 2.0f}, PyramidConfig{8, 1.2f}}) {
        TrackerConfig cfg = base_config();
        cfg.lk.mode = LkMode::Translation;
        cfg.anchor.enabled = false;
        cfg.detector.selection = SelectionPolicy::PyCA;
        cfg.detector.pyramid = pyr;
        cfg.detector.pyca.cell.fill(16);
        cfg.detector.per_cell = 2;
        follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, 0.1,
                    "PyCA re-detection, " + std::to_string(pyr.levels) + " levels");
    }
}

TEST(FeatureTrackerCpu, FollowsAKnownPathWithIlluminationDriftFirstFrameTemplates) {
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::TranslationGainOffset;
    cfg.lk.template_source = TemplateSource::FirstFrame;
    cfg.anchor.enabled = false;  // LK with first-frame templates alone
    // First-frame templates do not accumulate drift: the error stays at the single-pair level.
    follow_path(make_path("aloeL.png", 8, -3.1, 2.2, true), cfg, 0.08, "gain+offset, first-frame");
}

TEST(FeatureTrackerCpu, BookkeepingAndRedetectionOnARealSequence) {
    const auto names = test::sequence_frame_names();
    ASSERT_GE(names.size(), 20u);
    TrackerConfig cfg = base_config();
    cfg.redetect_fraction = 1.0f;  // re-detect after every loss so that the masking is exercised
    const HostImage first = test::real_image(names[0]);
    FeatureTracker tracker(first.width(), first.height(), cfg, Backend::Cpu);
    std::map<std::uint64_t, Track> previous;
    std::set<std::uint64_t> ever, dead;
    int redetections = 0;
    for (std::size_t f = 0; f < 20; ++f) {
        const HostImage img = test::real_image(names[f]);
        const std::vector<Track> tracks = tracker.track(img.view());
        EXPECT_EQ(tracker.frame_count(), static_cast<std::int64_t>(f + 1));
        EXPECT_LE(tracks.size(), static_cast<std::size_t>(cfg.target_features));
        if (f == 0) {
            EXPECT_TRUE(tracker.redetected());
            EXPECT_GE(tracks.size(), 100u);
        }
        redetections += tracker.redetected() && f > 0;
        std::set<std::pair<int, int>> old_cells;
        std::size_t survivors = 0;
        for (const Track& t : tracks) {
            if (previous.count(t.id)) {
                const Track& p = previous[t.id];
                EXPECT_EQ(t.age, p.age + 1);
                EXPECT_EQ(t.prev_x, p.x);
                EXPECT_EQ(t.prev_y, p.y);
                EXPECT_EQ(t.status, TrackStatus::Tracked);
                old_cells.insert({static_cast<int>(t.x) / cfg.detector.cell_width,
                                  static_cast<int>(t.y) / cfg.detector.cell_height});
                ++survivors;
            }
        }
        for (const Track& t : tracks) {
            if (previous.count(t.id)) continue;
            EXPECT_EQ(dead.count(t.id), 0u) << "ids are never reused";
            EXPECT_EQ(ever.count(t.id), 0u);
            EXPECT_EQ(t.age, 0);
            EXPECT_EQ(t.x, t.prev_x);
            // New features only in cells no surviving track occupies.
            EXPECT_EQ(old_cells.count({static_cast<int>(t.x) / cfg.detector.cell_width,
                                       static_cast<int>(t.y) / cfg.detector.cell_height}),
                      0u)
                << "new track " << t.id << " in an occupied cell";
        }
        if (!tracker.redetected()) {
            EXPECT_EQ(survivors, tracks.size());
        }
        for (const Track& t : tracker.lost_tracks()) {
            EXPECT_NE(t.status, TrackStatus::Tracked);
            EXPECT_TRUE(previous.count(t.id));
            dead.insert(t.id);
        }
        previous.clear();
        for (const Track& t : tracks) {
            previous[t.id] = t;
            ever.insert(t.id);
        }
    }
    EXPECT_GT(redetections, 0);
}

TEST(FeatureTrackerCpu, NoRedetectionWhileEnoughTracksLive) {
    const auto names = test::sequence_frame_names();
    TrackerConfig cfg = base_config();
    cfg.redetect_fraction = 0.1f;
    const HostImage first = test::real_image(names[0]);
    FeatureTracker tracker(first.width(), first.height(), cfg, Backend::Cpu);
    std::size_t prev = 0;
    for (std::size_t f = 0; f < 6; ++f) {
        const auto& tracks = tracker.track(test::real_image(names[f]).view());
        if (f > 0) {
            EXPECT_FALSE(tracker.redetected());
            EXPECT_LE(tracks.size(), prev);
        }
        prev = tracks.size();
    }
}

TEST(FeatureTrackerCpu, PredictionsCarryTracksThroughLargeMotion) {
    const Path p = make_path("graf1.png", 4, 40.0, 25.0, false);
    TrackerConfig cfg = base_config();
    FeatureTracker with(p.g.width, p.g.height, cfg, Backend::Cpu);
    with.track(p.frame(0).view());
    for (std::size_t f = 1; f < 4; ++f) {
        const HostImage img = p.frame(f);
        std::vector<Point2f> pred;
        for (const Track& t : with.tracks())
            pred.push_back({t.x + static_cast<float>(p.dx[f] - p.dx[f - 1]) + 0.4f,
                            t.y + static_cast<float>(p.dy[f] - p.dy[f - 1]) - 0.3f});
        const std::size_t before = with.tracks().size();
        with.track(img.view(), &pred);
        EXPECT_LE(with.lost_tracks().size(), before / 5) << "frame " << f;
    }
    // Without predictions a 47 px jump is beyond the pyramid's reach: nearly everything is lost at frame 1.
    FeatureTracker blind(p.g.width, p.g.height, cfg, Backend::Cpu);
    const std::size_t n0 = blind.track(p.frame(0).view()).size();
    blind.track(p.frame(1).view());
    EXPECT_GE(blind.lost_tracks().size(), n0 / 2);
}

TEST(FeatureTrackerCpu, ForwardBackwardCheckDropsTracksOnReplacedContent) {
    const Path p = make_path("aloeL.png", 2, 1.5, -1.0, false);
    TrackerConfig cfg = base_config();
    cfg.forward_backward = true;
    cfg.fb_max_error = 0.3f;
    cfg.lk.max_residual = 255.0f;  // only the forward-backward check can drop tracks here
    cfg.detector = DetectorConfig{};
    cfg.detector.fast.threshold = 20;
    // SAD-B picks corners whose copies in the replaced third do not line up by chance (with MT, 11 of the
    // left third's tracks survive the round trip on this image); the check itself is what is tested.
    cfg.detector.fast.score = ScoreType::SadCircle;
    FeatureTracker tracker(p.g.width, p.g.height, cfg, Backend::Cpu);
    const std::vector<Track> before = tracker.track(p.frame(0).view());
    HostImage img = p.frame(1);
    // Replace the left third by a copy of the right third: content there no longer moves consistently.
    const int third = img.width() / 3;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < third; ++x) img.at(x, y) = img.at(x + 2 * third, (y + 37) % img.height());
    tracker.track(img.view());
    int left_alive = 0, left_total = 0, right_alive = 0, right_total = 0;
    std::set<std::uint64_t> alive;
    for (const Track& t : tracker.tracks()) alive.insert(t.id);
    for (const Track& t : before) {
        const bool left = t.x < third - 20, right = t.x > third + 20;
        left_total += left;
        right_total += right;
        left_alive += left && alive.count(t.id);
        right_alive += right && alive.count(t.id);
    }
    int fb = 0;
    for (const Track& t : tracker.lost_tracks()) fb += t.status == TrackStatus::LostForwardBackward;
    ASSERT_GT(left_total, 10);
    EXPECT_LE(left_alive, left_total / 5);
    EXPECT_GE(right_alive, right_total * 9 / 10);
    EXPECT_GT(fb, 0);
}

TEST(FeatureTrackerCpu, SyncAndAsyncFormsAgree) {
    const auto names = test::sequence_frame_names();
    const TrackerConfig cfg = base_config();
    const HostImage first = test::real_image(names[0]);
    FeatureTracker a(first.width(), first.height(), cfg, Backend::Cpu), b(first.width(), first.height(), cfg, Backend::Cpu);
    for (std::size_t f = 0; f < 4; ++f) {
        const HostImage img = test::real_image(names[f]);
        const std::vector<Track> ta = a.track(img.view());
        b.track_async(img.view(), nullptr);
        const std::vector<Track>& tb = b.finish();
        ASSERT_EQ(ta.size(), tb.size());
        for (std::size_t i = 0; i < ta.size(); ++i) {
            EXPECT_EQ(ta[i].id, tb[i].id);
            EXPECT_EQ(ta[i].x, tb[i].x);
            EXPECT_EQ(ta[i].y, tb[i].y);
        }
    }
    std::uint64_t max_id = 0;
    for (const Track& t : a.tracks()) max_id = std::max(max_id, t.id);
    a.reset();
    EXPECT_TRUE(a.tracks().empty());
    const auto& again = a.track(first.view());
    EXPECT_TRUE(a.redetected());
    ASSERT_FALSE(again.empty());
    for (const Track& t : again) EXPECT_GT(t.id, max_id);  // ids keep increasing after reset
}

}  // namespace
}  // namespace kestrel
