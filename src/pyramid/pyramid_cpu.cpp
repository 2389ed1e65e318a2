// CPU reference of the pyramid: the definition kernels/pyramid/pyramid.cu must match bit for bit.
// The rule (detail/pyramid_rules.hpp) per pixel, restructured for speed: the source taps of each column
// and row are computed once per level, the factor-2 case (every tap the 2x2 average, checked on the tap
// tables) runs as a vectorizable loop, other factors blend each output row's two source rows first (a
// vectorizable pass over the source columns) and then pairs of those columns, and rows are spread over the
// pool's threads.
#include "pyramid_cpu.hpp"

#include <cstring>

namespace kestrel {
namespace detail {
namespace {

void fill_taps(std::vector<Tap>& taps, int n, std::int32_t sq, int src_size) {
    taps.resize(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) taps[static_cast<std::size_t>(i)] = source_tap(i, sq, src_size);
}

/// True when every tap is the pair (2i, 2i + 1) at weight 1/2, where blend() is exactly average4().
bool taps_are_halving(const std::vector<Tap>& taps) {
    for (std::size_t i = 0; i < taps.size(); ++i) {
        const Tap& t = taps[i];
        if (t.i0 != static_cast<int>(2 * i) || t.i1 != t.i0 + 1 || t.w1 != 1 << (kResampleFracBits - 1)) return false;
    }
    return true;
}

void halve_row(const std::uint8_t* __restrict a, const std::uint8_t* __restrict b, std::uint8_t* __restrict out, int w) {
    for (int x = 0; x < w; ++x)
        out[x] = static_cast<std::uint8_t>((static_cast<unsigned>(a[2 * x]) + a[2 * x + 1] + b[2 * x] + b[2 * x + 1] + 2u) >> 2);
}

// x86-64 with GCC or Clang: the blended rows also get an AVX2 build (8 words per vector; integers, so the same
// bytes), chosen at run time where the CPU has it.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KESTREL_PYR_AVX2 1
#define KESTREL_PYR_INLINE inline __attribute__((always_inline))
#else
#define KESTREL_PYR_AVX2 0
#define KESTREL_PYR_INLINE inline
#endif

/// blend() of a whole output row, its terms regrouped: with wx0 = 2048 - wx1, wy0 = 2048 - wy1,
///   (wy0 (a wx0 + b wx1) + wy1 (c wx0 + d wx1) + 2^21) >> 22 = (wx0 V(i0) + wx1 V(i1) + 2^21) >> 22,
///   V(i) = wy0 r0[i] + wy1 r1[i]  (a, b = r0[i0], r0[i1]; c, d = r1[i0], r1[i1]),
/// the same integers (no sum exceeds 255 * 2^22 < 2^32), so the same bytes. V of the src_w source columns is
/// one vectorizable pass; v holds src_w + 1 words. Column x reads V(i0) and V(i0 + 1): i1 = i0 + 1 except
/// where the tap is clamped to the last column, and there wx1 = 0 (the source position is the last column
/// exactly), so V(src_w) = 0 stands in for V(i1) and the product is 0 either way.
KESTREL_PYR_INLINE void blend_row_body(const std::uint8_t* __restrict r0, const std::uint8_t* __restrict r1,
                                       const std::int32_t* __restrict i0, const std::int32_t* __restrict w1, int wy1,
                                       std::uint8_t* __restrict out, int w, std::uint32_t* __restrict v, int src_w) {
    const std::uint32_t wy0 = 2048u - static_cast<std::uint32_t>(wy1), wy = static_cast<std::uint32_t>(wy1);
    for (int i = 0; i < src_w; ++i) v[i] = r0[i] * wy0 + r1[i] * wy;
    v[src_w] = 0;
    for (int x = 0; x < w; ++x) {
        const std::uint32_t wx = static_cast<std::uint32_t>(w1[x]);
        out[x] = static_cast<std::uint8_t>((v[i0[x]] * (2048u - wx) + v[i0[x] + 1] * wx + (1u << 21)) >> 22);
    }
}

using BlendRowFn = void (*)(const std::uint8_t*, const std::uint8_t*, const std::int32_t*, const std::int32_t*, int,
                            std::uint8_t*, int, std::uint32_t*, int);
void blend_row_generic(const std::uint8_t* r0, const std::uint8_t* r1, const std::int32_t* i0, const std::int32_t* w1,
                       int wy1, std::uint8_t* out, int w, std::uint32_t* v, int src_w) {
    blend_row_body(r0, r1, i0, w1, wy1, out, w, v, src_w);
}
#if KESTREL_PYR_AVX2
__attribute__((target("avx2"))) void blend_row_avx2(const std::uint8_t* r0, const std::uint8_t* r1,
                                                    const std::int32_t* i0, const std::int32_t* w1, int wy1,
                                                    std::uint8_t* out, int w, std::uint32_t* v, int src_w) {
    blend_row_body(r0, r1, i0, w1, wy1, out, w, v, src_w);
}
#endif
BlendRowFn blend_row_for_this_cpu() {
#if KESTREL_PYR_AVX2
    if (__builtin_cpu_supports("avx2")) return blend_row_avx2;
#endif
    return blend_row_generic;
}

}  // namespace

void build_pyramid_into(HostView image, const PyramidConfig& cfg, std::vector<HostImage>& out, PyramidScratch& scratch,
                        ThreadPool* pool) {
    const auto sizes = pyramid_sizes(image.width, image.height, cfg);
    const std::int32_t sq = scale_q16(cfg.scale);
    out.resize(sizes.size());
    for (std::size_t k = 0; k < sizes.size(); ++k)
        if (out[k].width() != sizes[k].width || out[k].height() != sizes[k].height)
            out[k] = HostImage(sizes[k].width, sizes[k].height);
    for (int y = 0; y < image.height; ++y)
        std::memcpy(out[0].data() + static_cast<std::size_t>(y) * out[0].pitch(), image.row(y),
                    static_cast<std::size_t>(image.width));
    for (std::size_t k = 1; k < sizes.size(); ++k) {
        const HostImage& src = out[k - 1];
        HostImage& dst = out[k];
        fill_taps(scratch.tx, dst.width(), sq, src.width());
        fill_taps(scratch.ty, dst.height(), sq, src.height());
        const bool halving = taps_are_halving(scratch.tx) && taps_are_halving(scratch.ty);
        const int rows = dst.height();
        const int parts = pool ? pool->size() * 4 : 1;
        const std::size_t vlen = static_cast<std::size_t>(src.width()) + 1;
        BlendRowFn blend_row = nullptr;
        if (!halving) {
            scratch.columns.resize(static_cast<std::size_t>(parts) * vlen);
            scratch.i0.resize(scratch.tx.size());
            scratch.w1.resize(scratch.tx.size());
            for (std::size_t x = 0; x < scratch.tx.size(); ++x) {
                scratch.i0[x] = scratch.tx[x].i0;
                scratch.w1[x] = scratch.tx[x].w1;
            }
            blend_row = blend_row_for_this_cpu();
        }
        auto task = [&](int p, int) {
            std::uint32_t* v = halving ? nullptr : scratch.columns.data() + static_cast<std::size_t>(p) * vlen;
            for (int y = split_begin(rows, parts, p), ye = split_begin(rows, parts, p + 1); y < ye; ++y) {
                const Tap ty = scratch.ty[static_cast<std::size_t>(y)];
                const std::uint8_t* r0 = src.data() + static_cast<std::size_t>(ty.i0) * src.pitch();
                const std::uint8_t* r1 = src.data() + static_cast<std::size_t>(ty.i1) * src.pitch();
                std::uint8_t* o = dst.data() + static_cast<std::size_t>(y) * dst.pitch();
                if (halving)
                    halve_row(r0, r1, o, dst.width());
                else
                    blend_row(r0, r1, scratch.i0.data(), scratch.w1.data(), ty.w1, o, dst.width(), v, src.width());
            }
        };
        if (pool)
            pool->run(parts, task);
        else
            task(0, 0);
    }
}

}  // namespace detail

std::vector<HostImage> build_pyramid_cpu(HostView image, const PyramidConfig& cfg) {
    validate_view("build_pyramid_cpu", "image", image);
    std::vector<HostImage> out;
    detail::PyramidScratch scratch;
    detail::build_pyramid_into(image, cfg, out, scratch, nullptr);
    return out;
}

}  // namespace kestrel
