// StereoTracker (CPU backend) on generated scenes with known answers (tests/support/stereo_scenes.hpp): a
// textured plane at a known depth (sub-pixel disparity), a slanted plane (disparity linear in x and y), a raw
// pair (rotated, distorted cameras), a moving rig; odd sizes, disparities near 0 and large, disparity ranges
// that cut points (OutOfRange), an epipolar tolerance that rejects a vertically shifted right image
// (OffEpipolar). The bounds are stated beside each assertion with what the CPU backend measures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kestrel/stereo_tracker.hpp"
#include "stereo_scenes.hpp"
#include "stereo_scene_util.hpp"

namespace kestrel::test {
namespace {

StereoConfig scene_config(int levels = 5) {
    StereoConfig cfg;
    cfg.match.lk.pyramid.levels = levels;  // the temporal tracking keeps its own (3) on the shared pyramid
    cfg.tracker.threads = 2;
    return cfg;
}

const std::vector<StereoTrack>& track_one(StereoTracker& t, const StereoScene& s) {
    return t.track(s.left.view(), s.right.view());
}

/// Every track's fields agree with each other (whatever the scene): disparity = left.x - right_x on a rectified
/// rig, fx |t| / depth on a raw one; depth = f b / d for Matched on a rectified rig and NaN otherwise, right
/// position NaN exactly for NoMatch, the right point within the epipolar tolerance for Matched.
void expect_consistent(const std::vector<StereoTrack>& tracks, const StereoRig& rig, const StereoConfig& cfg) {
    int bad = 0;
    for (const StereoTrack& t : tracks) {
        if (bad > 5) break;
        const std::string id = "track " + std::to_string(t.left.id) + " (" + to_string(t.status) + ")";
        // A right position exists for every status but NoMatch; without one the track has no disparity either.
        if (std::isnan(t.right_x) || std::isnan(t.right_y)) {
            bad += t.status != StereoStatus::NoMatch;
            EXPECT_EQ(t.status, StereoStatus::NoMatch) << id;
            EXPECT_TRUE(std::isnan(t.right_x) && std::isnan(t.right_y) && std::isnan(t.disparity) && std::isnan(t.depth))
                << id << ": right (" << t.right_x << ", " << t.right_y << "), disparity " << t.disparity << ", depth " << t.depth;
            continue;
        }
        ASSERT_TRUE(std::isfinite(t.right_x) && std::isfinite(t.right_y)) << id;
        EXPECT_NE(t.status, StereoStatus::NoMatch) << id;
        if (rig.type == RigType::Rectified) EXPECT_NEAR(t.disparity, t.left.x - t.right_x, 1e-4f) << id;
        if (t.status != StereoStatus::Matched) {
            bad += !std::isnan(t.depth);
            EXPECT_TRUE(std::isnan(t.depth)) << id << ": depth " << t.depth;
            continue;
        }
        EXPECT_GE(t.disparity, cfg.match.min_disparity) << id;
        EXPECT_LE(t.disparity, cfg.match.max_disparity) << id;
        if (rig.type == RigType::Rectified) {
            EXPECT_LE(std::abs(t.right_y - t.left.y), cfg.match.epipolar_tolerance + 1e-4f) << id;
            const double z = rig.focal * rig.baseline / t.disparity;
            if (std::isinf(z)) EXPECT_TRUE(std::isinf(t.depth)) << id;
            else EXPECT_NEAR(t.depth, z, 1e-5 * z) << id;
        } else {
            EXPECT_GT(t.depth, 0.0f) << id;
            const double b = std::sqrt(rig.t_rl[0] * rig.t_rl[0] + rig.t_rl[1] * rig.t_rl[1] + rig.t_rl[2] * rig.t_rl[2]);
            const double d = rig.left.fx * b / t.depth;  // the rectified-equivalent disparity
            EXPECT_NEAR(t.disparity, d, 1e-4 * d + 1e-4) << id;
        }
    }
}

// A fronto-parallel plane at the depth of a 12.37 px disparity, 752x480 (EuRoC's size). The CPU measures 200 of
// 200 Matched, median |d - truth| 0.008 px, none over 1 px. Bounds: >= 95 % Matched, median < 0.05 px, <= 1 %
// over 1 px.
TEST(StereoScenes, FrontalPlaneSubPixelDisparity) {
    const StereoScene s = frontal_scene(752, 480, 12.37);
    const StereoConfig cfg = scene_config();
    StereoTracker tracker(752, 480, s.rig, cfg, Backend::Cpu);
    const auto& tracks = track_one(tracker, s);
    const StereoErrors e = measure(s, tracks);
    SCOPED_TRACE(describe(e));
    ASSERT_GE(e.tracks, 150u);  // 200 wanted; the texture has corners everywhere
    EXPECT_GE(e.matched_fraction(), 0.95);
    EXPECT_LT(e.median_disparity_error(), 0.05);
    EXPECT_LE(StereoErrors::fraction_over(e.disparity_errors, 1.0), 0.01);
    EXPECT_LT(e.median_depth_rel_error(), 0.005);  // 0.05 / 12.37 = 0.4 %
    expect_consistent(tracks, s.rig, cfg);
    std::printf("[ measured ] frontal 12.37 px: %s\n", describe(e).c_str());
}

// A slanted plane, odd size: disparity 18 px at the centre, +0.02 px per column, -0.01 per row (about 11.6 to
// 24.4 px over the image). The CPU measures 200 of 200 Matched, median error 0.021 px (the patch sees a slanted
// surface: a translation model leaves a small bias). Bounds: >= 90 % Matched, median < 0.05 px, <= 2 % over 1 px.
TEST(StereoScenes, SlantedPlaneOddSize) {
    const StereoScene s = slanted_scene(641, 479, 18.0, 0.02, -0.01);
    const StereoConfig cfg = scene_config();
    StereoTracker tracker(641, 479, s.rig, cfg, Backend::Cpu);
    const auto& tracks = track_one(tracker, s);
    const StereoErrors e = measure(s, tracks);
    SCOPED_TRACE(describe(e));
    ASSERT_GE(e.tracks, 150u);
    EXPECT_GE(e.matched_fraction(), 0.90);
    EXPECT_LT(e.median_disparity_error(), 0.05);
    EXPECT_LE(StereoErrors::fraction_over(e.disparity_errors, 1.0), 0.02);
    expect_consistent(tracks, s.rig, cfg);
    std::printf("[ measured ] slanted 641x479: %s\n", describe(e).c_str());
}

// Grid: sizes (odd ones included) x disparities near zero, ordinary and large, two cases on 3 levels. 61.3 px is
// beyond what LK reaches from the zero seed of a track born without matched neighbours (the first frame matches
// about half: the CPU measures 103 of 200); the same pair five times, the tracks seed with their previous
// disparity or their neighbours' median, and the matches spread (CPU: 103, 157, 177, 186, 188 of 200); the fifth frame
// must match 85 % (the ones within ~70 px of the left edge have no match in the right image).
TEST(StereoScenes, SizeAndDisparityGrid) {
    struct Case {
        int w, h;
        double d;
        int levels, frames;
    };
    const Case cases[] = {{752, 480, 0.43, 5, 1}, {641, 479, 12.37, 5, 1}, {333, 257, 7.81, 3, 1},
                          {641, 479, 33.7, 5, 1},  {752, 480, 61.3, 5, 5},  {500, 373, 0.43, 3, 1}};
    for (const Case& c : cases) {
        SCOPED_TRACE(std::to_string(c.w) + "x" + std::to_string(c.h) + ", disparity " + std::to_string(c.d));
        const StereoScene s = frontal_scene(c.w, c.h, c.d, static_cast<std::uint32_t>(c.w + c.h));
        StereoConfig cfg = scene_config(c.levels);
        cfg.match.min_disparity = -1.0f;  // near 0 a small error must not cut the point
        StereoTracker tracker(c.w, c.h, s.rig, cfg, Backend::Cpu);
        for (int f = 0; f < c.frames; ++f) {
            SCOPED_TRACE("frame " + std::to_string(f));
            const auto& tracks = track_one(tracker, s);
            const StereoErrors e = measure(s, tracks);
            SCOPED_TRACE(describe(e));
            ASSERT_GE(e.tracks, c.w < 400 ? 60u : 120u);
            ASSERT_GE(e.matched, 20u);
            if (f + 1 == c.frames) EXPECT_GE(e.matched_fraction(), c.frames > 1 ? 0.85 : 0.90);
            EXPECT_LT(e.median_disparity_error(), 0.06);
            EXPECT_LE(StereoErrors::fraction_over(e.disparity_errors, 1.0), 0.02);
            expect_consistent(tracks, s.rig, cfg);
            std::printf("[ measured ] %dx%d d=%.2f frame %d: %s; NoMatch %zu, Inconsistent %zu, OffEpipolar %zu, "
                        "OutOfRange %zu\n", c.w, c.h, c.d, f, describe(e).c_str(), e.count(StereoStatus::NoMatch, tracks),
                        e.count(StereoStatus::Inconsistent, tracks), e.count(StereoStatus::OffEpipolar, tracks),
                        e.count(StereoStatus::OutOfRange, tracks));
        }
    }
}

// The right camera's exposure differs (gain 1.15, offset -12): the matching LK fits gain and offset.
TEST(StereoScenes, RightExposureDiffers) {
    StereoScene s = frontal_scene(641, 479, 9.73, 11);
    render(s, 1.15, -12.0);
    const StereoConfig cfg = scene_config();
    StereoTracker tracker(641, 479, s.rig, cfg, Backend::Cpu);
    const StereoErrors e = measure(s, track_one(tracker, s));
    SCOPED_TRACE(describe(e));
    EXPECT_GE(e.matched_fraction(), 0.90);
    EXPECT_LT(e.median_disparity_error(), 0.06);
}

// min/max_disparity cut the slanted plane (11.6 .. 24.4 px) at 14 and 21 px: every track whose true disparity
// is more than 0.5 px outside comes back OutOfRange (none Matched), and those 0.5 px inside are Matched.
TEST(StereoScenes, DisparityRangeCutsPoints) {
    const StereoScene s = slanted_scene(641, 479, 18.0, 0.02, -0.01);
    StereoConfig cfg = scene_config();
    cfg.match.min_disparity = 14.0f;
    cfg.match.max_disparity = 21.0f;
    StereoTracker tracker(641, 479, s.rig, cfg, Backend::Cpu);
    const auto& tracks = track_one(tracker, s);
    std::size_t outside = 0, outside_cut = 0, inside = 0, inside_matched = 0;
    for (const StereoTrack& t : tracks) {
        const double d = s.disparity(t.left.x, t.left.y);
        if (d < cfg.match.min_disparity - 0.5 || d > cfg.match.max_disparity + 0.5) {
            ++outside;
            EXPECT_NE(t.status, StereoStatus::Matched) << "track at true disparity " << d << " got d " << t.disparity;
            outside_cut += t.status == StereoStatus::OutOfRange;
        } else if (d > cfg.match.min_disparity + 0.5 && d < cfg.match.max_disparity - 0.5) {
            ++inside;
            inside_matched += t.status == StereoStatus::Matched;
        }
    }
    ASSERT_GE(outside, 30u);  // the test cuts something
    ASSERT_GE(inside, 30u);
    EXPECT_GE(static_cast<double>(outside_cut) / outside, 0.9) << outside_cut << " of " << outside << " OutOfRange";
    EXPECT_GE(static_cast<double>(inside_matched) / inside, 0.9) << inside_matched << " of " << inside << " Matched";
    expect_consistent(tracks, s.rig, cfg);
}

// The right image shifted down by 3 px (its camera's cy is 3 px larger than the rig says): with the default
// epipolar tolerance (1 px) the matches are OffEpipolar, none Matched; with 4 px they are Matched and their
// right y is 3 px below the left y.
TEST(StereoScenes, EpipolarToleranceRejectsVerticalShift) {
    StereoScene s = frontal_scene(641, 479, 10.4, 5);
    s.right_cam.cy += 3.0;
    render(s);
    for (float tol : {1.0f, 4.0f}) {
        SCOPED_TRACE("epipolar_tolerance " + std::to_string(tol));
        StereoConfig cfg = scene_config();
        cfg.match.epipolar_tolerance = tol;
        StereoTracker tracker(641, 479, s.rig, cfg, Backend::Cpu);
        const auto& tracks = track_one(tracker, s);
        ASSERT_GE(tracks.size(), 120u);
        const StereoErrors e;
        const std::size_t off = e.count(StereoStatus::OffEpipolar, tracks), matched = e.count(StereoStatus::Matched, tracks);
        if (tol < 3.0f) {
            EXPECT_EQ(matched, 0u);
            EXPECT_GE(static_cast<double>(off) / tracks.size(), 0.9) << off << " of " << tracks.size();
            for (const StereoTrack& t : tracks)
                if (t.status == StereoStatus::OffEpipolar) EXPECT_NEAR(t.right_y - t.left.y, 3.0, 0.25);
        } else {
            EXPECT_GE(static_cast<double>(matched) / tracks.size(), 0.9) << matched << " of " << tracks.size();
            const StereoErrors m = measure(s, tracks);  // the truth includes the shift
            EXPECT_LT(m.median_error(), 0.06) << describe(m);
        }
        expect_consistent(tracks, s.rig, cfg);
    }
}

// A raw pair: two pinhole cameras with different intrinsics (and distortions), the right one rotated by 3 (4)
// degrees and 11 cm to the right, a slanted plane 1.6 m away. Truth: the right pixel of each left pixel by
// ray-plane intersection and projection. The CPU measures 200 of 200 Matched, median |right - truth| 0.042 px
// (distorted, 3 deg) and 0.056 px (pinhole, 4 deg: the right camera's view of the patch is rotated and
// foreshortened, which a translation model only approximates), depth error 0.05-0.08 %. Bounds: >= 90 %
// Matched, median < 0.12 px, <= 2 % over 1 px, depth median relative error < 1 %.
TEST(StereoScenes, RawRigRotatedCameras) {
    struct Case {
        double degrees;
        bool distorted;
    };
    for (const Case c : {Case{3.0, true}, Case{4.0, false}}) {
        SCOPED_TRACE(std::string(c.distorted ? "distorted" : "pinhole") + ", " + std::to_string(c.degrees) + " deg");
        const StereoScene s = raw_scene(752, 480, c.degrees, c.distorted);
        StereoConfig cfg = scene_config();
        cfg.match.min_disparity = -200.0f;  // a rotated rig's x offsets are not disparities
        cfg.match.max_disparity = 400.0f;
        StereoTracker tracker(752, 480, s.rig, cfg, Backend::Cpu);
        const auto& tracks = track_one(tracker, s);
        const StereoErrors e = measure(s, tracks);
        SCOPED_TRACE(describe(e));
        ASSERT_GE(e.tracks, 150u);
        EXPECT_GE(e.matched_fraction(), 0.90);
        EXPECT_LT(e.median_error(), 0.12);
        EXPECT_LE(StereoErrors::fraction_over(e.errors, 1.0), 0.02);
        EXPECT_LT(e.median_depth_rel_error(), 0.01);
        expect_consistent(tracks, s.rig, cfg);
        std::printf("[ measured ] raw %s %.0f deg: %s\n", c.distorted ? "distorted" : "pinhole", c.degrees,
                    describe(e).c_str());
    }
}

// The rig moving over 5 frames (forward, sideways, a slight yaw) in front of the slanted plane: the left
// tracks keep their ids, and every frame's matches stay accurate (the ones seeded by their previous
// disparity as well as the new ones).
TEST(StereoScenes, MovingRigSequence) {
    const auto frames = stereo_sequence(slanted_scene(641, 479, 16.0, 0.015, 0.008, 9), 5, {{0.006, -0.003, 0.04}}, 0.25);
    const StereoConfig cfg = scene_config();
    const auto results = run_stereo(frames, cfg, Backend::Cpu);
    for (std::size_t k = 0; k < frames.size(); ++k) {
        SCOPED_TRACE("frame " + std::to_string(k));
        const StereoErrors e = measure(frames[k], results[k]);
        SCOPED_TRACE(describe(e));
        ASSERT_GE(e.tracks, 120u);
        EXPECT_GE(e.matched_fraction(), 0.90);
        EXPECT_LT(e.median_disparity_error(), 0.05);
        EXPECT_LE(StereoErrors::fraction_over(e.disparity_errors, 1.0), 0.02);
        expect_consistent(results[k], frames[k].rig, cfg);
        if (k > 0) {
            std::size_t old = 0;
            for (const StereoTrack& t : results[k]) old += t.left.age > 0;
            EXPECT_GE(old, results[k].size() / 2) << "tracks kept from the frame before";
        }
    }
}

// The scenes themselves: the rendered right image is the left one seen from the right camera (checked at the
// truth's right pixel, bilinear), so that the truth the tests use is the images' truth.
TEST(StereoScenes, RenderedPairsAgreeWithTheirTruth) {
    const auto bilinear = [](const HostImage& img, double x, double y) {
        const int x0 = static_cast<int>(std::floor(x)), y0 = static_cast<int>(std::floor(y));
        const double fx = x - x0, fy = y - y0;
        const auto at = [&](int xx, int yy) { return static_cast<double>(img.at(xx, yy)); };
        return (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x0 + 1, y0)) + fy * ((1 - fx) * at(x0, y0 + 1) + fx * at(x0 + 1, y0 + 1));
    };
    const StereoScene scenes[] = {frontal_scene(333, 257, 12.37), slanted_scene(333, 257, 18.0, 0.02, -0.01),
                                  raw_scene(333, 257, 3.0, true)};
    for (const StereoScene& s : scenes) {
        double sum_true = 0, sum_off = 0;
        int n = 0;
        for (int y = 40; y < s.left.height() - 40; y += 3)
            for (int x = 60; x < s.left.width() - 60; x += 3) {
                const Point2d r = s.right_of(x, y);
                ASSERT_TRUE(std::isfinite(r.x));
                if (r.x < 1 || r.y < 1 || r.x > s.right.width() - 2 || r.y > s.right.height() - 2) continue;
                sum_true += std::abs(s.left.at(x, y) - bilinear(s.right, r.x, r.y));
                sum_off += std::abs(s.left.at(x, y) - bilinear(s.right, r.x + 1.0, r.y));  // one pixel off
                ++n;
            }
        ASSERT_GT(n, 500);
        // At the truth: within rounding and interpolation (a few grey levels); one pixel off: the texture's
        // contrast (tens of grey levels).
        EXPECT_LT(sum_true / n, 4.0);
        EXPECT_GT(sum_off / n, 4.0 * (sum_true / n));
    }
}

}  // namespace
}  // namespace kestrel::test
