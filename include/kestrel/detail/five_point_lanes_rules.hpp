// The five-point solver of the RANSAC hypotheses, shared verbatim by the CPU reference and the CUDA kernel
// (kernels/geometry/ransac.cu): the algebra of five_point_rules.hpp (null space, ten cubic constraints,
// Gauss-Jordan on the first ten monomials, the degree-10 polynomial in z) laid out for kFplLanes lanes that work
// on one shared workspace, with fixed-count steps instead of data-dependent loops:
//   - the null space by Householder QR over the lanes (lane c: column c of the system; lanes 5..13: a row each
//     of Q = H_0 ... H_4, whose columns 5..8 are the basis);
//   - the ten constraint rows one per lane, the same steps on every lane (their quadratics one per lane before);
//   - Gauss-Jordan with partial pivoting keeps the rows where they are (one per lane; the pivot row of column c
//     is the unused row with the largest |M[r][c]|, the lowest row on ties) and eliminates every other row with
//     the unscaled pivot row; the six rows that form B(z) are scaled at the end; det B(z) over the lanes;
//   - the real roots: a sign scan of the polynomial at kFplGrid + 1 points of the projective line (t in [-2, 2];
//     z = t for |t| <= 1, z = 1 / w with w = +-2 - t beyond, where the reversed polynomial is evaluated), one
//     lane per kFplGrid / kFplLanes cells; a cell without a sign change where |p| has a minimum may hold two
//     roots: unless its Taylor expansion clears it, it is split at the extremum; every bracket (at most 10, the
//     lowest cells first) is refined by one lane with kFplIllinoisSteps steps of the Illinois method (regula
//     falsi that halves the kept end's value), every step inside the bracket;
//   - x, y from B(z) and E = x X + y Y + z Z + W, one root per lane.
// A pair of roots closer than a cell (1/64 in t) that the extremum test cannot separate, or a double root, is
// missed: the public five_point_solve (five_point_rules.hpp: derivative-chain isolation, safeguarded Newton to
// full precision) finds those; docs/geometry.md gives both solvers' recall on exact data.
//
// Execution model: a phase is a function of the lane, run for every lane before the next phase starts (the
// kernel: each lane of its group, then __syncwarp; the CPU: the lanes one after another). Within a phase a lane
// reads only what earlier phases wrote, and writes only its own entries of the workspace, so both orders give
// the same bits. Values that every lane needs (a reflection, a pivot) are formed between phases from what the
// phases before wrote: by every lane on the GPU, once on the CPU. Arithmetic: +, -, *, /, sqrt and explicit fma
// (std::fma on the host: exactly rounded, like the GPU's), no contraction elsewhere (the including files are
// compiled with -ffp-contract=off / --fmad=false).
#pragma once
#include <cmath>

#include "kestrel/detail/five_point_rules.hpp"
#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kFplLanes = 16;                        ///< lanes per solve (a half warp)
constexpr int kFplGrid = 256;                        ///< sign-scan cells over t in [-2, 2]
constexpr int kFplCellsPerLane = kFplGrid / kFplLanes;
constexpr int kFplIllinoisSteps = 14;                ///< refinement steps per root (fixed)
constexpr int kFplExtremumSteps = 8;                 ///< steps locating an extremum that may split a cell

/// The shared workspace of one solve (kernel: shared memory).
struct FplWork {
    /// The null space's Householder QR of the 9x5 system (column c: point c's row of the 5x9 system), behind the
    /// input (the first phase reads the input and writes the columns).
    struct Null {
        double input[30];  ///< aliases `sample`
        double qa[5][9];   ///< the system, column by column (lane c updates column c)
        double q[9][9];    ///< Q = H_0 H_1 ... H_4, row by row (lane 5 + i updates row i)
        double colmax[5];  ///< the largest |entry| of each column as built
    };
    union {
        double sample[30];   ///< x1 (15) then x2 (15): the five points as 3-vectors (input)
        Null nul;
        double M[10][21];    ///< the constraints, eliminated in place (rows padded to 21: the ten lanes that
                             ///< each touch one row hit distinct shared-memory banks)
        double E[10][9];     ///< the solutions (one per root cell; valid where ok[k])
    };
    double e[9][4];  ///< e[k] = {X_k, Y_k, Z_k, W_k}: entry k of E = x X + y Y + z Z + W
    double eet[9][21];  ///< E E^T entries (0,0), (0,1), (0,2), (1,1), (1,2), (2,2), then det(E)'s three cofactors, as
                        ///< quadratics (padded as M)
    double rowmax[10];
    double rinv[10];  ///< 1 / (row r's entry in the column eliminated next), formed by its lane ahead of the pivot
    double bx[3][4], by[3][4], b1[3][5];
    double poly[11];
    double pmag[11];               ///< per coefficient of det B(z): the sum of its terms' magnitudes
    double c7a[8], c7b[8], c6[7];  ///< the 2x2 minors of B(z)'s rows 1 and 2 (det B's cofactor expansion)
    double split[kFplLanes][2];     ///< the extremum splitting a lane's cells of cells2
    unsigned int cells[kFplLanes];  ///< bit j of lane l: cell l * kFplCellsPerLane + j holds one root
    unsigned int cells2[kFplLanes]; ///< bit j of lane l: the cell holds two roots, split at the extremum
    int nroots[kFplLanes];          ///< the roots in lane l's cells
    int piv[10];
    int ok[10];
    int state;  ///< FivePointFlag
};

/// Horner with fma, ascending coefficients.
KESTREL_HD double fpl_horner(const double* p, int deg, double x) {
    double v = p[deg];
    for (int i = deg - 1; i >= 0; --i) v = std::fma(v, x, p[i]);
    return v;
}
/// The scan parameter of grid point i (exact: i / 64 - 2).
KESTREL_HD double fpl_grid_t(int i) { return static_cast<double>(i) * (4.0 / kFplGrid) - 2.0; }
/// Lane l's cells lie in one domain: 0 inner (lanes 4..11: z = t in [-1, 1]), 1 outer (lanes 0..3 and 12..15:
/// w = -2 - t in [-1, 0] and w = 2 - t in [0, 1], z = 1 / w).
KESTREL_HD bool fpl_lane_inner(int lane) { return lane >= kFplLanes / 4 && lane < 3 * kFplLanes / 4; }
/// Grid point i in the variable of a domain.
KESTREL_HD double fpl_grid_u(int i, bool inner) {
    const double t = fpl_grid_t(i);
    return inner ? t : (i < kFplGrid / 2 ? -2.0 - t : 2.0 - t);
}
/// The polynomial (inner: p(z); outer: w^10 p(1 / w)) and its derivative in the domain's variable: Horner over
/// the coefficients from the highest power down, c[i] = p[10 - i] (inner) or p[i] (outer).
KESTREL_HD double fpl_eval_c(const double* c, double u, double* du) {
    double v = c[0], d = 0.0;
    for (int i = 1; i <= 10; ++i) {
        d = std::fma(d, u, v);
        v = std::fma(v, u, c[i]);
    }
    *du = d;
    return v;
}
/// The value alone, by Estrin's scheme (pairs of coefficients, then powers u^2, u^4, u^8): four dependent steps
/// instead of Horner's ten, for the refinements' chains (|u| <= 1 in both domains: the same accuracy).
KESTREL_HD double fpl_value_c(const double* c, double u) {
    const double u2 = u * u, u4 = u2 * u2, u8 = u4 * u4;
    // c[10 - j] is the coefficient of u^j
    const double b0 = std::fma(c[9], u, c[10]), b1 = std::fma(c[7], u, c[8]), b2 = std::fma(c[5], u, c[6]);
    const double b3 = std::fma(c[3], u, c[4]), b4 = std::fma(c[1], u, c[2]);
    const double d0 = std::fma(b1, u2, b0), d1 = std::fma(b3, u2, b2), d2 = std::fma(c[0], u2, b4);
    return std::fma(d2, u8, std::fma(d1, u4, d0));
}
KESTREL_HD bool fpl_neg(double v) { return v < 0.0; }

/// The value (Deriv = false) or the derivative (Deriv = true) of the domain's polynomial.
template <bool Deriv>
KESTREL_HD double fpl_f(const double* c, double u) {
    if (!Deriv) return fpl_value_c(c, u);
    double d;
    (void)fpl_eval_c(c, u, &d);
    return d;
}
/// The domain's coefficients from the highest power down (fpl_eval_c's c).
KESTREL_HD void fpl_coefficients(const double* p, bool inner, double* c) {
    for (int i = 0; i <= 10; ++i) c[i] = inner ? p[10 - i] : p[i];
}

/// Fixed-count Illinois steps on [a, b] (f(a), f(b) of opposite signs or one zero) for the value (Deriv = false,
/// kFplIllinoisSteps) or the derivative (Deriv = true, kFplExtremumSteps) of the domain's polynomial; returns the
/// end with the smaller |f|.
template <bool Deriv>
KESTREL_HD double fpl_illinois(const double* cf, double a, double b) {
    double fa = fpl_f<Deriv>(cf, a);
    double fb = fpl_f<Deriv>(cf, b);
    if (fa == 0.0) {
        b = a;
        fb = 0.0;
    }
    // Every step as selects (the lanes of a group refine different brackets in step): once fb == 0 nothing
    // changes; fc == 0: both ends move to c; a sign change: the old b becomes a; else a stays and fa halves.
    for (int it = 0; it < (Deriv ? kFplExtremumSteps : kFplIllinoisSteps); ++it) {
        const double lo = a < b ? a : b, hi = a < b ? b : a;
        const double den = fb - fa;
        double c = den != 0.0 ? b - fb * ((b - a) / den) : b;
        c = c < lo ? lo : (c > hi ? hi : c);
        if (!(c == c)) c = b;
        const double fc = fpl_f<Deriv>(cf, c);
        const bool keep = fb == 0.0;
        const bool zero = fc == 0.0;
        const bool flip = fpl_neg(fc) != fpl_neg(fb);
        const double na = keep ? a : (zero ? c : (flip ? b : a));
        const double nfa = keep ? fa : (zero ? 0.0 : (flip ? fb : 0.5 * fa));
        const double nb = keep ? b : c;
        const double nfb = keep ? fb : (zero ? 0.0 : fc);
        a = na;
        fa = nfa;
        b = nb;
        fb = nfb;
    }
    return std::fabs(fb) <= std::fabs(fa) ? b : a;
}

/// The lowest set bit of a non-zero word.
KESTREL_HD int fpl_ctz(unsigned int x) {
#if defined(__CUDA_ARCH__)
    return __ffs(static_cast<int>(x)) - 1;
#else
    return __builtin_ctz(x);
#endif
}

/// Set bits of a 32-bit word.
KESTREL_HD int fpl_popcount(unsigned int x) {
#if defined(__CUDA_ARCH__)
    return __popc(x);
#else
    int n = 0;
    for (; x; x &= x - 1u) ++n;
    return n;
#endif
}

/// x[0] + ... + x[N - 1] as a pairwise sum (halves first): a chain of log2(N) additions.
template <int N>
KESTREL_HD double fpl_sum(const double* x) {
    if constexpr (N == 1) {
        return x[0];
    } else {
        return fpl_sum<N / 2>(x) + fpl_sum<N - N / 2>(x + N / 2);
    }
}

/// The null space X, Y, Z, W of the 5x9 epipolar system: fp_null_space's Householder QR (five_point_rules.hpp)
/// spread over the lanes: lane c holds column c of the 9x5 transpose; each reflection is formed by every lane from
/// the column it eliminates and applied by the lanes of the later columns, and by lanes 5..13 to a row each of
/// Q = H_0 ... H_4 (its columns 5..8 are the basis). The sums are pairwise (short chains), so the bits differ
/// from fp_null_space's, not the accuracy.
///
/// Phase: lane c < 5 builds column c (point c: x2_c (x) x1_c) and its largest magnitude; lane 0 sets the flag to
/// kFivePointOk (the later phases only set a failure).
KESTREL_HD void fpl_phase_null_build(FplWork& w, int lane) {
    if (lane == 0) w.state = kFivePointOk;
    if (lane >= 5 && lane < 14)
        KESTREL_UNROLL
        for (int r = 0; r < 9; ++r) w.nul.q[lane - 5][r] = r == lane - 5 ? 1.0 : 0.0;
    if (lane >= 5) return;
    const double* p = w.nul.input + 3 * lane;
    const double* q = w.nul.input + 15 + 3 * lane;
    double col[9];
    double mx = 0.0;
    KESTREL_UNROLL
    for (int r = 0; r < 3; ++r)
        KESTREL_UNROLL
        for (int c = 0; c < 3; ++c) {
            col[3 * r + c] = q[r] * p[c];
            const double m = std::fabs(col[3 * r + c]);
            mx = m > mx ? m : mx;
        }
    KESTREL_UNROLL
    for (int r = 0; r < 9; ++r) w.nul.qa[lane][r] = col[r];
    w.nul.colmax[lane] = mx;
}

/// Reflection J, H_J = I - 2 v v^T / (v^T v), from column J (rows J..8) after the reflections before it: the same
/// values on every lane (each forms it on the GPU, the CPU once). ok: the rank is not below 5 so far.
struct FplReflection {
    double v[9];  ///< entries J..8
    double vv;
    bool ok;
};
template <int J>
KESTREL_HD FplReflection fpl_reflection(const FplWork& w) {
    FplReflection h;
    double scale = 0.0;
    KESTREL_UNROLL
    for (int c = 0; c < 5; ++c) scale = w.nul.colmax[c] > scale ? w.nul.colmax[c] : scale;
    double sq[9];
    KESTREL_UNROLL
    for (int r = J; r < 9; ++r) {
        h.v[r] = w.nul.qa[J][r];
        sq[r] = h.v[r] * h.v[r];
    }
    // |column J|^2 = v_J^2 + S, S the sum below v_J (a pairwise sum); H_J's vector differs from the column only in
    // its entry J, so v^T v = (v_J - alpha)^2 + S.
    const double S = fpl_sum<8 - J>(sq + J + 1);
    const double norm = std::sqrt(sq[J] + S);
    const double alpha = h.v[J] >= 0.0 ? -norm : norm;
    h.v[J] -= alpha;
    h.vv = h.v[J] * h.v[J] + S;
    h.ok = norm > 1e-10 * scale && h.vv > 0.0;
    return h;
}

/// Phase: reflection J applied; lane c in (J, 5) to its column of the system, lanes 5..13 to row lane - 5 of
/// Q (Q <- Q H_J); lane 0 flags a rank below 5.
template <int J>
KESTREL_HD void fpl_phase_null_step(FplWork& w, int lane, const FplReflection& h) {
    if (lane == 0 && !h.ok) w.state = kFivePointRankDeficient;
    if (!h.ok || lane <= J || lane >= 14) return;
    double* x = lane < 5 ? w.nul.qa[lane] : w.nul.q[lane - 5];
    double a[9], pr[9];
    KESTREL_UNROLL
    for (int r = J; r < 9; ++r) {
        a[r] = x[r];
        pr[r] = h.v[r] * a[r];
    }
    const double d = pr[J] + fpl_sum<8 - J>(pr + J + 1);  // the sum below entry J is formed before alpha
    const double f = 2.0 * d / h.vv;
    KESTREL_UNROLL
    for (int r = J; r < 9; ++r) a[r] = a[r] - f * h.v[r];
    KESTREL_UNROLL
    for (int r = J; r < 9; ++r) x[r] = a[r];
    if (J == 4 && lane >= 5)  // the basis: X, Y, Z, W are the columns 5..8 of Q = H_0 H_1 ... H_4
        KESTREL_UNROLL
        for (int t = 0; t < 4; ++t) w.e[lane - 5][t] = a[5 + t];
}

/// Reflection J formed (every lane on the GPU, once on the CPU: it reads only what the phases before wrote), then
/// its phase.
template <int J, class Lanes>
KESTREL_HD void fpl_null_step(const Lanes& L, FplWork& w) {
    const FplReflection h = fpl_reflection<J>(w);
    L.each([&](int lane) { fpl_phase_null_step<J>(w, lane, h); });
}

/// The slot of E E^T entry (i, k) in FplWork::eet (symmetric).
KESTREL_HD int fpl_eet_slot(int i, int k) {
    const int a = i < k ? i : k, b = i < k ? k : i;
    return a == 0 ? b : (a == 1 ? 2 + b : 5);
}

/// Phase: lanes 0..5 each one entry of E E^T (fpl_eet: the sum of three products of linear entries), lanes 6..8
/// the cofactor quadratic c = lane - 6 of det(E) = sum_c e_c (e_a e_b - e_d e_f) (two products, subtracted): the
/// quadratics of every row, so that the rows phase runs the same steps on every lane.
KESTREL_HD void fpl_phase_eet(FplWork& w, int lane) {
    if (lane >= 9) return;
    const double(*e)[4] = w.e;
    const bool cof = lane >= 6;
    const int c = lane - 6;
    const int i = lane < 3 ? 0 : (lane < 5 ? 1 : 2);
    const int k = lane < 3 ? lane : (lane < 5 ? lane - 2 : 2);
    // the factors of the products: E E^T (i, k): e[3i + l] e[3k + l]; cofactor c: e[a] e[b] - e[d] e[f]
    const int a0 = cof ? (c == 0 ? 4 : (c == 1 ? 5 : 3)) : 3 * i, b0 = cof ? (c == 0 ? 8 : (c == 1 ? 6 : 7)) : 3 * k;
    const int a1 = cof ? (c == 0 ? 5 : (c == 1 ? 3 : 4)) : 3 * i + 1, b1 = cof ? (c == 0 ? 7 : (c == 1 ? 8 : 6)) : 3 * k + 1;
    double t0[20], t1[20], t2[20];
    fp_mul_lin(e[a0], e[b0], t0);
    fp_mul_lin(e[a1], e[b1], t1);
    fp_mul_lin(e[3 * i + 2], e[3 * k + 2], t2);
    KESTREL_UNROLL
    for (int m = 0; m < 20; ++m) w.eet[lane][m] = cof ? t0[m] - t1[m] : ((0.0 + t0[m]) + t1[m]) + t2[m];
}

/// Phase: constraint row `lane` (lanes 0..9): 0 is det(E) = sum_c cof_c e_c, 1 + 3 i + j is entry (i, j) of
/// 2 E E^T E - tr(E E^T) E = sum_k (2 eet(i, k) - [i == k] tr) e[3k + j]; the same steps on every lane.
KESTREL_HD void fpl_phase_rows(FplWork& w, int lane) {
    if (lane >= 10) return;
    const double(*e)[4] = w.e;
    const bool det = lane == 0;
    const int i = det ? 0 : (lane - 1) / 3, j = det ? 0 : (lane - 1) % 3;
    double row[20], tr[20];
    KESTREL_UNROLL
    for (int m = 0; m < 20; ++m) {
        row[m] = 0.0;
        // tr(E E^T) = eet(0,0) + eet(1,1) + eet(2,2), summed in that order
        tr[m] = (w.eet[0][m] + w.eet[3][m]) + w.eet[5][m];
    }
    KESTREL_UNROLL
    for (int k = 0; k < 3; ++k) {
        const double* d = w.eet[det ? 6 + k : fpl_eet_slot(i, k)];
        double q[20];
        KESTREL_UNROLL
        for (int m = 0; m < 20; ++m) q[m] = det ? d[m] : 2.0 * d[m] - (i == k ? tr[m] : 0.0);
        fp_addmul_quad_lin(q, e[det ? k : 3 * k + j], 1.0, row);
    }
    double mx = 0.0;
    KESTREL_UNROLL
    for (int m = 0; m < 20; ++m) {
        w.M[lane][m] = row[m];
        mx = std::fabs(row[m]) > mx ? std::fabs(row[m]) : mx;
    }
    w.rowmax[lane] = mx;
    w.rinv[lane] = 1.0 / row[0];
}

/// The pivot row of column c among the rows not in `used` (bit r): the largest |M[r][c]|, the lowest r on ties;
/// -1 when it is not above 1e-12 of the matrix's largest entry. A tournament over pairs of rows (the lower rows
/// on the left, kept on ties): the same row as a scan in row order, in four rounds of comparisons instead of ten.
KESTREL_HD int fpl_pivot(const FplWork& w, int c, int used, double mscale) {
    double v[10];
    int id[10];
    KESTREL_UNROLL
    for (int r = 0; r < 10; ++r) {
        const double a = std::fabs(w.M[r][c]);
        v[r] = (used & (1 << r)) || !(a >= 0.0) ? -1.0 : a;  // used rows and NaN never win
        id[r] = r;
    }
    KESTREL_UNROLL
    for (int step = 1; step < 10; step *= 2)
        KESTREL_UNROLL
        for (int r = 0; r + step < 10; r += 2 * step) {
            const bool right = v[r + step] > v[r];
            v[r] = right ? v[r + step] : v[r];
            id[r] = right ? id[r + step] : id[r];
        }
    return v[0] > 1e-12 * mscale ? id[0] : -1;
}

/// Phase: elimination of column C with pivot row p (every lane r < 10 other than p updates its row's columns
/// C + 1 .. 19: M[r][m] -= (M[r][C] (1 / M[p][C])) M[p][m], as fma(-f, M[p][m], M[r][m]); the reciprocal is the
/// one lane p formed in the phase before, so that no division waits for the pivot). Both rows are read before
/// the row is written (the compiler cannot tell that the rows differ, so in a read-modify-write loop every load
/// would wait for the previous store).
template <int C>
KESTREL_HD void fpl_phase_eliminate(FplWork& w, int lane, int p) {
    if (lane >= 10 || lane == p) return;
    constexpr int kN = 19 - C;
    double pv[kN], mv[kN];
    KESTREL_UNROLL
    for (int m = 0; m < kN; ++m) pv[m] = w.M[p][C + 1 + m];
    KESTREL_UNROLL
    for (int m = 0; m < kN; ++m) mv[m] = w.M[lane][C + 1 + m];
    const double f = w.M[lane][C] * w.rinv[p];
    double nv[kN];
    KESTREL_UNROLL
    for (int m = 0; m < kN; ++m) nv[m] = std::fma(-f, pv[m], mv[m]);
    // the reciprocal of the next column's entry, while the other lanes look for its pivot
    if (C < 9) w.rinv[lane] = 1.0 / nv[0];
    KESTREL_UNROLL
    for (int m = 0; m < kN; ++m) w.M[lane][C + 1 + m] = nv[m];
}

/// Gauss-Jordan from column C on: each column's pivot (fpl_pivot, the same on every lane), then its elimination
/// phase. False (w.state set) when a pivot vanishes.
template <int C, class Lanes>
KESTREL_HD bool fpl_eliminate_from(const Lanes& L, FplWork& w, int used, double mscale) {
    if constexpr (C == 10) {
        (void)L;
        (void)w;
        (void)used;
        (void)mscale;
        return true;
    } else {
        const int p = fpl_pivot(w, C, used, mscale);
        if (p < 0) {  // every lane takes the same branch
            L.each([&](int lane) {
                if (lane == 0) w.state = kFivePointSingularElimination;
            });
            return false;
        }
        L.each([&](int lane) {
            if (lane == 0) w.piv[C] = p;
            fpl_phase_eliminate<C>(w, lane, p);
        });
        return fpl_eliminate_from<C + 1>(L, w, used | (1 << p), mscale);
    }
}

/// det B(z), spread over the lanes. Phase: lane k < 3 forms row k of B(z) from the scaled rows of pivots 4 + 2k
/// and 5 + 2k.
KESTREL_HD void fpl_phase_b(FplWork& w, int lane) {
    if (lane >= 3) return;
    const int k = lane;
    double A[10], S[10];
    {
        const int p = w.piv[4 + 2 * k];
        const double inv = 1.0 / w.M[p][4 + 2 * k];
        KESTREL_UNROLL
        for (int m = 0; m < 10; ++m) A[m] = w.M[p][10 + m] * inv;
    }
    {
        const int p = w.piv[5 + 2 * k];
        const double inv = 1.0 / w.M[p][5 + 2 * k];
        KESTREL_UNROLL
        for (int m = 0; m < 10; ++m) S[m] = w.M[p][10 + m] * inv;
    }
    w.bx[k][0] = A[2];
    w.bx[k][1] = A[1] - S[2];
    w.bx[k][2] = A[0] - S[1];
    w.bx[k][3] = -S[0];
    w.by[k][0] = A[5];
    w.by[k][1] = A[4] - S[5];
    w.by[k][2] = A[3] - S[4];
    w.by[k][3] = -S[3];
    w.b1[k][0] = A[9];
    w.b1[k][1] = A[8] - S[9];
    w.b1[k][2] = A[7] - S[8];
    w.b1[k][3] = A[6] - S[7];
    w.b1[k][4] = -S[6];
}

/// Phase: the minors of rows 1 and 2, one coefficient per lane (lanes 0..7: c7a and c6, lanes 8..15: c7b), each a
/// sum over ascending powers of the first factor.
KESTREL_HD void fpl_phase_minors(FplWork& w, int lane) {
    const int k = lane & 7;
    if (lane < 8) {
        double a = 0.0;
        KESTREL_UNROLL
        for (int i = 0; i < 4; ++i) {
            const int j = k - i;
            if (j >= 0 && j < 5) a += w.by[1][i] * w.b1[2][j] - w.by[2][i] * w.b1[1][j];
        }
        w.c7a[k] = a;
        if (k < 7) {
            double c = 0.0;
            KESTREL_UNROLL
            for (int i = 0; i < 4; ++i) {
                const int j = k - i;
                if (j >= 0 && j < 4) c += w.bx[1][i] * w.by[2][j] - w.by[1][i] * w.bx[2][j];
            }
            w.c6[k] = c;
        }
    } else {
        double b = 0.0;
        KESTREL_UNROLL
        for (int i = 0; i < 4; ++i) {
            const int j = k - i;
            if (j >= 0 && j < 5) b += w.bx[1][i] * w.b1[2][j] - w.bx[2][i] * w.b1[1][j];
        }
        w.c7b[k] = b;
    }
}

/// Phase: lane k < 11 forms coefficient k of det B(z) = bx0 c7a - by0 c7b + b10 c6 (ascending powers of row 0's
/// factor, the c7 terms first) and the sum of its terms' magnitudes.
KESTREL_HD void fpl_phase_poly(FplWork& w, int lane) {
    if (lane > 10) return;
    const int k = lane;
    double c = 0.0, mag = 0.0;
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i) {
        const int j = k - i;
        if (j >= 0 && j < 8) {
            c += w.bx[0][i] * w.c7a[j] - w.by[0][i] * w.c7b[j];
            mag += std::fabs(w.bx[0][i] * w.c7a[j]) + std::fabs(w.by[0][i] * w.c7b[j]);
        }
    }
    KESTREL_UNROLL
    for (int i = 0; i < 5; ++i) {
        const int j = k - i;
        if (j >= 0 && j < 7) {
            c += w.b1[0][i] * w.c6[j];
            mag += std::fabs(w.b1[0][i] * w.c6[j]);
        }
    }
    w.poly[k] = c;
    w.pmag[k] = mag;
}

/// A polynomial that cancels to rounding noise (its largest coefficient below 1e-11 of the magnitudes summed
/// coefficient by coefficient) means det B(z) == 0 for every z: a family of solutions.
KESTREL_HD bool fpl_poly_degenerate(const FplWork& w) {
    double pmax = 0.0, pmag = 0.0;
    KESTREL_UNROLL
    for (int i = 0; i < 11; ++i) {
        pmax = std::fabs(w.poly[i]) > pmax ? std::fabs(w.poly[i]) : pmax;
        pmag += w.pmag[i];
    }
    return !(pmax > 1e-11 * pmag) || !(pmax < 1e300);
}

/// True when the domain's polynomial (fpl_eval_c's c, |u| <= 1) has no root in the cell [ua, ub] (either order), by
/// its Taylor expansion at the midpoint m: c_k = p^(k)(m) / k! (repeated synthetic division) and, with r the half
/// width, |p(m + h)| >= min |c_0 + c_1 h + c_2 h^2| - sum_(k >= 3) |c_k| r^k for |h| <= r. The test asks the
/// quadratic's smallest value (of the sign of c_0) to exceed twice that sum plus 1e-12 of the coefficients'
/// magnitudes `amag` (far above the rounding of the c_k and of the value anywhere in the cell), so a cell it clears
/// has no sign change at any point in double either.
KESTREL_HD bool fpl_cell_root_free(const double* cf, double ua, double ub, double amag) {
    const double m = 0.5 * (ua + ub), r = 0.5 * std::fabs(ub - ua);
    double a[11];
    KESTREL_UNROLL
    for (int i = 0; i <= 10; ++i) a[i] = cf[i];
    // after pass k, a[10 - k] = c_k
    KESTREL_UNROLL
    for (int k = 0; k < 10; ++k)
        KESTREL_UNROLL
        for (int i = 1; i <= 10 - k; ++i) a[i] = std::fma(a[i - 1], m, a[i]);
    double t = std::fabs(a[0]);  // c_10
    KESTREL_UNROLL
    for (int k = 9; k >= 3; --k) t = std::fma(t, r, std::fabs(a[10 - k]));
    const double r2 = r * r;
    const double rest = t * (r2 * r);  // sum_(k >= 3) |c_k| r^k
    // The smallest of s (c_0 + c_1 h + c_2 h^2) over |h| <= r, s the sign of c_0: at the worse end, or at the vertex.
    const double c0 = std::fabs(a[10]), c1 = std::fabs(a[9]);
    const double c2 = fpl_neg(a[10]) ? -a[8] : a[8];
    double low = c0 - c1 * r + c2 * r2;
    if (c2 > 0.0 && c1 < 2.0 * c2 * r) {
        const double v = c0 - c1 * c1 / (4.0 * c2);
        low = v < low ? v : low;
    }
    return low > 2.0 * (rest + 1e-12 * amag);
}

/// Phase: the scan; lane l marks its cells j (grid points l * 16 + j, + 1) that hold roots: a sign change of
/// the polynomial (one root; a zero at the cell's left end counts for that cell), or, without one, an extremum
/// (a sign change of the derivative towards zero) whose value has the other sign (two roots, split at the
/// extremum; the first two such cells of a lane).
KESTREL_HD void fpl_phase_scan(FplWork& w, int lane) {
    unsigned int one = 0u, cand = 0u;
    const bool inner = fpl_lane_inner(lane);
    const int i0 = lane * kFplCellsPerLane;
    double cf[11];
    fpl_coefficients(w.poly, inner, cf);
    double u0 = fpl_grid_u(i0, inner), d0;
    double v0 = fpl_eval_c(cf, u0, &d0);
    // The sign pass: the cells with a sign change, and those where |p| falls, then rises (along ascending t: the
    // outer domains' w descends) without one, the candidates for two roots.
    KESTREL_UNROLL
    for (int j = 0; j < kFplCellsPerLane; ++j) {
        const double u1 = fpl_grid_u(i0 + j + 1, inner);
        double d1;
        const double v1 = fpl_eval_c(cf, u1, &d1);
        if (v0 == 0.0 || (v1 != 0.0 && fpl_neg(v0) != fpl_neg(v1))) {
            one |= 1u << j;
        } else if (v0 != 0.0 && d0 != 0.0 && d1 != 0.0 && fpl_neg(d0) != fpl_neg(d1) &&
                   fpl_neg(inner ? d0 : -d0) != fpl_neg(v0)) {
            cand |= 1u << j;
        }
        u0 = u1;
        v0 = v1;
        d0 = d1;
    }
    // The candidates in ascending order until two are split: the extremum (Illinois on the derivative), two roots
    // when the value there has the other sign than at the cell's left end.
    unsigned int two = 0u;
    int nsplit = 0;
    // A candidate whose cell provably holds no root (fpl_cell_root_free) cannot split: skipped.
    double amag = 0.0;
    KESTREL_UNROLL
    for (int i = 0; i <= 10; ++i) amag += std::fabs(cf[i]);
    while (cand != 0u && nsplit < 2) {
        const int j = fpl_ctz(cand);
        cand &= cand - 1u;
        const double ua = fpl_grid_u(i0 + j, inner), ub = fpl_grid_u(i0 + j + 1, inner);
        if (fpl_cell_root_free(cf, ua, ub, amag)) continue;
        const double m = fpl_illinois<true>(cf, ua, ub);
        const double vm = fpl_value_c(cf, m);
        const double va = fpl_value_c(cf, ua);
        if (vm == 0.0 || fpl_neg(vm) != fpl_neg(va)) {
            two |= 1u << j;
            w.split[lane][nsplit++] = m;
        }
    }
    w.cells[lane] = one;
    w.cells2[lane] = two;
    w.nroots[lane] = fpl_popcount(one) + 2 * fpl_popcount(two);
}

/// The number of roots bracketed (at most 10 are refined).
KESTREL_HD int fpl_root_cells(const FplWork& w) {
    int n = 0;
    for (int l = 0; l < kFplLanes; ++l) n += w.nroots[l];
    return n < kFivePointMaxSolutions ? n : kFivePointMaxSolutions;
}

/// The roots in the cells 0..j of a lane (cells c1 hold one root, cells c2 two), j in -1..15.
KESTREL_HD int fpl_roots_upto(unsigned int c1, unsigned int c2, int j) {
    const unsigned int m = (1u << (j + 1)) - 1u;
    return fpl_popcount(c1 & m) + 2 * fpl_popcount(c2 & m);
}

/// The k-th bracket in ascending cell order (a split cell: its left part first): its lane, ends a, b in the
/// lane's variable. False when there are fewer. Integers only until the ends (the lanes of a group look for
/// different brackets in step): the lane by a fixed loop, the cell by a binary search on the lane's root counts.
KESTREL_HD bool fpl_bracket(const FplWork& w, int k, int* lane_out, double* a, double* b) {
    int seen = 0, L = 0, within = 0;
    bool found = false;
    for (int l = 0; l < kFplLanes; ++l) {
        const int here = w.nroots[l];
        const bool hit = !found && k < seen + here;
        L = hit ? l : L;
        within = hit ? k - seen : within;
        found = found || hit;
        seen += here;
    }
    // The cell j: the lowest with more than `within` roots in the cells 0..j; part 0 the whole cell, 1 its left
    // part up to the split, 2 its right part.
    const unsigned int c1 = w.cells[L], c2 = w.cells2[L];
    int j = 0;
    for (int step = kFplCellsPerLane / 2; step >= 1; step >>= 1)
        j = fpl_roots_upto(c1, c2, j + step - 1) <= within ? j + step : j;
    j = j < kFplCellsPerLane ? j : kFplCellsPerLane - 1;
    const int before = fpl_roots_upto(c1, c2, j - 1);
    const bool two = ((c2 >> j) & 1u) != 0u;
    const int part = two ? (within == before ? 1 : 2) : 0;
    const int qsel = fpl_popcount(c2 & ((1u << j) - 1u));
    const bool inner = fpl_lane_inner(L);
    const int i = L * kFplCellsPerLane + j;
    const double sp = part != 0 ? w.split[L][qsel] : 0.0;
    *lane_out = L;
    *a = part == 2 ? sp : fpl_grid_u(i, inner);
    *b = part == 1 ? sp : fpl_grid_u(i + 1, inner);
    return found;
}

/// The root of the k-th bracket: z, or false when it is at infinity or not finite.
KESTREL_HD bool fpl_root(const FplWork& w, int k, double* z_out) {
    int l = 0;
    double a = 0.0, b = 0.0;
    const bool found = fpl_bracket(w, k, &l, &a, &b);
    const bool inner = fpl_lane_inner(l);
    double cf[11];
    fpl_coefficients(w.poly, inner, cf);
    const double u = fpl_illinois<false>(cf, a, b);  // also without a bracket: the lanes stay in step
    if (!found) return false;
    if (inner) {
        *z_out = u;
        return u == u;
    }
    if (!(u != 0.0)) return false;
    *z_out = 1.0 / u;
    return *z_out == *z_out;
}

/// Phase: lane k < nroots refines the k-th marked cell and forms its E (unit Frobenius norm) in w.E[k].
KESTREL_HD void fpl_phase_solutions(FplWork& w, int lane, int nroots) {
    if (lane >= nroots) return;
    double z = 0.0;
    int ok = fpl_root(w, lane, &z) ? 1 : 0;
    double Eo[9];
    if (ok) {
        double B[3][3];
        for (int k = 0; k < 3; ++k) {
            B[k][0] = fpl_horner(w.bx[k], 3, z);
            B[k][1] = fpl_horner(w.by[k], 3, z);
            B[k][2] = fpl_horner(w.b1[k], 4, z);
        }
        double x = 0.0, y = 0.0;
        ok = fp_xy_from_b(B, &x, &y) ? 1 : 0;
        if (ok) {
            double sq[9];
            KESTREL_UNROLL
            for (int k = 0; k < 9; ++k) {
                Eo[k] = std::fma(x, w.e[k][0], std::fma(y, w.e[k][1], std::fma(z, w.e[k][2], w.e[k][3])));
                sq[k] = Eo[k] * Eo[k];
            }
            const double n2 = fpl_sum<9>(sq);
            ok = n2 > 0.0 && n2 < 1e300 ? 1 : 0;
            if (ok) {
                const double inv = 1.0 / std::sqrt(n2);
                for (int k = 0; k < 9; ++k) Eo[k] = Eo[k] * inv;
            }
        }
    }
    w.ok[lane] = ok;
    if (ok)
        for (int k = 0; k < 9; ++k) w.E[lane][k] = Eo[k];
}

/// The solve, phase by phase, on a lane group L (L.each(f): f(lane) for every lane, then the group's barrier).
/// w.sample holds the input; returns the number of root cells refined (solution k valid where w.ok[k]) and
/// leaves the flag in w.state (0 solutions unless kFivePointOk). Every lane gets the same return value.
template <class Lanes>
KESTREL_HD int fpl_solve(const Lanes& L, FplWork& w) {
    L.each([&](int lane) { fpl_phase_null_build(w, lane); });
    fpl_null_step<0>(L, w);
    fpl_null_step<1>(L, w);
    fpl_null_step<2>(L, w);
    fpl_null_step<3>(L, w);
    fpl_null_step<4>(L, w);
    if (w.state != kFivePointOk) return 0;
    L.each([&](int lane) { fpl_phase_eet(w, lane); });
    L.each([&](int lane) { fpl_phase_rows(w, lane); });
    double mscale = 0.0;
    for (int r = 0; r < 10; ++r) mscale = w.rowmax[r] > mscale ? w.rowmax[r] : mscale;
    if (!fpl_eliminate_from<0>(L, w, 0, mscale)) return 0;
    L.each([&](int lane) { fpl_phase_b(w, lane); });
    L.each([&](int lane) { fpl_phase_minors(w, lane); });
    L.each([&](int lane) { fpl_phase_poly(w, lane); });
    if (fpl_poly_degenerate(w)) {  // the same on every lane
        L.each([&](int lane) {
            if (lane == 0) w.state = kFivePointDegeneratePolynomial;
        });
        return 0;
    }
    L.each([&](int lane) { fpl_phase_scan(w, lane); });
    const int nroots = fpl_root_cells(w);
    L.each([&](int lane) { fpl_phase_solutions(w, lane, nroots); });
    return nroots;
}

/// The CPU's lane group: the lanes one after another.
struct FplSerialLanes {
    template <class F>
    KESTREL_HD void each(const F& f) const {
        for (int l = 0; l < kFplLanes; ++l) f(l);
    }
};

/// The RANSAC solver on the CPU as a plain function (3-vectors x1, x2 of 5 points each, as five_point_solve3):
/// writes the valid solutions in root order to E; returns their count; *flag as five_point_solve3's.
inline int five_point_solve_lanes(const double* x1, const double* x2, double E[kFivePointMaxSolutions][9], int* flag) {
    FplWork w;
    for (int i = 0; i < 15; ++i) {
        w.sample[i] = x1[i];
        w.sample[15 + i] = x2[i];
    }
    w.state = kFivePointOk;
    const int nr = fpl_solve(FplSerialLanes{}, w);
    *flag = w.state;
    int ns = 0;
    for (int r = 0; r < nr; ++r)
        if (w.ok[r]) {
            for (int k = 0; k < 9; ++k) E[ns][k] = w.E[r][k];
            ++ns;
        }
    return ns;
}

}  // namespace kestrel::detail
