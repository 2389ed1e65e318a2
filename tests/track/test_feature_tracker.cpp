// FeatureTracker (CPU backend; the CUDA backend against it in test_feature_tracker_cuda.cpp): accuracy
// on a real image moved along a known path, track bookkeeping and the re-detection policy on a real
// sequence, predictions, the motion rules (constant-velocity start, the coarsest level skipped), the
// forward-backward check, and every validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "examples/common/synthetic.hpp"
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

// What follow_path asserts: the median of every frame's errors, the tail over the whole path (90th percentile
// and the share over 1 px of every track-frame), and the survivors: the tracks born in the first frame that are
// still live at the end AND within 1 px of their true position (a track that survives wrong does not count).
// Today, on every path below (1050 track-frames each): p90 0.034 - 0.117 px, no track-frame over 1 px, all 150
// first-frame tracks live and within 1 px at the end. Bounds: p90 about 2 - 3x today's, at most 2 track-frames
// over 1 px, 95 % of the first frame's tracks.
struct PathBounds {
    double median;  // every frame's median error, px
    double p90;     // 90th percentile over every track-frame, px
    double over1;   // share of track-frames more than 1 px off
    double accurate_survivors;  // share of the first frame's tracks live and within 1 px at the end
};

// Tracks every frame of the path; checks every live track against the true motion since its birth.
void follow_path(const Path& p, TrackerConfig cfg, const PathBounds& b, const std::string& what) {
    FeatureTracker tracker(p.g.width, p.g.height, cfg, Backend::Cpu);
    std::map<std::uint64_t, std::pair<Point2f, std::size_t>> birth;  // id -> (position, frame)
    std::vector<double> all;
    std::size_t first_frame_tracks = 0, accurate_at_end = 0;
    for (std::size_t f = 0; f < p.dx.size(); ++f) {
        const HostImage img = p.frame(f);
        const auto& tracks = tracker.track(img.view());
        ASSERT_FALSE(tracks.empty()) << what << " frame " << f;
        if (f == 0) first_frame_tracks = tracks.size();
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
            if (f + 1 == p.dx.size() && f0 == 0 && err.back() <= 1.0) ++accurate_at_end;
        }
        if (f > 0) {
            ASSERT_FALSE(err.empty()) << what;
            EXPECT_LE(test::median_of(err), b.median) << what << " frame " << f;
            all.insert(all.end(), err.begin(), err.end());
        }
    }
    const test::EpeStats e = test::epe_stats_of(all, 0);
    const double survivors = static_cast<double>(accurate_at_end) / static_cast<double>(first_frame_tracks);
    std::printf("[path] %-40s %zu track-frames: median %.4f p90 %.4f px, > 1 px %.2f %%, max %.3f px; "
                "%zu of %zu first-frame tracks live and within 1 px at the end\n",
                what.c_str(), all.size(), e.median, e.p90, 100 * e.over1, e.max_tracked, accurate_at_end,
                first_frame_tracks);
    EXPECT_LE(e.p90, b.p90) << what << ": 90th percentile of the error over every track-frame";
    EXPECT_LE(e.over1, b.over1) << what << ": share of track-frames more than 1 px off";
    EXPECT_GE(survivors, b.accurate_survivors) << what << ": first-frame tracks live and within 1 px at the end";
}

TEST(FeatureTrackerCpu, FollowsAKnownPathPreviousFrameTemplates) {
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::Translation;
    cfg.anchor.enabled = false;  // frame-to-frame LK alone
    follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, {0.1, 0.1, 0.002, 0.95}, "translation, previous-frame");
}

TEST(FeatureTrackerCpu, FollowsAKnownPathAnchored) {
    // The default (anchoring on). Its bound is looser on this short, blurred (sigma 1) path: at half-pixel
    // phases the affine fit against the sharp birth template trades interpolation blur for a little scale
    // and shift (docs/tracker.md, "Anchoring"); on long sequences it removes the drift (Anchor.* tests).
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::Translation;
    follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, {0.15, 0.25, 0.002, 0.95}, "translation, anchored");
    cfg.lk.mode = LkMode::TranslationGainOffset;
    follow_path(make_path("aloeL.png", 8, -3.1, 2.2, true), cfg, {0.15, 0.25, 0.002, 0.95}, "gain+offset, anchored");
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
        follow_path(make_path("graf1.png", 8, 2.6, -1.7, false), cfg, {0.1, 0.1, 0.002, 0.95},
                    "PyCA re-detection, " + std::to_string(pyr.levels) + " levels");
    }
}

TEST(FeatureTrackerCpu, FollowsAKnownPathWithIlluminationDriftFirstFrameTemplates) {
    TrackerConfig cfg = base_config();
    cfg.lk.mode = LkMode::TranslationGainOffset;
    cfg.lk.template_source = TemplateSource::FirstFrame;
    cfg.anchor.enabled = false;  // LK with first-frame templates alone
    // First-frame templates do not accumulate drift: the error stays at the single-pair level.
    follow_path(make_path("aloeL.png", 8, -3.1, 2.2, true), cfg, {0.08, 0.1, 0.002, 0.95}, "gain+offset, first-frame");
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

// A path with the given per-frame displacements (x, y: d[i] from frame i - 1 to i).
Path make_steps(const char* name, const std::vector<double>& dx_step, const std::vector<double>& dy_step) {
    Path p{test::blurred(test::real_image(name), 1.0), {0.0}, {0.0}, {1.0}, {0.0}};
    for (std::size_t i = 0; i < dx_step.size(); ++i) {
        p.dx.push_back(p.dx.back() + dx_step[i]);
        p.dy.push_back(p.dy.back() + dy_step[i]);
        p.gain.push_back(1.0);
        p.offset.push_back(0.0);
    }
    return p;
}

/// Tracks every frame of p from frame 0 (no predictions). Of the first frame's tracks whose true position at the end
/// lies at least 24 px inside the frame (*eligible), those live and within 1 px of it at the end, and the median error
/// of the live ones.
std::pair<std::size_t, double> first_tracks_at_end(const Path& p, const TrackerConfig& cfg, std::size_t* eligible) {
    FeatureTracker tracker(p.g.width, p.g.height, cfg, Backend::Cpu);
    const std::size_t last = p.dx.size() - 1;
    std::map<std::uint64_t, Point2f> first;
    *eligible = 0;
    for (const Track& t : tracker.track(p.frame(0).view())) {
        const double x = t.x + p.dx[last], y = t.y + p.dy[last];
        if (x < 24.0 || y < 24.0 || x > p.g.width - 25.0 || y > p.g.height - 25.0) continue;
        first[t.id] = {t.x, t.y};
        ++*eligible;
    }
    for (std::size_t f = 1; f < last; ++f) tracker.track(p.frame(f).view());
    std::size_t accurate = 0;
    std::vector<double> err;
    for (const Track& t : tracker.track(p.frame(last).view())) {
        const auto it = first.find(t.id);
        if (it == first.end()) continue;
        const double e = std::hypot(t.x - (it->second.x + p.dx[last]), t.y - (it->second.y + p.dy[last]));
        err.push_back(e);
        if (e <= 1.0) ++accurate;
    }
    return {accurate, err.empty() ? 1e9 : test::median_of(err)};
}

// TrackerConfig::motion.constant_velocity: each track starts from its position plus its last displacement. On a
// path that speeds up by 8 px a frame (to 35 px a frame) the start is 8 px off, and the tracks follow it over every
// level (today all 134 first-frame tracks that stay in view, the median error 0.0001 px); started from their position
// (the rule off) they are lost (1 of 134 follows).
TEST(FeatureTrackerCpu, ConstantVelocityCarriesTracksThroughAcceleratingMotion) {
    const Path p = make_steps("graf1.png", {3.0, 11.0, 19.0, 27.0, 35.0}, {-1.0, -5.0, -9.0, -13.0, -17.0});
    TrackerConfig cfg = base_config();
    cfg.motion.fewer_levels = false;  // every level (an 8 px error is beyond level 0 alone: the next test)
    std::size_t eligible = 0;
    const auto [kept, median] = first_tracks_at_end(p, cfg, &eligible);
    cfg.motion.constant_velocity = false;
    std::size_t eligible_off = 0;
    const auto [kept_off, median_off] = first_tracks_at_end(p, cfg, &eligible_off);
    std::printf("[constant velocity] %zu first-frame tracks in view: %zu live within 1 px after 5 frames (median "
                "%.4f px); without the prediction %zu\n",
                eligible, kept, median, kept_off);
    ASSERT_GE(eligible, 100u);
    EXPECT_EQ(eligible, eligible_off);
    EXPECT_GE(kept, eligible * 9 / 10);
    EXPECT_LE(median, 0.05);
    EXPECT_LE(kept_off, eligible / 10);  // the rule is what carries them
}

// TrackerConfig::motion.fewer_levels: a track with a predicted start searches only the levels its predicted
// displacement needs (detail::predicted_levels_skipped). After steady motion of 2 px a frame (level 0 alone: within
// level_reach = 4 px) a sudden jump 8 px past the prediction is beyond level 0's reach for most tracks (today 47 of
// 148 follow it) and within the three levels' for all (148, the rule off); 2 px past it, level 0 alone follows it
// (147 of 147). Where the camera may start or change its motion abruptly, pass predictions or turn the rule off.
TEST(FeatureTrackerCpu, PredictedTracksSearchOnlyTheLevelsTheyNeed) {
    const auto run = [](double jump, bool fewer, std::size_t* eligible) {
        const Path p = make_steps("graf1.png", {2.0, 2.0, 2.0, 2.0, 2.0 + jump}, {1.0, 1.0, 1.0, 1.0, 1.0 - 0.5 * jump});
        TrackerConfig cfg = base_config();
        cfg.motion.fewer_levels = fewer;
        return first_tracks_at_end(p, cfg, eligible);
    };
    const double J = 8.0, S = 2.0;
    std::size_t eligible = 0, eligible_all = 0, eligible_small = 0;
    const auto [kept, median] = run(J, true, &eligible);
    const auto [kept_all, median_all] = run(J, false, &eligible_all);
    const auto [kept_small, median_small] = run(S, true, &eligible_small);
    std::printf("[fewer levels] %zu first-frame tracks in view; %.0f px past the prediction: %zu live within 1 px "
                "searching level 0 alone, %zu searching every level; %.0f px past it: %zu of %zu (median %.4f px)\n",
                eligible, J, kept, kept_all, S, kept_small, eligible_small, median_small);
    ASSERT_GE(eligible, 100u);
    EXPECT_EQ(eligible, eligible_all);
    EXPECT_LE(kept, eligible * 6 / 10);
    EXPECT_GE(kept_all, eligible * 85 / 100);
    EXPECT_GE(kept_small, eligible_small * 95 / 100);
    EXPECT_LE(median_small, 0.05);
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

// The demo's sequence (examples/track_sequence, scripts/demo.sh; examples/common/synthetic.cpp): a camera panning,
// rolling and zooming over graf1.png, so that tracks leave the view at every edge and new ones are born, with exact
// ground truth. The default tracker's error over every track-frame (relative to each track's birth position, as the
// demo reports it), its tail included: tracks that follow the wrong point (along the frame's edge after their point
// left the view, or after a frame-to-frame slip) must end, not survive with errors of tens of pixels. Also the
// 30-frame form of the example's test (the same motion 6.7 times faster per frame).
struct DemoBounds {
    int frames;
    double median, p90, p99, over1, max_error;
    double good_per_frame;  // track-frames within 1 px, per frame: the tracks a back end can use
};

void demo_sequence_tail(const DemoBounds& b) {
    const kestrel_examples::SyntheticSequence syn(test::real_image("graf1.png"), b.frames);
    FeatureTracker tracker(syn.width(), syn.height(), TrackerConfig{}, Backend::Cpu);
    std::map<std::uint64_t, std::pair<int, Point2f>> birth;
    std::vector<double> err;
    for (int n = 0; n < syn.frames(); ++n) {
        const HostImage img = syn.render(n);
        for (const Track& t : tracker.track(img.view())) {
            const auto it = birth.find(t.id);
            if (it == birth.end()) {
                birth[t.id] = {n, {t.x, t.y}};
                continue;
            }
            const Point2f q = syn.map(it->second.first, n, it->second.second);
            err.push_back(std::hypot(t.x - q.x, t.y - q.y));
        }
    }
    const test::EpeStats e = test::epe_stats_of(err, 0);
    const double p99 = test::quantile_of(err, 0.99);
    const double good = static_cast<double>(err.size()) * (1.0 - e.over1) / syn.frames();
    std::printf("[demo %3d frames] %zu track-frames (%zu tracks): median %.4f p90 %.4f p99 %.3f px, > 1 px %.2f %%, "
                "max %.2f px; %.1f track-frames within 1 px per frame\n",
                b.frames, err.size(), birth.size(), e.median, e.p90, p99, 100 * e.over1, e.max_tracked, good);
    const std::string what = std::to_string(b.frames) + " frames";
    EXPECT_LE(e.median, b.median) << what;
    EXPECT_LE(e.p90, b.p90) << what;
    EXPECT_LE(p99, b.p99) << what << ": 99th percentile";
    EXPECT_LE(e.over1, b.over1) << what << ": share of track-frames more than 1 px off";
    EXPECT_LE(e.max_tracked, b.max_error) << what << ": the largest error of a live track";
    EXPECT_GE(good, b.good_per_frame) << what;
}

TEST(FeatureTrackerCpu, DemoSequenceErrorTail) {
    // Today [and before re-anchoring required a converged estimate inside the frame]: 200 frames: median 0.031
    // [0.034] px, p90 0.101 [0.167] px, p99 0.35 [39.5] px, over 1 px 0.08 [4.64] %, max 15.2 [110.7] px, 92.2
    // [83.0] track-frames within 1 px per frame (level 0 from the stored patch up to 0.05 from the identity, as
    // the coarse levels, instead of 0.02: p99 0.56 px, over 1 px 0.58 %, 91.5 per frame: re-anchored at biased
    // estimates; 0.03: over 1 px 0.18 %, 0.04: 0.42 %). 30 frames: median 0.033 [0.035], p90 0.096 [0.140], p99 0.59
    // [24.2], over 1 px 0.38 [4.19] %, max 7.6 [27.3] px, 78.9 [81.5] within 1 px per frame. The largest errors
    // left are single frames before the track ends (an estimate pulled along the frame's edge by the clamped
    // taps, which the fit against the first observation, also near the edge, follows). Bounds: the median and
    // p90 about 1.5x today's, p99 and the share over 1 px about 2.5x, the maximum 1.5 - 2x, and 8 % fewer
    // good track-frames per frame.
    demo_sequence_tail({200, 0.05, 0.15, 1.0, 0.003, 30.0, 85.0});
    demo_sequence_tail({30, 0.05, 0.15, 1.5, 0.01, 15.0, 72.0});
}

}  // namespace
}  // namespace kestrel
