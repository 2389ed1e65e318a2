// The accuracy metrics of kestrel_eval_tracking (tools/eval_tracking/metrics.hpp), on trackers with known
// answers: one that reports the ground truth scores 0; one off by a known offset scores that offset; track
// lengths and survival count frames as defined.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tools/eval_tracking/metrics.hpp"

namespace kestrel_eval {
namespace {

// A scene moving by (1.5, -0.75) px per frame plus a slow rotation about (50, 40).
void truth(int from, int to, double x, double y, double& ox, double& oy) {
    const double a = 0.01 * (to - from), c = std::cos(a), s = std::sin(a);
    const double dx = x - 50.0, dy = y - 40.0;
    ox = 50.0 + c * dx - s * dy + 1.5 * (to - from);
    oy = 40.0 + s * dx + c * dy - 0.75 * (to - from);
}

SequenceMetrics run(double off_x, double off_y, int frames, int lose_after = 1 << 30) {
    Recorder rec(truth);
    std::vector<Observation> born{{1, 10.0f, 20.0f}, {2, 60.0f, 30.0f}, {3, 33.0f, 70.5f}};
    for (int f = 0; f < frames; ++f) {
        std::vector<Observation> live;
        for (const Observation& b : born) {
            if (b.id == 3 && f > lose_after) continue;  // track 3 is lost after lose_after frames
            double x = b.x, y = b.y;
            if (f > 0) {
                truth(0, f, b.x, b.y, x, y);
                x += off_x;
                y += off_y;
            }
            live.push_back({b.id, static_cast<float>(x), static_cast<float>(y)});
        }
        if (f == 5) live.push_back({9, 5.0f, 5.0f});  // born later: not a first-frame track
        rec.frame(f, live);
    }
    return rec.finish(frames);
}

TEST(TrackingMetrics, GroundTruthScoresZero) {
    const SequenceMetrics m = run(0.0, 0.0, 40);
    EXPECT_LT(m.median, 1e-4);
    EXPECT_LT(m.p90, 1e-4);
    EXPECT_EQ(m.over_1px, 0.0);
    EXPECT_EQ(m.first_tracks, 3);
    EXPECT_EQ(m.tracks, 4);
    EXPECT_DOUBLE_EQ(m.mean_length, 39.0);
    EXPECT_DOUBLE_EQ(m.good_per_frame, 3.0);  // 3 tracks x 39 frames / 39 (track 9 has no later frame)
    EXPECT_DOUBLE_EQ(m.survival[0], 1.0);     // alive at 30 frames
    EXPECT_TRUE(std::isnan(m.survival[1]));   // 60 frames: past the end of a 40-frame sequence
}

TEST(TrackingMetrics, AKnownOffsetScoresThatOffset) {
    const SequenceMetrics m = run(0.3, -0.4, 40);  // |offset| = 0.5 px
    EXPECT_NEAR(m.median, 0.5, 1e-4);
    EXPECT_NEAR(m.p90, 0.5, 1e-4);
    EXPECT_EQ(m.over_1px, 0.0);
    const SequenceMetrics big = run(0.9, 1.2, 40);  // 1.5 px: every observation over 1 px
    EXPECT_NEAR(big.median, 1.5, 1e-4);
    EXPECT_DOUBLE_EQ(big.over_1px, 1.0);
    EXPECT_DOUBLE_EQ(big.good_per_frame, 0.0);
}

TEST(TrackingMetrics, LengthsAndSurvivalCountFrames) {
    const SequenceMetrics m = run(0.0, 0.0, 121, 45);  // track 3 last seen in frame 45
    EXPECT_DOUBLE_EQ(m.mean_length, (120.0 + 120.0 + 45.0) / 3.0);
    EXPECT_DOUBLE_EQ(m.survival[0], 1.0);
    EXPECT_DOUBLE_EQ(m.survival[1], 2.0 / 3.0);
    EXPECT_DOUBLE_EQ(m.survival[2], 2.0 / 3.0);  // alive after 120 tracked frames
    EXPECT_EQ(m.error_by_age.size(), 121u);
    EXPECT_EQ(m.error_by_age[1].size(), 3u);  // age 1: the three first-frame tracks (track 9 is seen once)
}

TEST(TrackingMetrics, QuantileAndGeometricMean) {
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4}, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(quantile({5}, 0.9), 5.0);
    EXPECT_TRUE(std::isnan(quantile({}, 0.5)));
    EXPECT_NEAR(geometric_mean({1.0, 4.0}), 2.0, 1e-12);
    EXPECT_NEAR(geometric_mean({0.0, 1e-2}), 1e-3, 1e-12);  // zero floored at 1e-4
}

}  // namespace
}  // namespace kestrel_eval
