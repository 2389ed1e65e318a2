// FeatureTracker's geometric check: the check on generated correspondences with known answers (translating,
// purely rotating and static cameras, with independently moving points, with and without a rotation prior; the
// checked tracks' selection), and the whole tracker on a rendered sequence with moving cards
// (tests/support/motion_scenes.hpp): the cards' tracks end as Outlier, the static ones do not.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "kestrel/camera.hpp"
#include "kestrel/feature_tracker.hpp"
#include "motion_scenes.hpp"
#include "pose_test_util.hpp"
#include "src/track/geometric_check.hpp"

namespace kestrel {
namespace {

using test::Mat3;
using test::Vec3;

Camera pinhole(int w = 752, int h = 480, double f = 458.0) {
    Camera c;
    c.model = CameraModel::Pinhole;
    c.width = w;
    c.height = h;
    c.fx = c.fy = f;
    c.cx = 0.5 * (w - 1);
    c.cy = 0.5 * (h - 1);
    return c;
}

GeometricCheckConfig check_config(const Camera& cam) {
    GeometricCheckConfig g;
    g.enabled = true;
    g.camera = cam;
    return g;
}

/// Correspondences of points 2..10 m in front of a camera moving by (R, t) (X2 = R X1 + t), in pixels, with
/// Gaussian noise; the last `moving` points get an extra image motion of `jump` px perpendicular to their
/// epipolar line (an independently moving object).
struct Pairs {
    std::vector<Point2f> p1, p2;
    std::vector<std::uint8_t> moving;
};

Pairs make_pairs(const Camera& cam, const Mat3& R, const Vec3& t, int n, int moving, double noise, double jump,
                 std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, noise);
    Pairs s;
    while (static_cast<int>(s.p1.size()) < n) {
        const double px = 20 + u(rng) * (cam.width - 40), py = 20 + u(rng) * (cam.height - 40);
        const double z = 2.0 + 8.0 * u(rng);
        const Vec3 X{(px - cam.cx) / cam.fx * z, (py - cam.cy) / cam.fy * z, z};
        const Vec3 Y0 = test::mat_vec(R, X);
        const Vec3 Y{Y0[0] + t[0], Y0[1] + t[1], Y0[2] + t[2]};
        if (Y[2] < 0.5) continue;
        double qx = cam.fx * Y[0] / Y[2] + cam.cx, qy = cam.fy * Y[1] / Y[2] + cam.cy;
        const bool mov = static_cast<int>(s.p1.size()) >= n - moving;
        if (mov) {
            // The epipolar line of X in image 2 runs through the epipole (the image of t) and (qx, qy): jump across.
            double dx = qx - (cam.fx * t[0] / (std::fabs(t[2]) > 1e-9 ? t[2] : 1e-9) + cam.cx);
            double dy = qy - (cam.fy * t[1] / (std::fabs(t[2]) > 1e-9 ? t[2] : 1e-9) + cam.cy);
            if (std::fabs(t[2]) < 1e-9) {  // epipole at infinity along (t0, t1); none without translation:
                dx = t[0];                  // a random direction
                dy = t[1];
                if (dx == 0 && dy == 0) {
                    const double a = 2 * M_PI * u(rng);
                    dx = std::cos(a);
                    dy = std::sin(a);
                }
            }
            double nx = -dy, ny = dx;
            const double nn = std::sqrt(nx * nx + ny * ny);
            if (nn > 0) {
                nx /= nn;
                ny /= nn;
            } else {
                nx = 0;
                ny = 1;
            }
            qx += jump * nx;
            qy += jump * ny;
        }
        s.p1.push_back({static_cast<float>(px + g(rng)), static_cast<float>(py + g(rng))});
        s.p2.push_back({static_cast<float>(qx + g(rng)), static_cast<float>(qy + g(rng))});
        s.moving.push_back(mov ? 1 : 0);
    }
    return s;
}

struct CheckOutcome {
    GeometricCheckResult res;
    int static_rejected = 0, moving_kept = 0, moving = 0;
};

CheckOutcome run_check(const GeometricCheckConfig& cfg, const Pairs& s, const double* prior = nullptr) {
    const int n = static_cast<int>(s.p1.size());
    detail::GeometricCheck check(cfg, n);
    std::vector<detail::TrackVerdict> v(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) v[i] = {TrackStatus::Tracked, 0, s.p2[i].x, s.p2[i].y};
    std::vector<std::uint8_t> out(static_cast<std::size_t>(n), 9);
    CheckOutcome o;
    o.res = check.run(v.data(), s.p1.data(), n, prior, out.data());
    for (int i = 0; i < n; ++i) {
        EXPECT_LE(out[i], 1);
        if (s.moving[i]) {
            ++o.moving;
            o.moving_kept += out[i] ? 0 : 1;
        } else {
            o.static_rejected += out[i] ? 1 : 0;
        }
    }
    return o;
}

TEST(GeometricCheck, OnlyTrackedTracksWithAPreimageAreChecked) {
    const Camera cam = pinhole();
    const Pairs s = make_pairs(cam, test::axis_angle({0.1, 1.0, 0.0}, 0.01), {0.08, 0.01, 0.02}, 60, 0, 0.1, 0, 5);
    const int n = 60;
    detail::GeometricCheck check(check_config(cam), n);
    std::vector<detail::TrackVerdict> v(n);
    std::vector<Point2f> o = s.p1;
    for (int i = 0; i < n; ++i) v[i] = {TrackStatus::Tracked, 0, s.p2[i].x, s.p2[i].y};
    v[3].status = TrackStatus::LostResidual;  // not checked, never an Outlier
    v[4].x = std::numeric_limits<float>::quiet_NaN();  // no preimage: not checked
    o[5].y = std::numeric_limits<float>::infinity();
    v[6].x += 25.0f;  // far off: an Outlier
    std::vector<std::uint8_t> out(n, 9);
    const GeometricCheckResult& r = check.run(v.data(), o.data(), n, nullptr, out.data());
    EXPECT_EQ(r.checked, n - 3);
    EXPECT_EQ(r.model, CheckModel::Essential);
    EXPECT_EQ(r.outliers, 1);
    for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], i == 6 ? 1 : 0) << i;
}

TEST(GeometricCheck, TranslatingCameraRejectsTheMovingPointsOnly) {
    const Camera cam = pinhole();
    const Mat3 R = test::axis_angle({0.1, 1.0, 0.0}, 0.01);
    const Vec3 t{0.08, 0.01, 0.02};  // metres per frame: parallax of several px at 2..10 m
    for (double jump : {2.0, 4.0}) {
        const Pairs s = make_pairs(cam, R, t, 200, 20, 0.1, jump, 11);
        const CheckOutcome o = run_check(check_config(cam), s);
        EXPECT_EQ(o.res.model, CheckModel::Essential) << "jump " << jump;
        EXPECT_EQ(o.res.checked, 200);
        EXPECT_EQ(o.static_rejected, 0) << "jump " << jump;
        EXPECT_EQ(o.moving_kept, 0) << "jump " << jump;
        EXPECT_EQ(o.res.outliers, 20);
        Vec3 tt{o.res.t[0], o.res.t[1], o.res.t[2]};
        EXPECT_LT(test::direction_error_deg(tt, t), 3.0);
    }
}

TEST(GeometricCheck, TwoPointWithThePrior) {
    const Camera cam = pinhole();
    const Mat3 R = test::axis_angle({0.0, 1.0, 0.2}, 0.02);
    const Vec3 t{0.1, 0.0, 0.03};
    const Pairs s = make_pairs(cam, R, t, 150, 15, 0.1, 3.0, 12);
    const CheckOutcome o = run_check(check_config(cam), s, R.data());
    EXPECT_EQ(o.res.model, CheckModel::TwoPoint);
    EXPECT_EQ(o.static_rejected, 0);
    EXPECT_EQ(o.moving_kept, 0);
    for (int j = 0; j < 9; ++j) EXPECT_EQ(o.res.R[j], R[j]);
}

TEST(GeometricCheck, DegenerateMotionKeepsEveryStaticTrack) {
    const Camera cam = pinhole();
    // Purely rotating and static cameras, with and without moving points, several seeds: the rotation-only model
    // decides and no static point is rejected.
    for (double angle : {0.0, 0.03}) {
        for (int moving : {0, 15}) {
            for (std::uint64_t seed = 1; seed <= 5; ++seed) {
                const Mat3 R = test::axis_angle({0.3, 1.0, 0.1}, angle);
                const Pairs s = make_pairs(cam, R, {0, 0, 0}, 150, moving, 0.15, 3.0, seed);
                const CheckOutcome o = run_check(check_config(cam), s);
                const std::string what = "angle " + std::to_string(angle) + " moving " + std::to_string(moving) +
                                         " seed " + std::to_string(seed);
                EXPECT_EQ(o.res.model, CheckModel::RotationOnly) << what;
                EXPECT_EQ(o.static_rejected, 0) << what;
                // A moving point is ended when the pose rejects it too; the pose's free epipole may absorb a few.
                EXPECT_LE(o.moving_kept, moving / 5) << what;
                Mat3 Rm;
                for (int j = 0; j < 9; ++j) Rm[j] = o.res.R[j];
                EXPECT_LT(test::rotation_error_deg(Rm, R), 0.05) << what;
            }
        }
    }
}

TEST(GeometricCheck, TooFewTracksRejectNothing) {
    const Camera cam = pinhole();
    const Pairs s = make_pairs(cam, test::axis_angle({0, 1, 0}, 0.01), {0.1, 0, 0}, 11, 3, 0.1, 5.0, 4);
    GeometricCheckConfig cfg = check_config(cam);
    cfg.min_tracks = 12;
    const CheckOutcome o = run_check(cfg, s);
    EXPECT_EQ(o.res.model, CheckModel::None);
    EXPECT_EQ(o.res.outliers, 0);
    EXPECT_EQ(o.moving_kept, 3);
}

TEST(GeometricCheck, SameResultTwice) {
    const Camera cam = pinhole();
    const Pairs s = make_pairs(cam, test::axis_angle({0, 1, 0}, 0.01), {0.1, 0, 0.02}, 200, 30, 0.3, 2.5, 9);
    const CheckOutcome a = run_check(check_config(cam), s), b = run_check(check_config(cam), s);
    EXPECT_EQ(a.res.model, b.res.model);
    EXPECT_EQ(a.res.outliers, b.res.outliers);
    EXPECT_EQ(a.res.R, b.res.R);
    EXPECT_EQ(a.res.t, b.res.t);
}

TEST(GeometricCheck, FisheyeTracksBeyondNinetyDegreesAreChecked) {
    // A TUM-VI-like equidistant fisheye (about 190 degrees): points all around the camera, projected by the model
    // (theta_d = theta (1 + k1 theta^2 + ...)); the check estimates on their bearings, so the tracks beyond 90
    // degrees off the axis (no normalized point) are checked too, and a moving one there ends as Outlier.
    Camera cam;
    cam.model = CameraModel::Fisheye;
    cam.width = cam.height = 512;
    cam.fx = 190.978;
    cam.fy = 190.973;
    cam.cx = 254.932;
    cam.cy = 256.897;
    const double k[4] = {0.00348238, 0.000715034, -0.00205323, 0.000202937};
    for (int j = 0; j < 4; ++j) cam.d[j] = k[j];
    auto pixel = [&](const Vec3& X, Point2f* out) {
        const double n = std::sqrt(X[0] * X[0] + X[1] * X[1] + X[2] * X[2]);
        const double th = std::acos(X[2] / n), r = std::hypot(X[0], X[1]);
        const double t2 = th * th, td = th * (1 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3]))));
        out->x = static_cast<float>(cam.fx * td * X[0] / r + cam.cx);
        out->y = static_cast<float>(cam.fy * td * X[1] / r + cam.cy);
        return out->x > 2 && out->x < 510 && out->y > 2 && out->y < 510;
    };
    const Mat3 R = test::axis_angle({0.0, 1.0, 0.1}, 0.02);
    const Vec3 t{0.1, 0.0, 0.02};
    std::mt19937_64 rng(31);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<Point2f> p1, p2;
    std::vector<int> behind;  // indices beyond 90 degrees
    while (p1.size() < 150) {
        const double th = (p1.size() % 2 ? 1.45 + 0.22 * std::fabs(u(rng)) : 1.65 * std::fabs(u(rng)));
        const double ph = M_PI * u(rng), d = 3.0 + 4.0 * std::fabs(u(rng));
        const Vec3 X{d * std::sin(th) * std::cos(ph), d * std::sin(th) * std::sin(ph), d * std::cos(th)};
        const Vec3 RX = test::mat_vec(R, X);
        Point2f a, b;
        if (!pixel(X, &a) || !pixel({RX[0] + t[0], RX[1] + t[1], RX[2] + t[2]}, &b)) continue;
        if (X[2] < 0) behind.push_back(static_cast<int>(p1.size()));
        p1.push_back(a);
        p2.push_back(b);
    }
    ASSERT_GE(behind.size(), 5u);
    const int n = 150, mover = behind[0];
    p2[static_cast<std::size_t>(mover)].y += 8.0f;  // a mover beyond 90 degrees
    detail::GeometricCheck check(check_config(cam), n);
    std::vector<detail::TrackVerdict> v(n);
    for (int i = 0; i < n; ++i) v[i] = {TrackStatus::Tracked, 0, p2[i].x, p2[i].y};
    std::vector<std::uint8_t> out(n, 9);
    const GeometricCheckResult& r = check.run(v.data(), p1.data(), n, nullptr, out.data());
    EXPECT_EQ(r.checked, n) << "tracks beyond 90 degrees must be checked";
    EXPECT_EQ(r.model, CheckModel::Essential);
    EXPECT_EQ(out[static_cast<std::size_t>(mover)], 1);
    EXPECT_EQ(r.outliers, 1);
}

// ---- the tracker on a rendered sequence (tests/support/motion_scenes.hpp) ----

struct TrackerRun {
    int moving_tracks = 0, moving_rejected = 0, moving_escaped = 0, moving_escaped_drifted = 0;
    int static_tracks = 0, static_outliers = 0, static_outliers_drifted = 0;
    std::vector<CheckModel> models;
};

TrackerRun run_tracker(const test::MotionScene& scene, bool check_on, Backend backend, int baseline_frames = 3,
                       bool gyro = false) {
    TrackerConfig cfg;
    cfg.target_features = 200;
    cfg.geometric_check = check_config(scene.camera);
    cfg.geometric_check.enabled = check_on;
    cfg.geometric_check.baseline_frames = baseline_frames;
    FeatureTracker tracker(scene.camera.width, scene.camera.height, cfg, backend);
    test::TrackLabels labels(scene);
    TrackerRun r;
    for (int f = 0; f < scene.frames; ++f) {
        const HostImage img = scene.render(f);
        std::array<double, 9> R{};
        test::MVec3 t{};
        if (gyro && f > 0) scene.relative_pose(f, &R, &t);  // the true frame-to-frame rotation: the gyro's
        tracker.track(img.view(), nullptr, gyro && f > 0 ? &R : nullptr);
        labels.update(f, tracker.tracks(), tracker.lost_tracks());
        r.models.push_back(tracker.geometric_check().model);
    }
    const test::LabelSummary s = labels.summary();
    r.moving_tracks = s.moving_tracks;
    r.moving_escaped = s.moving_still_tracked_after_3;
    r.moving_escaped_drifted = s.moving_still_drifted;
    r.moving_rejected = s.moving_outliers;
    r.static_tracks = s.static_tracks;
    r.static_outliers = s.static_outliers;
    r.static_outliers_drifted = s.static_outliers_drifted;
    return r;
}

TEST(GeometricCheckTracker, MovingObjectTracksEndAsOutliers) {
    const test::MotionScene scene = test::motion_scene_small();
    const TrackerRun on = run_tracker(scene, true, Backend::Cpu);
    ASSERT_GE(on.moving_tracks, 5);
    ASSERT_GT(on.static_tracks, 40);
    EXPECT_GT(on.moving_rejected, 0);
    EXPECT_LE(on.moving_escaped, on.moving_tracks / 20) << "more than 5 % of the moving tracks live 3 frames on";
    EXPECT_LE(on.static_outliers, on.static_tracks / 10) << "more than 10 % of the static tracks ended as Outlier";
    for (std::size_t f = 1; f < on.models.size(); ++f) EXPECT_NE(on.models[f], CheckModel::None) << "frame " << f;
    // Without the check, the object's tracks live on (LK follows the object).
    const TrackerRun off = run_tracker(scene, false, Backend::Cpu);
    EXPECT_GT(off.moving_escaped, off.moving_tracks / 2);
    EXPECT_EQ(off.static_outliers, 0);
}

TEST(GeometricCheck, BaselinePriorIsTheProductOfTheFramesPriors) {
    // X_k = R_k X_(k-1): over 3 frames R_k R_(k-1) R_(k-2), about three different axes (the order matters).
    auto rot = [](const Vec3& axis, double angle) {
        const Mat3 m = test::axis_angle(axis, angle);
        std::array<double, 9> a{};
        for (int j = 0; j < 9; ++j) a[static_cast<std::size_t>(j)] = m[static_cast<std::size_t>(j)];
        return a;
    };
    const auto Ra = rot({1, 0, 0}, 0.2), Rb = rot({0, 1, 0}, 0.3), Rc = rot({0, 0, 1}, 0.4), Rd = rot({1, 1, 0}, 0.1);
    detail::GeoPriorRun run{};
    std::array<double, 9> out{};
    EXPECT_FALSE(detail::geo_prior_over(run, Rc, 3, &out));
    detail::geo_prior_push(run, &Ra, 3);
    EXPECT_FALSE(detail::geo_prior_over(run, Rc, 3, &out)) << "one frame of the run is missing";
    detail::geo_prior_push(run, &Rb, 3);
    ASSERT_TRUE(detail::geo_prior_over(run, Rc, 3, &out));
    const auto want = detail::geo_mat_mul(detail::geo_mat_mul(Rc, Rb), Ra);
    for (std::size_t j = 0; j < 9; ++j) EXPECT_NEAR(out[j], want[j], 1e-15) << j;
    const auto wrong = detail::geo_mat_mul(detail::geo_mat_mul(Ra, Rb), Rc);
    double diff = 0;
    for (std::size_t j = 0; j < 9; ++j) diff = std::max(diff, std::fabs(want[j] - wrong[j]));
    EXPECT_GT(diff, 0.01) << "the test must tell the order";
    detail::geo_prior_push(run, &Rc, 3);  // the run keeps the last L - 1 = 2: Rb, Rc
    ASSERT_TRUE(detail::geo_prior_over(run, Rd, 3, &out));
    const auto want2 = detail::geo_mat_mul(detail::geo_mat_mul(Rd, Rc), Rb);
    for (std::size_t j = 0; j < 9; ++j) EXPECT_NEAR(out[j], want2[j], 1e-15) << j;
    detail::geo_prior_push(run, nullptr, 3);  // a frame without a prior ends the run
    EXPECT_FALSE(detail::geo_prior_over(run, Rd, 3, &out));
}

TEST(GeometricCheckTracker, SlowMoversEndOverTheBaseline) {
    // Cards moving below the threshold on every frame pair: the frame pair alone (baseline_frames 1) keeps most of
    // their tracks (6 of 7 live 3 frames on); over 3 frames they are off by more, and the baseline test ends them
    // (none of 8), while the clean static tracks (anchored: their error does not grow) stay (0 of 85 ended).
    const test::MotionScene scene = test::motion_scene_small_slow();
    const TrackerRun pair = run_tracker(scene, true, Backend::Cpu, 1);
    const TrackerRun base = run_tracker(scene, true, Backend::Cpu, 3);
    const TrackerRun gyro = run_tracker(scene, true, Backend::Cpu, 3, true);  // the baseline's prior: R_k R_k-1 R_k-2
    ASSERT_GE(pair.moving_tracks, 5);
    ASSERT_GE(base.moving_tracks, 5);
    ASSERT_GT(base.static_tracks, 40);
    EXPECT_GT(pair.moving_escaped, pair.moving_tracks / 2) << "the cards are not slow: the frame pair sees them";
    EXPECT_LE(base.moving_escaped - base.moving_escaped_drifted, base.moving_tracks / 20)
        << "more than 5 % of the slow movers live 3 frames on their card";
    EXPECT_LE(base.static_outliers - base.static_outliers_drifted, base.static_tracks / 100)
        << "more than 1 % of the clean static tracks ended as Outlier";
    ASSERT_GE(gyro.moving_tracks, 5);
    EXPECT_LE(gyro.moving_escaped - gyro.moving_escaped_drifted, gyro.moving_tracks / 20) << "with the gyro";
    EXPECT_LE(gyro.static_outliers - gyro.static_outliers_drifted, gyro.static_tracks / 100) << "with the gyro";
    for (std::size_t f = 1; f < gyro.models.size(); ++f)
        EXPECT_TRUE(gyro.models[f] == CheckModel::TwoPoint || gyro.models[f] == CheckModel::RotationOnly) << f;
}

TEST(GeometricCheckTracker, ConfigurationIsValidated) {
    TrackerConfig cfg;
    cfg.geometric_check.enabled = true;  // camera unset
    EXPECT_THROW(FeatureTracker(752, 480, cfg, Backend::Cpu), InvalidArgument);
    cfg.geometric_check.camera = pinhole(640, 480);
    try {
        FeatureTracker t(752, 480, cfg, Backend::Cpu);
        ADD_FAILURE() << "a camera of another size was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("geometric_check.camera"), std::string::npos) << e.what();
    }
    cfg.geometric_check.camera = pinhole();
    cfg.geometric_check.threshold_px = 0.0;
    EXPECT_THROW(validate(cfg), InvalidArgument);
    cfg.geometric_check.threshold_px = 1.0;
    cfg.geometric_check.min_tracks = 7;
    EXPECT_THROW(validate(cfg), InvalidArgument);
    cfg.geometric_check.min_tracks = 12;
    cfg.geometric_check.confidence = 1.0;
    EXPECT_THROW(validate(cfg), InvalidArgument);
    cfg.geometric_check.confidence = 0.999;
    EXPECT_NO_THROW(validate(cfg));
    for (int bad : {0, 17}) {
        cfg.geometric_check.baseline_frames = bad;
        try {
            validate(cfg);
            ADD_FAILURE() << "baseline_frames " << bad << " accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("geometric_check.baseline_frames"), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("[1, 16]"), std::string::npos) << e.what();
        }
    }
    cfg.geometric_check.baseline_frames = 1;
    EXPECT_NO_THROW(validate(cfg));
}

TEST(GeometricCheckTracker, RotationPriorIsValidated) {
    const HostImage img = test::motion_scene_small().render(0);
    TrackerConfig cfg;
    FeatureTracker off(img.width(), img.height(), cfg, Backend::Cpu);
    const std::array<double, 9> I{{1, 0, 0, 0, 1, 0, 0, 0, 1}};
    try {
        off.track(img.view(), nullptr, &I);
        ADD_FAILURE() << "a prior without the check was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("rotation_prior"), std::string::npos);
    }
    cfg.geometric_check = check_config(pinhole(img.width(), img.height()));
    FeatureTracker on(img.width(), img.height(), cfg, Backend::Cpu);
    const std::array<double, 9> twice{{2, 0, 0, 0, 2, 0, 0, 0, 2}};
    const std::array<double, 9> mirror{{1, 0, 0, 0, 1, 0, 0, 0, -1}};
    for (const auto* bad : {&twice, &mirror}) {
        try {
            on.track(img.view(), nullptr, bad);
            ADD_FAILURE() << "a non-rotation was accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find("rotation_prior"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("1e-06"), std::string::npos) << e.what();
        }
    }
    EXPECT_NO_THROW(on.track(img.view(), nullptr, &I));
}

}  // namespace
}  // namespace kestrel
