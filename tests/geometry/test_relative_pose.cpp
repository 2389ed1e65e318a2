// RelativePoseEstimator on the CPU backend: generated scenes with a known pose and outliers, determinism run
// to run and across batch sizes, the status cases, bad input naming the parameter, the two-point variant.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kestrel/detail/ransac_rules.hpp"
#include "kestrel/error.hpp"
#include "kestrel/relative_pose.hpp"
#include "pose_test_util.hpp"
#include "test_seed.hpp"

namespace kestrel::test {
namespace {

struct Quality {
    double rot_deg, dir_deg, precision, recall;
};

Quality measure(const PoseScene& sc, const RelativePoseResult& r, const std::vector<std::uint8_t>& mask) {
    Quality q{};
    q.rot_deg = rotation_error_deg(sc.R, Mat3{r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]});
    q.dir_deg = direction_error_deg(sc.t, Vec3{r.t[0], r.t[1], r.t[2]});
    int tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < mask.size(); ++i) {
        tp += mask[i] && sc.inlier[i];
        fp += mask[i] && !sc.inlier[i];
        fn += !mask[i] && sc.inlier[i];
    }
    q.precision = tp + fp ? static_cast<double>(tp) / (tp + fp) : 0.0;
    q.recall = tp + fn ? static_cast<double>(tp) / (tp + fn) : 0.0;
    return q;
}

TEST(RelativePose, RecoversKnownPoseWithOutliers) {
    KESTREL_TEST_RNG(rng, 101);
    RelativePoseConfig cfg;
    cfg.focal_px = 500.0;
    cfg.threshold_px = 1.0;
    RelativePoseEstimator est(1000, cfg, Backend::Cpu);
    for (double outliers : {0.0, 0.25, 0.5}) {
        int ok = 0;
        const int trials = 20;
        double worst_rot = 0, worst_dir = 0;
        for (int trial = 0; trial < trials; ++trial) {
            SceneOptions o;
            o.n = 200;
            o.outlier_ratio = outliers;
            o.noise_px = 0.5;
            const PoseScene sc = make_scene(rng, o);
            std::vector<std::uint8_t> mask(o.n);
            const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), o.n, mask.data());
            ASSERT_EQ(r.status, PoseStatus::Ok);
            const Quality q = measure(sc, r, mask);
            worst_rot = std::fmax(worst_rot, q.rot_deg);
            worst_dir = std::fmax(worst_dir, q.dir_deg);
            if (q.rot_deg < 1.0 && q.dir_deg < 5.0 && q.precision > 0.9 && q.recall > 0.8) ++ok;
            EXPECT_GE(r.hypotheses, 1);
            EXPECT_LE(r.hypotheses, cfg.max_hypotheses);
            // E = [t]x R, unit t, R a rotation
            EXPECT_NEAR(r.t[0] * r.t[0] + r.t[1] * r.t[1] + r.t[2] * r.t[2], 1.0, 1e-12);
        }
        std::printf("[relative-pose] outliers %.2f: %d/%d good, worst rotation %.3f deg, direction %.3f deg\n", outliers,
                    ok, trials, worst_rot, worst_dir);
        EXPECT_GE(ok, trials - 1);
    }
}

TEST(RelativePose, ExactDataGivesExactPose) {
    KESTREL_TEST_RNG(rng, 5);
    SceneOptions o;
    o.n = 100;
    const PoseScene sc = make_scene(rng, o);
    RelativePoseEstimator est(100, {}, Backend::Cpu);
    std::vector<std::uint8_t> mask(o.n);
    const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), o.n, mask.data());
    ASSERT_EQ(r.status, PoseStatus::Ok);
    EXPECT_EQ(r.inliers, 100);
    EXPECT_EQ(r.cheirality_inliers, 100);
    EXPECT_LT(rotation_error_deg(sc.R, Mat3{r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]}),
              1e-6);
    EXPECT_LT(direction_error_deg(sc.t, Vec3{r.t[0], r.t[1], r.t[2]}), 1e-6);
    EXPECT_LT(essential_distance(r.E.data(), sc.E.data()), 1e-9);
}

TEST(RelativePose, SameResultRunToRunAndAcrossBatchSizes) {
    KESTREL_TEST_RNG(rng, 77);
    SceneOptions o;
    o.n = 300;
    o.outlier_ratio = 0.5;
    o.noise_px = 0.5;
    const PoseScene sc = make_scene(rng, o);
    RelativePoseConfig cfg;
    cfg.seed = 1234;
    std::vector<RelativePoseResult> rs;
    std::vector<std::vector<std::uint8_t>> masks;
    for (int batch : {16, 16, 1, 37, 256, 4096}) {
        cfg.batch = batch;
        RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
        masks.emplace_back(o.n);
        rs.push_back(est.estimate(sc.x1.data(), sc.x2.data(), o.n, masks.back().data()));
    }
    for (std::size_t k = 1; k < rs.size(); ++k) {
        EXPECT_EQ(rs[k].best_hypothesis, rs[0].best_hypothesis);
        EXPECT_EQ(rs[k].hypotheses, rs[0].hypotheses);
        EXPECT_EQ(std::memcmp(rs[k].E.data(), rs[0].E.data(), sizeof(double) * 9), 0);
        EXPECT_EQ(masks[k], masks[0]);
    }
    // another seed draws other samples
    cfg.batch = 256;
    cfg.seed = 99;
    RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
    const RelativePoseResult r2 = est.estimate(sc.x1.data(), sc.x2.data(), o.n);
    EXPECT_EQ(r2.status, PoseStatus::Ok);
    std::printf("[relative-pose] seed 1234: hypothesis %d of %d; seed 99: hypothesis %d of %d\n",
                rs[0].best_hypothesis, rs[0].hypotheses, r2.best_hypothesis, r2.hypotheses);
}

TEST(RelativePose, FloatInputMatchesDoubleOfTheSameValues) {
    KESTREL_TEST_RNG(rng, 3);
    SceneOptions o;
    o.n = 150;
    o.outlier_ratio = 0.3;
    o.noise_px = 0.5;
    const PoseScene sc = make_scene(rng, o);
    std::vector<float> f1(sc.x1.begin(), sc.x1.end()), f2(sc.x2.begin(), sc.x2.end());
    std::vector<double> d1(f1.begin(), f1.end()), d2(f2.begin(), f2.end());
    RelativePoseEstimator est(o.n, {}, Backend::Cpu);
    const RelativePoseResult a = est.estimate(f1.data(), f2.data(), o.n);
    const RelativePoseResult b = est.estimate(d1.data(), d2.data(), o.n);
    EXPECT_EQ(std::memcmp(a.E.data(), b.E.data(), sizeof(double) * 9), 0);
}

TEST(RelativePose, StatusCases) {
    RelativePoseEstimator est(100, {}, Backend::Cpu);
    double x[20] = {0.1, 0.2, 0.3, -0.1, 0.2, 0.2, -0.3, 0.1, 0.0, 0.05, 0.1, 0.1, 0.2, 0.3, -0.2, -0.1, 0.05, 0.0};
    std::uint8_t mask[10] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    EXPECT_EQ(est.estimate(x, x, 4, mask).status, PoseStatus::TooFewPoints);
    EXPECT_EQ(mask[0], 0);
    EXPECT_EQ(est.estimate(x, x, 0).status, PoseStatus::TooFewPoints);
    // 6 points cannot reach min_inliers = 8
    KESTREL_TEST_RNG(rng, 9);
    SceneOptions o;
    o.n = 6;
    const PoseScene sc = make_scene(rng, o);
    EXPECT_EQ(est.estimate(sc.x1.data(), sc.x2.data(), 6).status, PoseStatus::NoModel);
    // repeated points: every sample degenerate
    std::vector<double> rep(200);
    for (int i = 0; i < 100; ++i) {
        rep[2 * i] = 0.1;
        rep[2 * i + 1] = -0.2;
    }
    const RelativePoseResult r = est.estimate(rep.data(), rep.data(), 100);
    EXPECT_EQ(r.status, PoseStatus::NoModel);
    EXPECT_EQ(r.hypotheses, RelativePoseConfig{}.max_hypotheses);
    // two-point: fewer than 2
    RelativePoseConfig c2;
    c2.method = PoseMethod::TwoPointWithRotation;
    RelativePoseEstimator est2(100, c2, Backend::Cpu);
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    EXPECT_EQ(est2.estimate(x, x, 1, nullptr, I).status, PoseStatus::TooFewPoints);
}

TEST(RelativePose, ExactPureRotationGivesTheRotationOnlyModel) {
    // No translation: the five-point samples are degenerate (a family of E); the rotation-only model decides,
    // with the true rotation, t = 0 and every point an inlier. Without the rotation-only model: no Ok model.
    KESTREL_TEST_RNG(rng, 23);
    SceneOptions o;
    o.n = 100;
    o.pure_rotation = true;
    RelativePoseEstimator est(100, {}, Backend::Cpu);
    RelativePoseConfig off;
    off.rotation_only = false;
    RelativePoseEstimator est_off(100, off, Backend::Cpu);
    for (int trial = 0; trial < 5; ++trial) {
        const PoseScene sc = make_scene(rng, o);
        std::vector<std::uint8_t> mask(o.n);
        const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), o.n, mask.data());
        EXPECT_EQ(r.status, PoseStatus::Ok) << "trial " << trial;
        EXPECT_EQ(r.model, PoseModel::RotationOnly) << "trial " << trial;
        EXPECT_EQ(r.inliers, o.n);
        EXPECT_EQ(r.rotation_inliers, o.n);
        // Exact up to rounding: the acos-based measure's floor near the identity is ~1e-6 degrees (1.2e-6 on some
        // draws of the seed sweep), so 1e-5.
        EXPECT_LT(rotation_error_deg(sc.R, Mat3{r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]}),
                  1e-5);
        EXPECT_EQ(r.t[0] * r.t[0] + r.t[1] * r.t[1] + r.t[2] * r.t[2], 0.0);
        for (double v : r.E) EXPECT_EQ(v, 0.0);
        for (std::uint8_t m : mask) EXPECT_EQ(m, 1);
        const RelativePoseResult r_off = est_off.estimate(sc.x1.data(), sc.x2.data(), o.n);
        EXPECT_NE(r_off.status, PoseStatus::Ok) << "trial " << trial;
        EXPECT_EQ(r_off.rotation_inliers, 0);
        for (double v : r_off.E) EXPECT_TRUE(std::isfinite(v));
    }
}

TEST(RelativePose, PathologicalInputsNeverCrashOrNaN) {
    KESTREL_TEST_RNG(rng, 61);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int n = 60;
    RelativePoseConfig c5;
    c5.max_hypotheses = 300;
    RelativePoseConfig c2 = c5;
    c2.method = PoseMethod::TwoPointWithRotation;
    RelativePoseEstimator e5(n, c5, Backend::Cpu), e2(n, c2, Backend::Cpu);
    const double zero[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int kind = 0; kind < 6; ++kind) {
        std::vector<double> a(2 * n), b(2 * n);
        for (int i = 0; i < n; ++i) {
            const double s = u(rng), r = u(rng);
            switch (kind) {
                case 0: a[2 * i] = s; a[2 * i + 1] = 0.5 * s; b[2 * i] = 0.9 * s; b[2 * i + 1] = 0.4 * s + 0.1; break;  // collinear
                case 1: a[2 * i] = 1e8 * s; a[2 * i + 1] = 1e8 * r; b[2 * i] = 1e8 * r; b[2 * i + 1] = -1e8 * s; break;  // huge
                case 2: a[2 * i] = 1e-12 * s; a[2 * i + 1] = 1e-12 * r; b[2 * i] = 1e-12 * r; b[2 * i + 1] = 1e-12 * s; break;  // tiny
                case 3: a[2 * i] = s; a[2 * i + 1] = r; b[2 * i] = u(rng); b[2 * i + 1] = u(rng); break;  // pure noise
                case 4: a[2 * i] = s; a[2 * i + 1] = r; b[2 * i] = s; b[2 * i + 1] = r; break;  // no motion at all
                default: a[2 * i] = i % 2 ? 0.3 : -0.3; a[2 * i + 1] = 0.1; b[2 * i] = i % 2 ? 0.2 : -0.2; b[2 * i + 1] = 0.0; break;  // two points repeated
            }
        }
        std::vector<std::uint8_t> mask(n);
        // A zero "rotation" is bad input now (the prior must be a rotation), not a pathological case.
        EXPECT_THROW(e2.estimate(a.data(), b.data(), n, mask.data(), zero), InvalidArgument) << "kind " << kind;
        for (const RelativePoseResult& r : {e5.estimate(a.data(), b.data(), n, mask.data()),
                                            e2.estimate(a.data(), b.data(), n, mask.data(), I)}) {
            for (double v : r.E) EXPECT_TRUE(std::isfinite(v)) << "kind " << kind;
            for (double v : r.R) EXPECT_TRUE(std::isfinite(v)) << "kind " << kind;
            for (double v : r.t) EXPECT_TRUE(std::isfinite(v)) << "kind " << kind;
            EXPECT_TRUE(std::isfinite(r.cost)) << "kind " << kind;
            EXPECT_LE(r.hypotheses, c5.max_hypotheses);
            if (r.status == PoseStatus::Ok) EXPECT_GE(r.inliers, c5.min_inliers);
        }
    }
}

template <typename F>
void expect_invalid(F&& f, const char* param, const char* text) {
    try {
        f();
        ADD_FAILURE() << "no exception, expected one naming " << param;
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), param) << e.what();
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
}

TEST(RelativePose, BadInputNamesTheParameter) {
    auto with = [](auto set) {
        RelativePoseConfig c;
        set(c);
        return c;
    };
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.focal_px = 0; }), Backend::Cpu); },
                   "focal_px", "1e-06");
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.threshold_px = -1; }), Backend::Cpu); },
                   "threshold_px", "1000");
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.confidence = 1.0; }), Backend::Cpu); },
                   "confidence", "0.5");
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.max_hypotheses = 0; }), Backend::Cpu); },
                   "max_hypotheses", "[1, 1048576]");
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.batch = 0; }), Backend::Cpu); }, "batch",
                   "65536");
    expect_invalid([&] { RelativePoseEstimator(10, with([](auto& c) { c.min_inliers = 1; }), Backend::Cpu); },
                   "min_inliers", "[2,");
    expect_invalid([&] { RelativePoseEstimator(0, {}, Backend::Cpu); }, "max_points", "[1, 16777216]");
    expect_invalid([&] { RelativePoseEstimator(10, {}, static_cast<Backend>(7)); }, "backend", "Backend::Cpu");
    RelativePoseEstimator est(10, {}, Backend::Cpu);
    double x[40] = {0};
    expect_invalid([&] { est.estimate(x, x, 11); }, "n", "[0, 10]");
    expect_invalid([&] { est.estimate(static_cast<const double*>(nullptr), x, 5); }, "x1", "null");
    expect_invalid([&] { est.estimate(x, static_cast<const double*>(nullptr), 5); }, "x2", "null");
    double bad[40] = {0};
    bad[7] = NAN;
    expect_invalid([&] { est.estimate(x, bad, 5); }, "x2", "index 3");
    EXPECT_THROW(est.estimate_device_async(x, x, 5, nullptr), StateError);
    EXPECT_THROW(est.finish(), StateError);
    RelativePoseConfig c2;
    c2.method = PoseMethod::TwoPointWithRotation;
    RelativePoseEstimator est2(10, c2, Backend::Cpu);
    expect_invalid([&] { est2.estimate(x, x, 5); }, "rotation_prior", "TwoPointWithRotation");
    // The prior must be a rotation (the host entries, the bearing entry): 2I, a reflection, a non-finite entry.
    const double twice[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2}, mirror[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1};
    const double nan_prior[9] = {1, 0, 0, 0, 1, 0, 0, 0, NAN}, I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    expect_invalid([&] { est2.estimate(x, x, 5, nullptr, twice); }, "rotation_prior", "(bound 1e-06)");
    expect_invalid([&] { est2.estimate(x, x, 5, nullptr, mirror); }, "rotation_prior", "must be +1");
    expect_invalid([&] { est2.estimate(x, x, 5, nullptr, nan_prior); }, "rotation_prior", "finite");
    double bx[30];
    for (int i = 0; i < 10; ++i) {
        bx[3 * i] = 0.01 * i;
        bx[3 * i + 1] = -0.02 * i;
        bx[3 * i + 2] = 1.0;
    }
    expect_invalid([&] { est2.estimate_bearings(bx, bx, 5, nullptr, mirror); }, "rotation_prior", "must be +1");
    EXPECT_NO_THROW(est2.estimate(x, x, 5, nullptr, I));
    // one call in flight per object
    est.estimate_async(x, x, 5, nullptr);
    EXPECT_THROW(est.estimate_async(x, x, 5, nullptr), StateError);
    EXPECT_EQ(est.finish().status, PoseStatus::NoModel);
    RelativePoseEstimator empty;
    EXPECT_THROW(empty.estimate(x, x, 5), StateError);
}

TEST(RelativePose, CudaBackendWithoutCudaSaysSo) {
#if !KESTREL_TESTS_WITH_CUDA
    EXPECT_THROW(RelativePoseEstimator(10, {}, Backend::Cuda), NoDeviceError);
#else
    GTEST_SKIP() << "CUDA build: covered by test_relative_pose_cuda.cpp";
#endif
}

// The refinement's analytic Jacobian (detail::PoseRefineTerm with detail::pose_model_derivatives) against central
// differences of the signed residual w1 r / sqrt(d) along detail::pose_move, for both parameterizations (pose: 5,
// t only: 2), the plane and the sphere, with and without per-point scales. The same comparison with one
// derivative's sign flipped must fail (the test can fail).
TEST(RelativePose, RefinementJacobianMatchesCentralDifferences) {
    std::mt19937_64 rng(4051);
    const double kIdentity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const auto residual = [](const double* R, const double* t, const double* x, const double* y, int sphere,
                             double w1) {
        double E[9], r, d;
        detail::pose_skew_mul(t, R, E);
        detail::pose_epipolar(E, x, y, sphere, &r, &d);
        return w1 * (r / std::sqrt(d));
    };
    double worst = 0.0, worst_broken = 1e300;
    int checked = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const int sphere = trial % 2, np = (trial / 2) % 2 ? 2 : 5;
        const bool scales = (trial / 4) % 2 != 0;
        double axis[3] = {u(rng), u(rng), u(rng)}, t[3] = {u(rng), u(rng), u(rng)};
        detail::pose_normalize3(t);
        const double ang = 0.3 * u(rng);
        double R[9], tt[3];
        double dq[5] = {ang * axis[0], ang * axis[1], ang * axis[2], 0.0, 0.0};
        detail::pose_move(kIdentity, t, dq, 5, R, tt);  // a rotation (tt == t)
        double x[3] = {0.5 * u(rng), 0.5 * u(rng), 1.0}, y[3];
        // y: x moved by the pose with depth 4, plus noise (a non-zero residual)
        for (int k = 0; k < 3; ++k) y[k] = 4.0 * (R[3 * k] * x[0] + R[3 * k + 1] * x[1] + R[3 * k + 2] * x[2]) + t[k];
        for (int k = 0; k < 2; ++k) y[k] = y[k] / y[2] + 0.01 * u(rng);
        y[2] = 1.0;
        if (sphere) {
            detail::pose_normalize3(x);
            detail::pose_normalize3(y);
        }
        const double s = 300.0 + 100.0 * u(rng);
        detail::PoseProblem P{};
        P.x1 = x;
        P.x2 = y;
        P.s = scales ? &s : nullptr;
        P.n = 1;
        P.sphere = sphere;
        P.f2 = 500.0 * 500.0;
        const std::uint8_t mask = 1;
        double E0[9], G[5][9];
        detail::pose_skew_mul(t, R, E0);
        detail::pose_model_derivatives(R, t, np, G);
        const double w1 = scales ? s : 1.0;
        const double res = residual(R, t, x, y, sphere, w1);
        if (!(std::fabs(res) > 1e-6)) continue;
        for (int broken = 0; broken < 2; ++broken) {
            if (broken) for (int k = 0; k < 9; ++k) G[0][k] = -G[0][k];
            double acc[21] = {0};
            if (np == 5) detail::PoseRefineTerm<5>{&P, E0, G, &mask}(0, acc);
            else detail::PoseRefineTerm<2>{&P, E0, G, &mask}(0, acc);
            double err = 0.0;
            for (int a = 0; a < np; ++a) {
                const double h = 1e-6;
                double dp[5] = {0, 0, 0, 0, 0}, dm[5] = {0, 0, 0, 0, 0};
                dp[a] = h;
                dm[a] = -h;
                double Rp[9], tp[3], Rm[9], tm[3];
                detail::pose_move(R, t, dp, np, Rp, tp);
                detail::pose_move(R, t, dm, np, Rm, tm);
                const double num = (residual(Rp, tp, x, y, sphere, w1) - residual(Rm, tm, x, y, sphere, w1)) / (2 * h);
                const double ana = acc[1 + a] / res;
                err = std::max(err, std::fabs(ana - num) / (std::fabs(num) + 1e-3 * w1));
            }
            if (broken) worst_broken = std::min(worst_broken, err);
            else worst = std::max(worst, err), ++checked;
        }
    }
    std::printf("[relative-pose] refinement Jacobian: %d points, worst relative error %.2e (a flipped rotation "
                "derivative: at least %.2e)\n", checked, worst, worst_broken);
    EXPECT_GT(checked, 150);
    EXPECT_LT(worst, 1e-5);
    EXPECT_GT(worst_broken, 1e-2);
}

TEST(RelativePose, TwoPointWithRotationPrior) {
    KESTREL_TEST_RNG(rng, 202);
    RelativePoseConfig cfg;
    cfg.method = PoseMethod::TwoPointWithRotation;
    RelativePoseEstimator est(500, cfg, Backend::Cpu);
    RelativePoseEstimator est5(500, {}, Backend::Cpu);
    int good = 0;
    const int trials = 20;
    long hyp2 = 0, hyp5 = 0;
    for (int trial = 0; trial < trials; ++trial) {
        SceneOptions o;
        o.n = 300;
        o.outlier_ratio = 0.5;
        o.noise_px = 0.5;
        const PoseScene sc = make_scene(rng, o);
        std::vector<std::uint8_t> mask(o.n);
        const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), o.n, mask.data(), sc.R.data());
        ASSERT_EQ(r.status, PoseStatus::Ok);
        const Quality q = measure(sc, r, mask);
        EXPECT_EQ(std::memcmp(r.R.data(), sc.R.data(), sizeof(double) * 9), 0);  // the prior is kept
        if (q.dir_deg < 5.0 && q.precision > 0.9 && q.recall > 0.8) ++good;
        hyp2 += r.hypotheses;
        hyp5 += est5.estimate(sc.x1.data(), sc.x2.data(), o.n).hypotheses;
    }
    std::printf("[relative-pose] two-point: %d/%d good; hypotheses %.1f (two-point) vs %.1f (five-point) on average\n",
                good, trials, static_cast<double>(hyp2) / trials, static_cast<double>(hyp5) / trials);
    EXPECT_GE(good, trials - 1);
    EXPECT_LT(hyp2, hyp5);
}

}  // namespace
}  // namespace kestrel::test
