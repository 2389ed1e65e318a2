// Device-only: the FAST segment test of four horizontally adjacent centres at once, in 16-bit SIMD lanes
// of 32-bit words (SWAR). Reference it must match bit for bit: detail::segment_masks (fast_rules.hpp),
// i.e. bit i of the bright mask is [p_i > c + t] and of the dark mask [p_i < c - t].
//
// Layout: the staged tile holds one pixel per 16-bit lane, so a 32-bit word is a pixel pair (x, x + 1)
// with x even. A thread's centres are px .. px + 3 (px = 4m): pair A = (px, px + 1), pair B =
// (px + 2, px + 3). It reads the six words of each circle row covering pixels px - 4 .. px + 7.
// For a pixel pair p = (p0, p1) and its centres c = (c0, c1), per lane (all values < 2^9, so no lane
// carries into the next):
//   bright:  p + Bc, Bc = 256 - min(c + t + 1, 256)  ->  bit 8 set  <=>  p >= c + t + 1  <=>  p > c + t
//   dark:    Dc - p, Dc = max(c - t, 0) + 255       ->  bit 8 set  <=>  p <= max(c - t, 0) - 1  <=>  p < c - t
// (min/max: c + t + 1 > 256 leaves no brighter value, c - t <= 0 no darker one). Bit 8 (lane 0) and
// bit 24 (lane 1) of circle point i are moved to bits i and 16 + i of the pair's mask word.
#pragma once
#include <cstdint>

#include "kestrel/detail/fast_rules.hpp"

namespace kestrel::kernels::swar {

/// The six staged words of one circle row: pixel pairs starting at px - 4, px - 2, ..., px + 6.
struct RowWords {
    std::uint32_t w[6];
};

/// Pixel pair starting at pixel offset q from px - 4 (q in 1..9), compile-time q after unrolling.
__device__ __forceinline__ std::uint32_t pair_at(const RowWords& r, int q) {
    return (q & 1) ? __byte_perm(r.w[(q - 1) >> 1], r.w[(q + 1) >> 1], 0x5432) : r.w[q >> 1];
}

/// Moves bit 8 and bit 24 of v to bits i and 16 + i.
__device__ __forceinline__ std::uint32_t place_bit(std::uint32_t v, int i) {
    v &= 0x01000100u;
    return i >= 8 ? v << (i - 8) : v >> (8 - i);
}

/// rows[r] = the six words at first + r * step * stride (r = 0 .. N - 1; 32-bit words, first 8-byte
/// aligned): three 64-bit shared-memory loads per row. step 1 gives the seven circle rows of the full
/// test, step 3 the compass rows (top, centre, bottom).
template <int N>
__device__ __forceinline__ void load_rows(const std::uint32_t* first, int stride, int step, RowWords (&rows)[N]) {
#pragma unroll
    for (int r = 0; r < N; ++r) {
        const uint2* src = reinterpret_cast<const uint2*>(first + r * step * stride);
#pragma unroll
        for (int h = 0; h < 3; ++h) {
            const uint2 v = src[h];
            rows[r].w[2 * h] = v.x;
            rows[r].w[2 * h + 1] = v.y;
        }
    }
}

struct PairThresholds {
    std::uint32_t bright_add;  // Bc per lane
    std::uint32_t dark_from;   // Dc per lane
};

__device__ __forceinline__ PairThresholds pair_thresholds(std::uint32_t c, int t) {
    const int c0 = static_cast<int>(c & 0xFFFFu), c1 = static_cast<int>(c >> 16);
    const std::uint32_t b0 = 256u - static_cast<std::uint32_t>(min(c0 + t + 1, 256));
    const std::uint32_t b1 = 256u - static_cast<std::uint32_t>(min(c1 + t + 1, 256));
    const std::uint32_t d0 = static_cast<std::uint32_t>(max(c0 - t, 0) + 255);
    const std::uint32_t d1 = static_cast<std::uint32_t>(max(c1 - t, 0) + 255);
    return {b0 | (b1 << 16), d0 | (d1 << 16)};
}

/// Bright and dark 16-bit masks of the four centres px .. px + 3 (index j = centre px + j).
/// rows[r] = the words of row (centre row - 3 + r), r = 0..6.
__device__ __forceinline__ void segment_masks4(const RowWords (&rows)[7], int t, std::uint32_t (&bright)[4],
                                               std::uint32_t (&dark)[4]) {
    const std::uint32_t ca = rows[3].w[2], cb = rows[3].w[3];
    const PairThresholds ta = pair_thresholds(ca, t), tb = pair_thresholds(cb, t);
    std::uint32_t ba = 0, da = 0, bb = 0, db = 0;
#pragma unroll
    for (int i = 0; i < detail::kCircleSize; ++i) {
        const RowWords& r = rows[3 + detail::circle_dy(i)];
        const std::uint32_t pa = pair_at(r, 4 + detail::circle_dx(i));
        const std::uint32_t pb = pair_at(r, 6 + detail::circle_dx(i));
        ba |= place_bit(pa + ta.bright_add, i);
        da |= place_bit(ta.dark_from - pa, i);
        bb |= place_bit(pb + tb.bright_add, i);
        db |= place_bit(tb.dark_from - pb, i);
    }
    bright[0] = ba & 0xFFFFu;
    bright[1] = ba >> 16;
    bright[2] = bb & 0xFFFFu;
    bright[3] = bb >> 16;
    dark[0] = da & 0xFFFFu;
    dark[1] = da >> 16;
    dark[2] = db & 0xFFFFu;
    dark[3] = db >> 16;
}

/// Corners among the four centres px .. px + 3 whose bit j is set in `in` (bit j of the result: centre
/// px + j): segment_masks4, then the lookup table (detail::mask_is_arc on both masks), exactly the
/// reference's classification.
__device__ __forceinline__ unsigned corners4(const RowWords (&rows)[7], int t, const std::uint32_t* lut, int arc_min,
                                             unsigned in) {
    std::uint32_t bright[4], dark[4];
    segment_masks4(rows, t, bright, dark);
    unsigned corners = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const bool corner = ((in >> j) & 1u) && (detail::mask_is_arc(lut, bright[j], arc_min) |
                                                 detail::mask_is_arc(lut, dark[j], arc_min));
        corners |= static_cast<unsigned>(corner) << j;
    }
    return corners;
}

/// Compass pre-test (detail::compass_run_holds, fast_rules.hpp) of the four centres px .. px + 3 in
/// SIMD lanes: false when none of them can be a corner, so the full segment test may be skipped; it
/// never rejects a corner. Reads circle points 0 and 8 (rows top / bottom, words 2 and 3) and 4 and 12
/// (centre row, words 0 .. 5): 5 of the 21 words the full test reads.
__device__ __forceinline__ bool compass_may_have_corner4(const RowWords& top, const RowWords& mid,
                                                         const RowWords& bottom, int t, int arc_min) {
    constexpr std::uint32_t kAll = 0x01000100u;  // the decision bits of the two lanes
    const PairThresholds ta = pair_thresholds(mid.w[2], t), tb = pair_thresholds(mid.w[3], t);
    std::uint32_t pass = 0;
#pragma unroll
    for (int h = 0; h < 2; ++h) {  // pair A (centres px, px + 1), pair B (px + 2, px + 3)
        const PairThresholds th = h == 0 ? ta : tb;
        const int q = 4 + 2 * h;  // the pair's centre offset from px - 4
        const std::uint32_t n = top.w[2 + h], s = bottom.w[2 + h];
        const std::uint32_t e = pair_at(mid, q + 3), w = pair_at(mid, q - 3);
        const std::uint32_t b = detail::compass_run_holds<std::uint32_t>(n + th.bright_add, e + th.bright_add,
                                                                         s + th.bright_add, w + th.bright_add, kAll, arc_min);
        const std::uint32_t d = detail::compass_run_holds<std::uint32_t>(th.dark_from - n, th.dark_from - e,
                                                                         th.dark_from - s, th.dark_from - w, kAll, arc_min);
        pass |= b | d;
    }
    return (pass & kAll) != 0;
}

/// Two pixels of a factor-2 pyramid level in 16-bit lanes (the staged layout above) from the parent's
/// two rows: r0, r1 = parent bytes 2x .. 2x + 3 of rows 2y and 2y + 1 (little endian). Lane j =
/// detail::average4(r0[2j], r0[2j + 1], r1[2j], r1[2j + 1]) = (sum + 2) >> 2 (sums < 2^10: no carry
/// between lanes).
__device__ __forceinline__ std::uint32_t average4_pair(std::uint32_t r0, std::uint32_t r1) {
    constexpr std::uint32_t kLow = 0x00FF00FFu;
    const std::uint32_t s = (r0 & kLow) + ((r0 >> 8) & kLow) + (r1 & kLow) + ((r1 >> 8) & kLow) + 0x00020002u;
    return (s >> 2) & kLow;
}

}  // namespace kestrel::kernels::swar
