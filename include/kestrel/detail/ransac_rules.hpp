// The relative-pose RANSAC rules shared verbatim by the CPU reference (src/geometry/relative_pose_cpu.cpp)
// and the CUDA kernel (kernels/geometry/ransac.cu): the counter-based sampler, the minimal solvers per
// hypothesis (five-point: detail/five_point_rules.hpp; two-point with a known rotation), the Sampson error in
// pixels and the MSAC score, the in-order adaptive scan, the refinement on the inliers and the decomposition
// of E into R and unit t with the cheirality test. Design and contracts: docs/geometry.md.
//
// Determinism: hypothesis k's sample is a function of (seed, k) only (integer hashing); each model is scored
// in a fixed order (the warp's: 32 lane shares, then the xor butterfly, which the CPU emulates); the winner
// is chosen by scanning the hypotheses in index order with a strict "lower cost wins" rule and the stop count read from a table that
// the host computes once (no transcendental function on the device). The arithmetic is +, -, *, /, sqrt
// only, compiled without FMA contraction on both sides (docs/geometry.md), so both backends agree bit
// for bit.
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/detail/five_point_rules.hpp"
#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kPoseMaxSample = 5;

// ---- the counter-based generator ----------------------------------------------------------------------------
/// splitmix64's finalizer: a bijective 64-bit mix.
KESTREL_HD std::uint64_t pose_mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
/// The draw-th 64-bit word of hypothesis k under `seed`.
KESTREL_HD std::uint64_t pose_random(std::uint64_t seed, std::uint32_t k, std::uint32_t draw) {
    return pose_mix(pose_mix(seed ^ 0x9e3779b97f4a7c15ULL) + (static_cast<std::uint64_t>(k) << 32 | draw));
}
/// Uniform index in [0, n) from a 64-bit word (multiply-high; n < 2^31).
KESTREL_HD int pose_index(std::uint64_t r, int n) {
    return static_cast<int>(((r >> 32) * static_cast<std::uint64_t>(n)) >> 32);
}
/// Hypothesis k's sample: m distinct indices in [0, n) (n >= m). Draw j is redrawn while it repeats an
/// earlier one (bounded; false when the bound is hit, which needs n close to m and a long run of repeats).
KESTREL_HD bool pose_sample(std::uint64_t seed, std::uint32_t k, int n, int m, int* idx) {
    std::uint32_t draw = 0;
    for (int j = 0; j < m; ++j) {
        bool ok = false;
        for (int attempt = 0; attempt < 64 && !ok; ++attempt) {
            const int v = pose_index(pose_random(seed, k, draw++), n);
            ok = true;
            for (int i = 0; i < j; ++i) ok = ok && idx[i] != v;
            idx[j] = v;
        }
        if (!ok) return false;
    }
    return true;
}

// ---- Sampson error and MSAC -----------------------------------------------------------------------------------
/// Squared Sampson error of (x1, x2) under E, in pixels^2 (f2 = focal_px^2).
KESTREL_HD double pose_sampson2(const double* E, double u1, double v1, double u2, double v2, double f2) {
    const double a0 = E[0] * u1 + E[1] * v1 + E[2];
    const double a1 = E[3] * u1 + E[4] * v1 + E[5];
    const double a2 = E[6] * u1 + E[7] * v1 + E[8];
    const double b0 = E[0] * u2 + E[3] * v2 + E[6];
    const double b1 = E[1] * u2 + E[4] * v2 + E[7];
    const double r = u2 * a0 + v2 * a1 + a2;
    const double d = a0 * a0 + a1 * a1 + b0 * b0 + b1 * b1;
    if (!(d > 0.0)) return 1e300;
    return f2 * (r * r) / d;
}
constexpr int kPoseLanes = 32;  // the kernel scores one hypothesis with one warp

/// Lane `lane`'s share of the MSAC cost: sum of min(e_i^2, thr2) over the points i = lane, lane + 32, ... in
/// that order, and its inlier count (e_i^2 < thr2).
KESTREL_HD double pose_msac_lane(const double* E, const double* x1, const double* x2, int n, double f2, double thr2,
                                 int lane, int* inliers) {
    double cost = 0.0;
    int cnt = 0;
    for (int i = lane; i < n; i += kPoseLanes) {
        const double e2 = pose_sampson2(E, x1[2 * i], x1[2 * i + 1], x2[2 * i], x2[2 * i + 1], f2);
        if (e2 < thr2) {
            cost += e2;
            ++cnt;
        } else {
            cost += thr2;
        }
    }
    *inliers = cnt;
    return cost;
}

/// The MSAC cost sum_i min(e_i^2, thr2) and the inlier count, summed in the warp's order: the 32 lane shares,
/// then the xor butterfly 16, 8, 4, 2, 1 (v_l <- v_l + v_{l ^ off}; addition is commutative, so every lane
/// ends with the same sum). This is the definition; the kernel computes it with __shfl_xor_sync.
KESTREL_HD double pose_msac(const double* E, const double* x1, const double* x2, int n, double f2, double thr2,
                            int* inliers) {
    double v[kPoseLanes];
    int c[kPoseLanes];
    for (int l = 0; l < kPoseLanes; ++l) v[l] = pose_msac_lane(E, x1, x2, n, f2, thr2, l, &c[l]);
    for (int off = kPoseLanes / 2; off >= 1; off >>= 1) {
        double w[kPoseLanes];
        int d[kPoseLanes];
        for (int l = 0; l < kPoseLanes; ++l) {
            w[l] = v[l] + v[l ^ off];
            d[l] = c[l] + c[l ^ off];
        }
        for (int l = 0; l < kPoseLanes; ++l) {
            v[l] = w[l];
            c[l] = d[l];
        }
    }
    *inliers = c[0];
    return v[0];
}

// ---- small 3x3 helpers (row-major) ----------------------------------------------------------------------------
KESTREL_HD void pose_skew_mul(const double* t, const double* R, double* E) {  // E = [t]x R
    for (int j = 0; j < 3; ++j) {
        E[j] = -t[2] * R[3 + j] + t[1] * R[6 + j];
        E[3 + j] = t[2] * R[j] - t[0] * R[6 + j];
        E[6 + j] = -t[1] * R[j] + t[0] * R[3 + j];
    }
}
KESTREL_HD void pose_mat_mul(const double* A, const double* B, double* C) {
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
KESTREL_HD double pose_normalize3(double* v) {
    const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (n > 0.0) {
        v[0] = v[0] / n;
        v[1] = v[1] / n;
        v[2] = v[2] / n;
    }
    return n;
}

// ---- the two-point solver (rotation known) --------------------------------------------------------------------
/// t . ((R p1) x p2) = 0 for each correspondence: t is the cross product of the two constraint vectors.
/// Writes E = [t]x R; false when the two constraints are parallel.
KESTREL_HD bool pose_two_point(const double* R, const double* x1, const double* x2, const int* idx, double* E) {
    double a[2][3];
    for (int s = 0; s < 2; ++s) {
        const double u1 = x1[2 * idx[s]], v1 = x1[2 * idx[s] + 1], u2 = x2[2 * idx[s]], v2 = x2[2 * idx[s] + 1];
        const double q0 = R[0] * u1 + R[1] * v1 + R[2];
        const double q1 = R[3] * u1 + R[4] * v1 + R[5];
        const double q2 = R[6] * u1 + R[7] * v1 + R[8];
        a[s][0] = q1 - q2 * v2;  // q x (u2, v2, 1)
        a[s][1] = q2 * u2 - q0;
        a[s][2] = q0 * v2 - q1 * u2;
    }
    double t[3] = {a[0][1] * a[1][2] - a[0][2] * a[1][1], a[0][2] * a[1][0] - a[0][0] * a[1][2],
                   a[0][0] * a[1][1] - a[0][1] * a[1][0]};
    const double na = std::sqrt(a[0][0] * a[0][0] + a[0][1] * a[0][1] + a[0][2] * a[0][2]) *
                      std::sqrt(a[1][0] * a[1][0] + a[1][1] * a[1][1] + a[1][2] * a[1][2]);
    const double nt = pose_normalize3(t);
    if (!(nt > 1e-12 * na)) return false;
    pose_skew_mul(t, R, E);
    return true;
}

// ---- one hypothesis ---------------------------------------------------------------------------------------------
/// Everything a hypothesis needs, by value (the kernel's launch parameters).
struct PoseProblem {
    const double* x1;  // 2n, interleaved
    const double* x2;
    int n;
    double f2;    // focal_px^2
    double thr2;  // threshold_px^2
    std::uint64_t seed;
    int method;   // 0 five-point, 1 two-point
    double R[9];  // the rotation prior (two-point)
};

/// Hypothesis k's models: draw its sample (seed, k), solve it. Writes up to 10 E (five-point) or 1 (two-point);
/// returns their count (0 when the sample could not be drawn or is degenerate).
KESTREL_HD int pose_hypothesis_solve(const PoseProblem& p, int k, double Es[kFivePointMaxSolutions][9]) {
    const int m = p.method == 0 ? 5 : 2;
    int idx[kPoseMaxSample];
    if (!pose_sample(p.seed, static_cast<std::uint32_t>(k), p.n, m, idx)) return 0;
    if (p.method == 0) {
        double s1[10], s2[10];
        for (int j = 0; j < 5; ++j) {
            s1[2 * j] = p.x1[2 * idx[j]];
            s1[2 * j + 1] = p.x1[2 * idx[j] + 1];
            s2[2 * j] = p.x2[2 * idx[j]];
            s2[2 * j + 1] = p.x2[2 * idx[j] + 1];
        }
        int flag = 0;
        return five_point_solve(s1, s2, Es, &flag, false);  // unpolished: see five_point_solve
    }
    return pose_two_point(p.R, p.x1, p.x2, idx, Es[0]) ? 1 : 0;
}

/// Hypothesis k: its models scored by pose_msac; the lowest cost wins (the lower solution index on ties).
/// Writes the winning E (zeros when none); returns its cost (1e300 when the sample gave no model) and its
/// inlier count. The kernel runs the same steps with lane 0 solving and the warp scoring.
KESTREL_HD double pose_hypothesis(const PoseProblem& p, int k, double* Ebest, int* inliers_best) {
    double Es[kFivePointMaxSolutions][9];
    const int ns = pose_hypothesis_solve(p, k, Es);
    double best = 1e300;
    int best_s = -1;
    *inliers_best = 0;
    for (int s = 0; s < ns; ++s) {
        int inl = 0;
        const double c = pose_msac(Es[s], p.x1, p.x2, p.n, p.f2, p.thr2, &inl);
        if (c < best) {
            best = c;
            *inliers_best = inl;
            best_s = s;
        }
    }
    for (int j = 0; j < 9; ++j) Ebest[j] = best_s >= 0 ? Es[best_s][j] : 0.0;
    return best;
}

// ---- the in-order scan with the adaptive stop ------------------------------------------------------------------
/// State carried between rounds: best hypothesis so far (index, cost, inliers), hypotheses used, stopped.
struct PoseScan {
    int best = -1;
    double cost = 1e300;
    int inliers = 0;
    int used = 0;
    int stopped = 0;
};
/// Scans the scored hypotheses [first, first + count) in index order: a strictly lower cost wins; after each
/// hypothesis k the stop test k + 1 >= required[best inliers] (max_hypotheses while there is no best).
/// Returns the round-local index of the last new best, or -1 when none of this round won.
KESTREL_HD int pose_scan(PoseScan& s, const double* cost, const int* inliers, int first, int count,
                         const int* required, int max_hypotheses) {
    int won = -1;
    for (int j = 0; j < count && !s.stopped; ++j) {
        const int k = first + j;
        if (cost[j] < s.cost) {
            s.best = k;
            s.cost = cost[j];
            s.inliers = inliers[j];
            won = j;
        }
        const int req = s.best < 0 ? max_hypotheses : required[s.inliers];
        s.used = k + 1;
        if (k + 1 >= req || k + 1 >= max_hypotheses) s.stopped = 1;
    }
    return won;
}

// ---- decomposition and cheirality -------------------------------------------------------------------------------
/// Depths (d1, d2) of the correspondence under X2 = R X1 + t, least squares d2 p2 = d1 R p1 + t; true when
/// both are positive (in front of both cameras).
KESTREL_HD bool pose_in_front(const double* R, const double* t, double u1, double v1, double u2, double v2) {
    const double q0 = R[0] * u1 + R[1] * v1 + R[2];
    const double q1 = R[3] * u1 + R[4] * v1 + R[5];
    const double q2 = R[6] * u1 + R[7] * v1 + R[8];
    // [q, -p2] [d1 d2]^T = -t, normal equations
    const double a = q0 * q0 + q1 * q1 + q2 * q2;
    const double b = -(q0 * u2 + q1 * v2 + q2);
    const double c = u2 * u2 + v2 * v2 + 1.0;
    const double r0 = -(q0 * t[0] + q1 * t[1] + q2 * t[2]);
    const double r1 = u2 * t[0] + v2 * t[1] + t[2];
    const double det = a * c - b * b;
    if (!(det > 1e-14 * a * c)) return false;  // parallel rays (no parallax)
    const double d1 = (c * r0 - b * r1) / det;
    const double d2 = (a * r1 - b * r0) / det;
    return d1 > 0.0 && d2 > 0.0;
}

/// Newton's polar iteration R <- (R + R^-T) / 2: the nearest rotation to a near-rotation (arithmetic only).
KESTREL_HD void pose_orthonormalize(double* R) {
    for (int it = 0; it < 6; ++it) {
        const double c[9] = {R[4] * R[8] - R[5] * R[7], R[5] * R[6] - R[3] * R[8], R[3] * R[7] - R[4] * R[6],
                             R[2] * R[7] - R[1] * R[8], R[0] * R[8] - R[2] * R[6], R[1] * R[6] - R[0] * R[7],
                             R[1] * R[5] - R[2] * R[4], R[2] * R[3] - R[0] * R[5], R[0] * R[4] - R[1] * R[3]};
        const double det = R[0] * c[0] + R[1] * c[1] + R[2] * c[2];
        if (!(det != 0.0)) return;
        for (int j = 0; j < 9; ++j) R[j] = 0.5 * (R[j] + c[j] / det);  // R^-T = cof(R) / det
    }
}

/// E -> the four (R, t) candidates -> the one with the most points in front of both cameras among the mask's
/// points (ties: the first; cv::recoverPose's rule). With t the left null vector of E (largest cross product
/// of two columns) and E scaled to E E^T = I - t t^T: R = cof(E) - [t]x E, and the twisted pair from -E
/// (B. K. P. Horn, "Recovering baseline and orientation from essential matrix", 1990). Returns the count.
KESTREL_HD int pose_decompose(const double* E_in, const double* x1, const double* x2, const std::uint8_t* mask,
                              int n, double* R_out, double* t_out) {
    double fro = 0.0;
    for (int j = 0; j < 9; ++j) fro += E_in[j] * E_in[j];
    fro = std::sqrt(fro);
    if (!(fro > 0.0)) return 0;
    double E[9];
    const double s = std::sqrt(2.0) / fro;
    for (int j = 0; j < 9; ++j) E[j] = E_in[j] * s;
    // t: t^T E = 0, so t is orthogonal to E's columns.
    double t[3] = {0.0, 0.0, 0.0};
    double bestn = -1.0;
    const int pr[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int q = 0; q < 3; ++q) {
        const int a = pr[q][0], b = pr[q][1];
        const double c[3] = {E[3 + a] * E[6 + b] - E[6 + a] * E[3 + b], E[6 + a] * E[b] - E[a] * E[6 + b],
                             E[a] * E[3 + b] - E[3 + a] * E[b]};
        const double nn = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        if (nn > bestn) {
            bestn = nn;
            t[0] = c[0];
            t[1] = c[1];
            t[2] = c[2];
        }
    }
    if (!(pose_normalize3(t) > 0.0)) return 0;
    const double cof[9] = {E[4] * E[8] - E[5] * E[7], E[5] * E[6] - E[3] * E[8], E[3] * E[7] - E[4] * E[6],
                           E[2] * E[7] - E[1] * E[8], E[0] * E[8] - E[2] * E[6], E[1] * E[6] - E[0] * E[7],
                           E[1] * E[5] - E[2] * E[4], E[2] * E[3] - E[0] * E[5], E[0] * E[4] - E[1] * E[3]};
    double tE[9];
    pose_skew_mul(t, E, tE);
    double Rc[2][9];
    for (int j = 0; j < 9; ++j) {
        Rc[0][j] = cof[j] - tE[j];
        Rc[1][j] = cof[j] + tE[j];
    }
    pose_orthonormalize(Rc[0]);
    pose_orthonormalize(Rc[1]);
    int best = -1;
    for (int c = 0; c < 4; ++c) {
        const double* R = Rc[c >> 1];
        const double sg = (c & 1) ? -1.0 : 1.0;
        const double tc[3] = {sg * t[0], sg * t[1], sg * t[2]};
        int cnt = 0;
        for (int i = 0; i < n; ++i)
            if (!mask || mask[i])
                cnt += pose_in_front(R, tc, x1[2 * i], x1[2 * i + 1], x2[2 * i], x2[2 * i + 1]) ? 1 : 0;
        if (cnt > best) {
            best = cnt;
            for (int j = 0; j < 9; ++j) R_out[j] = R[j];
            for (int j = 0; j < 3; ++j) t_out[j] = tc[j];
        }
    }
    return best;
}

// ---- refinement ---------------------------------------------------------------------------------------------------
/// Sum of squared Sampson errors (px^2) of the masked points under [t]x R.
KESTREL_HD double pose_sampson_sum(const double* R, const double* t, const double* x1, const double* x2,
                                   const std::uint8_t* mask, int n, double f2) {
    double E[9];
    pose_skew_mul(t, R, E);
    double s = 0.0;
    for (int i = 0; i < n; ++i)
        if (mask[i]) s += pose_sampson2(E, x1[2 * i], x1[2 * i + 1], x2[2 * i], x2[2 * i + 1], f2);
    return s;
}
/// The pose moved by the parameter vector d: R <- R * rot(d0, d1, d2) (unit quaternion (1, d/2) normalized),
/// t <- normalize(t + d3 b1 + d4 b2) with b1, b2 a basis of t's tangent plane. np = 5 (pose) or 2 (t only).
KESTREL_HD void pose_move(const double* R, const double* t, const double* d, int np, double* Rn, double* tn) {
    double w = 1.0, x = 0.0, y = 0.0, z = 0.0;
    int o = 0;
    if (np == 5) {
        x = 0.5 * d[0];
        y = 0.5 * d[1];
        z = 0.5 * d[2];
        o = 3;
        const double qn = std::sqrt(w * w + x * x + y * y + z * z);
        w = w / qn;
        x = x / qn;
        y = y / qn;
        z = z / qn;
    }
    const double Q[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    pose_mat_mul(R, Q, Rn);
    // tangent basis: b1 = normalize(t x a) with a the axis least aligned with t, b2 = t x b1
    const double ax = std::fabs(t[0]), ay = std::fabs(t[1]), az = std::fabs(t[2]);
    const double a[3] = {ax <= ay && ax <= az ? 1.0 : 0.0, ay < ax && ay <= az ? 1.0 : 0.0,
                         az < ax && az < ay ? 1.0 : 0.0};
    double b1[3] = {t[1] * a[2] - t[2] * a[1], t[2] * a[0] - t[0] * a[2], t[0] * a[1] - t[1] * a[0]};
    pose_normalize3(b1);
    const double b2[3] = {t[1] * b1[2] - t[2] * b1[1], t[2] * b1[0] - t[0] * b1[2], t[0] * b1[1] - t[1] * b1[0]};
    for (int j = 0; j < 3; ++j) tn[j] = t[j] + d[o] * b1[j] + d[o + 1] * b2[j];
    pose_normalize3(tn);
}

/// Levenberg-Marquardt on the Sampson errors of the masked points over (R, unit t) (np = 5) or t alone with
/// R fixed (np = 2, the two-point method); forward-difference Jacobian, at most `iterations` steps, each kept
/// only when it lowers the sum of squares; stops once a step gains less than 1e-10 relative. R, t are updated in place; returns the final sum.
KESTREL_HD double pose_refine(double* R, double* t, const double* x1, const double* x2, const std::uint8_t* mask,
                              int n, double f2, int np, int iterations) {
    double cost = pose_sampson_sum(R, t, x1, x2, mask, n, f2);
    double lambda = 1e-3;
    const double h = 1e-7;
    for (int it = 0; it < iterations; ++it) {
        // J^T J and J^T r from per-point residuals r_i = sqrt(sampson2_i) (signed by the epipolar residual).
        double A[5][5], g[5];
        for (int i = 0; i < 5; ++i) {
            g[i] = 0.0;
            for (int j = 0; j < 5; ++j) A[i][j] = 0.0;
        }
        double E0[9], Ep[5][9];
        pose_skew_mul(t, R, E0);
        for (int q = 0; q < np; ++q) {
            double d[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
            d[q] = h;
            double Rn[9], tn[3];
            pose_move(R, t, d, np, Rn, tn);
            pose_skew_mul(tn, Rn, Ep[q]);
        }
        for (int i = 0; i < n; ++i) {
            if (!mask[i]) continue;
            const double u1 = x1[2 * i], v1 = x1[2 * i + 1], u2 = x2[2 * i], v2 = x2[2 * i + 1];
            // signed Sampson residual: r / sqrt(d) * f
            double res[6];
            for (int q = 0; q <= np; ++q) {
                const double* E = q == 0 ? E0 : Ep[q - 1];
                const double a0 = E[0] * u1 + E[1] * v1 + E[2];
                const double a1 = E[3] * u1 + E[4] * v1 + E[5];
                const double a2 = E[6] * u1 + E[7] * v1 + E[8];
                const double b0 = E[0] * u2 + E[3] * v2 + E[6];
                const double b1 = E[1] * u2 + E[4] * v2 + E[7];
                const double r = u2 * a0 + v2 * a1 + a2;
                const double dd = a0 * a0 + a1 * a1 + b0 * b0 + b1 * b1;
                res[q] = dd > 0.0 ? r / std::sqrt(dd) : 0.0;
            }
            double J[5];
            for (int q = 0; q < np; ++q) J[q] = (res[q + 1] - res[0]) / h;
            for (int a = 0; a < np; ++a) {
                g[a] += J[a] * res[0];
                for (int b = 0; b < np; ++b) A[a][b] += J[a] * J[b];
            }
        }
        // Solve (A + lambda diag(A)) d = -g by Cholesky; retry with a larger lambda when a step fails.
        bool improved = false, converged = false;
        for (int attempt = 0; attempt < 4 && !improved; ++attempt) {
            double L[5][5], y[5], d[5];
            bool ok = true;
            for (int a = 0; a < np && ok; ++a)
                for (int b = 0; b <= a; ++b) {
                    double s = A[a][b] + (a == b ? lambda * A[a][a] : 0.0);
                    for (int k = 0; k < b; ++k) s -= L[a][k] * L[b][k];
                    if (a == b) {
                        if (!(s > 0.0)) {
                            ok = false;
                            break;
                        }
                        L[a][a] = std::sqrt(s);
                    } else {
                        L[a][b] = s / L[b][b];
                    }
                }
            if (!ok) return cost;
            for (int a = 0; a < np; ++a) {
                double s = -g[a];
                for (int k = 0; k < a; ++k) s -= L[a][k] * y[k];
                y[a] = s / L[a][a];
            }
            for (int a = np - 1; a >= 0; --a) {
                double s = y[a];
                for (int k = a + 1; k < np; ++k) s -= L[k][a] * d[k];
                d[a] = s / L[a][a];
            }
            double Rn[9], tn[3];
            pose_move(R, t, d, np, Rn, tn);
            const double cn = pose_sampson_sum(Rn, tn, x1, x2, mask, n, f2);
            if (cn < cost) {
                converged = cost - cn <= 1e-10 * cost;  // nothing left to gain: stop after this step
                cost = cn;
                for (int j = 0; j < 9; ++j) R[j] = Rn[j];
                for (int j = 0; j < 3; ++j) t[j] = tn[j];
                lambda = lambda * 0.1;
                improved = true;
            } else {
                lambda = lambda * 10.0;
            }
        }
        if (!improved || converged) break;
    }
    return cost;
}

}  // namespace kestrel::detail
