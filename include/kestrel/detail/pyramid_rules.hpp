// The pyramid's resampling rule, one definition shared by the CPU reference (src/pyramid/pyramid_cpu.cpp)
// and the CUDA kernels (kernels/pyramid/pyramid.cu). Integer arithmetic only, so both agree bit for bit.
//
// Scale factor s in (1, 2] is held in Q16: S = round(s * 65536).
// Level size:     w_k = floor(w_{k-1} * 65536 / S)   (same for h); for s = 2 this is w_{k-1} / 2.
// Source centre:  sx  = ((2x + 1) * S - 65536) / 2    in Q16, i.e. (x + 0.5) * s - 0.5, clamped to
//                 [0, (w_{k-1} - 1) * 65536]; ix = sx >> 16, fx = (sx & 0xFFFF) >> 5 (11-bit weight).
// Value:          row(y) = I[y][ix] * (2048 - fx) + I[y][ix+1] * fx   (ix+1 clamped to w-1)
//                 out = (row(iy) * (2048 - fy) + row(iy+1) * fy + 2^21) >> 22.
// For s = 2 this is exactly the 2x2 average rounded half up: (a + b + c + d + 2) >> 2.
#pragma once
#include <cstdint>

#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kResampleFracBits = 11;  // interpolation weight bits

/// Q16 fixed-point scale factor of a float factor in (1, 2].
inline std::int32_t scale_q16(float s) { return static_cast<std::int32_t>(static_cast<double>(s) * 65536.0 + 0.5); }

/// Size of the next level.
KESTREL_HD int next_level_size(int prev, std::int32_t sq16) {
    return static_cast<int>((static_cast<std::int64_t>(prev) << 16) / sq16);
}

/// Source tap for output coordinate x: integer index and 11-bit fraction toward index + 1.
struct Tap {
    int i0, i1, w1;
};

KESTREL_HD Tap source_tap(int x, std::int32_t sq16, int src_size) {
    std::int64_t s = ((2 * static_cast<std::int64_t>(x) + 1) * sq16 - 65536) / 2;
    if (s < 0) s = 0;
    const std::int64_t smax = static_cast<std::int64_t>(src_size - 1) << 16;
    if (s > smax) s = smax;
    Tap t;
    t.i0 = static_cast<int>(s >> 16);
    t.w1 = static_cast<int>((s & 0xFFFF) >> (16 - kResampleFracBits));
    t.i1 = t.i0 + 1 < src_size ? t.i0 + 1 : src_size - 1;
    return t;
}

/// Bilinear blend of four 8-bit taps with 11-bit weights, rounded half up.
KESTREL_HD std::uint8_t blend(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d, int wx1, int wy1) {
    const std::uint32_t wx0 = 2048u - static_cast<std::uint32_t>(wx1), wy0 = 2048u - static_cast<std::uint32_t>(wy1);
    const std::uint32_t top = a * wx0 + b * static_cast<std::uint32_t>(wx1);
    const std::uint32_t bot = c * wx0 + d * static_cast<std::uint32_t>(wx1);
    return static_cast<std::uint8_t>((top * wy0 + bot * static_cast<std::uint32_t>(wy1) + (1u << 21)) >> 22);
}

/// 2x2 average rounded half up: the s = 2 case of blend().
KESTREL_HD std::uint8_t average4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
    return static_cast<std::uint8_t>((a + b + c + d + 2u) >> 2);
}

}  // namespace kestrel::detail
