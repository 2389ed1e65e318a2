// The ORB rules (orientation by intensity centroid, the 7x7 Gaussian smoothing, steered rBRIEF) and the
// Hamming matcher's rules: one definition shared by the CPU reference (src/features/orb_cpu.cpp,
// src/features/matcher_cpu.cpp) and the kernels (kernels/features/orb.cu, kernels/features/matcher.cu).
//
// Orientation (Rublee et al., "ORB: an efficient alternative to SIFT or SURF", ICCV 2011; Rosin's
// intensity centroid): on the keypoint's level, over the disc of radius 15 given by orb_umax (row v spans
// u in [-umax(|v|), umax(|v|)]), the integer moments m10 = sum u I, m01 = sum v I; the angle, in degrees
// in [0, 360] (360 only where 360 - a rounds up, as in OpenCV), is orb_atan2_deg(m01, m10). Pixels outside the level are clamped to its border.
//
// atan2 rule: a 7th-order odd polynomial of the ratio of the smaller to the larger |component| (the
// classic minimax fit of atan on [0, 1] that OpenCV's fastAtan2 also uses, in degrees), evaluated in float
// with explicit round-to-nearest operations (fmul/fadd/fdiv below), then mapped to the octant. Error
// below 0.01 degree; the same bits on both backends.
//
// Smoothing: the 7x7 Gaussian of sigma 2 that cv::ORB applies to its pyramid levels, in float: taps
// orb_blur_tap (cv::getGaussianKernel's float values), rows first (orb_blur_row), then columns
// (orb_blur_col), rounded half to even; borders reflected without repeating the edge pixel
// (gfedcb|abcdefgh|gfedcba). cv::ORB calls GaussianBlur on a region of its pyramid buffer, where OpenCV
// runs its float separable filter (not the fixed-point path it takes for a whole 8-bit image); this rule
// gives the same pixel on all but a few per million (its summation order inside SIMD registers;
// tests/features/test_orb_opencv.cpp).
//
// Descriptor (steered BRIEF with ORB's learned pairs): for pair i (points p, q of orb_pattern), the
// point rotated by the keypoint's angle is (x a - y b, x b + y a), a = cos, b = sin of the angle
// (orb_cos_sin_deg: polynomial in float, exact range reduction in degrees), rounded half to even to
// integer offsets; bit i = I(p') < I(q') on the smoothed level (clamped to its border). Bit i is bit
// (i % 8) of byte i / 8, so bytes are laid out as in cv::ORB's descriptors.
//
// Matcher: integer Hamming distances; top-2 per query under the order (distance, index) ascending (the
// lower index wins a tie); ratio test d1 < ratio * d2 in float (d2 = 257, one more than any distance,
// when there is no second candidate).
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/orb_types.hpp"

namespace kestrel::detail::orb {

// ---- exact float operations: fmul, fadd, fsub, fdiv of detail/exact_float.hpp --------------------
/// Round half to even (cvRound): the current rounding mode on the host (round to nearest by default),
/// __float2int_rn on the device.
KESTREL_HD int round_even(float x) {
#if defined(__CUDA_ARCH__)
    return __float2int_rn(x);
#else
    return static_cast<int>(std::nearbyint(x));
#endif
}

// ---- orientation ---------------------------------------------------------------------------------
constexpr int kOrbHalfPatch = 15;  ///< radius of the orientation disc (ORB's HALF_PATCH_SIZE)
constexpr int kOrbBlurRadius = 3;  ///< the 7x7 smoothing
constexpr int kOrbPatternReach = 19;  ///< |rounded steered offset| <= 19 (|pattern point| <= 13 sqrt 2)

/// Half width of the disc's row |v|, v = 0..15: the symmetric discrete circle of radius 15
/// (umax[v] = round(sqrt(225 - v^2)) for v <= 11, the rest mirrored so that the disc is symmetric in u and
/// v), the disc of cv::ORB's ICAngles.
KESTREL_HD int orb_umax(int v) {
    constexpr int t[kOrbHalfPatch + 1] = {15, 15, 15, 15, 14, 14, 14, 13, 13, 12, 11, 10, 9, 8, 6, 3};
    return t[v];
}

/// Angle in degrees, [0, 360], of the vector (x, y) = (m10, m01).
KESTREL_HD float orb_atan2_deg(float y, float x) {
    // The coefficients of atan in radians times 180 / pi, each product rounded to float (as OpenCV forms them).
    constexpr float kDeg = static_cast<float>(57.29577951308232);
    constexpr float p1 = 0.9997878412794807f * kDeg;
    constexpr float p3 = -0.3258083974640975f * kDeg;
    constexpr float p5 = 0.1555786518463281f * kDeg;
    constexpr float p7 = -0.04432655554792128f * kDeg;
    constexpr float eps = 2.220446049250313e-16f;  // keeps 0 / 0 finite (the angle of (0, 0) is 0)
    const float ax = fabsf(x), ay = fabsf(y);
    const bool x_major = ax >= ay;
    const float c = x_major ? fdiv(ay, fadd(ax, eps)) : fdiv(ax, fadd(ay, eps));
    const float c2 = fmul(c, c);
    float a = fmul(fadd(fmul(fadd(fmul(fadd(fmul(p7, c2), p5), c2), p3), c2), p1), c);
    if (!x_major) a = fsub(90.0f, a);
    if (x < 0.0f) a = fsub(180.0f, a);
    if (y < 0.0f) a = fsub(360.0f, a);
    return a;
}

/// Clamp an index into [0, n - 1].
KESTREL_HD int clampi(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// ---- smoothing -------------------------------------------------------------------------------------
/// Tap k = 0..6 (offset k - 3) of the 7-tap Gaussian of sigma 2: the float values of
/// cv::getGaussianKernel(7, 2, CV_32F) (exp(-x^2 / 8) normalised, rounded to float).
KESTREL_HD float orb_blur_tap(int k) {
    constexpr float t[7] = {0x1.1f5f62p-4f, 0x1.0c70fcp-3f, 0x1.869472p-3f, 0x1.ba95cp-3f,
                            0x1.869472p-3f, 0x1.0c70fcp-3f, 0x1.1f5f62p-4f};
    return t[k];
}
/// Row pass: p[0..6] the pixels at offsets -3..3; the products summed left to right in float.
KESTREL_HD float orb_blur_row(const int* p) {
    float h = 0.0f;
    KESTREL_UNROLL
    for (int k = 0; k < 7; ++k) h = fadd(h, fmul(orb_blur_tap(k), static_cast<float>(p[k])));
    return h;
}
/// Column pass over the row sums h[0..6] (offsets -3..3): centre first, then the symmetric pairs from
/// the inside out; rounded half to even and saturated to 8 bits.
KESTREL_HD std::uint8_t orb_blur_col(const float* h) {
    float v = fmul(orb_blur_tap(3), h[3]);
    v = fadd(v, fmul(orb_blur_tap(2), fadd(h[2], h[4])));
    v = fadd(v, fmul(orb_blur_tap(1), fadd(h[1], h[5])));
    v = fadd(v, fmul(orb_blur_tap(0), fadd(h[0], h[6])));
    const int r = round_even(v);
    return static_cast<std::uint8_t>(r < 0 ? 0 : (r > 255 ? 255 : r));
}
/// Reflect-101 index into [0, n - 1] (gfedcb|abcdefgh|gfedcba; the loop makes it total).
KESTREL_HD int reflect101(int i, int n) {
    if (n == 1) return 0;
    while (i < 0 || i >= n) {
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
    }
    return i;
}

// ---- steered BRIEF ---------------------------------------------------------------------------------
/// ORB's learned sampling pattern (bit_pattern_31_): 256 pairs (x1, y1, x2, y2), pair i gives bit i.
/// Data published with ORB by Rublee, Rabaud, Konolige and Bradski (ICCV 2011) and distributed in
/// OpenCV's modules/features2d/src/orb.cpp (BSD licence); the values are taken from there unchanged.
KESTREL_HD int orb_pattern(int i) {
    constexpr signed char t[kOrbDescriptorBits * 4] = {
    8, -3, 9, 5, 4, 2, 7, -12, -11, 9, -8, 2, 7, -12, 12, -13,
    2, -13, 2, 12, 1, -7, 1, 6, -2, -10, -2, -4, -13, -13, -11, -8,
    -13, -3, -12, -9, 10, 4, 11, 9, -13, -8, -8, -9, -11, 7, -9, 12,
    7, 7, 12, 6, -4, -5, -3, 0, -13, 2, -12, -3, -9, 0, -7, 5,
    12, -6, 12, -1, -3, 6, -2, 12, -6, -13, -4, -8, 11, -13, 12, -8,
    4, 7, 5, 1, 5, -3, 10, -3, 3, -7, 6, 12, -8, -7, -6, -2,
    -2, 11, -1, -10, -13, 12, -8, 10, -7, 3, -5, -3, -4, 2, -3, 7,
    -10, -12, -6, 11, 5, -12, 6, -7, 5, -6, 7, -1, 1, 0, 4, -5,
    9, 11, 11, -13, 4, 7, 4, 12, 2, -1, 4, 4, -4, -12, -2, 7,
    -8, -5, -7, -10, 4, 11, 9, 12, 0, -8, 1, -13, -13, -2, -8, 2,
    -3, -2, -2, 3, -6, 9, -4, -9, 8, 12, 10, 7, 0, 9, 1, 3,
    7, -5, 11, -10, -13, -6, -11, 0, 10, 7, 12, 1, -6, -3, -6, 12,
    10, -9, 12, -4, -13, 8, -8, -12, -13, 0, -8, -4, 3, 3, 7, 8,
    5, 7, 10, -7, -1, 7, 1, -12, 3, -10, 5, 6, 2, -4, 3, -10,
    -13, 0, -13, 5, -13, -7, -12, 12, -13, 3, -11, 8, -7, 12, -4, 7,
    6, -10, 12, 8, -9, -1, -7, -6, -2, -5, 0, 12, -12, 5, -7, 5,
    3, -10, 8, -13, -7, -7, -4, 5, -3, -2, -1, -7, 2, 9, 5, -11,
    -11, -13, -5, -13, -1, 6, 0, -1, 5, -3, 5, 2, -4, -13, -4, 12,
    -9, -6, -9, 6, -12, -10, -8, -4, 10, 2, 12, -3, 7, 12, 12, 12,
    -7, -13, -6, 5, -4, 9, -3, 4, 7, -1, 12, 2, -7, 6, -5, 1,
    -13, 11, -12, 5, -3, 7, -2, -6, 7, -8, 12, -7, -13, -7, -11, -12,
    1, -3, 12, 12, 2, -6, 3, 0, -4, 3, -2, -13, -1, -13, 1, 9,
    7, 1, 8, -6, 1, -1, 3, 12, 9, 1, 12, 6, -1, -9, -1, 3,
    -13, -13, -10, 5, 7, 7, 10, 12, 12, -5, 12, 9, 6, 3, 7, 11,
    5, -13, 6, 10, 2, -12, 2, 3, 3, 8, 4, -6, 2, 6, 12, -13,
    9, -12, 10, 3, -8, 4, -7, 9, -11, 12, -4, -6, 1, 12, 2, -8,
    6, -9, 7, -4, 2, 3, 3, -2, 6, 3, 11, 0, 3, -3, 8, -8,
    7, 8, 9, 3, -11, -5, -6, -4, -10, 11, -5, 10, -5, -8, -3, 12,
    -10, 5, -9, 0, 8, -1, 12, -6, 4, -6, 6, -11, -10, 12, -8, 7,
    4, -2, 6, 7, -2, 0, -2, 12, -5, -8, -5, 2, 7, -6, 10, 12,
    -9, -13, -8, -8, -5, -13, -5, -2, 8, -8, 9, -13, -9, -11, -9, 0,
    1, -8, 1, -2, 7, -4, 9, 1, -2, 1, -1, -4, 11, -6, 12, -11,
    -12, -9, -6, 4, 3, 7, 7, 12, 5, 5, 10, 8, 0, -4, 2, 8,
    -9, 12, -5, -13, 0, 7, 2, 12, -1, 2, 1, 7, 5, 11, 7, -9,
    3, 5, 6, -8, -13, -4, -8, 9, -5, 9, -3, -3, -4, -7, -3, -12,
    6, 5, 8, 0, -7, 6, -6, 12, -13, 6, -5, -2, 1, -10, 3, 10,
    4, 1, 8, -4, -2, -2, 2, -13, 2, -12, 12, 12, -2, -13, 0, -6,
    4, 1, 9, 3, -6, -10, -3, -5, -3, -13, -1, 1, 7, 5, 12, -11,
    4, -2, 5, -7, -13, 9, -9, -5, 7, 1, 8, 6, 7, -8, 7, 6,
    -7, -4, -7, 1, -8, 11, -7, -8, -13, 6, -12, -8, 2, 4, 3, 9,
    10, -5, 12, 3, -6, -5, -6, 7, 8, -3, 9, -8, 2, -12, 2, 8,
    -11, -2, -10, 3, -12, -13, -7, -9, -11, 0, -10, -5, 5, -3, 11, 8,
    -2, -13, -1, 12, -1, -8, 0, 9, -13, -11, -12, -5, -10, -2, -10, 11,
    -3, 9, -2, -13, 2, -3, 3, 2, -9, -13, -4, 0, -4, 6, -3, -10,
    -4, 12, -2, -7, -6, -11, -4, 9, 6, -3, 6, 11, -13, 11, -5, 5,
    11, 11, 12, 6, 7, -5, 12, -2, -1, 12, 0, 7, -4, -8, -3, -2,
    -7, 1, -6, 7, -13, -12, -8, -13, -7, -2, -6, -8, -8, 5, -6, -9,
    -5, -1, -4, 5, -13, 7, -8, 10, 1, 5, 5, -13, 1, 0, 10, -13,
    9, 12, 10, -1, 5, -8, 10, -9, -1, 11, 1, -13, -9, -3, -6, 2,
    -1, -10, 1, 12, -13, 1, -8, -10, 8, -11, 10, -6, 2, -13, 3, -6,
    7, -13, 12, -9, -10, -10, -5, -7, -10, -8, -8, -13, 4, -6, 8, 5,
    3, 12, 8, -13, -4, 2, -3, -3, 5, -13, 10, -12, 4, -13, 5, -1,
    -9, 9, -4, 3, 0, 3, 3, -9, -12, 1, -6, 1, 3, 2, 4, -8,
    -10, -10, -10, 9, 8, -13, 12, 12, -8, -12, -6, -5, 2, 2, 3, 7,
    10, 6, 11, -8, 6, 8, 8, -12, -7, 10, -6, 5, -3, -9, -3, 9,
    -1, -13, -1, 5, -3, -7, -3, 4, -8, -2, -8, 3, 4, 2, 12, 12,
    2, -5, 3, 11, 6, -9, 11, -13, 3, -1, 7, 12, 11, -1, 12, 4,
    -3, 0, -3, 6, 4, -11, 4, 12, 2, -4, 2, 1, -10, -6, -8, 1,
    -13, 7, -11, 1, -13, 12, -11, -13, 6, 0, 11, -13, 0, -1, 1, 4,
    -13, 3, -9, -2, -9, 8, -6, -3, -13, -6, -8, -2, 5, -9, 8, 10,
    2, 7, 3, -9, -1, -6, -1, -1, 9, 5, 11, -2, 11, -3, 12, -8,
    3, 0, 3, 5, -1, 4, 0, 10, 3, -6, 4, 5, -13, 0, -10, 5,
    5, 8, 12, 11, 8, 9, 9, -6, 7, -4, 8, -12, -10, 4, -10, 9,
    7, 3, 12, 4, 9, -7, 10, -2, 7, 0, 12, -2, -1, -6, 0, -11,
    };
    return t[i];
}

/// cos and sin of an angle in degrees (any finite value; ORB angles are in [0, 360]): exact reduction to
/// [0, 45] degrees by quadrant and mirror, then Taylor polynomials of degree 10 / 9 in float (error
/// below 1e-7 relative).
KESTREL_HD void orb_cos_sin_deg(float deg, float& c, float& s) {
    // Reduce to [0, 360): ORB angles already are (but 360); others are wrapped in float.
    if (!(deg >= 0.0f && deg < 360.0f)) {
        deg = fsub(deg, fmul(360.0f, floorf(fdiv(deg, 360.0f))));
        if (!(deg >= 0.0f && deg < 360.0f)) deg = 0.0f;
    }
    int q = static_cast<int>(fdiv(deg, 90.0f));                // quadrant
    float r = fsub(deg, fmul(90.0f, static_cast<float>(q)));  // exact, in [0, 90) ...
    if (r < 0.0f) {                                           // ... unless the division rounded up
        q -= 1;
        r = fadd(r, 90.0f);
    }
    q &= 3;
    const bool mirror = r > 45.0f;
    if (mirror) r = fsub(90.0f, r);                           // exact
    constexpr float kRad = 0.0174532925199432957692f;         // pi / 180
    const float t = fmul(r, kRad);
    const float t2 = fmul(t, t);
    // sin t = t (1 - t2/6 (1 - t2/20 (1 - t2/42 (1 - t2/72))))
    float ps = fsub(1.0f, fmul(t2, 1.0f / 72.0f));
    ps = fsub(1.0f, fmul(fmul(t2, 1.0f / 42.0f), ps));
    ps = fsub(1.0f, fmul(fmul(t2, 1.0f / 20.0f), ps));
    ps = fsub(1.0f, fmul(fmul(t2, 1.0f / 6.0f), ps));
    const float sn = fmul(t, ps);
    // cos t = 1 - t2/2 (1 - t2/12 (1 - t2/30 (1 - t2/56 (1 - t2/90))))
    float pc = fsub(1.0f, fmul(t2, 1.0f / 90.0f));
    pc = fsub(1.0f, fmul(fmul(t2, 1.0f / 56.0f), pc));
    pc = fsub(1.0f, fmul(fmul(t2, 1.0f / 30.0f), pc));
    pc = fsub(1.0f, fmul(fmul(t2, 1.0f / 12.0f), pc));
    pc = fsub(1.0f, fmul(fmul(t2, 0.5f), pc));
    float cq = mirror ? sn : pc;  // cos and sin of the angle within the quadrant
    float sq = mirror ? pc : sn;
    switch (q) {
        case 0: c = cq; s = sq; break;
        case 1: c = -sq; s = cq; break;
        case 2: c = -cq; s = -sq; break;
        default: c = sq; s = -cq; break;
    }
}

/// Rounded offset of the pattern point (px, py) steered by (c, s).
KESTREL_HD void orb_steer_point(int px, int py, float c, float s, int& dx, int& dy) {
    const float x = static_cast<float>(px), y = static_cast<float>(py);
    dx = round_even(fsub(fmul(x, c), fmul(y, s)));
    dy = round_even(fadd(fmul(x, s), fmul(y, c)));
}
/// Rounded offset of pattern point j (0..511) steered by (c, s). (The kernel reads the same table from a
/// device copy staged in shared memory and calls orb_steer_point: a table indexed at run time inside a
/// device function would be rebuilt in local memory at every call.)
KESTREL_HD void orb_steer(int j, float c, float s, int& dx, int& dy) {
    orb_steer_point(orb_pattern(2 * j), orb_pattern(2 * j + 1), c, s, dx, dy);
}

/// Level coordinate of a level-0 coordinate: round_even(x / s) (s = level_scale of the level; exact for
/// the detector's keypoints, which are integer level positions times s).
KESTREL_HD int orb_level_coord(float x, float s) { return round_even(fdiv(x, s)); }

// ---- matcher ----------------------------------------------------------------------------------------
KESTREL_HD int popcount32(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
    return __popc(v);
#else
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return static_cast<int>((((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24);
#endif
}
/// Words of a descriptor (little-endian bytes 4w..4w+3).
KESTREL_HD std::uint32_t desc_word(const OrbDescriptor& d, int w) {
    return static_cast<std::uint32_t>(d.bytes[4 * w]) | (static_cast<std::uint32_t>(d.bytes[4 * w + 1]) << 8) |
           (static_cast<std::uint32_t>(d.bytes[4 * w + 2]) << 16) | (static_cast<std::uint32_t>(d.bytes[4 * w + 3]) << 24);
}
KESTREL_HD int hamming(const OrbDescriptor& a, const OrbDescriptor& b) {
    int d = 0;
    KESTREL_UNROLL
    for (int w = 0; w < kOrbDescriptorBytes / 4; ++w) d += popcount32(desc_word(a, w) ^ desc_word(b, w));
    return d;
}

/// Top-2 candidates under the order (distance, index) ascending; index -1 = none.
struct Top2 {
    int d1 = kNoDistance, i1 = -1, d2 = kNoDistance, i2 = -1;
    static constexpr int kNoDistance = kOrbDescriptorBits + 1;
};
KESTREL_HD bool before(int da, int ia, int db, int ib) { return da < db || (da == db && ia < ib); }
KESTREL_HD void top2_push(Top2& t, int d, int i) {
    if (before(d, i, t.d1, t.i1 < 0 ? 0x7fffffff : t.i1)) {
        t.d2 = t.d1; t.i2 = t.i1; t.d1 = d; t.i1 = i;
    } else if (before(d, i, t.d2, t.i2 < 0 ? 0x7fffffff : t.i2)) {
        t.d2 = d; t.i2 = i;
    }
}
/// Merge of two top-2 lists (associative and commutative: the result is the top 2 of the union).
KESTREL_HD Top2 top2_merge(Top2 a, const Top2& b) {
    if (b.i1 >= 0) top2_push(a, b.d1, b.i1);
    if (b.i2 >= 0) top2_push(a, b.d2, b.i2);
    return a;
}

/// May train point t be a candidate of a query predicted at q? (radius: |t - q|^2 <= r^2 in float, 0 =
/// off; band: |t.y - q.y| <= band, < 0 = off).
KESTREL_HD bool candidate(float qx, float qy, float tx, float ty, float radius, float band) {
    bool ok = true;
    if (radius > 0.0f) {
        const float dx = fsub(tx, qx), dy = fsub(ty, qy);
        ok = fadd(fmul(dx, dx), fmul(dy, dy)) <= fmul(radius, radius);
    }
    if (band >= 0.0f) ok = ok && fabsf(fsub(ty, qy)) <= band;
    return ok;
}

/// The ratio test: d1 < ratio * d2 (d2 = 257 when there is no second candidate); ratio >= 1 disables it.
KESTREL_HD bool ratio_ok(int d1, int d2, float ratio) {
    if (ratio >= 1.0f) return true;
    return static_cast<float>(d1) < fmul(ratio, static_cast<float>(d2));
}

/// The train index a query keeps (-1: none): a candidate exists, d1 <= max_distance, the ratio test
/// passes and, with the cross-check, the query is its train's best (back_best: that train's best query).
KESTREL_HD int accept_match(const Top2& t, float ratio, int max_distance, bool cross_check, int back_best, int query) {
    if (t.i1 < 0 || t.d1 > max_distance || !ratio_ok(t.d1, t.d2, ratio)) return -1;
    if (cross_check && back_best != query) return -1;
    return t.i1;
}

}  // namespace kestrel::detail::orb
