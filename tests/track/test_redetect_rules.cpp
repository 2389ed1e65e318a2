// The re-detection rules (include/kestrel/detail/redetect_rules.hpp) with known answers: the decision at and
// around redetect_fraction * target_features, the cell of a position (clamped into the grid), the template's
// frame test at its bounds, and that fewer live tracks never turn a re-detection off (what lets the device's plan,
// which sees no more ended tracks than the host, run the detection only where the host re-detects too).
#include <gtest/gtest.h>

#include "kestrel/detail/redetect_rules.hpp"

namespace kestrel {
namespace {

TEST(RedetectRules, DecisionKnownAnswers) {
    // 200 tracks, fraction 0.3: re-detect below 0.3f * 200 = 60.000002 in float (0.3f is 0.30000001), so at 60 too.
    EXPECT_TRUE(detail::redetect_wanted(0, 0.3f, 200));
    EXPECT_TRUE(detail::redetect_wanted(59, 0.3f, 200));
    EXPECT_TRUE(detail::redetect_wanted(60, 0.3f, 200));
    EXPECT_FALSE(detail::redetect_wanted(61, 0.3f, 200));
    // 0.25 is exact: 50 is not below 50.
    EXPECT_TRUE(detail::redetect_wanted(49, 0.25f, 200));
    EXPECT_FALSE(detail::redetect_wanted(50, 0.25f, 200));
    EXPECT_FALSE(detail::redetect_wanted(150, 0.3f, 200));
    // Fraction 0: only when no track is live; fraction 1: whenever fewer than the target.
    EXPECT_TRUE(detail::redetect_wanted(0, 0.0f, 200));
    EXPECT_FALSE(detail::redetect_wanted(1, 0.0f, 200));
    EXPECT_TRUE(detail::redetect_wanted(199, 1.0f, 200));
    EXPECT_FALSE(detail::redetect_wanted(200, 1.0f, 200));
    EXPECT_FALSE(detail::redetect_wanted(201, 1.0f, 200));
    // Target 1: the only live track fills it.
    EXPECT_TRUE(detail::redetect_wanted(0, 0.5f, 1));
    EXPECT_FALSE(detail::redetect_wanted(1, 0.5f, 1));
}

TEST(RedetectRules, FewerLiveTracksNeverTurnARedetectionOff) {
    for (float fraction : {0.0f, 0.1f, 0.3f, 0.333f, 0.5f, 0.8f, 0.95f, 1.0f})
        for (int target : {1, 2, 3, 7, 100, 200, 1000})
            for (int live = 1; live <= target + 2; ++live)
                if (detail::redetect_wanted(live, fraction, target))
                    EXPECT_TRUE(detail::redetect_wanted(live - 1, fraction, target))
                        << "fraction " << fraction << " target " << target << " live " << live;
}

TEST(RedetectRules, DecisionIsTheTrackersFormerTest) {
    // The bookkeeping's test before the rules header: no re-detection when live > 0 and
    // !(live < fraction * target), or when live >= target.
    for (float fraction : {0.0f, 0.25f, 0.3f, 0.7f, 1.0f})
        for (int target : {1, 5, 200})
            for (int live = 0; live <= target + 1; ++live) {
                const bool former =
                    !(live > 0 && !(static_cast<float>(live) < fraction * static_cast<float>(target))) && live < target;
                EXPECT_EQ(detail::redetect_wanted(live, fraction, target), former)
                    << "fraction " << fraction << " target " << target << " live " << live;
            }
}

TEST(RedetectRules, CellOfAPosition) {
    // 752 x 480 of 32 px cells: 24 x 15 (the last column 16 px wide).
    EXPECT_EQ(detail::redetect_cell(0.0f, 0.0f, 32, 32, 24, 15), 0);
    EXPECT_EQ(detail::redetect_cell(31.99f, 31.99f, 32, 32, 24, 15), 0);
    EXPECT_EQ(detail::redetect_cell(32.0f, 0.5f, 32, 32, 24, 15), 1);
    EXPECT_EQ(detail::redetect_cell(100.7f, 40.2f, 32, 32, 24, 15), 24 + 3);
    EXPECT_EQ(detail::redetect_cell(751.9f, 479.9f, 32, 32, 24, 15), 14 * 24 + 23);
    // Past the grid: clamped (positions just outside the frame, truncated towards zero).
    EXPECT_EQ(detail::redetect_cell(760.0f, 490.0f, 32, 32, 24, 15), 14 * 24 + 23);
    EXPECT_EQ(detail::redetect_cell(-0.5f, -40.0f, 32, 32, 24, 15), 0);
    // Non-square cells.
    EXPECT_EQ(detail::redetect_cell(50.0f, 50.0f, 48, 24, 16, 20), 2 * 16 + 1);
}

TEST(RedetectRules, TemplateInFrameAtItsBounds) {
    // A 16 x 16 template (half 7.5) in 752 x 480: its corner vx = x - 7.5 must lie in [1, 752 - 16 - 1).
    EXPECT_FALSE(detail::template_in_frame(8.49f, 100.0f, 16, 752, 480));
    EXPECT_TRUE(detail::template_in_frame(8.5f, 100.0f, 16, 752, 480));
    EXPECT_TRUE(detail::template_in_frame(742.49f, 100.0f, 16, 752, 480));
    EXPECT_FALSE(detail::template_in_frame(742.5f, 100.0f, 16, 752, 480));
    EXPECT_TRUE(detail::template_in_frame(100.0f, 8.5f, 16, 752, 480));
    EXPECT_FALSE(detail::template_in_frame(100.0f, 470.5f, 16, 752, 480));
    // Re-anchoring needs a converged estimate and the template inside at both positions.
    EXPECT_TRUE(detail::redetect_reanchor_ok(TrackStatus::Tracked, 100, 100, 101, 100, 16, 752, 480));
    EXPECT_FALSE(detail::redetect_reanchor_ok(TrackStatus::NotConverged, 100, 100, 101, 100, 16, 752, 480));
    EXPECT_FALSE(detail::redetect_reanchor_ok(TrackStatus::Tracked, 8.0f, 100, 101, 100, 16, 752, 480));
    EXPECT_FALSE(detail::redetect_reanchor_ok(TrackStatus::Tracked, 100, 100, 743, 100, 16, 752, 480));
}

}  // namespace
}  // namespace kestrel
