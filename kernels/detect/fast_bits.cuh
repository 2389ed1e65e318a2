// Bit-sliced FAST segment test: 32 horizontally adjacent centres per 32-bit word. Host and device code
// (KESTREL_HD), so the CPU tests check it against the reference for every threshold and arc bound
// (tests/detect/test_fast_bits.cpp). Reference it must match bit for bit: detail::segment_masks and
// detail::mask_is_arc / arc_in_bounds (include/kestrel/detail/fast_rules.hpp).
//
// Layout: a segment is 32 pixels x .. x + 31 of one row; its 8 bit planes are words P[b] whose bit j is
// bit b of pixel x + j. The circle pixel at column offset dx of the 32 centres of a segment is the
// segment's planes shifted by dx (a funnel shift with the neighbouring segment's planes, |dx| <= 3).
// For centres c and threshold t (per bit lane j):
//   bright  p > c + t    <=>  carry out of p + kb, kb = 255 - min(c + t, 255)  (kb = 0: nothing is brighter)
//   dark    p < c - t    <=>  carry out of kd + (255 - p), kd = max(c - t, 0)  (kd = 0: nothing is darker)
// Each carry chain is 8 three-input functions (majority), one per bit plane, for 32 centres at once.
// Arc test: with B[i] the words of circle point i (bit j: centre j's point i is bright), the longest
// circular run of centre j is at least L exactly when some window of L cyclically consecutive points has
// all bits j set; windows are built by doubling (lengths 2, 4, 8, 16) and combined by the bits of L.
// Corner <=> arc_min <= run <= arc_max for the bright or the dark words, as the lookup table says.
#pragma once
#include <cstdint>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/hd.hpp"

namespace kestrel::kernels::bits {

using u32 = std::uint32_t;

/// __byte_perm (selector nibbles 0..7 pick bytes of b:a) on host and device.
KESTREL_HD u32 perm(u32 a, u32 b, u32 sel) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(a, b, sel);
#else
    const std::uint64_t v = (static_cast<std::uint64_t>(b) << 32) | a;
    u32 r = 0;
    for (int k = 0; k < 4; ++k) r |= static_cast<u32>((v >> (8 * ((sel >> (4 * k)) & 7u))) & 0xFFu) << (8 * k);
    return r;
#endif
}

/// Bits x + n .. x + n + 31 of the 64 bits hi:lo (n = 1..31): the planes of pixels shifted right by n.
KESTREL_HD u32 shift_right(u32 lo, u32 hi, int n) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, n);
#else
    return (lo >> n) | (hi << (32 - n));
#endif
}
/// Bits x - n .. x - n + 31 of hi:lo seen from hi (n = 1..31): pixels shifted left by n.
KESTREL_HD u32 shift_left(u32 lo, u32 hi, int n) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_l(lo, hi, n);
#else
    return (hi << n) | (lo >> (32 - n));
#endif
}

KESTREL_HD u32 maj(u32 a, u32 b, u32 c) { return (a & b) | (c & (a | b)); }

/// Exchanges, between a (index bit 0) and b (index bit 1), the bits of a at positions with bit p set
/// and the bits of b at positions with bit p clear (s = 2^p, m = positions with bit p clear).
KESTREL_HD void delta_swap(u32& a, u32& b, int s, u32 m) {
    const u32 t = ((a >> s) ^ b) & m;
    b ^= t;
    a ^= t << s;
}

/// 32 pixels (w[k] = pixels 4k .. 4k + 3, little endian) to their 8 bit planes (planes[b] bit j = bit b
/// of pixel j). The bit (pixel j, bit b) sits in word j >> 2 at position 8 (j & 3) + b; the transpose
/// exchanges index bits: a 4x4 byte transpose within the two groups of four words (byte permutations),
/// then three delta swaps of one word-index bit with one in-word bit.
KESTREL_HD void to_planes(const u32 (&w)[8], u32 (&planes)[8]) {
    u32 v[8];
KESTREL_UNROLL
    for (int g = 0; g < 2; ++g) {  // words g, g + 2, g + 4, g + 6 (word index bits j4 j3 = 0..3, j2 = g)
        const u32 a0 = w[g], a1 = w[g + 2], a2 = w[g + 4], a3 = w[g + 6];
        const u32 t0 = perm(a0, a1, 0x5140), t1 = perm(a2, a3, 0x5140);
        const u32 t2 = perm(a0, a1, 0x7362), t3 = perm(a2, a3, 0x7362);
        v[g] = perm(t0, t1, 0x5410);
        v[g + 2] = perm(t0, t1, 0x7632);
        v[g + 4] = perm(t2, t3, 0x5410);
        v[g + 6] = perm(t2, t3, 0x7632);
    }
    // Now word index (bits 2..0) = (j1 j0 j2), in-word position (4..0) = (j4 j3 b2 b1 b0).
KESTREL_UNROLL
    for (int k = 0; k < 8; k += 2) delta_swap(v[k], v[k + 1], 4, 0x0F0F0F0Fu);  // j2 <-> b2
KESTREL_UNROLL
    for (int k = 0; k < 4; ++k) delta_swap(v[k], v[k + 4], 2, 0x33333333u);      // j1 <-> b1
KESTREL_UNROLL
    for (int k = 0; k < 8; k = (k & 1) ? k + 3 : k + 1) delta_swap(v[k], v[k + 2], 1, 0x55555555u);  // j0 <-> b0
    // Word index = (b1 b0 b2), in-word position = (j4 .. j0).
KESTREL_UNROLL
    for (int b = 0; b < 8; ++b) planes[b] = v[4 * ((b >> 1) & 1) + 2 * (b & 1) + (b >> 2)];
}

/// Inverse of to_planes for one pixel: the value of pixel j.
KESTREL_HD int pixel_of(const u32 (&planes)[8], int j) {
    int v = 0;
KESTREL_UNROLL
    for (int b = 0; b < 8; ++b) v |= static_cast<int>((planes[b] >> j) & 1u) << b;
    return v;
}

/// Per-centre thresholds (see the header comment) from the centres' planes.
KESTREL_HD void thresholds(const u32 (&c)[8], int t, u32 (&kb)[8], u32 (&kd)[8]) {
    u32 carry = 0, borrow_free = ~0u;  // c + t; c + (255 - t) + 1 = c - t + 256
    u32 sum[8], diff[8];
KESTREL_UNROLL
    for (int b = 0; b < 8; ++b) {
        const u32 tb = ((t >> b) & 1) ? ~0u : 0u;
        sum[b] = c[b] ^ tb ^ carry;
        carry = maj(c[b], tb, carry);
        diff[b] = c[b] ^ ~tb ^ borrow_free;
        borrow_free = maj(c[b], ~tb, borrow_free);
    }
    // carry: c + t >= 256 (kb = 0); else kb = ~(c + t). borrow_free: c >= t (kd = c - t), else kd = 0.
KESTREL_UNROLL
    for (int b = 0; b < 8; ++b) {
        kb[b] = ~(sum[b] | carry);
        kd[b] = diff[b] & borrow_free;
    }
}

/// Bit j: pixel j of p is brighter than its centre (p > c + t).
KESTREL_HD u32 brighter(const u32 (&p)[8], const u32 (&kb)[8]) {
    u32 cy = p[0] & kb[0];
KESTREL_UNROLL
    for (int b = 1; b < 8; ++b) cy = maj(p[b], kb[b], cy);
    return cy;
}

/// Bit j: pixel j of p is darker than its centre (p < c - t).
KESTREL_HD u32 darker(const u32 (&p)[8], const u32 (&kd)[8]) {
    u32 cy = kd[0] & ~p[0];
KESTREL_UNROLL
    for (int b = 1; b < 8; ++b) cy = maj(kd[b], ~p[b], cy);
    return cy;
}

/// Bit j: centre j has a circular run of at least L (1..17; 17: none) set among m[0..15].
/// A[i] = the AND of m over the window of the lengths taken so far ending at point i.
KESTREL_HD u32 run_at_least(const u32 (&m)[16], int L) {
    if (L > 16) return 0u;
    u32 w2[16], w4[16], w8[16], a[16];
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) w2[i] = m[i] & m[(i + 15) & 15];
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) w4[i] = w2[i] & w2[(i + 14) & 15];
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) w8[i] = w4[i] & w4[(i + 12) & 15];
    if (L == 16) {
        u32 all = ~0u;
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) all &= m[i];
        return all;
    }
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) a[i] = (L & 8) ? w8[i] : ~0u;
    if (L & 4) {
        u32 n[16];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) n[i] = a[(i + 12) & 15] & w4[i];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) a[i] = n[i];
    }
    if (L & 2) {
        u32 n[16];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) n[i] = a[(i + 14) & 15] & w2[i];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) a[i] = n[i];
    }
    if (L & 1) {
        u32 n[16];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) n[i] = a[(i + 15) & 15] & m[i];
KESTREL_UNROLL
        for (int i = 0; i < 16; ++i) a[i] = n[i];
    }
    u32 any = 0;
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) any |= a[i];
    return any;
}

/// Bit j: arc_min <= longest circular run of centre j in m <= arc_max (detail::arc_in_bounds).
KESTREL_HD u32 arc_in_bounds(const u32 (&m)[16], int arc_min, int arc_max) {
    return run_at_least(m, arc_min) & ~run_at_least(m, arc_max + 1);
}

/// arc_in_bounds for arc_min = 9, arc_max = 16 (the default), with the window lengths fixed: a run of 9 is a
/// window of 8 ending at i - 1 and point i.
KESTREL_HD u32 arc_9_16(const u32 (&m)[16]) {
    u32 w2[16], w4[16], any = 0;
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) w2[i] = m[i] & m[(i + 15) & 15];
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) w4[i] = w2[i] & w2[(i + 14) & 15];
KESTREL_UNROLL
    for (int i = 0; i < 16; ++i) any |= w4[(i + 15) & 15] & w4[(i + 11) & 15] & m[i];
    return any;
}

/// The 32 centres of one segment: corner bits (bright or dark arc in bounds) from the planes of the seven
/// circle rows. rows.load(r, planes) fills planes[s][b] of row (centre row - 3 + r), segment s = 0 (left
/// neighbour), 1 (the centres'), 2 (right neighbour), plane b; rows are loaded one at a time (r = 3 first,
/// for the thresholds), so the kernel holds one row of planes at once.
/// kArc9: arc_min = 9 and arc_max = 16 (arc_9_16), else the bounds given.
template <bool kArc9 = false, class Rows>
KESTREL_HD u32 segment_corners(const Rows& rows, int t, int arc_min, int arc_max) {
    u32 kb[8], kd[8];
    u32 bright[16], dark[16];
    {
        u32 centre[3][8];
        rows.load(3, centre);
        thresholds(centre[1], t, kb, kd);
    }
KESTREL_UNROLL
    for (int r = 0; r < 7; ++r) {
        u32 row[3][8];
        rows.load(r, row);
KESTREL_UNROLL
        for (int i = 0; i < detail::kCircleSize; ++i) {
            if (3 + detail::circle_dy(i) != r) continue;  // compile-time after unrolling
            const int dx = detail::circle_dx(i);
            u32 p[8];
KESTREL_UNROLL
            for (int b = 0; b < 8; ++b)
                p[b] = dx == 0 ? row[1][b] : dx > 0 ? shift_right(row[1][b], row[2][b], dx) : shift_left(row[0][b], row[1][b], -dx);
            bright[i] = brighter(p, kb);
            dark[i] = darker(p, kd);
        }
    }
    if (kArc9) return arc_9_16(bright) | arc_9_16(dark);
    return arc_in_bounds(bright, arc_min, arc_max) | arc_in_bounds(dark, arc_min, arc_max);
}

}  // namespace kestrel::kernels::bits
