// THE single definition of Kestrel's FAST semantics, included by the CPU reference (src/detect/fast_cpu.cpp,
// src/detect/grid_select_cpu.cpp) and the CUDA kernels (kernels/detect/fast_score.cu, kernels/detect/grid_nms.cu):
// the Bresenham circle, the segment test, bounded rectification, the 8 KiB lookup table, the four
// score formulas and the tie-break rules. Change semantics here and nowhere else.
//
// Segment test (Rosten & Drummond; vilib "Faster than FAST"): for centre intensity c and threshold t,
// circle pixel i (order below) is bright when p_i > c + t and dark when p_i < c - t. Bit i of the
// 16-bit bright mask B (dark mask D) is set when pixel i is bright (dark).
//
// Bounded rectification (Jetson-SLAM): run(M) = longest circular run of ones in M (0..16). The pixel
// is a corner when arc_min <= run(B) <= arc_max or arc_min <= run(D) <= arc_max.
// arc_max = 16 gives classic FAST-arc_min.
//
// Lookup table (vilib): bit m of the table is [arc_min <= run(m) <= arc_max] for every 16-bit mask
// m; 2^16 bits = 2048 32-bit words, word m >> 5, bit m & 31. A pixel is classified with two lookups
// (B and D) and no data-dependent branch.
//
// Scores (integers, exact; stored as float, which represents them exactly). Non-corners score 0.
//   SAD-B (ScoreType::SadCircle):    sum_{i=0..15} |p_i - c|.
//   SAD-A (ScoreType::SadArc):       for each polarity P in {bright, dark} whose run qualifies, take its
//                                    longest run (the one starting at the lowest index i, where a run
//                                    starts at a set bit whose predecessor i-1 mod 16 is clear; the
//                                    full mask 0xFFFF is one run starting at 0) and sum (|p_i - c| - t)
//                                    over its pixels; the score is the larger polarity sum.
//   MT   (ScoreType::MaxThreshold):  the largest t' >= t at which the pixel is still a corner (with the
//                                    same arc bounds). t' ranges over d_i - 1 with d_i = |p_i - c|, since
//                                    classification changes only there; computed in closed form from the
//                                    circle's window minima (score_max_threshold). With arc bounds [9, 16]
//                                    this is exactly OpenCV's cv::FAST TYPE_9_16 response (docs/conformance.md).
//   Harris (ScoreType::Harris):      gx, gy = 3x3 Sobel (gx = [-1 0 1; -2 0 2; -1 0 1] * I), summed over
//                                    the 7x7 window centred on the pixel: Sxx = sum gx^2, Syy = sum gy^2,
//                                    Sxy = sum gx*gy (int64). R25 = 25 (Sxx Syy - Sxy^2) - (Sxx + Syy)^2,
//                                    i.e. 25 * (det - k trace^2) with k = 0.04, exact. Score =
//                                    float(R25) * 2^-20 when R25 > 0 (round to nearest), else 0: a corner
//                                    with a non-positive Harris response is not kept.
// Border: a pixel is scored only when at least score_border(type) pixels from every edge
// (3 for the circle; 4 for Harris: 3 for the window plus 1 for Sobel). Others score 0.
//
// Ordering of candidates (NMS and cell selection, identical on CPU and GPU): a candidate a is
// better than b when a.score > b.score; on equal score, lower level; then lower y; then lower x.
// keypoint_key() packs this order into one 64-bit integer (larger key = better candidate).
// Non-maximum suppression on one level: pixel p with score s_p > 0 survives when for every q != p in
// its (2n+1)^2 neighbourhood (outside the level: score 0): s_p > s_q, or s_p == s_q and q comes
// after p in raster order (q.y > p.y, or q.y == p.y and q.x > p.x). One survivor per plateau.
#pragma once
#include <cstdint>

#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kCircleSize = 16;
constexpr int kLutWords = 2048;  // 2^16 bits

/// Circle offsets, clockwise from the top (0, -3) (the order of OpenCV's FAST).
KESTREL_HD int circle_dx(int i) {
    constexpr int dx[kCircleSize] = {0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3, -3, -3, -2, -1};
    return dx[i];
}
KESTREL_HD int circle_dy(int i) {
    constexpr int dy[kCircleSize] = {-3, -3, -2, -1, 0, 1, 2, 3, 3, 3, 2, 1, 0, -1, -2, -3};
    return dy[i];
}

/// Longest circular run of ones in a 16-bit mask, 0..16.
KESTREL_HD int longest_circular_run(std::uint32_t m) {
    m &= 0xFFFFu;
    if (m == 0xFFFFu) return 16;
    std::uint32_t x = m | (m << 16);  // unrolled circle: a run may wrap from bit 15 to bit 0
    int n = 0;
    while (x) {  // each step shortens every run by one
        x &= x << 1;
        ++n;
    }
    return n;
}

KESTREL_HD bool arc_in_bounds(std::uint32_t m, int arc_min, int arc_max) {
    const int r = longest_circular_run(m);
    return r >= arc_min && r <= arc_max;
}

/// Fills the 2048-word table for (arc_min, arc_max). Host code; the GPU reads a device copy.
inline void build_corner_lut(int arc_min, int arc_max, std::uint32_t* lut) {
    for (int w = 0; w < kLutWords; ++w) {
        std::uint32_t word = 0;
        for (int b = 0; b < 32; ++b)
            if (arc_in_bounds(static_cast<std::uint32_t>(w * 32 + b), arc_min, arc_max)) word |= 1u << b;
        lut[w] = word;
    }
}

KESTREL_HD bool lut_test(const std::uint32_t* lut, std::uint32_t m) {
#if defined(__CUDA_ARCH__)
    return (__ldg(lut + (m >> 5)) >> (m & 31u)) & 1u;  // read-only path: the table is constant per launch
#else
    return (lut[m >> 5] >> (m & 31u)) & 1u;
#endif
}

/// Bright and dark masks of circle values p[] around centre c at threshold t (branch-free).
KESTREL_HD void segment_masks(const int* p, int c, int t, std::uint32_t& bright, std::uint32_t& dark) {
    std::uint32_t b = 0, d = 0;
    for (int i = 0; i < kCircleSize; ++i) {
        b |= static_cast<std::uint32_t>(p[i] > c + t) << i;
        d |= static_cast<std::uint32_t>(p[i] < c - t) << i;
    }
    bright = b;
    dark = d;
}

KESTREL_HD int popcount16(std::uint32_t m) {
#if defined(__CUDA_ARCH__)
    return __popc(m);
#else
    return __builtin_popcount(m);
#endif
}

/// Table lookup of one mask, skipped when the mask has fewer than arc_min ones: a run is never
/// longer than the mask's popcount, so the table would say 0 anyway. The result is exactly the
/// table's; on the GPU the skipped lookups save scattered loads of an 8 KiB table (most pixels).
KESTREL_HD bool mask_is_arc(const std::uint32_t* lut, std::uint32_t m, int arc_min) {
    return popcount16(m) >= arc_min && lut_test(lut, m);
}

/// Segment test: two lookups (bright, dark).
KESTREL_HD bool is_corner(const std::uint32_t* lut, const int* p, int c, int t, int arc_min = 1) {
    std::uint32_t b, d;
    segment_masks(p, c, t, b, d);
    return mask_is_arc(lut, b, arc_min) | mask_is_arc(lut, d, arc_min);
}

/// Compass pre-test, an optimisation and never a rule: the compass points are circle pixels 0, 4, 8
/// and 12 (N, E, S, W). A circular run of L >= arc_min ones covers at least k = floor(arc_min / 4)
/// cyclically consecutive compass points. So when no k consecutive compass bits of a mask are set,
/// the mask has no qualifying run and mask_is_arc() is false: the GPU kernels test this on every
/// centre (4 of the 16 circle pixels) and run the full segment test only where it holds. The results
/// are the same; tests check the implication for every mask and arc_min (tests/detect/test_fast.cpp).
/// T is bool or a word of SIMD lanes (then &, | act lane by lane); `all` = T's "true".
template <class T>
KESTREL_HD T compass_run_holds(T n, T e, T s, T w, T all, int arc_min) {
    switch (arc_min >> 2) {
        case 0: return all;                                  // arc_min < 4: no compass point needed
        case 1: return n | e | s | w;                        // one point
        case 2: return (n | s) & (e | w);                    // two neighbours: (n&e)|(e&s)|(s&w)|(w&n)
        case 3: return (n & e & (s | w)) | (s & w & (n | e)); // three of four
        default: return n & e & s & w;                      // arc_min = 16: all four
    }
}

/// compass_run_holds() on the compass bits of a 16-bit mask.
KESTREL_HD bool compass_may_be_arc(std::uint32_t m, int arc_min) {
    return compass_run_holds<bool>(m & 1u, (m >> 4) & 1u, (m >> 8) & 1u, (m >> 12) & 1u, true, arc_min);
}

KESTREL_HD int iabs(int v) { return v < 0 ? -v : v; }

/// SAD-B: sum of |p_i - c| over the whole circle.
KESTREL_HD int score_sad_circle(const int* p, int c) {
    int s = 0;
    for (int i = 0; i < kCircleSize; ++i) s += iabs(p[i] - c);
    return s;
}

/// Start index and length of the longest circular run of mask m (ties: lowest start). m != 0.
KESTREL_HD void longest_run_position(std::uint32_t m, int& start, int& length) {
    start = 0;
    length = 0;
    if ((m & 0xFFFFu) == 0xFFFFu) {
        length = 16;
        return;
    }
    for (int i = 0; i < kCircleSize; ++i) {
        const bool set = (m >> i) & 1u, prev = (m >> ((i + 15) & 15)) & 1u;
        if (!set || prev) continue;
        int len = 0;
        while (len < kCircleSize && ((m >> ((i + len) & 15)) & 1u)) ++len;
        if (len > length) {
            length = len;
            start = i;
        }
    }
}

KESTREL_HD std::uint32_t rotr16(std::uint32_t m, int s) { return ((m >> s) | (m << (16 - s))) & 0xFFFFu; }

/// Mask of the pixels of the longest run of m (the run longest_run_position() names), computed
/// with constant indices only (no local memory on the GPU). m != 0.
KESTREL_HD std::uint32_t longest_run_mask(std::uint32_t m) {
    m &= 0xFFFFu;
    const int len = longest_circular_run(m);
    if (len >= 16) return 0xFFFFu;
    const std::uint32_t low = (1u << len) - 1u;
    std::uint32_t run = 0;
KESTREL_UNROLL
    for (int i = kCircleSize - 1; i >= 0; --i) {  // descending, so the lowest qualifying start wins
        const bool starts = ((m >> i) & 1u) && !((m >> ((i + 15) & 15)) & 1u);
        if (starts && (rotr16(m, i) & low) == low) run = ((low << i) | (low >> (16 - i))) & 0xFFFFu;
    }
    return run;
}

/// SAD-A: sum of (|p_i - c| - t) over the qualifying polarity's longest run; larger polarity wins.
KESTREL_HD int score_sad_arc(const std::uint32_t* lut, const int* p, int c, int t, int arc_min) {
    std::uint32_t masks[2];
    segment_masks(p, c, t, masks[0], masks[1]);
    int best = 0;
KESTREL_UNROLL
    for (int pol = 0; pol < 2; ++pol) {
        if (!mask_is_arc(lut, masks[pol], arc_min)) continue;
        const std::uint32_t run = longest_run_mask(masks[pol]);
        int s = 0;
KESTREL_UNROLL
        for (int i = 0; i < kCircleSize; ++i) s += ((run >> i) & 1u) ? iabs(p[i] - c) - t : 0;
        best = s > best ? s : best;
    }
    return best;
}

/// MT (ScoreType::MaxThreshold), closed form. With d_i = p_i - c, pixel i is bright at a threshold t' when
/// d_i > t', so the bright mask at t' has a circular run of at least n ones exactly when some window of n
/// cyclically consecutive circle pixels has all d_i > t', i.e. when A_b(n) > t' with
///     A_b(n) = max over windows W of n pixels of min_{i in W} d_i = (max_W min_W p_i) - c,
/// and dark likewise with A_d(n) = max_W min_W (c - p_i) = (max_W min_W (255 - p_i)) - (255 - c). A_b(n) and
/// A_d(n) do not grow with n. So the bright run is in [arc_min, arc_max] exactly for the thresholds
/// A_b(arc_max + 1) <= t' <= A_b(arc_min) - 1 (no lower end when arc_max = 16), an interval of integers, and
/// dark likewise: MT, the largest t' >= t in the union of the two intervals, given that t is in it (else 0),
/// is the larger upper end U = A(arc_min) - 1 of a non-empty interval. With arc_max = 16 this is
/// max(A_b, A_d) - 1 when that is >= t, else 0. Every U is some |p_i - c| - 1, so it is the definition
/// (score_max_threshold_search, kept for the tests); tests compare the two on millions of circles for every
/// arc_min, arc_max and threshold (tests/detect/test_fast_max_threshold.cpp).
///
/// The window minima are taken by doubling (windows of 2, 4, 8, 16 from those of half the length), the windows
/// of n as the pieces of n's binary digits put end to end, then the maximum over the 16 windows: about 80 lane
/// minimums for arc_min = 9 and both polarities, instead of a search over thresholds. Lanes is one of the two
/// lane types below; the results do not depend on it.

/// Both polarities in the two 16-bit halves of one word (bright: p, dark: 255 - p); on the GPU one
/// __vminu2 / __vmaxu2 per pair of lanes (one instruction on sm_90, emulated before).
struct MtLanesPacked {
    using T = std::uint32_t;
    static constexpr bool kBothPolarities = true;
    KESTREL_HD static T of(int p) { return 0x00FF0000u + static_cast<std::uint32_t>(p) * 0xFFFF0001u; }  // p + (255 - p) << 16
    KESTREL_HD static T min(T a, T b) {
#if defined(__CUDA_ARCH__)
        return __vminu2(a, b);
#else
        const T lo = (a & 0xFFFFu) < (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
        const T hi = (a >> 16) < (b >> 16) ? (a & 0xFFFF0000u) : (b & 0xFFFF0000u);
        return hi | lo;
#endif
    }
    KESTREL_HD static T max(T a, T b) {
#if defined(__CUDA_ARCH__)
        return __vmaxu2(a, b);
#else
        const T lo = (a & 0xFFFFu) > (b & 0xFFFFu) ? (a & 0xFFFFu) : (b & 0xFFFFu);
        const T hi = (a >> 16) > (b >> 16) ? (a & 0xFFFF0000u) : (b & 0xFFFF0000u);
        return hi | lo;
#endif
    }
};

/// One polarity per integer (one min / max instruction each): the bright values p, then the dark ones
/// 255 - p, in two passes (half the live registers of both at once).
struct MtLaneInt {
    using T = int;
    static constexpr bool kBothPolarities = false;
    KESTREL_HD static T min(T a, T b) { return a < b ? a : b; }
    KESTREL_HD static T max(T a, T b) { return a > b ? a : b; }
};

/// max over the 16 windows W of n (1..16) cyclically consecutive circle pixels of min_{i in W} v_i, lane by
/// lane. e[i] holds the minimum of the window of length L ending at pixel i (e(2L)[i] = min(e(L)[i],
/// e(L)[i - L])); a[i] that of the pieces taken so far, put end to end: a piece of length L appended at the end
/// gives a'[i] = min(a[i - L], e(L)[i]). Constant indices only (no local memory on the GPU); called with a
/// constant n (best_window_mins), which folds the tests on n's digits away.
template <class Lanes>
KESTREL_HD typename Lanes::T best_window_min(const typename Lanes::T (&v)[kCircleSize], int n) {
    using T = typename Lanes::T;
    T e[kCircleSize], a[kCircleSize];
KESTREL_UNROLL
    for (int i = 0; i < kCircleSize; ++i) e[i] = a[i] = v[i];
KESTREL_UNROLL
    for (int b = 0; b < 5; ++b) {
        const int L = 1 << b;
        if (n & L) {
            if (n & (L - 1)) {  // pieces taken already: append this one
                T na[kCircleSize];
KESTREL_UNROLL
                for (int i = 0; i < kCircleSize; ++i) na[i] = Lanes::min(a[(i - L) & 15], e[i]);
KESTREL_UNROLL
                for (int i = 0; i < kCircleSize; ++i) a[i] = na[i];
            } else {  // the first piece
KESTREL_UNROLL
                for (int i = 0; i < kCircleSize; ++i) a[i] = e[i];
            }
        }
        if (b < 4 && (n >> (b + 1)) != 0) {  // longer pieces follow: windows of 2L
            T ne[kCircleSize];
KESTREL_UNROLL
            for (int i = 0; i < kCircleSize; ++i) ne[i] = Lanes::min(e[i], e[(i - L) & 15]);
KESTREL_UNROLL
            for (int i = 0; i < kCircleSize; ++i) e[i] = ne[i];
        }
    }
    T m = a[0];
KESTREL_UNROLL
    for (int i = 1; i < kCircleSize; ++i) m = Lanes::max(m, a[i]);
    return m;
}

/// The best windows of n pixels of both polarities: max_W min_W p_i (bright) and max_W min_W (255 - p_i) (dark).
template <class Lanes>
KESTREL_HD void best_window_mins_of(const int* p, int n, int& bright, int& dark) {
    if constexpr (Lanes::kBothPolarities) {
        typename Lanes::T v[kCircleSize];
KESTREL_UNROLL
        for (int i = 0; i < kCircleSize; ++i) v[i] = Lanes::of(p[i]);
        const typename Lanes::T m = best_window_min<Lanes>(v, n);
        bright = static_cast<int>(m & 0xFFFFu);
        dark = static_cast<int>(m >> 16);
    } else {
        int v[kCircleSize];
KESTREL_UNROLL
        for (int i = 0; i < kCircleSize; ++i) v[i] = p[i];
        bright = best_window_min<Lanes>(v, n);
KESTREL_UNROLL
        for (int i = 0; i < kCircleSize; ++i) v[i] = 255 - p[i];
        dark = best_window_min<Lanes>(v, n);
    }
}

/// best_window_mins_of; on the GPU with one case per n = 1..16, each straight-line code with its window lengths
/// fixed (a loop over the digits of an n known only at run time merges the window arrays at every digit, which
/// spills registers), unless n is a constant already.
template <class Lanes>
KESTREL_HD void best_window_mins(const int* p, int n, int& bright, int& dark) {
#if defined(__CUDA_ARCH__)
    switch (n) {
#define KESTREL_MT_CASE(k) \
    case k: best_window_mins_of<Lanes>(p, k, bright, dark); break;
        KESTREL_MT_CASE(1) KESTREL_MT_CASE(2) KESTREL_MT_CASE(3) KESTREL_MT_CASE(4) KESTREL_MT_CASE(5)
        KESTREL_MT_CASE(6) KESTREL_MT_CASE(7) KESTREL_MT_CASE(8) KESTREL_MT_CASE(9) KESTREL_MT_CASE(10)
        KESTREL_MT_CASE(11) KESTREL_MT_CASE(12) KESTREL_MT_CASE(13) KESTREL_MT_CASE(14) KESTREL_MT_CASE(15)
#undef KESTREL_MT_CASE
        default: best_window_mins_of<Lanes>(p, 16, bright, dark); break;
    }
#else
    best_window_mins_of<Lanes>(p, n, bright, dark);
#endif
}

/// MT of circle p[] (0..255) around c (0..255) at threshold t (0..254) with arc bounds 1 <= arc_min <=
/// arc_max <= 16: the closed form above, computed on Lanes.
template <class Lanes>
KESTREL_HD int score_max_threshold_lanes(const int* p, int c, int t, int arc_min, int arc_max) {
    int wb, wd;
    best_window_mins<Lanes>(p, arc_min, wb, wd);
    const int ub = wb - c - 1, ud = wd - (255 - c) - 1;  // A(arc_min) - 1 of each polarity
    if (arc_max >= kCircleSize) {
        const int u = ub > ud ? ub : ud;
        return u >= t ? u : 0;
    }
    best_window_mins<Lanes>(p, arc_max + 1, wb, wd);
    const int lb = wb - c, ld = wd - (255 - c);  // A(arc_max + 1)
    if (!((lb <= t && t <= ub) || (ld <= t && t <= ud))) return 0;  // not a corner at t
    const int sb = lb <= ub ? ub : -1, sd = ld <= ud ? ud : -1;     // the non-empty intervals' upper ends
    return sb > sd ? sb : sd;
}

/// MT (closed form) on the lanes that suit the processor: packed on sm_90 and later (native 16-bit lane
/// minimums), integers elsewhere. Exactly score_max_threshold_search for every input.
KESTREL_HD int score_max_threshold(const int* p, int c, int t, int arc_min, int arc_max) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return score_max_threshold_lanes<MtLanesPacked>(p, c, t, arc_min, arc_max);
#else
    return score_max_threshold_lanes<MtLaneInt>(p, c, t, arc_min, arc_max);
#endif
}

/// MT by its definition, the tests' oracle for score_max_threshold: largest t' >= t at which the pixel is a
/// corner; 0 when it is not a corner at t. t' ranges over {t} and {|p_i - c| - 1}, where the classification
/// can change. lut: the table of (arc_min, arc_max).
KESTREL_HD int score_max_threshold_search(const std::uint32_t* lut, const int* p, int c, int t, int arc_min) {
    if (!is_corner(lut, p, c, t, arc_min)) return 0;
    int best = t;
    for (int i = 0; i < kCircleSize; ++i) {
        const int cand = iabs(p[i] - c) - 1;
        if (cand > best && is_corner(lut, p, c, cand, arc_min)) best = cand;
    }
    return best;
}

/// The circle score of a corner selected by `kind` (ScoreType of kestrel/fast.hpp, passed as its type
/// so this header needs no API header): SAD-B, SAD-A or MT (arc bounds arc_min..arc_max); Harris needs the gradient window and is
/// computed apart. One dispatch for the CPU reference and both GPU kernels.
template <class Kind>
KESTREL_HD int circle_score(Kind kind, const std::uint32_t* lut, const int* p, int c, int t, int arc_min,
                            int arc_max) {
    if (kind == Kind::SadCircle) return score_sad_circle(p, c);
    if (kind == Kind::SadArc) return score_sad_arc(lut, p, c, t, arc_min);
    return score_max_threshold(p, c, t, arc_min, arc_max);
}
/// arc_max is a bound, not a flag: a bool there is a mistake.
template <class Kind>
int circle_score(Kind, const std::uint32_t*, const int*, int, int, int, bool) = delete;

/// Harris score from the window sums, exact up to the final float conversion (see header comment).
KESTREL_HD float harris_from_sums(std::int64_t sxx, std::int64_t syy, std::int64_t sxy) {
    const std::int64_t tr = sxx + syy;
    const std::int64_t r25 = 25 * (sxx * syy - sxy * sxy) - tr * tr;
    return r25 > 0 ? static_cast<float>(r25) * (1.0f / 1048576.0f) : 0.0f;
}

/// Pixels from the edge a score needs (3 for the circle, 4 for the Harris window).
KESTREL_HD int score_border_px(int score_type_harris) { return score_type_harris ? 4 : 3; }

/// Order key of a candidate: larger key = better (score, then lower level, lower y, lower x).
/// Scores are non-negative floats, whose bit patterns order like the values.
KESTREL_HD std::uint64_t keypoint_key(float score, int level, int x, int y) {
    std::uint32_t bits;
#if defined(__CUDA_ARCH__)
    bits = __float_as_uint(score);
#else
    __builtin_memcpy(&bits, &score, sizeof bits);
#endif
    return (static_cast<std::uint64_t>(bits) << 32) | (static_cast<std::uint64_t>(15 - level) << 28) |
           (static_cast<std::uint64_t>(0x3FFF - y) << 14) | static_cast<std::uint64_t>(0x3FFF - x);
}

/// Does the neighbour score sq at raster offset (dx, dy) from p suppress p (score sp)?
KESTREL_HD bool nms_suppressed_by(float sp, float sq, int dx, int dy) {
    const bool later = dy > 0 || (dy == 0 && dx > 0);
    return later ? sq > sp : sq >= sp;
}

}  // namespace kestrel::detail
