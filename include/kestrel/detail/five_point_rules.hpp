// The five-point relative-pose solver shared verbatim by the CPU reference (src/geometry/relative_pose_cpu.cpp)
// and the CUDA kernel (kernels/geometry/ransac.cu): for 5 calibrated correspondences x2^T E x1 = 0, every real
// essential matrix (up to 10).
//
// Algorithm (D. Nister, "An efficient solution to the five-point relative pose problem", PAMI 26(6), 2004;
// H. Stewenius, C. Engels, D. Nister, "Recent developments on direct relative orientation", ISPRS J. 60, 2006):
//   1. the 4-dimensional null space X, Y, Z, W of the 5x9 epipolar system (Householder QR of its transpose);
//   2. E = x X + y Y + z Z + W; the ten cubic constraints det(E) = 0 and 2 E E^T E - tr(E E^T) E = 0 as a
//      10x20 matrix over the monomials of degree <= 3 in x, y, z (Nister's order);
//   3. Gauss-Jordan elimination (partial pivoting) of its first ten columns (the Groebner-basis step);
//   4. the rows <e> - z<f>, <g> - z<h>, <i> - z<j> give a 3x3 matrix B(z) with B(z) [x y 1]^T = 0, whose
//      determinant is the degree-10 polynomial in z;
//   5. its real roots by derivative-chain isolation (each bracketed root then by safeguarded Newton); x, y
//      from the null vector of B(z) (the largest cross product of two rows); a Gauss-Newton polish of (x, y, z)
//      on the ten original cubics.
// Solver choice, measured accuracy and speed: docs/geometry.md.
//
// Exactness: only +, -, *, / and sqrt (each IEEE round-to-nearest on both sides), no transcendental function,
// every loop bounded and in a fixed order, no allocation; the GPU build of the including kernel is compiled
// without FMA contraction (--fmad=false) and the CPU files with -ffp-contract=off, so that both sides run
// the same operations in the same order.
#pragma once
#include <cmath>

#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kFivePointMaxSolutions = 10;

enum FivePointFlag : int {
    kFivePointOk = 0,
    kFivePointRankDeficient = 1,  ///< the 5x9 epipolar system has rank < 5 (repeated or collinear points)
    kFivePointSingularElimination = 2,  ///< a pivot of the 10x20 elimination vanished
    kFivePointDegeneratePolynomial = 3,  ///< det B(z) vanishes identically (e.g. pure rotation: a family of E)
};

// ---- monomials x^a y^b z^c, a + b + c <= 3, coded a*16 + b*4 + c, in Nister's column order ----------------
KESTREL_HD int fp_column(int code) {
    switch (code) {
        case 48: return 0;   // x^3
        case 12: return 1;   // y^3
        case 36: return 2;   // x^2 y
        case 24: return 3;   // x y^2
        case 33: return 4;   // x^2 z
        case 32: return 5;   // x^2
        case 9: return 6;    // y^2 z
        case 8: return 7;    // y^2
        case 21: return 8;   // x y z
        case 20: return 9;   // x y
        case 18: return 10;  // x z^2
        case 17: return 11;  // x z
        case 16: return 12;  // x
        case 6: return 13;   // y z^2
        case 5: return 14;   // y z
        case 4: return 15;   // y
        case 3: return 16;   // z^3
        case 2: return 17;   // z^2
        case 1: return 18;   // z
        default: return 19;  // 1
    }
}
KESTREL_HD int fp_code(int column) {
    switch (column) {
        case 0: return 48; case 1: return 12; case 2: return 36; case 3: return 24; case 4: return 33;
        case 5: return 32; case 6: return 9; case 7: return 8; case 8: return 21; case 9: return 20;
        case 10: return 18; case 11: return 17; case 12: return 16; case 13: return 6; case 14: return 5;
        case 15: return 4; case 16: return 3; case 17: return 2; case 18: return 1; default: return 0;
    }
}
KESTREL_HD int fp_degree(int code) { return (code >> 4) + ((code >> 2) & 3) + (code & 3); }
/// A linear polynomial is {x, y, z, 1}: codes 16, 4, 1, 0.
KESTREL_HD int fp_lin_code(int i) { return i == 0 ? 16 : (i == 1 ? 4 : (i == 2 ? 1 : 0)); }

/// The column of the product of linear monomials i and j (x, y, z, 1), and of column i (degree <= 2) times linear
/// monomial j (-1: degree 3): fp_column of the summed codes. The device folds fp_column in its unrolled loops; the
/// host reads these tables (the same columns, the same order of the updates).
#if !defined(__CUDA_ARCH__)
constexpr int kFpMulLinColumn[4][4] = {{5, 9, 11, 12}, {9, 7, 14, 15}, {11, 14, 17, 18}, {12, 15, 18, 19}};
constexpr int kFpQuadLinColumn[20][4] = {
    {-1, -1, -1, -1}, {-1, -1, -1, -1}, {-1, -1, -1, -1}, {-1, -1, -1, -1}, {-1, -1, -1, -1},
    {0, 2, 4, 5},     {-1, -1, -1, -1}, {3, 1, 6, 7},     {-1, -1, -1, -1}, {2, 3, 8, 9},
    {-1, -1, -1, -1}, {4, 8, 10, 11},   {5, 9, 11, 12},   {-1, -1, -1, -1}, {8, 6, 13, 14},
    {9, 7, 14, 15},   {-1, -1, -1, -1}, {10, 13, 16, 17}, {11, 14, 17, 18}, {12, 15, 18, 19}};
#endif
KESTREL_HD int fp_mul_lin_column(int i, int j) {
#if defined(__CUDA_ARCH__)
    return fp_column(fp_lin_code(i) + fp_lin_code(j));
#else
    return kFpMulLinColumn[i][j];
#endif
}
KESTREL_HD int fp_quad_lin_column(int i, int j) {
#if defined(__CUDA_ARCH__)
    const int ci = fp_code(i);
    return fp_degree(ci) > 2 ? -1 : fp_column(ci + fp_lin_code(j));
#else
    return kFpQuadLinColumn[i][j];
#endif
}

/// out = a * b (a, b linear; out over the 20 columns).
KESTREL_HD void fp_mul_lin(const double* a, const double* b, double* out) {
    KESTREL_UNROLL
    for (int i = 0; i < 20; ++i) out[i] = 0.0;
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i)
        KESTREL_UNROLL
        for (int j = 0; j < 4; ++j) out[fp_mul_lin_column(i, j)] += a[i] * b[j];
}
/// out += s * q * l (q of degree <= 2 over the 20 columns, l linear).
KESTREL_HD void fp_addmul_quad_lin(const double* q, const double* l, double s, double* out) {
    KESTREL_UNROLL
    for (int i = 0; i < 20; ++i) {
        if (fp_quad_lin_column(i, 0) < 0) continue;
        const double qi = s * q[i];
        KESTREL_UNROLL
        for (int j = 0; j < 4; ++j) out[fp_quad_lin_column(i, j)] += qi * l[j];
    }
}

// ---- univariate polynomials, ascending powers --------------------------------------------------------------
KESTREL_HD double fp_horner(const double* p, int deg, double x) {
    double v = p[deg];
    for (int i = deg - 1; i >= 0; --i) v = v * x + p[i];
    return v;
}

/// The null vector of a rank-2 3x3 matrix from three of its rows (or columns) v0, v1, v2: the largest cross
/// product of two of them (v0 x v1, v0 x v2, v1 x v2; the first on ties), written to c; returns its squared norm
/// (0 when all three products vanish, c then zero). fp_xy_from_b and the decomposition of E
/// (pose_decompose_candidates) use it, so both keep one arithmetic.
KESTREL_HD double fp_largest_cross(const double* v0, const double* v1, const double* v2, double* c) {
    const double* const v[3] = {v0, v1, v2};
    const int pr[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    double bn = -1.0;
    c[0] = c[1] = c[2] = 0.0;
    for (int p = 0; p < 3; ++p) {
        const double* a = v[pr[p][0]];
        const double* b = v[pr[p][1]];
        const double x[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        const double n2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
        if (n2 > bn) {
            bn = n2;
            c[0] = x[0];
            c[1] = x[1];
            c[2] = x[2];
        }
    }
    return bn;
}

/// x, y from B(z) [x y 1]^T = 0 at a root z: the null vector of B from its rows (fp_largest_cross). False when
/// its last entry is not above 1e-14 of its norm (no finite x, y). Both solvers (five_point_solve3,
/// five_point_solve_lanes) use it.
KESTREL_HD bool fp_xy_from_b(const double B[3][3], double* x, double* y) {
    double best[3];
    const double bn = fp_largest_cross(B[0], B[1], B[2], best);
    if (!(std::fabs(best[2]) > 1e-14 * std::sqrt(bn))) return false;
    *x = best[0] / best[2];
    *y = best[1] / best[2];
    return true;
}

/// 1. The null space: rows of the 5x9 system are q_i = x2_i (x) x1_i (E row-major). Householder QR of the
/// 9x5 transpose; the last four columns of Q are the basis (out[4][9]: X, Y, Z, W). False when the rank is < 5.
/// Points are 3-vectors (x, y, z) of any scale: normalized points (z = 1) or unit bearings.
KESTREL_HD bool fp_null_space(const double* x1, const double* x2, double basis[4][9]) {
    double a[9][5];  // A^T: column i = q_i
    double scale = 0.0;
    KESTREL_UNROLL
    for (int i = 0; i < 5; ++i) {
        const double p[3] = {x1[3 * i], x1[3 * i + 1], x1[3 * i + 2]};
        const double q[3] = {x2[3 * i], x2[3 * i + 1], x2[3 * i + 2]};
        KESTREL_UNROLL
        for (int r = 0; r < 3; ++r)
            KESTREL_UNROLL
            for (int c = 0; c < 3; ++c) {
                a[3 * r + c][i] = q[r] * p[c];
                const double m = std::fabs(a[3 * r + c][i]);
                scale = m > scale ? m : scale;
            }
    }
    double v[5][9];  // Householder vectors (entries j..8 of v[j] used)
    double vvs[5];   // v^T v
    KESTREL_UNROLL
    for (int j = 0; j < 5; ++j) {
        double norm2 = 0.0;
        KESTREL_UNROLL
        for (int r = j; r < 9; ++r) norm2 += a[r][j] * a[r][j];
        const double norm = std::sqrt(norm2);
        if (!(norm > 1e-10 * scale)) return false;
        const double alpha = a[j][j] >= 0.0 ? -norm : norm;
        KESTREL_UNROLL
        for (int r = 0; r < 9; ++r) v[j][r] = r < j ? 0.0 : a[r][j];
        v[j][j] -= alpha;
        double vv = 0.0;
        KESTREL_UNROLL
        for (int r = j; r < 9; ++r) vv += v[j][r] * v[j][r];
        if (!(vv > 0.0)) return false;
        KESTREL_UNROLL
        for (int c = j; c < 5; ++c) {
            double d = 0.0;
            KESTREL_UNROLL
            for (int r = j; r < 9; ++r) d += v[j][r] * a[r][c];
            const double f = 2.0 * d / vv;
            KESTREL_UNROLL
            for (int r = j; r < 9; ++r) a[r][c] -= f * v[j][r];
        }
        vvs[j] = vv;
    }
    // Q e_t = H_0 H_1 ... H_4 e_t for t = 5..8.
    KESTREL_UNROLL
    for (int t = 0; t < 4; ++t) {
        double e[9];
        KESTREL_UNROLL
        for (int r = 0; r < 9; ++r) e[r] = r == 5 + t ? 1.0 : 0.0;
        KESTREL_UNROLL
        for (int j = 4; j >= 0; --j) {
            double d = 0.0;
            KESTREL_UNROLL
            for (int r = j; r < 9; ++r) d += v[j][r] * e[r];
            const double f = 2.0 * d / vvs[j];
            KESTREL_UNROLL
            for (int r = j; r < 9; ++r) e[r] -= f * v[j][r];
        }
        KESTREL_UNROLL
        for (int r = 0; r < 9; ++r) basis[t][r] = e[r];
    }
    return true;
}

/// A root of der (degree deg) in [lo, hi], where f(lo), f(hi) have opposite signs: Newton with the
/// derivative dder (degree deg - 1), safeguarded by bisection (every iterate stays inside the bracket), until a
/// step is below tol relative.
KESTREL_HD double fp_refine_root(const double* der, const double* dder, int deg, double lo, double hi, double flo,
                                 double tol) {
    double x = 0.5 * (lo + hi);
    double dx = hi - lo, dxold = dx;
    for (int it = 0; it < 200; ++it) {
        const double fx = fp_horner(der, deg, x);
        if (fx == 0.0) break;
        if ((fx < 0.0) == (flo < 0.0)) {
            lo = x;
        } else {
            hi = x;
        }
        const double dfx = fp_horner(dder, deg - 1, x);
        // Newton where it stays inside the bracket and at least halves the step before last; else bisection.
        const double xn = dfx != 0.0 ? x - fx / dfx : x;
        const bool newton = dfx != 0.0 && xn > lo && xn < hi && std::fabs(2.0 * fx) < std::fabs(dxold * dfx);
        dxold = dx;
        if (newton) {
            dx = x - xn;
            x = xn;
        } else {
            dx = 0.5 * (hi - lo);
            x = lo + dx;
        }
        if (std::fabs(dx) <= tol * (std::fabs(x) > 1.0 ? std::fabs(x) : 1.0) || !(hi - lo > 0.0)) break;
    }
    return x;
}

/// The real roots of p (degree <= 10, ascending coefficients), at most 10, in ascending order; returns their
/// count. Isolation by the derivative chain: the real roots of p^(k+1) split the root bound interval into
/// pieces where p^(k) is monotone, so each piece holds at most one root of p^(k), bracketed by a sign change
/// (from the linear p^(deg-1) up to p itself). A Sturm sequence was tried first: its sign-variation counts
/// lose their meaning in double for about 1 % of the five-point polynomials (docs/geometry.md).
KESTREL_HD int fp_real_roots(const double* p_in, int deg_in, double* roots) {
    double pmax = 0.0;
    for (int i = 0; i <= deg_in; ++i) pmax = std::fabs(p_in[i]) > pmax ? std::fabs(p_in[i]) : pmax;
    if (!(pmax > 0.0) || !(pmax < 1e300)) return 0;
    int deg = deg_in;
    while (deg > 0 && std::fabs(p_in[deg]) <= 1e-14 * pmax) --deg;
    if (deg < 1) return 0;
    double der[11][11];  // der[k]: the k-th derivative of the monic p (degree deg - k)
    for (int i = 0; i <= deg; ++i) der[0][i] = p_in[i] / p_in[deg];
    for (int k = 1; k < deg; ++k)
        for (int i = 0; i <= deg - k; ++i) der[k][i] = der[k - 1][i + 1] * static_cast<double>(i + 1);
    double bound = 0.0;  // Cauchy bound; by Gauss-Lucas it bounds every derivative's roots too
    for (int i = 0; i < deg; ++i) bound = std::fabs(der[0][i]) > bound ? std::fabs(der[0][i]) : bound;
    bound += 1.0;
    if (!(bound < 1e300)) return 0;
    double crit[11];
    int ncrit = 0;
    // p^(deg-1) is linear: c0 + c1 z.
    {
        const double* l = der[deg - 1];
        const double r = -l[0] / l[1];
        if (r > -bound && r < bound) crit[ncrit++] = r;
    }
    for (int k = deg - 2; k >= -1; --k) {
        if (k < 0) break;
        const int dk = deg - k;
        double found[11];
        int nf = 0;
        double lo = -bound;
        double flo = fp_horner(der[k], dk, lo);
        for (int j = 0; j <= ncrit; ++j) {
            const double hi = j < ncrit ? crit[j] : bound;
            if (!(hi > lo)) continue;
            const double fhi = fp_horner(der[k], dk, hi);
            if (flo == 0.0) {
                if (nf < 10) found[nf++] = lo;
            } else if (fhi != 0.0 && ((flo < 0.0) != (fhi < 0.0))) {
                if (nf < 10)  // the derivatives' roots only bracket: 1e-10 relative is enough (same accuracy, -25 % time)
                    found[nf++] = fp_refine_root(der[k], der[k + 1], dk, lo, hi, flo, k > 0 ? 1e-10 : 1e-16);
            }
            lo = hi;
            flo = fhi;
        }
        ncrit = nf;
        for (int j = 0; j < nf; ++j) crit[j] = found[j];
    }
    const int n = ncrit < kFivePointMaxSolutions ? ncrit : kFivePointMaxSolutions;
    for (int j = 0; j < n; ++j) roots[j] = crit[j];
    return n;
}

/// Sum of squares of the ten cubics M0 at (x, y, z), their Jacobian's normal equations (J^T J, J^T f).
KESTREL_HD double fp_cubics(const double M0[10][20], const double* v, double JtJ[3][3], double Jtf[3]) {
    double px[4] = {1.0, v[0], v[0] * v[0], v[0] * v[0] * v[0]};
    double py[4] = {1.0, v[1], v[1] * v[1], v[1] * v[1] * v[1]};
    double pz[4] = {1.0, v[2], v[2] * v[2], v[2] * v[2] * v[2]};
    double mono[20], dmono[3][20];
    for (int c = 0; c < 20; ++c) {
        const int code = fp_code(c);
        const int a = code >> 4, b = (code >> 2) & 3, e = code & 3;
        mono[c] = px[a] * py[b] * pz[e];
        dmono[0][c] = a > 0 ? static_cast<double>(a) * px[a - 1] * py[b] * pz[e] : 0.0;
        dmono[1][c] = b > 0 ? static_cast<double>(b) * px[a] * py[b - 1] * pz[e] : 0.0;
        dmono[2][c] = e > 0 ? static_cast<double>(e) * px[a] * py[b] * pz[e - 1] : 0.0;
    }
    for (int i = 0; i < 3; ++i) {
        Jtf[i] = 0.0;
        for (int j = 0; j < 3; ++j) JtJ[i][j] = 0.0;
    }
    double ss = 0.0;
    for (int r = 0; r < 10; ++r) {
        double f = 0.0, J[3] = {0.0, 0.0, 0.0};
        for (int c = 0; c < 20; ++c) {
            f += M0[r][c] * mono[c];
            for (int i = 0; i < 3; ++i) J[i] += M0[r][c] * dmono[i][c];
        }
        ss += f * f;
        for (int i = 0; i < 3; ++i) {
            Jtf[i] += J[i] * f;
            for (int j = 0; j < 3; ++j) JtJ[i][j] += J[i] * J[j];
        }
    }
    return ss;
}

/// Gauss-Newton polish of a solution (x, y, z) on the ten cubics (a step is kept only when it lowers the sum
/// of squares); the eliminated system loses a few digits on ill-conditioned samples, the cubics do not.
KESTREL_HD void fp_polish(const double M0[10][20], double* v) {
    double JtJ[3][3], Jtf[3];
    double ss = fp_cubics(M0, v, JtJ, Jtf);
    for (int it = 0; it < 3; ++it) {
        // Solve JtJ d = -Jtf by Cramer's rule.
        const double c00 = JtJ[1][1] * JtJ[2][2] - JtJ[1][2] * JtJ[2][1];
        const double c01 = JtJ[1][2] * JtJ[2][0] - JtJ[1][0] * JtJ[2][2];
        const double c02 = JtJ[1][0] * JtJ[2][1] - JtJ[1][1] * JtJ[2][0];
        const double det = JtJ[0][0] * c00 + JtJ[0][1] * c01 + JtJ[0][2] * c02;
        if (!(std::fabs(det) > 0.0)) return;
        const double b0 = -Jtf[0], b1 = -Jtf[1], b2 = -Jtf[2];
        const double d0 = (b0 * c00 + JtJ[0][1] * (JtJ[1][2] * b2 - b1 * JtJ[2][2]) +
                           JtJ[0][2] * (b1 * JtJ[2][1] - JtJ[1][1] * b2)) / det;
        const double d1 = (JtJ[0][0] * (b1 * JtJ[2][2] - JtJ[1][2] * b2) + b0 * c01 +
                           JtJ[0][2] * (JtJ[1][0] * b2 - b1 * JtJ[2][0])) / det;
        const double d2 = (JtJ[0][0] * (JtJ[1][1] * b2 - b1 * JtJ[2][1]) +
                           JtJ[0][1] * (b1 * JtJ[2][0] - JtJ[1][0] * b2) + b0 * c02) / det;
        const double w[3] = {v[0] + d0, v[1] + d1, v[2] + d2};
        double JtJn[3][3], Jtfn[3];
        const double ssn = fp_cubics(M0, w, JtJn, Jtfn);
        if (!(ssn < ss)) return;
        ss = ssn;
        for (int i = 0; i < 3; ++i) {
            v[i] = w[i];
            Jtf[i] = Jtfn[i];
            for (int j = 0; j < 3; ++j) JtJ[i][j] = JtJn[i][j];
        }
    }
}

/// The five-point solver. x1, x2: 5 points each, the second view's x2 satisfying x2^T E x1 = 0. Writes up to 10 essential matrices (row-major, unit Frobenius norm) to
/// E[10][9]; returns their count (0 when the sample is degenerate: *flag says why). `polish`: the Gauss-Newton
/// polish of each solution on the ten cubics (about 40 % of the time; RANSAC hypotheses skip it: their
/// accuracy without it, ~1e-12 typical and 98 % within 1e-9, is far below any pixel noise, and the final model
/// is refined on its inliers).
/// The solver on 3-vectors: x1, x2 hold 5 points each as (x, y, z) (normalized points with z = 1, or unit
/// bearing vectors in any direction); otherwise as five_point_solve below. A 2-D point (x, y) and the 3-vector
/// (x, y, 1) give the same bits.
KESTREL_HD int five_point_solve3(const double* x1, const double* x2, double E[kFivePointMaxSolutions][9], int* flag,
                                 bool polish = true) {
    *flag = kFivePointOk;
    double basis[4][9];
    if (!fp_null_space(x1, x2, basis)) {
        *flag = kFivePointRankDeficient;
        return 0;
    }
    // 2. The constraints. e[k] = {X_k, Y_k, Z_k, W_k}.
    double e[9][4];
    for (int k = 0; k < 9; ++k)
        for (int t = 0; t < 4; ++t) e[k][t] = basis[t][k];
    double M[10][20];
    {
        // det(E) = e0 (e4 e8 - e5 e7) + e1 (e5 e6 - e3 e8) + e2 (e3 e7 - e4 e6)
        double q[20], t[20];
        for (int i = 0; i < 20; ++i) M[0][i] = 0.0;
        const int cof[3][4] = {{4, 8, 5, 7}, {5, 6, 3, 8}, {3, 7, 4, 6}};
        for (int c = 0; c < 3; ++c) {
            fp_mul_lin(e[cof[c][0]], e[cof[c][1]], q);
            fp_mul_lin(e[cof[c][2]], e[cof[c][3]], t);
            for (int i = 0; i < 20; ++i) q[i] -= t[i];
            fp_addmul_quad_lin(q, e[c], 1.0, M[0]);
        }
        // EE^T (symmetric) and its trace
        double eet[3][3][20];
        for (int i = 0; i < 3; ++i)
            for (int j = i; j < 3; ++j) {
                for (int m = 0; m < 20; ++m) eet[i][j][m] = 0.0;
                for (int k = 0; k < 3; ++k) {
                    fp_mul_lin(e[3 * i + k], e[3 * j + k], t);
                    for (int m = 0; m < 20; ++m) eet[i][j][m] += t[m];
                }
                if (j != i)
                    for (int m = 0; m < 20; ++m) eet[j][i][m] = eet[i][j][m];
            }
        double tr[20];
        for (int m = 0; m < 20; ++m) tr[m] = eet[0][0][m] + eet[1][1][m] + eet[2][2][m];
        // (2 EE^T - tr I) E, entry (i, j) = sum_k (2 eet[i][k] - [i == k] tr) e[3k + j]
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double* row = M[1 + 3 * i + j];
                for (int m = 0; m < 20; ++m) row[m] = 0.0;
                for (int k = 0; k < 3; ++k) {
                    for (int m = 0; m < 20; ++m) q[m] = 2.0 * eet[i][k][m] - (i == k ? tr[m] : 0.0);
                    fp_addmul_quad_lin(q, e[3 * k + j], 1.0, row);
                }
            }
    }
    double M0[10][20];  // the cubics before elimination, for the polish (only copied when polishing)
    if (polish)
        for (int r = 0; r < 10; ++r)
            for (int c = 0; c < 20; ++c) M0[r][c] = M[r][c];
    // 3. Gauss-Jordan on the first ten columns, partial pivoting.
    double mscale = 0.0;
    for (int r = 0; r < 10; ++r)
        for (int c = 0; c < 20; ++c) mscale = std::fabs(M[r][c]) > mscale ? std::fabs(M[r][c]) : mscale;
    for (int c = 0; c < 10; ++c) {
        int piv = c;
        double best = std::fabs(M[c][c]);
        for (int r = c + 1; r < 10; ++r)
            if (std::fabs(M[r][c]) > best) {
                best = std::fabs(M[r][c]);
                piv = r;
            }
        if (!(best > 1e-12 * mscale)) {
            *flag = kFivePointSingularElimination;
            return 0;
        }
        if (piv != c)
            for (int m = 0; m < 20; ++m) {
                const double tmp = M[c][m];
                M[c][m] = M[piv][m];
                M[piv][m] = tmp;
            }
        const double inv = M[c][c];
        for (int m = c; m < 20; ++m) M[c][m] = M[c][m] / inv;
        for (int r = 0; r < 10; ++r) {
            if (r == c) continue;
            const double f = M[r][c];
            if (f == 0.0) continue;
            for (int m = c; m < 20; ++m) M[r][m] -= f * M[c][m];
        }
    }
    // 4. B(z): rows <4> - z<5>, <6> - z<7>, <8> - z<9>. Remaining monomials (columns 10..19):
    //    x z^2, x z, x, y z^2, y z, y, z^3, z^2, z, 1.
    double bx[3][4], by[3][4], b1[3][5];
    for (int k = 0; k < 3; ++k) {
        const double* A = M[4 + 2 * k] + 10;
        const double* S = M[5 + 2 * k] + 10;
        bx[k][0] = A[2];
        bx[k][1] = A[1] - S[2];
        bx[k][2] = A[0] - S[1];
        bx[k][3] = -S[0];
        by[k][0] = A[5];
        by[k][1] = A[4] - S[5];
        by[k][2] = A[3] - S[4];
        by[k][3] = -S[3];
        b1[k][0] = A[9];
        b1[k][1] = A[8] - S[9];
        b1[k][2] = A[7] - S[8];
        b1[k][3] = A[6] - S[7];
        b1[k][4] = -S[6];
    }
    // det B = bx0 (by1 b12 - b11 by2) - by0 (bx1 b12 - b11 bx2) + b10 (bx1 by2 - by1 bx2)
    double c7a[8], c7b[8], c6[7], poly[11];
    for (int i = 0; i < 8; ++i) c7a[i] = c7b[i] = 0.0;
    for (int i = 0; i < 7; ++i) c6[i] = 0.0;
    for (int i = 0; i < 11; ++i) poly[i] = 0.0;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 5; ++j) {
            c7a[i + j] += by[1][i] * b1[2][j] - by[2][i] * b1[1][j];
            c7b[i + j] += bx[1][i] * b1[2][j] - bx[2][i] * b1[1][j];
        }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) c6[i + j] += bx[1][i] * by[2][j] - by[1][i] * bx[2][j];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) poly[i + j] += bx[0][i] * c7a[j] - by[0][i] * c7b[j];
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 7; ++j) poly[i + j] += b1[0][i] * c6[j];
    // A polynomial that cancels to rounding noise means det B(z) == 0 for every z (a family of solutions).
    double pmag = 0.0, pmax = 0.0;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 8; ++j) pmag += std::fabs(bx[0][i] * c7a[j]) + std::fabs(by[0][i] * c7b[j]);
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 7; ++j) pmag += std::fabs(b1[0][i] * c6[j]);
    for (int i = 0; i < 11; ++i) pmax = std::fabs(poly[i]) > pmax ? std::fabs(poly[i]) : pmax;
    if (!(pmax > 1e-11 * pmag)) {
        *flag = kFivePointDegeneratePolynomial;
        return 0;
    }
    // 5. Roots, then x, y.
    double z[kFivePointMaxSolutions];
    const int nz = fp_real_roots(poly, 10, z);
    int ns = 0;
    for (int r = 0; r < nz; ++r) {
        double B[3][3];
        for (int k = 0; k < 3; ++k) {
            B[k][0] = fp_horner(bx[k], 3, z[r]);
            B[k][1] = fp_horner(by[k], 3, z[r]);
            B[k][2] = fp_horner(b1[k], 4, z[r]);
        }
        double xyz[3] = {0.0, 0.0, z[r]};
        if (!fp_xy_from_b(B, &xyz[0], &xyz[1])) continue;
        if (polish) fp_polish(M0, xyz);
        const double x = xyz[0], y = xyz[1];
        double* Eo = E[ns];
        double n2 = 0.0;
        for (int k = 0; k < 9; ++k) {
            Eo[k] = x * basis[0][k] + y * basis[1][k] + xyz[2] * basis[2][k] + basis[3][k];
            n2 += Eo[k] * Eo[k];
        }
        if (!(n2 > 0.0) || !(n2 < 1e300)) continue;
        const double inv = 1.0 / std::sqrt(n2);
        for (int k = 0; k < 9; ++k) Eo[k] *= inv;
        ++ns;
    }
    return ns;
}

/// The five-point solver on normalized points (x, y interleaved, z = 1 plane): five_point_solve3 on (x, y, 1).
KESTREL_HD int five_point_solve(const double* x1, const double* x2, double E[kFivePointMaxSolutions][9], int* flag,
                                bool polish = true) {
    double p[15], q[15];
    for (int i = 0; i < 5; ++i) {
        p[3 * i] = x1[2 * i];
        p[3 * i + 1] = x1[2 * i + 1];
        p[3 * i + 2] = 1.0;
        q[3 * i] = x2[2 * i];
        q[3 * i + 1] = x2[2 * i + 1];
        q[3 * i + 2] = 1.0;
    }
    return five_point_solve3(p, q, E, flag, polish);
}

}  // namespace kestrel::detail
