// The comparison the GPU tracker tests rely on (tests/support/track_compare.hpp) catches a one-ulp difference
// in any float field, any change of an integer field or the status, and +0 against -0; within the tolerance
// (non-x86-64 hosts) it accepts a one-ulp change and rejects a 2e-3 px one. Without this, a GPU test could pass
// on a backend that differs from the CPU reference by rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "track_compare.hpp"

namespace kestrel {
namespace {

float ulp_up(float v) { return std::nextafter(v, std::numeric_limits<float>::infinity()); }

LkResult sample_result() {
    LkResult r;
    r.x = 312.71875f;
    r.y = 87.0625f;
    r.gain = 1.0412f;
    r.offset = -3.25f;
    r.residual = 2.375f;
    r.iterations = 4;
    r.status = TrackStatus::Tracked;
    return r;
}

Track sample_track() {
    Track t;
    t.id = 17;
    t.x = 401.5f;
    t.y = 96.125f;
    t.prev_x = 398.25f;
    t.prev_y = 97.0f;
    t.age = 9;
    t.gain = 0.97f;
    t.offset = 4.5f;
    t.residual = 1.75f;
    t.status = TrackStatus::Tracked;
    t.score = 41.0f;
    t.level = 1;
    return t;
}

TEST(TrackCompare, OneUlpInAnyLkResultFieldIsAMismatch) {
    const LkResult a = sample_result();
    EXPECT_EQ(test::lk_result_diff(a, a, true), "");
    float LkResult::*floats[] = {&LkResult::x, &LkResult::y, &LkResult::gain, &LkResult::offset, &LkResult::residual};
    const char* names[] = {"x", "y", "gain", "offset", "residual"};
    for (int k = 0; k < 5; ++k) {
        LkResult b = a;
        b.*floats[k] = ulp_up(b.*floats[k]);
        const std::string d = test::lk_result_diff(a, b, true);
        EXPECT_NE(d.find(names[k]), std::string::npos) << names[k] << ": '" << d << "'";
        EXPECT_EQ(test::lk_result_diff(a, b, false), "") << names[k] << ": one ulp is within the tolerance";
    }
    LkResult b = a;
    b.iterations = 5;
    EXPECT_NE(test::lk_result_diff(a, b, false).find("iterations"), std::string::npos);
    b = a;
    b.status = TrackStatus::NotConverged;
    EXPECT_NE(test::lk_result_diff(a, b, false).find("status"), std::string::npos);
    b = a;
    b.x += 2e-3f;
    EXPECT_NE(test::lk_result_diff(a, b, false).find("x"), std::string::npos) << "beyond the 1e-3 px tolerance";
    b = a;
    b.offset = 0.0f;
    LkResult c = a;
    c.offset = -0.0f;
    EXPECT_NE(test::lk_result_diff(b, c, true), "") << "+0 and -0 differ in their bits";
}

TEST(TrackCompare, OneUlpInAnyTrackFieldIsAMismatch) {
    const Track a = sample_track();
    EXPECT_EQ(test::track_diff(a, a, true), "");
    float Track::*floats[] = {&Track::x,    &Track::y,      &Track::prev_x,   &Track::prev_y,
                              &Track::gain, &Track::offset, &Track::residual, &Track::score};
    const char* names[] = {"x", "y", "prev_x", "prev_y", "gain", "offset", "residual", "score"};
    for (int k = 0; k < 8; ++k) {
        Track b = a;
        b.*floats[k] = ulp_up(b.*floats[k]);
        const std::string d = test::track_diff(a, b, true);
        EXPECT_NE(d.find(names[k]), std::string::npos) << names[k] << ": '" << d << "'";
    }
    Track b = a;
    b.id = 18;
    EXPECT_NE(test::track_diff(a, b, false).find("id"), std::string::npos);
    b = a;
    b.age = 8;
    EXPECT_NE(test::track_diff(a, b, false).find("age"), std::string::npos);
    b = a;
    b.level = 0;
    EXPECT_NE(test::track_diff(a, b, false).find("level"), std::string::npos);
    b = a;
    b.status = TrackStatus::LostForwardBackward;
    EXPECT_NE(test::track_diff(a, b, false).find("status"), std::string::npos);
    b = a;
    b.prev_y += 2e-3f;
    EXPECT_NE(test::track_diff(a, b, false).find("prev_y"), std::string::npos) << "beyond the 1e-3 px tolerance";
}

TEST(TrackCompare, CountsAndReportsEveryMismatchAndASizeDifference) {
    std::vector<Track> a(6, sample_track()), b = a;
    b[2].residual = ulp_up(b[2].residual);
    b[5].prev_x = ulp_up(b[5].prev_x);
    std::vector<std::string> reports;
    const auto diff = [](const Track& x, const Track& y) { return test::track_diff(x, y, true); };
    const auto fail = [&](const std::string& m) { reports.push_back(m); };
    EXPECT_EQ(test::count_mismatches(a, b, diff, fail), 2);
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].rfind("entry 2: residual", 0), 0u) << reports[0];
    EXPECT_EQ(reports[1].rfind("entry 5: prev_x", 0), 0u) << reports[1];
    b.pop_back();
    reports.clear();
    EXPECT_GT(test::count_mismatches(a, b, diff, fail), 0);
    EXPECT_EQ(reports.size(), 1u);
}

}  // namespace
}  // namespace kestrel
