// The five-point solver (include/kestrel/detail/five_point_rules.hpp) on exact synthetic data: the true E among
// the solutions to 1e-9 relative for >= 99.9 % of 10^5 random scenes and motions; degenerate samples (repeated
// points, pure rotation, coplanar points) give no solution or a flagged one, never NaN.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "kestrel/detail/five_point_lanes_rules.hpp"
#include "kestrel/detail/five_point_rules.hpp"
#include "pose_test_util.hpp"
#include "test_seed.hpp"

namespace kestrel::test {
namespace {

int env_int(const char* name, int fallback) {
    const char* v = std::getenv(name);
    return v ? std::atoi(v) : fallback;
}

bool all_finite(const double E[detail::kFivePointMaxSolutions][9], int n) {
    for (int s = 0; s < n; ++s)
        for (int k = 0; k < 9; ++k)
            if (!std::isfinite(E[s][k])) return false;
    return true;
}

/// The solutions are essential matrices: det E ~ 0 and 2 E E^T E - tr(E E^T) E ~ 0 (unit Frobenius norm).
double essential_residual(const double* e) {
    const Mat3 E{e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8]};
    const Mat3 EEt = matmul(E, transpose(E));
    const double tr = EEt[0] + EEt[4] + EEt[8];
    const Mat3 C = matmul(EEt, E);
    double r = 0.0;
    for (int k = 0; k < 9; ++k) r = std::fmax(r, std::fabs(2 * C[k] - tr * E[k]));
    const double det = E[0] * (E[4] * E[8] - E[5] * E[7]) - E[1] * (E[3] * E[8] - E[5] * E[6]) +
                       E[2] * (E[3] * E[7] - E[4] * E[6]);
    return std::fmax(r, std::fabs(det));
}

TEST(FivePoint, TrueEssentialAmongSolutionsOnExactData) {
    const int samples = env_int("KESTREL_FIVE_POINT_SAMPLES", 100000);
    KESTREL_TEST_RNG(rng, 20261124);
    SceneOptions o;
    o.n = 5;
    o.max_angle = 1.0;
    int found = 0, total_solutions = 0, worse_1e12 = 0, bad_finite = 0;
    double worst = 0.0;
    double solve_seconds = 0.0;
    for (int s = 0; s < samples; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = 0;
        const auto t0 = std::chrono::steady_clock::now();
        const int n = detail::five_point_solve(sc.x1.data(), sc.x2.data(), E, &flag);
        solve_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ASSERT_GE(n, 0);
        ASSERT_LE(n, detail::kFivePointMaxSolutions);
        if (!all_finite(E, n)) ++bad_finite;
        total_solutions += n;
        double best = 1e300;
        for (int k = 0; k < n; ++k) best = std::fmin(best, essential_distance(E[k], sc.E.data()));
        if (best <= 1e-9) ++found;
        if (best > 1e-12) ++worse_1e12;
        if (best < 1e300) worst = std::fmax(worst, best);
    }
    const double frac = static_cast<double>(found) / samples;
    std::printf("[five-point] %d samples: true E within 1e-9 relative in %.4f %% (%d misses), beyond 1e-12 in %d; "
                "%.2f real solutions on average; %.2f us per solve\n",
                samples, 100.0 * frac, samples - found, worse_1e12, static_cast<double>(total_solutions) / samples,
                1e6 * solve_seconds / samples);
    EXPECT_EQ(bad_finite, 0);
    EXPECT_GE(frac, 0.999);
}

TEST(FivePoint, SolutionsAreEssentialMatrices) {
    // Every returned E is finite; nearly all are essential matrices satisfying the five epipolar constraints
    // to 1e-8 (a rare ill-conditioned root is kept rather than dropped: RANSAC's scoring rejects it).
    KESTREL_TEST_RNG(rng, 7);
    SceneOptions o;
    o.n = 5;
    int total = 0, loose = 0;
    for (int s = 0; s < 5000; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = 0;
        const int n = detail::five_point_solve(sc.x1.data(), sc.x2.data(), E, &flag);
        ASSERT_TRUE(all_finite(E, n));
        for (int k = 0; k < n; ++k) {
            double worst = essential_residual(E[k]);
            for (int i = 0; i < 5; ++i) {
                const double* a = &sc.x1[2 * i];
                const double* b = &sc.x2[2 * i];
                const double* e = E[k];
                const double r = b[0] * (e[0] * a[0] + e[1] * a[1] + e[2]) + b[1] * (e[3] * a[0] + e[4] * a[1] + e[5]) +
                                 (e[6] * a[0] + e[7] * a[1] + e[8]);
                worst = std::fmax(worst, std::fabs(r));
            }
            ++total;
            if (worst > 1e-8) ++loose;
        }
    }
    std::printf("[five-point] %d solutions, %d with a constraint residual above 1e-8\n", total, loose);
    EXPECT_LE(loose, total / 1000);
}

TEST(FivePoint, RepeatedPointsGiveNoSolution) {
    KESTREL_TEST_RNG(rng, 11);
    SceneOptions o;
    o.n = 5;
    for (int s = 0; s < 1000; ++s) {
        PoseScene sc = make_scene(rng, o);
        const int a = s % 5, b = (a + 1 + (s / 5) % 4) % 5;
        sc.x1[2 * b] = sc.x1[2 * a];
        sc.x1[2 * b + 1] = sc.x1[2 * a + 1];
        sc.x2[2 * b] = sc.x2[2 * a];
        sc.x2[2 * b + 1] = sc.x2[2 * a + 1];
        double E[detail::kFivePointMaxSolutions][9];
        int flag = -1;
        const int n = detail::five_point_solve(sc.x1.data(), sc.x2.data(), E, &flag);
        EXPECT_EQ(n, 0) << "sample " << s;
        EXPECT_EQ(flag, detail::kFivePointRankDeficient);
    }
}

TEST(FivePoint, PureRotationGivesNoSolutionOrFlag) {
    KESTREL_TEST_RNG(rng, 13);
    SceneOptions o;
    o.n = 5;
    o.pure_rotation = true;
    int none = 0, with_solutions = 0;
    for (int s = 0; s < 2000; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = -1;
        const int n = detail::five_point_solve(sc.x1.data(), sc.x2.data(), E, &flag);
        ASSERT_TRUE(all_finite(E, n));
        ASSERT_GE(n, 0);
        if (n == 0) {
            EXPECT_NE(flag, detail::kFivePointOk);
            ++none;
        } else {
            ++with_solutions;
        }
    }
    std::printf("[five-point] pure rotation: %d flagged with no solution, %d returned solutions\n", none,
                with_solutions);
    EXPECT_GE(none, 1990);
}

TEST(FivePoint, CoplanarPointsFiniteAndValid) {
    KESTREL_TEST_RNG(rng, 17);
    SceneOptions o;
    o.n = 5;
    o.planar = true;
    int found = 0, flagged = 0;
    const int samples = 2000;
    for (int s = 0; s < samples; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = -1;
        const int n = detail::five_point_solve(sc.x1.data(), sc.x2.data(), E, &flag);
        ASSERT_TRUE(all_finite(E, n));
        if (n == 0) ++flagged;
        double best = 1e300;
        for (int k = 0; k < n; ++k) best = std::fmin(best, essential_distance(E[k], sc.E.data()));
        if (best <= 1e-6) ++found;
    }
    std::printf("[five-point] coplanar: true E found in %d of %d, no solution (flagged) in %d\n", found, samples,
                flagged);
    EXPECT_EQ(found + flagged >= samples * 95 / 100, true);
}

TEST(FivePoint, NonFiniteInputGivesNoNaN) {
    double x1[10] = {0.1, 0.2, NAN, 0.1, 0.3, 0.3, -0.2, 0.1, 0.0, 0.0};
    double x2[10] = {0.1, 0.2, 0.1, 0.1, 0.3, 0.3, -0.2, 0.1, 0.0, 0.0};
    double E[detail::kFivePointMaxSolutions][9];
    int flag = 0;
    const int n = detail::five_point_solve(x1, x2, E, &flag);
    EXPECT_EQ(n, 0);
    double z[10] = {0};
    double x3[10];
    for (int i = 0; i < 10; ++i) x3[i] = 0.0;
    EXPECT_EQ(detail::five_point_solve(z, x3, E, &flag), 0);
}

// The null vector of a rank-2 matrix from three of its rows, as fp_xy_from_b and the decomposition of E take it:
// the largest of the three cross products, not the first one. Rows 0 and 1 are nearly parallel (their product is
// 1e-6 of the others'), so a helper that took the first pair, or the smallest, fails here.
TEST(FivePoint, LargestCrossIsTheNullVectorOfRankTwo) {
    const double n[3] = {0.3, -0.5, 0.8};  // the null vector: every row below is orthogonal to it
    const double r0[3] = {0.8, 0.0, -0.3};
    const double r1[3] = {0.8 + 1e-6 * 0.5, 1e-6 * 0.3, -0.3};  // r0 + 1e-6 (0.5, 0.3, 0): orthogonal to n
    const double r2[3] = {0.5, 0.3, 0.0};
    double c[3];
    const double n2 = detail::fp_largest_cross(r0, r1, r2, c);
    EXPECT_DOUBLE_EQ(n2, c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
    // r0 x r2 = (0.09, -0.15, 0.24) = 0.3 n is the largest (r1 x r2 equals it up to rounding; r0 x r1 is 1e-6 of it)
    EXPECT_NEAR(c[0], 0.3 * n[0], 1e-15);
    EXPECT_NEAR(c[1], 0.3 * n[1], 1e-15);
    EXPECT_NEAR(c[2], 0.3 * n[2], 1e-15);
    // Ties keep the first pair: three equal rows' products vanish, and the zero vector comes back with norm 0.
    const double z[3] = {1.0, 2.0, 3.0};
    EXPECT_EQ(detail::fp_largest_cross(z, z, z, c), 0.0);
    EXPECT_EQ(c[0], 0.0);
    EXPECT_EQ(c[1], 0.0);
    EXPECT_EQ(c[2], 0.0);
    // fp_xy_from_b reads x, y off the same vector: B's rows r0, r1, r2 have the null vector n, so x/1 = n0/n2.
    const double B[3][3] = {{r0[0], r0[1], r0[2]}, {r1[0], r1[1], r1[2]}, {r2[0], r2[1], r2[2]}};
    double x = 0.0, y = 0.0;
    ASSERT_TRUE(detail::fp_xy_from_b(B, &x, &y));
    EXPECT_NEAR(x, n[0] / n[2], 1e-12);
    EXPECT_NEAR(y, n[1] / n[2], 1e-12);
}

TEST(FivePoint, RealRootsOfKnownPolynomial) {
    // (z - 1)(z + 2)(z - 3.5)(z^2 + 1): roots -2, 1, 3.5
    double p[11] = {0};
    double q[6] = {7.0, -1.5, 6.5, -2.5, 0.0, 0.0};  // (z-1)(z+2)(z-3.5) = z^3 - 2.5 z^2 - 1.5 z + 7 ... built below
    (void)q;
    // build by multiplication
    double a[11] = {1.0};
    int da = 0;
    auto mul = [&](double c0, double c1, double c2, int d) {
        double b[11] = {0};
        for (int i = 0; i <= da; ++i) {
            b[i] += a[i] * c0;
            b[i + 1] += a[i] * c1;
            if (d == 2) b[i + 2] += a[i] * c2;
        }
        da += d;
        for (int i = 0; i < 11; ++i) a[i] = b[i];
    };
    mul(-1.0, 1.0, 0.0, 1);
    mul(2.0, 1.0, 0.0, 1);
    mul(-3.5, 1.0, 0.0, 1);
    mul(1.0, 0.0, 1.0, 2);
    for (int i = 0; i <= da; ++i) p[i] = a[i];
    double roots[10];
    const int n = detail::fp_real_roots(p, da, roots);
    ASSERT_EQ(n, 3);
    std::sort(roots, roots + n);
    EXPECT_NEAR(roots[0], -2.0, 1e-13);
    EXPECT_NEAR(roots[1], 1.0, 1e-13);
    EXPECT_NEAR(roots[2], 3.5, 1e-13);
}

// ---- the RANSAC hypotheses' solver (five_point_lanes_rules.hpp) ----------------------------------------------

/// The lanes solver on 2-D points (z = 1).
int solve_lanes(const double* x1, const double* x2, double E[detail::kFivePointMaxSolutions][9], int* flag) {
    double p[15], q[15];
    for (int i = 0; i < 5; ++i) {
        p[3 * i] = x1[2 * i];
        p[3 * i + 1] = x1[2 * i + 1];
        p[3 * i + 2] = 1.0;
        q[3 * i] = x2[2 * i];
        q[3 * i + 1] = x2[2 * i + 1];
        q[3 * i + 2] = 1.0;
    }
    return detail::five_point_solve_lanes(p, q, E, flag);
}

/// Recall of the lanes solver on exact data: the fraction of samples whose true E is among the solutions to tol.
double lanes_recall(int samples, double tol, int* total_solutions, int* bad_finite, int* more_than_public) {
    std::mt19937_64 rng(20261128);
    SceneOptions o;
    o.n = 5;
    o.max_angle = 1.0;
    int found = 0;
    *total_solutions = 0;
    *bad_finite = 0;
    *more_than_public = 0;
    for (int s = 0; s < samples; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9], Ep[detail::kFivePointMaxSolutions][9];
        int flag = 0;
        const int n = solve_lanes(sc.x1.data(), sc.x2.data(), E, &flag);
        const int np = detail::five_point_solve(sc.x1.data(), sc.x2.data(), Ep, &flag);
        if (n > np) ++*more_than_public;
        if (!all_finite(E, n)) ++*bad_finite;
        *total_solutions += n;
        double best = 1e300;
        for (int k = 0; k < n; ++k) best = std::fmin(best, essential_distance(E[k], sc.E.data()));
        if (best <= tol) ++found;
    }
    return static_cast<double>(found) / samples;
}

TEST(FivePointLanes, TrueEssentialAmongSolutionsOnExactData) {
    const int samples = env_int("KESTREL_FIVE_POINT_SAMPLES", 100000) / 5;
    int total = 0, bad = 0, more = 0;
    const double r9 = lanes_recall(samples, 1e-9, &total, &bad, &more);
    const double r6 = lanes_recall(samples, 1e-6, &total, &bad, &more);
    std::printf("[five-point lanes] %d samples: true E within 1e-9 relative in %.4f %%, within 1e-6 in %.4f %%; "
                "%.2f real solutions on average; more solutions than the public solver in %d\n",
                samples, 100.0 * r9, 100.0 * r6, static_cast<double>(total) / samples, more);
    EXPECT_EQ(bad, 0);
    EXPECT_GE(r9, 0.975);
    EXPECT_GE(r6, 0.995);
}

TEST(FivePointLanes, DegenerateSamplesGiveNoSolution) {
    std::mt19937_64 rng(11);
    SceneOptions o;
    o.n = 5;
    for (int s = 0; s < 500; ++s) {
        PoseScene sc = make_scene(rng, o);
        const int a = s % 5, b = (a + 1 + (s / 5) % 4) % 5;
        sc.x1[2 * b] = sc.x1[2 * a];
        sc.x1[2 * b + 1] = sc.x1[2 * a + 1];
        sc.x2[2 * b] = sc.x2[2 * a];
        sc.x2[2 * b + 1] = sc.x2[2 * a + 1];
        double E[detail::kFivePointMaxSolutions][9];
        int flag = -1;
        EXPECT_EQ(solve_lanes(sc.x1.data(), sc.x2.data(), E, &flag), 0) << "sample " << s;
        EXPECT_EQ(flag, detail::kFivePointRankDeficient);
    }
    o.pure_rotation = true;
    int none = 0;
    for (int s = 0; s < 500; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = -1;
        const int n = solve_lanes(sc.x1.data(), sc.x2.data(), E, &flag);
        ASSERT_TRUE(all_finite(E, n));
        none += n == 0 ? 1 : 0;
    }
    EXPECT_GE(none, 495);
    double x1[10] = {0.1, 0.2, NAN, 0.1, 0.3, 0.3, -0.2, 0.1, 0.0, 0.0};
    double x2[10] = {0.1, 0.2, 0.1, 0.1, 0.3, 0.3, -0.2, 0.1, 0.0, 0.0};
    double E[detail::kFivePointMaxSolutions][9];
    int flag = 0;
    EXPECT_EQ(solve_lanes(x1, x2, E, &flag), 0);
}

TEST(FivePointLanes, CellsClearedOfRootsHoldNone) {
    // The scan skips the extremum search in a cell that fpl_cell_root_free clears: it must never clear a cell that
    // holds a root. Degree-10 polynomials with known real roots in [-1, 1] (close pairs, within a cell, included),
    // every cell of the scan's grid there; the test also counts what it clears (it must clear cells, or the scan
    // gains nothing) and what a test without the remainder term (|c_0| alone) would clear wrongly (it must fail).
    std::mt19937_64 rng(41);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double h = 4.0 / detail::kFplGrid;  // cell width
    long cleared = 0, cells = 0, wrong = 0, naive_wrong = 0;
    for (int s = 0; s < 4000; ++s) {
        double roots[10];
        int nr = 2 + static_cast<int>(rng() % 9);
        for (int i = 0; i < nr; ++i) roots[i] = u(rng);
        if (s % 2 == 0 && nr >= 2) roots[1] = roots[0] + 0.3 * h * u(rng);  // a close pair
        // p(x) = prod (x - r_i) * prod (x^2 + q_j) (* (x - 3) for an odd degree left): degree 10, its real roots
        // in [-1, 1] the r_i.
        double p[12] = {1.0};  // ascending powers
        int deg = 0;
        const auto mul_lin = [&](double r) {  // p *= (x - r)
            for (int i = deg + 1; i >= 1; --i) p[i] = p[i - 1] - r * p[i];
            p[0] = -r * p[0];
            ++deg;
        };
        const auto mul_quad = [&](double q) {  // p *= (x^2 + q)
            for (int i = deg + 2; i >= 2; --i) p[i] = p[i - 2] + q * p[i];
            p[1] = q * p[1];
            p[0] = q * p[0];
            deg += 2;
        };
        for (int i = 0; i < nr; ++i) mul_lin(roots[i]);
        while (deg + 2 <= 10) mul_quad(0.05 + std::fabs(u(rng)));
        if (deg < 10) mul_lin(3.0);
        const double lead = std::pow(10.0, 4.0 * u(rng));
        double cf[11], amag = 0.0;
        for (int i = 0; i <= 10; ++i) {
            cf[i] = lead * p[10 - i];  // the inner domain's order: highest power first
            amag += std::fabs(cf[i]);
        }
        for (int i = detail::kFplGrid / 4; i < 3 * detail::kFplGrid / 4; ++i) {
            const double ua = detail::fpl_grid_t(i), ub = detail::fpl_grid_t(i + 1);
            bool holds = false;
            for (int r = 0; r < nr; ++r) holds = holds || (roots[r] >= ua && roots[r] <= ub);
            const bool clear = detail::fpl_cell_root_free(cf, ua, ub, amag);
            const double m = 0.5 * (ua + ub);
            const bool naive = std::fabs(detail::fpl_value_c(cf, m)) > 1e-12 * amag;
            ++cells;
            cleared += clear ? 1 : 0;
            wrong += clear && holds ? 1 : 0;
            naive_wrong += naive && holds ? 1 : 0;
        }
    }
    std::printf("[five-point lanes] %ld cells: %ld cleared of roots, %ld of them wrongly; |c_0| alone: %ld wrongly\n",
                cells, cleared, wrong, naive_wrong);
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(cleared, cells / 2);
    EXPECT_GT(naive_wrong, 0);  // the check above can fail
}

TEST(FivePointLanes, RecallTestCanFail) {
    // The recall test above fails on a solver that drops roots: keep only the first root cell's solution.
    std::mt19937_64 rng(5);
    SceneOptions o;
    o.n = 5;
    int found = 0;
    const int samples = 2000;
    for (int s = 0; s < samples; ++s) {
        const PoseScene sc = make_scene(rng, o);
        double E[detail::kFivePointMaxSolutions][9];
        int flag = 0;
        const int n = solve_lanes(sc.x1.data(), sc.x2.data(), E, &flag);
        if (n > 0 && essential_distance(E[0], sc.E.data()) <= 1e-9) ++found;
    }
    EXPECT_LT(static_cast<double>(found) / samples, 0.975);
}

}  // namespace
}  // namespace kestrel::test
