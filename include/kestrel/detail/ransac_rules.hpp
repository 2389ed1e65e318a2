// The relative-pose RANSAC rules shared verbatim by the CPU reference (src/geometry/relative_pose_cpu.cpp)
// and the CUDA kernel (kernels/geometry/ransac.cu): the counter-based sampler, the minimal solvers per
// hypothesis (five-point: detail/five_point_lanes_rules.hpp; two-point with a known rotation), the Sampson error in
// pixels and the MSAC score, the in-order adaptive scan, the refinement on the inliers and the decomposition
// of E into R and unit t with the cheirality test. Design and contracts: docs/geometry.md.
//
// Determinism: hypothesis k's sample is a function of (seed, k) only (integer hashing); each model's MSAC
// score is a sum of integers (the same in any order: the kernel may split the points as it likes); the winner
// is chosen by scanning the hypotheses in index order with a strict "lower cost wins" rule and the stop count read from a table that
// the host computes once (no transcendental function on the device). The arithmetic is +, -, *, /, sqrt
// and explicit fma only, compiled without FMA contraction on both sides (docs/geometry.md), so both backends
// agree bit for bit.
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/detail/five_point_lanes_rules.hpp"
#include "kestrel/detail/five_point_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/relative_pose_types.hpp"

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

// ---- the adaptive stop: a table over the quantized inlier fraction -----------------------------------------
/// The stop table has kPoseStopBins + 1 entries per sample size m: required[q] = the hypotheses needed for the
/// confidence when the inlier fraction is q / kPoseStopBins (computed once on the host, where log is). The
/// best model's fraction c / n is rounded down to a bin (integer arithmetic: both backends and any n share one
/// table, also when n is known only on the device); rounding down can only ask for more hypotheses.
constexpr int kPoseStopBins = 4096;
KESTREL_HD int pose_stop_bin(int inliers, int n) {
    if (n <= 0 || inliers <= 0) return 0;
    const long long q = static_cast<long long>(inliers) * kPoseStopBins / n;
    return q > kPoseStopBins ? kPoseStopBins : static_cast<int>(q);
}

// ---- the problem: points as 3-vectors, the error's tangent plane, the pixel scale ----------------------------
/// Everything a hypothesis needs, by value (the kernels' launch parameters).
/// Points are 3-vectors (x, y, z), 3 doubles each: normalized points (z = 1; `sphere` = 0) or unit bearing
/// vectors (`sphere` = 1). `s` (n doubles, optional) is each point's scale in pixels per unit of the error's
/// tangent plane (pixels per radian on the sphere); without it every point uses f2 = focal_px^2.
struct PoseProblem {
    const double* x1;  // 3n
    const double* x2;  // 3n
    const double* s;   // n or null
    int n;
    int sphere;   // 0: the z = 1 plane (Sampson error in the plane), 1: the unit sphere (tangent-plane error)
    double f2;    // focal_px^2 (the scale^2 when s is null)
    double thr2;  // inlier threshold^2 (px^2) of this pass
    double qscale;  // 2^32 / thr2: the MSAC cost's integer units (pose_msac)
    std::uint64_t seed;
    int method;   // 0 five-point, 1 two-point (R known), 2 rotation only (model: R)
    double R[9];  // the rotation prior (two-point)
};
/// Point i's squared scale (px^2 per unit^2).
KESTREL_HD double pose_weight2(const PoseProblem& p, int i) { return p.s ? p.s[i] * p.s[i] : p.f2; }
/// Point i's residual scale for the refinement's signed residuals (1 without per-point scales: the common
/// factor f drops out of the normal equations).
KESTREL_HD double pose_weight1(const PoseProblem& p, int i) { return p.s ? p.s[i] : 1.0; }

/// The epipolar residual r = q^T E p and the Sampson denominator d: in the plane (points with z = 1, moved in
/// x and y) d = (E p)_1^2 + (E p)_2^2 + (E^T q)_1^2 + (E^T q)_2^2; on the sphere (unit p, q, moved in their
/// tangent planes) d = |P_q E p|^2 + |P_p E^T q|^2 = |E p|^2 + |E^T q|^2 - 2 r^2. r^2 / d is the squared
/// first-order distance of (p, q) to the constraint: normalized units^2, or radians^2 on the sphere.
KESTREL_HD void pose_epipolar(const double* E, const double* p, const double* q, int sphere, double* r_out,
                              double* d_out) {
    const double a0 = std::fma(E[0], p[0], std::fma(E[1], p[1], E[2] * p[2]));
    const double a1 = std::fma(E[3], p[0], std::fma(E[4], p[1], E[5] * p[2]));
    const double a2 = std::fma(E[6], p[0], std::fma(E[7], p[1], E[8] * p[2]));
    const double b0 = std::fma(E[0], q[0], std::fma(E[3], q[1], E[6] * q[2]));
    const double b1 = std::fma(E[1], q[0], std::fma(E[4], q[1], E[7] * q[2]));
    const double r = std::fma(q[0], a0, std::fma(q[1], a1, q[2] * a2));
    double d = std::fma(a0, a0, std::fma(a1, a1, std::fma(b0, b0, b1 * b1)));
    if (sphere) {
        const double b2 = std::fma(E[2], q[0], std::fma(E[5], q[1], E[8] * q[2]));
        d = std::fma(a2, a2, std::fma(b2, b2, d)) - 2.0 * (r * r);
    }
    *r_out = r;
    *d_out = d;
}

/// Squared error of (p, q) under model M, in pixels^2 (w2: the point's squared scale):
///   methods 0, 1 (M = E): the Sampson error w2 r^2 / d (pose_epipolar);
///   method 2 (M = R, no translation): half the squared transfer error of R p against q (the squared distance
///   of the correspondence to the model when both views carry the noise: the first-order correction moves each
///   point half way), in the plane w2 |q - (R p) / (R p)_z|^2 / 2 (infinite when R p points backwards), on the
///   sphere w2 |q - R p|^2 / 2 (chord).
KESTREL_HD double pose_error2(int method, int sphere, const double* M, const double* p, const double* q, double w2) {
    if (method == 2) {
        const double r0 = M[0] * p[0] + M[1] * p[1] + M[2] * p[2];
        const double r1 = M[3] * p[0] + M[4] * p[1] + M[5] * p[2];
        const double r2 = M[6] * p[0] + M[7] * p[1] + M[8] * p[2];
        double dx, dy, dz = 0.0;
        if (sphere) {
            dx = q[0] - r0;
            dy = q[1] - r1;
            dz = q[2] - r2;
        } else {
            if (!(r2 > 0.0)) return 1e300;
            dx = q[0] - r0 / r2;
            dy = q[1] - r1 / r2;
        }
        const double e2 = w2 * (0.5 * (dx * dx + dy * dy + dz * dz));
        return e2 == e2 ? e2 : 1e300;
    }
    double r, d;
    pose_epipolar(M, p, q, sphere, &r, &d);
    if (!(d > 0.0)) return 1e300;
    return w2 * (r * r) / d;
}
/// Point i's squared error under M.
KESTREL_HD double pose_point_error2(const PoseProblem& p, const double* M, int i) {
    return pose_error2(p.method, p.sphere, M, p.x1 + 3 * i, p.x2 + 3 * i, pose_weight2(p, i));
}
/// Squared Sampson error of (p, q) under E in the plane (z = 1 points), pixels^2: pose_error2 of method 0.
KESTREL_HD double pose_sampson2(const double* E, double u1, double v1, double u2, double v2, double f2) {
    const double p[3] = {u1, v1, 1.0}, q[3] = {u2, v2, 1.0};
    return pose_error2(0, 0, E, p, q, f2);
}

constexpr int kPoseLanes = 32;  // a warp (the finish's sums)
constexpr double kPoseCostUnits = 4294967296.0;  // 2^32: an outlier's MSAC term, in integer units

/// The hypotheses' MSAC term in integer units, so that the sum is the same in any order: an inlier
/// (e2 < thr2) adds trunc(e2 * qscale) (at most 2^32), an outlier 2^32; count += inlier.
KESTREL_HD void pose_msac_add_units(double e2, const PoseProblem& p, unsigned long long& units, int& count) {
    if (e2 < p.thr2) {
        const double q = e2 * p.qscale;
        units += q < kPoseCostUnits ? static_cast<unsigned long long>(q) : 4294967296ull;
        ++count;
    } else {
        units += 4294967296ull;
    }
}

/// Point i's MSAC term under the hypothesis' model M: as pose_msac_add_units of pose_point_error2, but for the
/// epipolar models the inlier test is w2 r^2 < thr2 d (d > 0), without the division (only an inlier's error is
/// divided out).
/// The epipolar inlier test of pose_msac_point: num = w2 r^2 against thr2 d (d > 0), without the division.
KESTREL_HD bool pose_msac_in(const PoseProblem& p, double num, double d) { return d > 0.0 && num < p.thr2 * d; }
/// pose_msac_point's term: an inlier with squared error e2 = num / d adds trunc(e2 * qscale) (at most 2^32), an
/// outlier 2^32 (e2 is not read).
KESTREL_HD void pose_msac_units(const PoseProblem& p, bool in, double e2, unsigned long long& units, int& count) {
    if (in) {
        const double q = e2 * p.qscale;
        units += q < kPoseCostUnits ? static_cast<unsigned long long>(q) : 4294967296ull;
        ++count;
    } else {
        units += 4294967296ull;
    }
}
/// pose_msac_point's epipolar term from point i's residual r and denominator d (pose_epipolar).
KESTREL_HD void pose_msac_rd(const PoseProblem& p, int i, double r, double d, unsigned long long& units, int& count) {
    const double num = pose_weight2(p, i) * (r * r);
    if (pose_msac_in(p, num, d))  // only an inlier's error is divided out
        pose_msac_units(p, true, num / d, units, count);
    else
        pose_msac_units(p, false, 0.0, units, count);
}
KESTREL_HD void pose_msac_point(const PoseProblem& p, const double* M, int i, unsigned long long& units, int& count) {
    if (p.method == 2) {
        pose_msac_add_units(pose_point_error2(p, M, i), p, units, count);
        return;
    }
    double r, d;
    pose_epipolar(M, p.x1 + 3 * i, p.x2 + 3 * i, p.sphere, &r, &d);
    pose_msac_rd(p, i, r, d, units, count);
}

/// The MSAC cost of model M over all points in integer units (pose_msac_point; exact as a double below 2^53,
/// i.e. up to 2^21 points) and the inlier count: integer sums, the same in any order (the kernel sums a model's
/// points over a whole block).
KESTREL_HD double pose_msac(const PoseProblem& p, const double* M, int* inliers) {
    unsigned long long u = 0ull;
    int c = 0;
    for (int i = 0; i < p.n; ++i) pose_msac_point(p, M, i, u, c);
    *inliers = c;
    return static_cast<double>(u);
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
/// Writes E = [t]x R; false when the two constraints are parallel. Points are 3-vectors.
KESTREL_HD bool pose_two_point(const double* R, const double* x1, const double* x2, const int* idx, double* E) {
    double a[2][3];
    for (int s = 0; s < 2; ++s) {
        const double* p = x1 + 3 * idx[s];
        const double* q2 = x2 + 3 * idx[s];
        const double q0 = R[0] * p[0] + R[1] * p[1] + R[2] * p[2];
        const double q1 = R[3] * p[0] + R[4] * p[1] + R[5] * p[2];
        const double qz = R[6] * p[0] + R[7] * p[1] + R[8] * p[2];
        a[s][0] = q1 * q2[2] - qz * q2[1];  // (R p) x q
        a[s][1] = qz * q2[0] - q0 * q2[2];
        a[s][2] = q0 * q2[1] - q1 * q2[0];
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

// ---- the rotation-only solver (no translation) --------------------------------------------------------------
/// R with R p = q for two correspondences (p_k, q_k directions): the orthonormal frames (a1 = p1, a2 = p1 x p2,
/// a3 = a1 x a2) and (b1 = q1, b2 = q1 x q2, b3 = b1 x b2) give R = sum_k b_k a_k^T (exact for the first
/// point, the second's plane). False when either pair is (nearly) parallel.
KESTREL_HD bool pose_rotation_two_point(const double* p1, const double* p2, const double* q1, const double* q2,
                                        double* R) {
    double a[3][3], b[3][3];
    const double* src[2][2] = {{p1, p2}, {q1, q2}};
    for (int v = 0; v < 2; ++v) {
        double(*f)[3] = v == 0 ? a : b;
        const double* u = src[v][0];
        const double* w = src[v][1];
        for (int j = 0; j < 3; ++j) f[0][j] = u[j];
        const double nu = pose_normalize3(f[0]);
        f[1][0] = u[1] * w[2] - u[2] * w[1];
        f[1][1] = u[2] * w[0] - u[0] * w[2];
        f[1][2] = u[0] * w[1] - u[1] * w[0];
        const double nw = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        const double nc = pose_normalize3(f[1]);
        if (!(nc > 1e-9 * nu * nw)) return false;
        f[2][0] = f[0][1] * f[1][2] - f[0][2] * f[1][1];
        f[2][1] = f[0][2] * f[1][0] - f[0][0] * f[1][2];
        f[2][2] = f[0][0] * f[1][1] - f[0][1] * f[1][0];
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) R[3 * i + j] = b[0][i] * a[0][j] + b[1][i] * a[1][j] + b[2][i] * a[2][j];
    return true;
}

// ---- one hypothesis ---------------------------------------------------------------------------------------------
/// The minimal sample size of a method.
KESTREL_HD int pose_sample_size(int method) { return method == 0 ? 5 : 2; }

/// Hypothesis k's sample (m indices); false when it could not be drawn or n is below the sample size.
KESTREL_HD bool pose_hypothesis_sample(const PoseProblem& p, int k, int* idx) {
    const int m = pose_sample_size(p.method);
    if (p.n < m) return false;
    return pose_sample(p.seed, static_cast<std::uint32_t>(k), p.n, m, idx);
}

/// The one model of a two-point or rotation-only hypothesis (false: degenerate sample).
KESTREL_HD bool pose_hypothesis_model2(const PoseProblem& p, const int* idx, double* M) {
    if (p.method == 1) return pose_two_point(p.R, p.x1, p.x2, idx, M);
    return pose_rotation_two_point(p.x1 + 3 * idx[0], p.x1 + 3 * idx[1], p.x2 + 3 * idx[0], p.x2 + 3 * idx[1], M);
}

/// Hypothesis k: its sample solved (five-point: fpl_solve, five_point_lanes_rules.hpp; two-point with the
/// prior; rotation only), every model scored by pose_msac; the lowest cost wins (the lower solution index on
/// ties). Writes the winning model (zeros when none); returns its cost (1e300 when the sample gave no model) and
/// its inlier count. The kernel runs the same steps on a lane group (kernels/geometry/ransac.cu).
inline double pose_hypothesis(const PoseProblem& p, int k, double* Mbest, int* inliers_best) {
    double best = 1e300;
    int best_s = -1;
    *inliers_best = 0;
    int idx[kPoseMaxSample];
    double Es[kFivePointMaxSolutions][9];
    int ns = 0;
    if (pose_hypothesis_sample(p, k, idx)) {
        if (p.method == 0) {
            FplWork w;
            for (int j = 0; j < 5; ++j)
                for (int c = 0; c < 3; ++c) {
                    w.sample[3 * j + c] = p.x1[3 * idx[j] + c];
                    w.sample[15 + 3 * j + c] = p.x2[3 * idx[j] + c];
                }
            const int nr = fpl_solve(FplSerialLanes{}, w);
            for (int r = 0; r < nr; ++r)
                if (w.ok[r]) {
                    for (int j = 0; j < 9; ++j) Es[ns][j] = w.E[r][j];
                    ++ns;
                }
        } else {
            ns = pose_hypothesis_model2(p, idx, Es[0]) ? 1 : 0;
        }
    }
    for (int s = 0; s < ns; ++s) {
        int inl = 0;
        const double c = pose_msac(p, Es[s], &inl);
        if (c < best) {
            best = c;
            *inliers_best = inl;
            best_s = s;
        }
    }
    for (int j = 0; j < 9; ++j) Mbest[j] = best_s >= 0 ? Es[best_s][j] : 0.0;
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
/// hypothesis k the stop test k + 1 >= required[pose_stop_bin(best inliers, n)] (max_hypotheses while there is
/// no best). `required` is the table of the pass' sample size (kPoseStopBins + 1 entries). Returns the
/// round-local index of the last new best, or -1 when none of this round won. The kernel computes the same
/// state with a parallel prefix (kernels/geometry/ransac.cu): comparisons only, so the same result.
KESTREL_HD int pose_scan(PoseScan& s, const double* cost, const int* inliers, int first, int count,
                         const int* required, int n, int max_hypotheses) {
    int won = -1;
    for (int j = 0; j < count && !s.stopped; ++j) {
        const int k = first + j;
        if (cost[j] < s.cost) {
            s.best = k;
            s.cost = cost[j];
            s.inliers = inliers[j];
            won = j;
        }
        const int req = s.best < 0 ? max_hypotheses : required[pose_stop_bin(s.inliers, n)];
        s.used = k + 1;
        if (k + 1 >= req || k + 1 >= max_hypotheses) s.stopped = 1;
    }
    return won;
}

// ---- decomposition and cheirality -------------------------------------------------------------------------------
/// Depths (d1, d2) of the correspondence (p, q) (3-vectors: rays of any length) under X2 = R X1 + t, least
/// squares d2 q = d1 R p + t: the normal equations [a b; b c] [d1 d2]^T = [r0 r1]^T give d1 = n1 / det,
/// d2 = n2 / det with det = a c - b^2 > 0 (parallel rays, det <= 1e-14 a c, have no depth: neither sign). Only
/// the signs matter, so no division: *front (both depths positive, in front of both cameras along both rays)
/// is n1 > 0 && n2 > 0. Under (R, -t) r0, r1 and so n1, n2 change sign exactly: *front_neg is n1 < 0 && n2 < 0.
KESTREL_HD void pose_in_front_pm(const double* R, const double* t, const double* p, const double* p2, bool* front,
                                 bool* front_neg) {
    const double q0 = R[0] * p[0] + R[1] * p[1] + R[2] * p[2];
    const double q1 = R[3] * p[0] + R[4] * p[1] + R[5] * p[2];
    const double q2 = R[6] * p[0] + R[7] * p[1] + R[8] * p[2];
    // [q, -p2] [d1 d2]^T = -t, normal equations
    const double a = q0 * q0 + q1 * q1 + q2 * q2;
    const double b = -(q0 * p2[0] + q1 * p2[1] + q2 * p2[2]);
    const double c = p2[0] * p2[0] + p2[1] * p2[1] + p2[2] * p2[2];
    const double r0 = -(q0 * t[0] + q1 * t[1] + q2 * t[2]);
    const double r1 = p2[0] * t[0] + p2[1] * t[1] + p2[2] * t[2];
    const double det = a * c - b * b;
    const bool ok = det > 1e-14 * a * c;
    const double n1 = c * r0 - b * r1;
    const double n2 = a * r1 - b * r0;
    *front = ok && n1 > 0.0 && n2 > 0.0;
    *front_neg = ok && n1 < 0.0 && n2 < 0.0;
}
/// True when (p, q) is in front of both cameras under (R, t) (pose_in_front_pm).
KESTREL_HD bool pose_in_front(const double* R, const double* t, const double* p, const double* p2) {
    bool f, fn;
    pose_in_front_pm(R, t, p, p2, &f, &fn);
    return f;
}

/// Newton's polar iteration R <- (R + R^-T) / 2, R^-T = cof(R) * (1 / det R): the nearest rotation to a
/// near-rotation (arithmetic only).
/// An iteration that changes no bit is a fixed point: the remaining ones would change nothing either, so the loop
/// ends there (the same result as all `iterations`).
KESTREL_HD void pose_orthonormalize(double* R, int iterations = 6) {
    for (int it = 0; it < iterations; ++it) {
        const double c[9] = {R[4] * R[8] - R[5] * R[7], R[5] * R[6] - R[3] * R[8], R[3] * R[7] - R[4] * R[6],
                             R[2] * R[7] - R[1] * R[8], R[0] * R[8] - R[2] * R[6], R[1] * R[6] - R[0] * R[7],
                             R[1] * R[5] - R[2] * R[4], R[2] * R[3] - R[0] * R[5], R[0] * R[4] - R[1] * R[3]};
        const double det = R[0] * c[0] + R[1] * c[1] + R[2] * c[2];
        if (!(det != 0.0)) return;
        const double inv = 1.0 / det;
        bool same = true;
        for (int j = 0; j < 9; ++j) {
            const double r = 0.5 * (R[j] + c[j] * inv);  // R^-T = cof(R) / det
            same = same && r == R[j] && (r != 0.0 || !(std::signbit(r) != std::signbit(R[j])));
            R[j] = r;
        }
        if (same) return;
    }
}

/// pose_orthonormalize of two matrices at once (the same result for each: a matrix at its fixed point, or stopped
/// by det = 0, is left as it is while the other one iterates), so that their chains overlap.
KESTREL_HD void pose_orthonormalize2(double* R0, double* R1, int iterations = 6) {
    double* Rs[2] = {R0, R1};
    bool active[2] = {true, true};
    for (int it = 0; it < iterations && (active[0] || active[1]); ++it) {
        KESTREL_UNROLL
        for (int m = 0; m < 2; ++m) {
            double* R = Rs[m];
            const double c[9] = {R[4] * R[8] - R[5] * R[7], R[5] * R[6] - R[3] * R[8], R[3] * R[7] - R[4] * R[6],
                                 R[2] * R[7] - R[1] * R[8], R[0] * R[8] - R[2] * R[6], R[1] * R[6] - R[0] * R[7],
                                 R[1] * R[5] - R[2] * R[4], R[2] * R[3] - R[0] * R[5], R[0] * R[4] - R[1] * R[3]};
            const double det = R[0] * c[0] + R[1] * c[1] + R[2] * c[2];
            if (!(det != 0.0)) active[m] = false;
            if (!active[m]) continue;
            const double inv = 1.0 / det;
            bool same = true;
            for (int j = 0; j < 9; ++j) {
                const double r = 0.5 * (R[j] + c[j] * inv);
                same = same && r == R[j] && (r != 0.0 || !(std::signbit(r) != std::signbit(R[j])));
                R[j] = r;
            }
            if (same) active[m] = false;
        }
    }
}

/// E -> t and the two rotations of the four (R, t) candidates (R_c, +-t): t the left null vector of E (largest
/// cross product of two columns), E scaled to E E^T = I - t t^T, R = cof(E) - [t]x E and the twisted
/// cof(E) + [t]x E, each made orthonormal (B. K. P. Horn, "Recovering baseline and orientation from essential
/// matrix", 1990). False when E is zero or has no null vector. With `rotations` false only t is made (Rc is not
/// written): the two-point method's rotation is its prior.
KESTREL_HD bool pose_decompose_candidates(const double* E_in, double Rc[2][9], double* t, bool rotations = true) {
    double fro = 0.0;
    for (int j = 0; j < 9; ++j) fro += E_in[j] * E_in[j];
    fro = std::sqrt(fro);
    if (!(fro > 0.0)) return false;
    double E[9];
    const double s = std::sqrt(2.0) / fro;
    for (int j = 0; j < 9; ++j) E[j] = E_in[j] * s;
    t[0] = t[1] = t[2] = 0.0;
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
    if (!(pose_normalize3(t) > 0.0)) return false;
    if (!rotations) return true;
    const double cof[9] = {E[4] * E[8] - E[5] * E[7], E[5] * E[6] - E[3] * E[8], E[3] * E[7] - E[4] * E[6],
                           E[2] * E[7] - E[1] * E[8], E[0] * E[8] - E[2] * E[6], E[1] * E[6] - E[0] * E[7],
                           E[1] * E[5] - E[2] * E[4], E[2] * E[3] - E[0] * E[5], E[0] * E[4] - E[1] * E[3]};
    double tE[9];
    pose_skew_mul(t, E, tE);
    for (int j = 0; j < 9; ++j) {
        Rc[0][j] = cof[j] - tE[j];
        Rc[1][j] = cof[j] + tE[j];
    }
    pose_orthonormalize2(Rc[0], Rc[1]);
    return true;
}

/// The rotation nearest to H (maximizes trace(R^T H): the least-squares rotation of the Kabsch problem when
/// H = sum q p^T): H scaled to Frobenius norm sqrt(3), then 24 polar iterations. False when det H <= 0 (a
/// reflection, or no spread).
KESTREL_HD bool pose_polar(const double* H, double* R) {
    double fro = 0.0;
    for (int j = 0; j < 9; ++j) fro += H[j] * H[j];
    fro = std::sqrt(fro);
    if (!(fro > 0.0) || !(fro < 1e300)) return false;
    const double s = std::sqrt(3.0) / fro;
    for (int j = 0; j < 9; ++j) R[j] = H[j] * s;
    const double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) +
                       R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(det > 1e-12)) return false;
    pose_orthonormalize(R, 24);
    return true;
}

// ---- the pose update of the refinement ----------------------------------------------------------------------------
/// The tangent basis of unit t: b1 = normalize(t x a) with a the axis least aligned with t, b2 = t x b1.
KESTREL_HD void pose_tangent_basis(const double* t, double* b1, double* b2) {
    const double ax = std::fabs(t[0]), ay = std::fabs(t[1]), az = std::fabs(t[2]);
    const double a[3] = {ax <= ay && ax <= az ? 1.0 : 0.0, ay < ax && ay <= az ? 1.0 : 0.0,
                         az < ax && az < ay ? 1.0 : 0.0};
    b1[0] = t[1] * a[2] - t[2] * a[1];
    b1[1] = t[2] * a[0] - t[0] * a[2];
    b1[2] = t[0] * a[1] - t[1] * a[0];
    pose_normalize3(b1);
    b2[0] = t[1] * b1[2] - t[2] * b1[1];
    b2[1] = t[2] * b1[0] - t[0] * b1[2];
    b2[2] = t[0] * b1[1] - t[1] * b1[0];
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
    double b1[3], b2[3];
    pose_tangent_basis(t, b1, b2);
    for (int j = 0; j < 3; ++j) tn[j] = t[j] + d[o] * b1[j] + d[o + 1] * b2[j];
    pose_normalize3(tn);
}

/// The derivatives of E = [t]x R with respect to the np parameters of pose_move at d = 0: rotation k < 3,
/// dE = [t]x R [e_k]x (R * rot(d) = R (I + [d]x) to first order); translation along b1, b2 (t unit, b_j
/// orthogonal to it: the normalization's derivative is b_j), dE = [b_j]x R. np = 5 or 2 (t only).
KESTREL_HD void pose_model_derivatives(const double* R, const double* t, int np, double (*G)[9]) {
    double E[9];
    pose_skew_mul(t, R, E);
    int o = 0;
    if (np == 5) {
        for (int k = 0; k < 3; ++k) {
            // (E [e_k]x)_ij = E_i,k+1 [e_k]x_(k+1),j + E_i,k+2 [e_k]x_(k+2),j: column k is 0, column k+1 is
            // E_:,k+2, column k+2 is -E_:,k+1 (indices mod 3).
            const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
            for (int i = 0; i < 3; ++i) {
                G[k][3 * i + k] = 0.0;
                G[k][3 * i + k1] = E[3 * i + k2];
                G[k][3 * i + k2] = -E[3 * i + k1];
            }
        }
        o = 3;
    }
    double b[2][3];
    pose_tangent_basis(t, b[0], b[1]);
    pose_skew_mul(b[0], R, G[o]);
    pose_skew_mul(b[1], R, G[o + 1]);
}

// ---- the finish: sums over the points in one fixed order ------------------------------------------------------------
/// Every sum over the points of the finish (mask counts, MSAC costs, cheirality counts, the refinement's normal
/// equations, the rotation fit) has one order, the finish kernel's block of kPoseFinishThreads threads: thread
/// tau (warp tau / 32, lane tau % 32) sums the points i = tau, tau + 256, ... in that order; each warp combines
/// its lanes by the xor butterfly 16, 8, 4, 2, 1; the total is ((w0 + w1) + w2) + ... + w7. PoseHostSum
/// emulates it on the CPU; the kernel's context (kernels/geometry/ransac.cu) runs it. A functor F adds point
/// i's terms to its K partial sums: f(i, acc).
constexpr int kPoseFinishThreads = 256;
constexpr int kPoseFinishWarps = kPoseFinishThreads / kPoseLanes;

/// The CPU side of the finish's sums (host code only).
struct PoseHostSum {
    template <int K, class F>
    void sum(const F& f, int n, double* out) const {
        double total[K];
        for (int k = 0; k < K; ++k) total[k] = 0.0;
        for (int w = 0; w < kPoseFinishWarps; ++w) {
            double v[kPoseLanes][K];
            for (int l = 0; l < kPoseLanes; ++l) {
                for (int k = 0; k < K; ++k) v[l][k] = 0.0;
                for (int i = w * kPoseLanes + l; i < n; i += kPoseFinishThreads) f(i, v[l]);
            }
            // The butterfly as lane 0 sees it: at step `off` only lanes l < off feed lane 0's next steps, and
            // lane l adds lane l ^ off = l + off (the same operands as on the GPU).
            for (int off = kPoseLanes / 2; off >= 1; off >>= 1)
                for (int l = 0; l < off; ++l)
                    for (int k = 0; k < K; ++k) v[l][k] = v[l][k] + v[l + off][k];
            for (int k = 0; k < K; ++k) total[k] = w == 0 ? v[0][k] : total[k] + v[0][k];
        }
        for (int k = 0; k < K; ++k) out[k] = total[k];
    }
    void zero(std::uint8_t* mask, int from, int to) const {
        for (int i = from; i < to; ++i) mask[i] = 0;
    }
    /// mask[i] = bit `bit` of mask[i], i < n (the kernel: each thread its own points, as in its sums).
    void keep_bit(std::uint8_t* mask, int n, int bit) const {
        for (int i = 0; i < n; ++i) mask[i] = static_cast<std::uint8_t>((mask[i] >> bit) & 1);
    }
};

/// MSAC of model M over all points: acc[0] += min(e2, thr2), acc[1] += inlier; writes mask[i] when mask is set.
struct PoseMsacTerm {
    const PoseProblem* p;
    const double* M;
    int method;
    double thr2;
    std::uint8_t* mask;
    KESTREL_HD void operator()(int i, double* acc) const {
        const double e2 = pose_error2(method, p->sphere, M, p->x1 + 3 * i, p->x2 + 3 * i, pose_weight2(*p, i));
        const bool in = e2 < thr2;
        if (mask) mask[i] = in ? 1 : 0;
        acc[0] = acc[0] + (in ? e2 : thr2);
        acc[1] = acc[1] + (in ? 1.0 : 0.0);
    }
};
/// Points of the mask in front of both cameras under each of the four candidates (R_{c/2}, (-1)^c t).
/// Candidates: 4, the decomposition's; 2: (R0, +t), (R0, -t); 1: (R0, t).
template <int Candidates>
struct PoseFrontTerm {
    const PoseProblem* p;
    const double* R0;
    const double* R1;
    const double* t;
    const std::uint8_t* mask;
    KESTREL_HD void operator()(int i, double* acc) const {
        if (!mask[i]) return;
        KESTREL_UNROLL
        for (int c = 0; c < Candidates; c += 2) {  // (R, t) and (R, -t) from one evaluation
            bool f, fn;
            pose_in_front_pm((c >> 1) ? R1 : R0, t, p->x1 + 3 * i, p->x2 + 3 * i, &f, &fn);
            acc[c] = acc[c] + (f ? 1.0 : 0.0);
            if (c + 1 < Candidates) acc[c + 1] = acc[c + 1] + (fn ? 1.0 : 0.0);
        }
    }
};
/// The refinement's terms over the points of mask bit 0 at E0: acc[0] += the squared error (pixels^2, as
/// pose_point_error2), then the normal equations of the signed residual res = w1 r / sqrt(d) (pose_epipolar)
/// with its analytic Jacobian J_k = <d res / d E, G_k> (G: pose_model_derivatives): acc[1 + a] += J_a res
/// (a < np), then the upper triangle acc[1 + np + pose_tri(np, a, b)] += J_a J_b (a <= b < np): K = 1 + np +
/// np (np + 1) / 2 sums. With a = E p, b = E^T q, c = r / d: d res / d E = w1 / sqrt(d) M, M = u p^T - c q b'^T,
/// u = k0 q - c a' (plane: a' = (a0, a1, 0), b' = (b0, b1, 0), k0 = 1; sphere: a' = a, b' = b,
/// k0 = 1 + 2 r c, from d = |a|^2 + |b|^2 - 2 r^2). A point with d <= 0 adds 1e300 to acc[0] and nothing else.
KESTREL_HD int pose_tri(int np, int a, int b) { return a * np - a * (a - 1) / 2 + (b - a); }
/// Point (x, y)'s epipolar values under E: a = E x, b = E^T y, r and d (the same operations as pose_epipolar).
KESTREL_HD void pose_epipolar_ab(const double* E, const double* x, const double* y, int sphere, double* a, double* b,
                                 double* r_out, double* d_out) {
    a[0] = std::fma(E[0], x[0], std::fma(E[1], x[1], E[2] * x[2]));
    a[1] = std::fma(E[3], x[0], std::fma(E[4], x[1], E[5] * x[2]));
    a[2] = std::fma(E[6], x[0], std::fma(E[7], x[1], E[8] * x[2]));
    b[0] = std::fma(E[0], y[0], std::fma(E[3], y[1], E[6] * y[2]));
    b[1] = std::fma(E[1], y[0], std::fma(E[4], y[1], E[7] * y[2]));
    b[2] = std::fma(E[2], y[0], std::fma(E[5], y[1], E[8] * y[2]));
    const double r = std::fma(y[0], a[0], std::fma(y[1], a[1], y[2] * a[2]));
    double d = std::fma(a[0], a[0], std::fma(a[1], a[1], std::fma(b[0], b[0], b[1] * b[1])));
    if (sphere) d = std::fma(a[2], a[2], std::fma(b[2], b[2], d)) - 2.0 * (r * r);
    *r_out = r;
    *d_out = d;
}
/// The normal-equation terms of point i (after acc[0]): a, b, r, d its epipolar values (d > 0).
template <int NP>
KESTREL_HD void pose_refine_terms(const PoseProblem& P, const double (*G)[9], int i, double* a, double* b, double r,
                                  double d, double* acc) {
    const PoseProblem* p = &P;
    const double* x = p->x1 + 3 * i;
    const double* y = p->x2 + 3 * i;
    {
        const double w1 = pose_weight1(*p, i);
        const double s = 1.0 / std::sqrt(d);
        const double res = w1 * (r * s);
        const double c = r / d;
        const double k0 = p->sphere ? std::fma(2.0 * r, c, 1.0) : 1.0;
        if (!p->sphere) a[2] = b[2] = 0.0;
        double u[3], M[9];
        KESTREL_UNROLL
        for (int k = 0; k < 3; ++k) u[k] = std::fma(k0, y[k], -(c * a[k]));
        KESTREL_UNROLL
        for (int k = 0; k < 3; ++k)
            KESTREL_UNROLL
            for (int l = 0; l < 3; ++l) M[3 * k + l] = std::fma(u[k], x[l], -(c * (y[k] * b[l])));
        const double ws = w1 * s;
        double J[NP];
        KESTREL_UNROLL
        for (int q = 0; q < NP; ++q) {
            double v = M[0] * G[q][0];
            KESTREL_UNROLL
            for (int k = 1; k < 9; ++k) v = std::fma(M[k], G[q][k], v);
            J[q] = ws * v;
        }
        KESTREL_UNROLL
        for (int a2 = 0; a2 < NP; ++a2) {
            acc[1 + a2] = std::fma(J[a2], res, acc[1 + a2]);
            KESTREL_UNROLL
            for (int b2 = a2; b2 < NP; ++b2)
                acc[1 + NP + pose_tri(NP, a2, b2)] = std::fma(J[a2], J[b2], acc[1 + NP + pose_tri(NP, a2, b2)]);
        }
    }
}
template <int NP>
struct PoseRefineTerm {
    static constexpr int K = 1 + NP + NP * (NP + 1) / 2;  // the sums
    const PoseProblem* p;
    const double* E0;
    const double (*G)[9];
    const std::uint8_t* mask;
    KESTREL_HD void operator()(int i, double* acc) const {
        if (!(mask[i] & 1)) return;
        double a[3], b[3], r, d;
        pose_epipolar_ab(E0, p->x1 + 3 * i, p->x2 + 3 * i, p->sphere, a, b, &r, &d);
        if (!(d > 0.0)) {
            acc[0] = acc[0] + 1e300;
            return;
        }
        acc[0] = acc[0] + pose_weight2(*p, i) * (r * r) / d;
        pose_refine_terms<NP>(*p, G, i, a, b, r, d, acc);
    }
};
/// The rotation winner's MSAC (acc[0], acc[1] as PoseMsacTerm, method 2, no mask) and, when `fit`, the sums of
/// its Kabsch fit from the same error: over the points with rotation error below thr2 under R,
/// acc[2 + 3 r + c] += q_r p_c of the unit directions p = x1 / |x1|, q = x2 / |x2|; acc[11] += 1.
struct PoseRotationMsacFitTerm {
    const PoseProblem* p;
    const double* R;
    double thr2;
    bool fit;
    KESTREL_HD void operator()(int i, double* acc) const {
        const double* x = p->x1 + 3 * i;
        const double* y = p->x2 + 3 * i;
        const double e2 = pose_error2(2, p->sphere, R, x, y, pose_weight2(*p, i));
        const bool in = e2 < thr2;
        acc[0] = acc[0] + (in ? e2 : thr2);
        acc[1] = acc[1] + (in ? 1.0 : 0.0);
        if (!fit || !in) return;
        double a[3] = {x[0], x[1], x[2]}, b[3] = {y[0], y[1], y[2]};
        pose_normalize3(a);
        pose_normalize3(b);
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) acc[2 + 3 * r + c] = acc[2 + 3 * r + c] + b[r] * a[c];
        acc[11] = acc[11] + 1.0;
    }
};

/// Levenberg-Marquardt on the signed Sampson residuals of the points of mask bit 0 over (R, unit t) (np = 5) or t
/// alone with R fixed (np = 2, the two-point method); analytic Jacobian (PoseRefineTerm), at most `iterations` steps,
/// each kept only when it lowers the sum of squares; stops once a step gains less than 1e-10 relative. R, t are
/// updated in place; returns the final sum. Sums through ctx (the finish's order); every tried pose gets its
/// sum of squares and its normal equations in one pass (a kept step's are the next iteration's). `acc0`: the
/// start pose's sums when the caller has them (PoseRefineTerm, taken in an earlier pass), else null. *moved:
/// whether a step was kept.
template <int NP, class Ctx>
KESTREL_HD double pose_refine_np(const Ctx& ctx, const PoseProblem& P, double* R, double* t, const std::uint8_t* mask,
                                 int iterations, const double* acc0, bool* moved) {
    constexpr int np = NP;
    constexpr int K = PoseRefineTerm<NP>::K;
    // acc[0]: the sum of squares at (R_, t_); acc[1 ..]: its normal equations.
    auto pass = [&](const double* R_, const double* t_, double* acc) {
        double E0[9], G[5][9];
        pose_skew_mul(t_, R_, E0);
        pose_model_derivatives(R_, t_, np, G);
        ctx.template sum<K>(PoseRefineTerm<NP>{&P, E0, G, mask}, P.n, acc);
    };
    double acc[K], accn[K];
    if (acc0)
        for (int j = 0; j < K; ++j) acc[j] = acc0[j];
    else
        pass(R, t, acc);
    *moved = false;
    double cost = acc[0];
    double lambda = 1e-3;
    for (int it = 0; it < iterations; ++it) {
        double A[5][5], g[5];
        for (int a = 0; a < np; ++a) {
            g[a] = acc[1 + a];
            for (int b = 0; b < np; ++b)
                A[a][b] = a <= b ? acc[1 + np + pose_tri(np, a, b)] : acc[1 + np + pose_tri(np, b, a)];
        }
        // Solve (A + lambda diag(A)) d = -g by Cholesky (one division per column: its diagonal's reciprocal,
        // which the column and both substitutions multiply by); retry with a larger lambda when a step fails.
        bool improved = false, converged = false;
        for (int attempt = 0; attempt < 4 && !improved; ++attempt) {
            double L[5][5], inv[5], y[5], d[5];
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
                        inv[a] = 1.0 / L[a][a];
                    } else {
                        L[a][b] = s * inv[b];
                    }
                }
            if (!ok) return cost;
            for (int a = 0; a < np; ++a) {
                double s = -g[a];
                for (int k = 0; k < a; ++k) s -= L[a][k] * y[k];
                y[a] = s * inv[a];
            }
            for (int a = np - 1; a >= 0; --a) {
                double s = y[a];
                for (int k = a + 1; k < np; ++k) s -= L[k][a] * d[k];
                d[a] = s * inv[a];
            }
            double Rn[9], tn[3];
            pose_move(R, t, d, np, Rn, tn);
            pass(Rn, tn, accn);
            const double cn = accn[0];
            if (cn < cost) {
                converged = cost - cn <= 1e-10 * cost;  // nothing left to gain: stop after this step
                cost = cn;
                for (int j = 0; j < 9; ++j) R[j] = Rn[j];
                for (int j = 0; j < 3; ++j) t[j] = tn[j];
                for (int j = 0; j < K; ++j) acc[j] = accn[j];
                lambda = lambda * 0.1;
                improved = true;
                *moved = true;
            } else {
                lambda = lambda * 10.0;
            }
        }
        if (!improved || converged) break;
    }
    return cost;
}

// ---- model selection: translation or rotation only ------------------------------------------------------------
/// The rotation-only model's inlier threshold is threshold_px scaled for its two degrees of freedom: the
/// transfer error |q - R p| has 2 components where the Sampson error has 1, so thr2 is multiplied by the ratio
/// of the chi-square 95 % quantiles with 2 and 1 degrees of freedom (5.9915 / 3.8415): both tests keep 95 % of
/// the true correspondences under Gaussian noise.
constexpr double kPoseRotationThreshold2Scale = 5.991464547107979 / 3.841458820694124;
/// Hypotheses of the rotation-only RANSAC at most (its samples have 2 points: 256 reach 0.999 confidence down
/// to a 17 % inlier fraction, below which the five-point RANSAC has no model within its own cap anyway).
constexpr int kPoseRotationMaxHypotheses = 256;
/// The rotation-only model wins when it has at least min_inliers inliers and either the translation model did
/// not end Ok (no model, or too few points in front of both cameras) or the rotation-only model explains at
/// least kPoseRotationKeepPercent % as many points as the translation model: the translation then moves fewer
/// than about 10 % of the points by more than the threshold (a static or purely rotating camera, or a baseline too
/// short to measure), and t would be noise.
constexpr int kPoseRotationKeepPercent = 90;
/// The rotation pass' hypothesis cap once the translation pass is done: a rotation-only model wins only with
/// at least kPoseRotationKeepPercent % of the translation winner's inliers (rounded up), so the pass draws the
/// hypotheses the confidence needs at that inlier fraction (the 2-point table), at most cap_max; cap_max when
/// the translation pass has no winner.
KESTREL_HD int pose_rotation_cap(const PoseScan& translation, int n, const int* table2, int cap_max) {
    if (translation.best < 0) return cap_max;
    const int need = static_cast<int>((static_cast<long long>(translation.inliers) * kPoseRotationKeepPercent + 99) / 100);
    const int req = table2[pose_stop_bin(need, n)];
    return req < cap_max ? req : cap_max;
}
KESTREL_HD bool pose_prefer_rotation(int rotation_inliers, int translation_inliers, bool translation_ok,
                                     int min_inliers) {
    if (rotation_inliers < min_inliers) return false;
    if (!translation_ok) return true;
    return 100LL * rotation_inliers >= static_cast<long long>(kPoseRotationKeepPercent) * translation_inliers;
}

// ---- the finish --------------------------------------------------------------------------------------------------
/// What the finish needs besides the two passes' winners.
struct PoseFinishParams {
    PoseProblem pe;     // the translation pass (method 0 or 1, thr2, R = the prior)
    double thr2_rot;    // the rotation-only model's threshold^2 (thr2 * kPoseRotationThreshold2Scale)
    int refine;         // cfg.refine
    int min_inliers;
    int rotation_only;  // cfg.rotation_only: the rotation pass ran
    int bound;          // mask entries [n, bound) are set to 0
};

/// Two terms in one pass: f1's K1 sums, then f2's (each only when on; a term that is off leaves its sums at 0).
/// Point i's terms run in that order, so f2 may read what f1 wrote for point i (the mask).
template <int K1, class F1, class F2>
struct PoseTwoTerms {
    F1 f1;
    F2 f2;
    bool on1, on2;
    KESTREL_HD void operator()(int i, double* acc) const {
        if (on1) f1(i, acc);
        if (on2) f2(i, acc + K1);
    }
};
/// The MSAC of E (acc[0], acc[1] as PoseMsacTerm, method 0, no mask) and, from the same error, the points that
/// are inliers of E and in front of both cameras under (R, t) (acc[2]).
/// With `mask` set, point i's inlier flag also goes to bit 1 of mask[i] (bit 0 kept): ctx.keep_bit then keeps
/// one of the two masks, without another pass.
struct PoseMsacFrontTerm {
    const PoseProblem* p;
    const double* E;
    const double* R;
    const double* t;
    double thr2;
    std::uint8_t* mask;
    KESTREL_HD void operator()(int i, double* acc) const {
        const double e2 = pose_error2(0, p->sphere, E, p->x1 + 3 * i, p->x2 + 3 * i, pose_weight2(*p, i));
        const bool in = e2 < thr2;
        if (mask) mask[i] = static_cast<std::uint8_t>((mask[i] & 1) | (in ? 2 : 0));
        acc[0] = acc[0] + (in ? e2 : thr2);
        acc[1] = acc[1] + (in ? 1.0 : 0.0);
        if (in && pose_in_front(R, t, p->x1 + 3 * i, p->x2 + 3 * i)) acc[2] = acc[2] + 1.0;
    }
};

/// From the winners of the translation pass (scan se, model E) and of the rotation pass (scan sr, model Rw) to
/// the record and the mask (bound bytes). Translation: the winner's mask; decomposition with cheirality (the
/// candidate with most mask points in front, ties: the first; two-point: R is the prior and only the sign of
/// t is chosen); the mask of [t]x R; refinement (kept only when it lowers the MSAC cost over all points); the
/// cheirality count. Rotation only: the winner's MSAC, the Kabsch fit on its inliers (pose_polar, kept when it
/// lowers the cost). Then pose_prefer_rotation decides, and the mask is the deciding model's (the refinement is
/// skipped when the rotation-only model decides whatever it gives). Every thread of the
/// finish kernel runs this with the same values (the sums give every thread the same totals).
/// Sums that do not depend on each other share a pass over the points (PoseTwoTerms: each sum is the same as on
/// its own); a sum whose use is not yet known (the rotation fit, the cheirality count of the refined pose) is
/// taken in the pass where its inputs are ready.
/// kMethod: the translation pass' method when known at compile time (0 or 1; the kernel of the two-point call
/// compiles only its own branches), -1: read from fp.pe.method.
template <int kMethod = -1, class Ctx>
KESTREL_HD void pose_finish(const Ctx& ctx, const PoseFinishParams& fp, const PoseScan& se, const double* Ebest,
                            const PoseScan& sr, const double* Rbest, std::uint8_t* mask, PoseRecord& rec) {
    const PoseProblem& P = fp.pe;
    const int n = P.n;
    const bool two_point = kMethod == 1 || (kMethod < 0 && P.method == 1);
    rec.status = static_cast<int>(PoseStatus::NoModel);
    rec.model = static_cast<int>(PoseModel::None);
    rec.count = n;
    rec.inliers = 0;
    rec.cheirality_inliers = 0;
    rec.hypotheses = se.used;
    rec.best_hypothesis = se.best;
    rec.rotation_inliers = 0;
    for (int j = 0; j < 9; ++j) {
        rec.R[j] = (j % 4 == 0) ? 1.0 : 0.0;
        rec.E[j] = 0.0;
    }
    rec.t[0] = rec.t[1] = rec.t[2] = 0.0;
    rec.cost = 0.0;
    if (n < pose_sample_size(P.method)) {
        rec.status = static_cast<int>(PoseStatus::TooFewPoints);
        rec.hypotheses = 0;
        rec.best_hypothesis = -1;
        ctx.zero(mask, 0, fp.bound);
        return;
    }
    const bool t_run = se.best >= 0 && se.inliers >= fp.min_inliers;
    const bool r_run = fp.rotation_only && sr.best >= 0;
    // Pass 1: the translation winner's mask and its candidates' cheirality counts; the rotation winner's MSAC and
    // the sums of its Kabsch fit.
    double R[9], t[3] = {0.0, 0.0, 0.0}, Rc[2][9];
    if (t_run) {
        const bool dec = pose_decompose_candidates(Ebest, Rc, t, !two_point);
        if (!dec) {
            for (int j = 0; j < 9; ++j) Rc[0][j] = Rc[1][j] = (j % 4 == 0) ? 1.0 : 0.0;
        }
        if (two_point)
            for (int j = 0; j < 9; ++j) Rc[0][j] = Rc[1][j] = P.R[j];  // candidates (R, t), (R, -t)
    } else {
        for (int j = 0; j < 9; ++j) Rc[0][j] = Rc[1][j] = 0.0;
        t[0] = t[1] = t[2] = 0.0;
    }
    double Rr[9];
    for (int j = 0; j < 9; ++j) Rr[j] = r_run ? Rbest[j] : 0.0;
    double a1[18];
    {
        // Two-point: the candidates (R, t), (R, -t) only (a1[4], a1[5] stay 0).
        const PoseRotationMsacFitTerm rt{&P, Rr, fp.thr2_rot, fp.refine != 0};
        if (two_point) {
            using T1 = PoseTwoTerms<2, PoseMsacTerm, PoseFrontTerm<2>>;
            const T1 tt{PoseMsacTerm{&P, Ebest, 0, P.thr2, mask}, PoseFrontTerm<2>{&P, Rc[0], Rc[1], t, mask}, t_run,
                        t_run};
            ctx.template sum<18>(PoseTwoTerms<6, T1, PoseRotationMsacFitTerm>{tt, rt, true, r_run}, n, a1);
        } else {
            using T1 = PoseTwoTerms<2, PoseMsacTerm, PoseFrontTerm<4>>;
            const T1 tt{PoseMsacTerm{&P, Ebest, 0, P.thr2, mask}, PoseFrontTerm<4>{&P, Rc[0], Rc[1], t, mask}, t_run,
                        t_run};
            ctx.template sum<18>(PoseTwoTerms<6, T1, PoseRotationMsacFitTerm>{tt, rt, true, r_run}, n, a1);
        }
    }
    const double* front4 = a1 + 2;
    double rot_cost = a1[6];
    int rot_inl = static_cast<int>(a1[7]);
    double Rk[9];
    const bool rk_run = r_run && fp.refine && rot_inl >= 3 && pose_polar(a1 + 8, Rk);
    if (!rk_run)
        for (int j = 0; j < 9; ++j) Rk[j] = 0.0;
    double Ef[9];
    if (t_run) {
        if (two_point) {
            for (int j = 0; j < 9; ++j) R[j] = P.R[j];
            if (front4[1] > front4[0])
                for (int j = 0; j < 3; ++j) t[j] = -t[j];
        } else {
            int best = 0;
            for (int c = 1; c < 4; ++c)
                if (front4[c] > front4[best]) best = c;
            for (int j = 0; j < 9; ++j) R[j] = Rc[best >> 1][j];
            if (best & 1)
                for (int j = 0; j < 3; ++j) t[j] = -t[j];
        }
        pose_skew_mul(t, R, Ef);
    } else {
        for (int j = 0; j < 9; ++j) R[j] = Ef[j] = 0.0;
    }
    // Pass 2: the mask of [t]x R, its cheirality count (the result without refinement), the Kabsch fit's MSAC,
    // and, two-point, the refinement's first sums at (R, t) over that mask (a2[5 ..]), taken here when the
    // refinement will probably run: before the rotation-only model is known not to decide anyway (it needs 90 %
    // of the points after its Kabsch fit), so only while it has fewer than 80 % of them before it. Otherwise
    // (and for five-point, whose 21 sums make one pass dearer than two) the refinement takes them in a pass of
    // its own when it runs; the same sums either way.
    constexpr int KR2 = PoseRefineTerm<2>::K, KR5 = PoseRefineTerm<5>::K;
    double a2[5 + KR5];
    const bool may_refine = two_point && t_run && fp.refine && !(r_run && 100LL * rot_inl >= 80LL * n);
    double G[5][9];
    if (may_refine) pose_model_derivatives(R, t, two_point ? 2 : 5, G);
    {
        using T1 = PoseTwoTerms<2, PoseMsacTerm, PoseFrontTerm<1>>;
        const T1 tt{PoseMsacTerm{&P, Ef, 0, P.thr2, mask}, PoseFrontTerm<1>{&P, R, R, t, mask}, t_run, t_run};
        using T2 = PoseTwoTerms<3, T1, PoseMsacTerm>;
        const T2 t2{tt, PoseMsacTerm{&P, Rk, 2, fp.thr2_rot, nullptr}, true, rk_run};
        if (!may_refine)
            ctx.template sum<5>(t2, n, a2);
        else if (two_point)
            ctx.template sum<5 + KR2>(PoseTwoTerms<5, T2, PoseRefineTerm<2>>{t2, PoseRefineTerm<2>{&P, Ef, G, mask}, true,
                                                                           true},
                                     n, a2);
        else
            ctx.template sum<5 + KR5>(PoseTwoTerms<5, T2, PoseRefineTerm<5>>{t2, PoseRefineTerm<5>{&P, Ef, G, mask}, true,
                                                                           true},
                                     n, a2);
    }
    if (rk_run && a2[3] < rot_cost) {
        for (int j = 0; j < 9; ++j) Rr[j] = Rk[j];
        rot_cost = a2[3];
        rot_inl = static_cast<int>(a2[4]);
    }
    // The translation model. Its refinement is skipped when the rotation-only model wins whatever it gives: its
    // inliers are at most n, so a rotation model with min_inliers inliers and kPoseRotationKeepPercent % of all
    // points decides anyway (pose_prefer_rotation); nothing of the translation model is kept then.
    const bool rot_anyway = r_run && rot_inl >= fp.min_inliers &&
                            100LL * rot_inl >= static_cast<long long>(kPoseRotationKeepPercent) * n;
    bool t_ok = false, t_have = false;
    int t_inl = 0;
    if (t_run) {
        double cost = a2[0];
        int inl = static_cast<int>(a2[1]);
        int front = static_cast<int>(a2[2]);
        if (fp.refine && !rot_anyway) {
            double Rf[9], tf[3], Er[9];
            for (int j = 0; j < 9; ++j) Rf[j] = R[j];
            for (int j = 0; j < 3; ++j) tf[j] = t[j];
            double a3[3] = {0.0, 0.0, 0.0};
            bool moved = false;
            if (two_point)
                pose_refine_np<2>(ctx, P, Rf, tf, mask, 10, may_refine ? a2 + 5 : nullptr, &moved);
            else
                pose_refine_np<5>(ctx, P, Rf, tf, mask, 10, may_refine ? a2 + 5 : nullptr, &moved);
            pose_skew_mul(tf, Rf, Er);
            // The refined model's MSAC, its cheirality count on its own inliers, and its mask (bit 1). Without a
            // kept step the refined pose is the start pose: the same cost, not kept (no pass needed).
            if (moved) ctx.template sum<3>(PoseMsacFrontTerm{&P, Er, Rf, tf, P.thr2, mask}, n, a3);
            else a3[0] = cost;
            const bool refined = a3[0] < cost;
            ctx.keep_bit(mask, n, refined ? 1 : 0);  // the kept model's mask
            if (refined) {
                for (int j = 0; j < 9; ++j) R[j] = Rf[j];
                for (int j = 0; j < 3; ++j) t[j] = tf[j];
                for (int j = 0; j < 9; ++j) Ef[j] = Er[j];
                cost = a3[0];
                inl = static_cast<int>(a3[1]);
                front = static_cast<int>(a3[2]);
            }
        }
        for (int j = 0; j < 9; ++j) {
            rec.R[j] = R[j];
            rec.E[j] = Ef[j];
        }
        for (int j = 0; j < 3; ++j) rec.t[j] = t[j];
        rec.inliers = inl;
        rec.cost = cost;
        rec.cheirality_inliers = front;
        t_ok = front >= fp.min_inliers;
        rec.status = static_cast<int>(t_ok ? PoseStatus::Ok : PoseStatus::Degenerate);
        rec.model = static_cast<int>(two_point ? PoseModel::TwoPoint : PoseModel::FivePoint);
        t_have = true;
        t_inl = inl;
    }
    // The rotation-only model (the choice on the refined translation model's counts).
    if (r_run) {
        rec.rotation_inliers = rot_inl;
        if (pose_prefer_rotation(rot_inl, t_inl, t_ok, fp.min_inliers)) {
            double acc[2];
            ctx.template sum<2>(PoseMsacTerm{&P, Rr, 2, fp.thr2_rot, mask}, n, acc);
            rec.status = static_cast<int>(PoseStatus::Ok);
            rec.model = static_cast<int>(PoseModel::RotationOnly);
            for (int j = 0; j < 9; ++j) {
                rec.R[j] = Rr[j];
                rec.E[j] = 0.0;
            }
            rec.t[0] = rec.t[1] = rec.t[2] = 0.0;
            rec.inliers = static_cast<int>(acc[1]);
            rec.cost = acc[0];
            rec.cheirality_inliers = 0;
            rec.hypotheses = sr.used;
            rec.best_hypothesis = sr.best;
            t_have = true;
        }
    }
    ctx.zero(mask, t_have ? n : 0, fp.bound);
}

}  // namespace kestrel::detail
