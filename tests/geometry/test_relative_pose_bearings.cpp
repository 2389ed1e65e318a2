// RelativePoseEstimator on bearing vectors (CPU backend): a wide equidistant fisheye (848x800, points up to 80
// degrees off the axis, 0.5 px noise, 30 % outliers) with the per-point pixels-per-radian threshold; exact
// bearings beyond 90 degrees off the axis (a 200-degree lens); the rotation-only model chosen for a static or a
// purely rotating camera (good tracks kept) and never when the camera translates; pixels_per_radian against
// its closed forms; determinism and bad input. The comparison with OpenCV is in test_relative_pose_opencv.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "bearing_test_util.hpp"
#include "camera_test_util.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/error.hpp"
#include "kestrel/relative_pose.hpp"
#include "test_seed.hpp"

namespace kestrel::test {
namespace {

Mat3 mat(const RelativePoseResult& r) { return {r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]}; }
Vec3 vec(const RelativePoseResult& r) { return {r.t[0], r.t[1], r.t[2]}; }

TEST(RelativePoseBearings, WideFisheyeRecallAbove90Percent) {
    KESTREL_TEST_RNG(rng, 8480);
    const Camera cam = wide_fisheye_848x800();
    RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (cam.fx + cam.fy);
    cfg.threshold_px = 1.0;
    RelativePoseEstimator est(500, cfg, Backend::Cpu);
    const int trials = 10;
    double recall = 0.0, precision = 0.0, worst_rot = 0.0, worst_dir = 0.0, wide = 0.0;
    for (int trial = 0; trial < trials; ++trial) {
        BearingSceneOptions o;
        const BearingScene sc = make_bearing_scene(rng, cam, o);
        std::vector<std::uint8_t> mask(sc.n);
        const RelativePoseResult r = est.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, mask.data(), nullptr,
                                                           sc.ppr.data());
        ASSERT_EQ(r.status, PoseStatus::Ok) << "trial " << trial;
        EXPECT_EQ(r.model, PoseModel::FivePoint);
        double p = 0, q = 0;
        mask_quality(sc.inlier, mask.data(), true, p, q);
        precision += p / trials;
        recall += q / trials;
        worst_rot = std::fmax(worst_rot, rotation_error_deg(sc.R, mat(r)));
        worst_dir = std::fmax(worst_dir, direction_error_deg(sc.t, vec(r)));
        int beyond60 = 0, kept60 = 0;
        for (int i = 0; i < sc.n; ++i)
            if (sc.inlier[i] && sc.off_axis1[i] > 60.0) {
                ++beyond60;
                kept60 += mask[i];
            }
        wide += beyond60 ? static_cast<double>(kept60) / beyond60 / trials : 1.0 / trials;
    }
    std::printf("[relative-pose bearings] fisheye 848x800, 80 deg, 0.5 px, 30 %% outliers: recall %.3f, precision %.3f, "
                "recall beyond 60 deg %.3f, worst rotation %.3f deg, worst direction %.3f deg\n",
                recall, precision, wide, worst_rot, worst_dir);
    // Today (seed offset 0): recall 0.929, precision 0.997, beyond 60 degrees 0.920, worst rotation 0.175 deg,
    // worst direction 0.508 deg; over the offsets 0 to 8000 (9 draws of 10 scenes) at worst 0.923, 0.995, 0.902,
    // 0.433 deg and 1.226 deg. The direction bound: that worst plus a quarter (was 3 degrees).
    EXPECT_GE(recall, 0.9);
    EXPECT_GE(precision, 0.97);
    EXPECT_GE(wide, 0.85);
    EXPECT_LT(worst_rot, 0.5);
    EXPECT_LT(worst_dir, 1.5);
}

TEST(RelativePoseBearings, ExactBearingsBeyond90DegreesGiveTheExactPose) {
    // A 200-degree lens: directions up to 100 degrees off the axis (z < 0 for some), no noise.
    KESTREL_TEST_RNG(rng, 77);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    const Mat3 R = axis_angle({0.2, 1.0, -0.3}, 0.25);
    const Vec3 t{0.6, -0.2, 0.77};
    const int n = 200;
    std::vector<double> b1, b2;
    int behind = 0;
    while (static_cast<int>(b1.size()) < 3 * n) {
        const double th = 100.0 * M_PI / 180.0 * std::sqrt(u(rng)), ph = 2.0 * M_PI * u(rng);
        const Vec3 d{std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
        const double depth = 2.0 + 8.0 * u(rng);
        const Vec3 X{d[0] * depth, d[1] * depth, d[2] * depth};
        const Vec3 Y0 = mat_vec(R, X);
        const Vec3 Y{Y0[0] + t[0], Y0[1] + t[1], Y0[2] + t[2]};
        const double ny = std::sqrt(Y[0] * Y[0] + Y[1] * Y[1] + Y[2] * Y[2]);
        if (off_axis_deg(Y) > 100.0) continue;
        for (int c = 0; c < 3; ++c) {
            b1.push_back(d[c]);
            b2.push_back(Y[c] / ny);
        }
        behind += d[2] < 0.0 || Y[2] < 0.0;
    }
    ASSERT_GT(behind, 10);
    RelativePoseEstimator est(n, {}, Backend::Cpu);
    std::vector<std::uint8_t> mask(n);
    const RelativePoseResult r = est.estimate_bearings(b1.data(), b2.data(), n, mask.data());
    ASSERT_EQ(r.status, PoseStatus::Ok);
    EXPECT_EQ(r.model, PoseModel::FivePoint);
    EXPECT_EQ(r.inliers, n);
    EXPECT_EQ(r.cheirality_inliers, n);  // in front along every ray, also behind the image plane
    EXPECT_LT(rotation_error_deg(R, mat(r)), 1e-6);
    EXPECT_LT(direction_error_deg(t, vec(r)), 1e-6);
}

TEST(RelativePoseBearings, PinholeBearingsAsGoodAsNormalizedPoints) {
    // The same pinhole scenes through both entries: the bearing path (per-point scale) loses nothing.
    KESTREL_TEST_RNG(rng, 4242);
    Camera cam;
    cam.model = CameraModel::Pinhole;
    cam.width = 640;
    cam.height = 480;
    cam.fx = cam.fy = 500.0;
    cam.cx = 319.5;
    cam.cy = 239.5;
    RelativePoseConfig cfg;
    cfg.focal_px = 500.0;
    RelativePoseEstimator est(400, cfg, Backend::Cpu);
    double rb = 0, rn = 0, eb = 0, en = 0;
    const int trials = 10;
    for (int trial = 0; trial < trials; ++trial) {
        BearingSceneOptions o;
        o.n = 400;
        o.max_off_axis_deg = 40.0;
        const BearingScene sc = make_bearing_scene(rng, cam, o);
        std::vector<std::uint8_t> mb(sc.n), mn(sc.n);
        const RelativePoseResult a = est.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, mb.data(), nullptr,
                                                           sc.ppr.data());
        const RelativePoseResult b = est.estimate(sc.x1.data(), sc.x2.data(), sc.n, mn.data());
        ASSERT_EQ(a.status, PoseStatus::Ok);
        ASSERT_EQ(b.status, PoseStatus::Ok);
        double p = 0, q = 0;
        mask_quality(sc.inlier, mb.data(), true, p, q);
        rb += q / trials;
        mask_quality(sc.inlier, mn.data(), true, p, q);
        rn += q / trials;
        eb += rotation_error_deg(sc.R, mat(a)) / trials;
        en += rotation_error_deg(sc.R, mat(b)) / trials;
    }
    std::printf("[relative-pose bearings] pinhole 640x480: recall %.3f (bearings) vs %.3f (normalized); mean rotation "
                "error %.3f vs %.3f deg\n", rb, rn, eb, en);
    EXPECT_GE(rb, rn - 0.01);
    EXPECT_LE(eb, 1.2 * en + 0.01);
}

TEST(RelativePoseBearings, RotationOnlyForStaticAndRotatingCameraKeepsGoodTracks) {
    KESTREL_TEST_RNG(rng, 1357);
    const Camera cam = wide_fisheye_848x800();
    RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (cam.fx + cam.fy);
    RelativePoseConfig c2 = cfg;
    c2.method = PoseMethod::TwoPointWithRotation;
    RelativePoseEstimator est(300, cfg, Backend::Cpu), est2(300, c2, Backend::Cpu);
    Camera pin;  // for the normalized-point entry (the plane error suits a pinhole camera)
    pin.model = CameraModel::Pinhole;
    pin.width = 640;
    pin.height = 480;
    pin.fx = pin.fy = 286.0;
    pin.cx = 319.5;
    pin.cy = 239.5;
    for (int kind = 0; kind < 2; ++kind) {
        for (int trial = 0; trial < 6; ++trial) {
            BearingSceneOptions o;
            o.n = 300;
            o.outlier_ratio = trial % 2 ? 0.1 : 0.3;
            o.static_camera = kind == 0;
            o.pure_rotation = kind == 1;
            const BearingScene fe = make_bearing_scene(rng, cam, o);
            o.max_off_axis_deg = 45.0;
            const BearingScene ph = make_bearing_scene(rng, pin, o);
            std::vector<std::uint8_t> mask(o.n);
            for (int which = 0; which < 3; ++which) {
                const BearingScene& sc = which == 1 ? ph : fe;
                RelativePoseResult r;
                if (which == 0) r = est.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, mask.data(), nullptr, sc.ppr.data());
                else if (which == 1) r = est.estimate(sc.x1.data(), sc.x2.data(), sc.n, mask.data());
                else r = est2.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, mask.data(), sc.R.data(), sc.ppr.data());
                const std::string what = std::string(kind == 0 ? "static" : "rotating") + " trial " +
                                         std::to_string(trial) + " entry " + std::to_string(which);
                ASSERT_EQ(r.status, PoseStatus::Ok) << what;
                EXPECT_EQ(r.model, PoseModel::RotationOnly) << what << " inliers " << r.inliers << " rotation " << r.rotation_inliers << " status " << static_cast<int>(r.status) << " true " << (o.n - std::lround(o.outlier_ratio * o.n));
                EXPECT_EQ(r.t[0] * r.t[0] + r.t[1] * r.t[1] + r.t[2] * r.t[2], 0.0) << what;
                EXPECT_LT(rotation_error_deg(sc.R, mat(r)), 0.2) << what;
                double p = 0, q = 0;
                mask_quality(sc.inlier, mask.data(), true, p, q);
                // Good tracks are kept: the 2-dof threshold keeps ~95 % of the noisy correspondences
                EXPECT_GE(q, 0.9) << what;
                EXPECT_GE(p, 0.97) << what;
            }
        }
    }
}

TEST(RelativePoseBearings, TranslatingCameraNeverGivesRotationOnly) {
    KESTREL_TEST_RNG(rng, 2468);
    const Camera cam = wide_fisheye_848x800();
    RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (cam.fx + cam.fy);
    RelativePoseEstimator est(300, cfg, Backend::Cpu);
    for (int trial = 0; trial < 12; ++trial) {
        BearingSceneOptions o;
        o.n = 300;
        o.baseline = trial < 6 ? 1.0 : 0.1;  // also a short baseline: 3-15 px of parallax at 2-10 m
        const BearingScene sc = make_bearing_scene(rng, cam, o);
        const RelativePoseResult r = est.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, nullptr, nullptr,
                                                           sc.ppr.data());
        ASSERT_EQ(r.status, PoseStatus::Ok);
        EXPECT_EQ(r.model, PoseModel::FivePoint) << "trial " << trial;
        EXPECT_LT(r.rotation_inliers, r.inliers);
        // The direction (less sharp with 3-15 px of parallax): worst over the seed offsets 0 to 8000 (9 x 6 draws
        // each) 0.75 degrees at 1 m, 15.4 at 0.1 m; bounds twice and 1.3 times that (were 3 and 10: the short
        // baseline's failed on 4 of the 54 draws).
        EXPECT_LT(direction_error_deg(sc.t, vec(r)), o.baseline < 1.0 ? 20.0 : 1.5);
        std::printf("[relative-pose bearings] translating trial %d, baseline %.1f m: rotation-only model explains %d of "
                    "%d, direction error %.2f deg\n", trial, o.baseline, r.rotation_inliers, r.inliers,
                    direction_error_deg(sc.t, vec(r)));
    }
}

TEST(RelativePoseBearings, PixelsPerRadianClosedForms) {
    Camera pin;
    pin.model = CameraModel::Pinhole;
    pin.width = 640;
    pin.height = 480;
    pin.fx = 400.0;
    pin.fy = 600.0;
    pin.cx = 320;
    pin.cy = 240;
    const double axis[3] = {0, 0, 2};
    EXPECT_NEAR(pixels_per_radian(pin, axis), 500.0, 1e-9);
    for (double th : {0.1, 0.5, 1.0}) {
        const double d[3] = {std::sin(th), 0.0, std::cos(th)};
        EXPECT_NEAR(pixels_per_radian(pin, d), 500.0 / std::pow(std::cos(th), 1.5), 1e-7) << th;
    }
    const double back[3] = {0.1, 0.0, -1.0};
    EXPECT_TRUE(std::isnan(pixels_per_radian(pin, back)));
    Camera fe = wide_fisheye_848x800();
    for (double& k : fe.d) k = 0.0;
    fe.fx = fe.fy = 300.0;
    EXPECT_NEAR(pixels_per_radian(fe, axis), 300.0, 1e-9);
    for (double th : {0.3, 1.2, 1.7}) {  // also beyond 90 degrees
        const double d[3] = {0.0, std::sin(th), std::cos(th)};
        EXPECT_NEAR(pixels_per_radian(fe, d), 300.0 * std::sqrt(th / std::sin(th)), 1e-7) << th;
    }
    Camera rt = pin;  // radtan with k1 only: radial (1 + 3 k1 r^2) sec^2, tangential (1 + k1 r^2) sec
    rt.model = CameraModel::PinholeRadtan;
    rt.d[0] = -0.2;
    const double th = 0.6, r = std::tan(th);
    const double d[3] = {std::sin(th), 0.0, std::cos(th)};
    const double radial = (1 - 0.6 * r * r) * (1 + r * r), tangential = (1 - 0.2 * r * r) * std::sqrt(1 + r * r);
    EXPECT_NEAR(pixels_per_radian(rt, d), 500.0 * std::sqrt(radial * tangential), 1e-7);
    Camera bad = pin;
    bad.fx = -1;
    EXPECT_THROW(pixels_per_radian(bad, axis), InvalidArgument);
}

TEST(RelativePoseBearings, SameResultAcrossBatchSizesAndBadInput) {
    KESTREL_TEST_RNG(rng, 99);
    const Camera cam = wide_fisheye_848x800();
    BearingSceneOptions o;
    o.n = 200;
    const BearingScene sc = make_bearing_scene(rng, cam, o);
    RelativePoseConfig cfg;
    cfg.focal_px = 286.0;
    std::vector<RelativePoseResult> rs;
    std::vector<std::vector<std::uint8_t>> masks;
    for (int batch : {16, 1, 37, 4096}) {
        cfg.batch = batch;
        RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
        masks.emplace_back(o.n);
        rs.push_back(est.estimate_bearings(sc.b1.data(), sc.b2.data(), o.n, masks.back().data(), nullptr, sc.ppr.data()));
    }
    for (std::size_t k = 1; k < rs.size(); ++k) {
        EXPECT_EQ(rs[k].best_hypothesis, rs[0].best_hypothesis);
        EXPECT_EQ(rs[k].hypotheses, rs[0].hypotheses);
        EXPECT_EQ(std::memcmp(rs[k].E.data(), rs[0].E.data(), sizeof(double) * 9), 0);
        EXPECT_EQ(std::memcmp(rs[k].R.data(), rs[0].R.data(), sizeof(double) * 9), 0);
        EXPECT_EQ(masks[k], masks[0]);
    }
    // Bearings need not be unit: scaled bearings give the same bits only up to normalization's rounding, but
    // the same model
    std::vector<double> s1(sc.b1), s2(sc.b2);
    for (double& v : s1) v *= 3.0;
    RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
    const RelativePoseResult rs3 = est.estimate_bearings(s1.data(), sc.b2.data(), o.n, nullptr, nullptr, sc.ppr.data());
    EXPECT_EQ(rs3.status, PoseStatus::Ok);
    EXPECT_LT(rotation_error_deg(mat(rs3), mat(rs[0])), 0.05);
    // bad input names the parameter
    std::vector<double> z(sc.b1);
    z[3 * 7] = z[3 * 7 + 1] = z[3 * 7 + 2] = 0.0;
    try {
        est.estimate_bearings(z.data(), sc.b2.data(), o.n);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "b1");
        EXPECT_NE(std::string(e.what()).find("index 7"), std::string::npos) << e.what();
    }
    z = sc.b2;
    z[3 * 5 + 1] = NAN;
    try {
        est.estimate_bearings(sc.b1.data(), z.data(), o.n);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "b2");
    }
    std::vector<double> ppr(sc.ppr);
    ppr[3] = 0.0;
    try {
        est.estimate_bearings(sc.b1.data(), sc.b2.data(), o.n, nullptr, nullptr, ppr.data());
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "pixels_per_radian");
    }
    try {
        est.estimate_bearings(nullptr, sc.b2.data(), o.n);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "b1");
    }
    PoseDeviceInput in;
    in.count = 5;
    EXPECT_THROW(est.estimate_device_async(in, nullptr), StateError);  // CPU backend
    EXPECT_EQ(est.device_mask(), nullptr);
    EXPECT_EQ(est.device_record(), nullptr);
    EXPECT_THROW(est.finish(), StateError);
    EXPECT_EQ(est.estimate_bearings(sc.b1.data(), sc.b2.data(), 4).status, PoseStatus::TooFewPoints);
}

TEST(RelativePoseBearings, UnprojectBearingReachesBeyond90Degrees) {
    // A TUM-VI-like fisheye sees beyond 90 degrees in its corners, where unproject (normalized points) answers
    // OutsideModel: unproject_bearing gives their rays (z < 0), which reproject onto the pixel (the equidistant
    // model written out here), and equals the normalized point's direction everywhere else.
    const Camera cam = tumvi_cam0();
    int behind = 0, same = 0;
    double worst_px = 0.0, worst_dir = 0.0;
    for (int j = 0; j <= 64; ++j)
        for (int i = 0; i <= 64; ++i) {
            const Point2d px{-0.5 + (cam.width) * i / 64.0, -0.5 + (cam.height) * j / 64.0};
            const Unprojection u = unproject(cam, px);
            const BearingUnprojection b = unproject_bearing(cam, px);
            if (u.status == UnprojectStatus::Ok) {
                ASSERT_EQ(b.status, UnprojectStatus::Ok) << px.x << " " << px.y;
                const double l = std::sqrt(u.normalized.x * u.normalized.x + u.normalized.y * u.normalized.y + 1.0);
                worst_dir = std::fmax(worst_dir, std::fabs(b.bearing[0] - u.normalized.x / l) +
                                                     std::fabs(b.bearing[1] - u.normalized.y / l) +
                                                     std::fabs(b.bearing[2] - 1.0 / l));
                ++same;
                continue;
            }
            if (b.status != UnprojectStatus::Ok) continue;
            EXPECT_LE(b.bearing[2], 1e-9);  // only rays at or beyond 90 degrees are new
            ++behind;
            const double s = std::sqrt(b.bearing[0] * b.bearing[0] + b.bearing[1] * b.bearing[1]);
            const double th = std::atan2(s, b.bearing[2]), t2 = th * th;
            const double thd = th * (1 + t2 * (cam.d[0] + t2 * (cam.d[1] + t2 * (cam.d[2] + t2 * cam.d[3]))));
            const double u2 = cam.fx * thd * b.bearing[0] / s + cam.cx, v2 = cam.fy * thd * b.bearing[1] / s + cam.cy;
            worst_px = std::fmax(worst_px, std::hypot(u2 - px.x, v2 - px.y));
            const double ppr = pixels_per_radian(cam, b.bearing);
            EXPECT_TRUE(std::isfinite(ppr) && ppr > 0.0);
        }
    std::printf("[relative-pose bearings] TUM-VI-like fisheye: %d pixels beyond 90 degrees now have rays (reprojection "
                "within %.2g px), %d agree with the normalized points (within %.2g)\n",
                behind, worst_px, same, worst_dir);
    EXPECT_GT(behind, 50);
    EXPECT_LT(worst_px, 1e-6);
    EXPECT_LT(worst_dir, 1e-9);
    // Pinhole: the normalized (x, y, 1) made unit, also for a pixel far outside the image (no overflow).
    Camera pin;
    pin.model = CameraModel::Pinhole;
    pin.width = 640;
    pin.height = 480;
    pin.fx = 400.0;
    pin.fy = 500.0;
    pin.cx = 320.0;
    pin.cy = 240.0;
    for (const Point2d px : {Point2d{10.0, 470.0}, Point2d{320.0, 240.0}, Point2d{1e200, -3e199}}) {
        const BearingUnprojection b = unproject_bearing(pin, px);
        ASSERT_EQ(b.status, UnprojectStatus::Ok);
        const double x = (px.x - pin.cx) / pin.fx, y = (px.y - pin.cy) / pin.fy;
        const double m = std::fmax(std::fmax(std::fabs(x), std::fabs(y)), 1.0);
        const double l = std::sqrt((x / m) * (x / m) + (y / m) * (y / m) + (1 / m) * (1 / m));
        EXPECT_NEAR(b.bearing[0], x / m / l, 1e-15);
        EXPECT_NEAR(b.bearing[1], y / m / l, 1e-15);
        EXPECT_NEAR(b.bearing[2], 1 / m / l, 1e-15);
    }
    const BearingUnprojection nan = unproject_bearing(cam, {NAN, 3.0});
    EXPECT_EQ(nan.status, UnprojectStatus::NonFinite);
    EXPECT_TRUE(std::isnan(nan.bearing[0]));
}

TEST(RelativePoseBearings, FisheyePointsBeyond90DegreesAreUsed) {
    // The TUM-VI-like fisheye's pixels up to 100 degrees off the axis, through unproject_bearing: the points
    // beyond 90 degrees (no normalized point exists for them) are kept as inliers like the others.
    KESTREL_TEST_RNG(rng, 19590);
    const Camera cam = tumvi_cam0();
    RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (cam.fx + cam.fy);
    RelativePoseEstimator est(400, cfg, Backend::Cpu);
    const int trials = 6;
    double recall = 0.0, beyond = 0.0, precision = 0.0, worst_rot = 0.0, worst_dir = 0.0;
    int n_beyond = 0;
    for (int trial = 0; trial < trials; ++trial) {
        BearingSceneOptions o;
        o.n = 400;
        o.max_off_axis_deg = 100.0;
        const BearingScene sc = make_ray_scene(rng, cam, o);
        std::vector<std::uint8_t> mask(sc.n);
        const RelativePoseResult r = est.estimate_bearings(sc.b1.data(), sc.b2.data(), sc.n, mask.data(), nullptr,
                                                           sc.ppr.data());
        ASSERT_EQ(r.status, PoseStatus::Ok);
        double p = 0, q = 0;
        mask_quality(sc.inlier, mask.data(), true, p, q);
        recall += q / trials;
        precision += p / trials;
        int all = 0, kept = 0;
        for (int i = 0; i < sc.n; ++i)
            if (sc.inlier[i] && sc.off_axis1[i] > 90.0) {
                ++all;
                kept += mask[i];
            }
        n_beyond += all;
        beyond += all ? static_cast<double>(kept) / all / trials : 1.0 / trials;
        worst_rot = std::fmax(worst_rot, rotation_error_deg(sc.R, mat(r)));
        worst_dir = std::fmax(worst_dir, direction_error_deg(sc.t, vec(r)));
    }
    std::printf("[relative-pose bearings] TUM-VI-like fisheye up to 100 deg: recall %.3f, precision %.3f, recall of the "
                "%d inliers beyond 90 deg %.3f, worst rotation %.3f deg, direction %.3f deg\n",
                recall, precision, n_beyond, beyond, worst_rot, worst_dir);
    // Today (seed offset 0): recall 0.940, 55 inliers beyond 90 degrees of which 0.951 kept, precision 0.997, worst
    // rotation 0.171 deg, direction 0.379 deg; over the offsets 0 to 8000 at worst 0.929, 0.843 (beyond 90: a
    // statistical bound, not one of the swept properties), 0.994, 0.285 deg and 0.835 deg. The direction bound: that
    // worst plus a fifth (was 3 degrees).
    EXPECT_GT(n_beyond, 20);
    EXPECT_GE(recall, 0.9);
    EXPECT_GE(beyond, 0.85);
    EXPECT_GE(precision, 0.97);
    EXPECT_LT(worst_rot, 0.5);
    EXPECT_LT(worst_dir, 1.0);
}

}  // namespace
}  // namespace kestrel::test
