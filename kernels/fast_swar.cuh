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

}  // namespace kestrel::kernels::swar
