// CPU reference of ORB: the smoothing, the intensity-centroid angle and the steered descriptor
// (include/kestrel/detail/orb_rules.hpp); the definition kernels/features/orb.cu matches bit for bit.
// The rules per pixel and per keypoint, restructured for speed (the straightforward form is the tests' oracle,
// tests/support/orb_oracle.hpp, and equals this bit for bit):
//   - smoothing: the row pass over a ring of 8 float rows (each source row once), the interior columns as
//     one vectorizable loop with the rule's products and sums in the rule's order, the 3 border columns on
//     each side through the rule's own functions; the column pass vectorizable the same way, its rounding
//     half to even done by adding and subtracting 2^23 (exact for the sums, which lie in [0, 2^23));
//   - angle: where the disc lies inside the level, the integer moments from row pointers, rows v and -v
//     together (integer sums: any order gives the same moments); elsewhere the rule's clamped reads;
//   - descriptor: the 512 pattern points steered in one vectorizable pass (products, difference and rounding
//     to integer of the rule, per point); where the farthest steered point (19 pixels) lies inside the level,
//     the 512 pixels read at their offsets and the 256 comparisons made 16 at a time; elsewhere clamped reads.
// orb_compute_cpu smooths each level once into reused memory (detail::OrbCpu) and reads the caller's pyramid.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/detail/validate.hpp"
#include "kestrel/orb.hpp"
#include "orb_internal.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kestrel {

namespace o = detail::orb;

namespace detail {
namespace {

// x86-64 with GCC or Clang: the smoothing's passes also get an AVX2 build (8 floats per vector instead of 4;
// the same IEEE operations per element, no contraction), chosen at run time where the CPU has it.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KESTREL_ORB_AVX2 1
#define KESTREL_ORB_INLINE inline __attribute__((always_inline))
#else
#define KESTREL_ORB_AVX2 0
#define KESTREL_ORB_INLINE inline
#endif

/// Row pass of the smoothing for the interior of a row: h[x] = orb_blur_row of f[x - 3 .. x + 3] for x in
/// [3, w - 3), f the row's pixels as floats. orb_blur_row starts from 0 + t0 p0, which is t0 p0 exactly (the
/// products are >= 0); then the sums left to right.
KESTREL_ORB_INLINE void blur_row_interior(const float* __restrict f, int w, float* __restrict h) {
    const float t0 = o::orb_blur_tap(0), t1 = o::orb_blur_tap(1), t2 = o::orb_blur_tap(2), t3 = o::orb_blur_tap(3),
                t4 = o::orb_blur_tap(4), t5 = o::orb_blur_tap(5), t6 = o::orb_blur_tap(6);
    for (int x = o::kOrbBlurRadius; x < w - o::kOrbBlurRadius; ++x) {
        float v = t0 * f[x - 3];
        v = v + t1 * f[x - 2];
        v = v + t2 * f[x - 1];
        v = v + t3 * f[x];
        v = v + t4 * f[x + 1];
        v = v + t5 * f[x + 2];
        v = v + t6 * f[x + 3];
        h[x] = v;
    }
}

/// Column pass: orb_blur_col of rows r[0..6] (offsets -3..3) for every x: the rule's products and sums in its
/// order, rounded half to even by adding and subtracting 2^23 (as nearbyint for v in [0, 2^23), in any
/// rounding mode; v >= 0: non-negative taps and pixels), saturated to 255.
KESTREL_ORB_INLINE void blur_col(const float* const* r, int w, std::uint8_t* __restrict out) {
    const float t0 = o::orb_blur_tap(0), t1 = o::orb_blur_tap(1), t2 = o::orb_blur_tap(2), t3 = o::orb_blur_tap(3);
    const float* __restrict h0 = r[0];
    const float* __restrict h1 = r[1];
    const float* __restrict h2 = r[2];
    const float* __restrict h3 = r[3];
    const float* __restrict h4 = r[4];
    const float* __restrict h5 = r[5];
    const float* __restrict h6 = r[6];
    constexpr float kRound = 8388608.0f;  // 2^23
    for (int x = 0; x < w; ++x) {
        float v = t3 * h3[x];
        v = v + t2 * (h2[x] + h4[x]);
        v = v + t1 * (h1[x] + h5[x]);
        v = v + t0 * (h0[x] + h6[x]);
        const int q = static_cast<int>((v + kRound) - kRound);
        out[x] = static_cast<std::uint8_t>(q > 255 ? 255 : q);
    }
}

KESTREL_ORB_INLINE void to_float(const std::uint8_t* __restrict src, int w, float* __restrict f) {
    for (int x = 0; x < w; ++x) f[x] = static_cast<float>(src[x]);
}

void row_pass_generic(const std::uint8_t* src, int w, float* f, float* h) {
    to_float(src, w, f);
    blur_row_interior(f, w, h);
}
void col_pass_generic(const float* const* r, int w, std::uint8_t* out) { blur_col(r, w, out); }
#if KESTREL_ORB_AVX2
__attribute__((target("avx2"))) void row_pass_avx2(const std::uint8_t* src, int w, float* f, float* h) {
    to_float(src, w, f);
    blur_row_interior(f, w, h);
}
__attribute__((target("avx2"))) void col_pass_avx2(const float* const* r, int w, std::uint8_t* out) {
    blur_col(r, w, out);
}
#endif

struct SmoothPasses {
    void (*row)(const std::uint8_t*, int, float*, float*);
    void (*col)(const float* const*, int, std::uint8_t*);
};
SmoothPasses smooth_passes() {
#if KESTREL_ORB_AVX2
    if (__builtin_cpu_supports("avx2")) return {row_pass_avx2, col_pass_avx2};
#endif
    return {row_pass_generic, col_pass_generic};
}

/// Row pass of the smoothing for source row `src` (width w) into h: orb_blur_row of the 7 reflected pixels.
/// f: w floats of scratch.
void smooth_row(const SmoothPasses& passes, const std::uint8_t* src, int w, float* f, float* h) {
    passes.row(src, w, f, h);
    for (int x = 0; x < w; ++x) {  // the border columns through the rule's functions
        if (x == o::kOrbBlurRadius && x < w - o::kOrbBlurRadius) x = w - o::kOrbBlurRadius;
        if (x >= w) break;
        int p[7];
        for (int k = 0; k < 7; ++k) p[k] = src[o::reflect101(x + k - 3, w)];
        h[x] = o::orb_blur_row(p);
    }
}

/// The steering of every pattern point: dx, dy = round_even(x c - y s), round_even(x s + y c) (orb_steer_point).
struct PatternFloats {
    alignas(16) float x[2 * kOrbDescriptorBits];
    alignas(16) float y[2 * kOrbDescriptorBits];
    PatternFloats() {
        for (int j = 0; j < 2 * kOrbDescriptorBits; ++j) {
            x[j] = static_cast<float>(o::orb_pattern(2 * j));
            y[j] = static_cast<float>(o::orb_pattern(2 * j + 1));
        }
    }
};
const PatternFloats& pattern_floats() {
    static const PatternFloats p;
    return p;
}

void steer_pattern(float c, float s, int* dx, int* dy) {
    const PatternFloats& pf = pattern_floats();
#if defined(__SSE2__)
    // _mm_cvtps_epi32 rounds in the current rounding mode, as nearbyint (round_even) does.
    const __m128 vc = _mm_set1_ps(c), vs = _mm_set1_ps(s);
    for (int j = 0; j < 2 * kOrbDescriptorBits; j += 4) {
        const __m128 px = _mm_load_ps(pf.x + j), py = _mm_load_ps(pf.y + j);
        const __m128 rx = _mm_sub_ps(_mm_mul_ps(px, vc), _mm_mul_ps(py, vs));
        const __m128 ry = _mm_add_ps(_mm_mul_ps(px, vs), _mm_mul_ps(py, vc));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dx + j), _mm_cvtps_epi32(rx));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dy + j), _mm_cvtps_epi32(ry));
    }
#else
    for (int j = 0; j < 2 * kOrbDescriptorBits; ++j) {
        dx[j] = o::round_even(pf.x[j] * c - pf.y[j] * s);
        dy[j] = o::round_even(pf.x[j] * s + pf.y[j] * c);
    }
#endif
}

}  // namespace

void orb_smooth_into(HostView level, HostImage& out, std::vector<float>& ring) {
    const int w = level.width, h = level.height;
    if (out.width() != w || out.height() != h) out = HostImage(w, h);
    constexpr int kRing = 8;  // the 7 rows an output row reads are 7 consecutive source rows: distinct mod 8
    ring.resize(static_cast<std::size_t>(kRing + 1) * w);  // + the row's pixels as floats
    float* f = ring.data() + static_cast<std::size_t>(kRing) * w;
    const SmoothPasses passes = smooth_passes();
    int held[kRing];
    for (int& r : held) r = -1;
    const float* rows[7];
    for (int y = 0; y < h; ++y) {
        for (int k = 0; k < 7; ++k) {
            const int r = o::reflect101(y + k - 3, h);
            float* slot = ring.data() + static_cast<std::size_t>(r % kRing) * w;
            if (held[r % kRing] != r) {
                smooth_row(passes, level.row(r), w, f, slot);
                held[r % kRing] = r;
            }
            rows[k] = slot;
        }
        passes.col(rows, w, out.data() + static_cast<std::size_t>(y) * out.pitch());
    }
}

namespace {

/// The disc's rows as fixed-width weights over the 32 columns x - 15 .. x + 16 (u = i - 15): for row |v|,
/// u where |u| <= orb_umax(|v|) and 0 elsewhere (m10's weights), and 1 / 0 likewise (the row's extent).
struct DiscTables {
    alignas(16) std::int16_t u[o::kOrbHalfPatch + 1][32];
    alignas(16) std::int16_t in[o::kOrbHalfPatch + 1][32];
    DiscTables() {
        for (int v = 0; v <= o::kOrbHalfPatch; ++v)
            for (int i = 0; i < 32; ++i) {
                const int du = i - o::kOrbHalfPatch;
                const bool inside = (du < 0 ? -du : du) <= o::orb_umax(v);
                u[v][i] = static_cast<std::int16_t>(inside ? du : 0);
                in[v][i] = static_cast<std::int16_t>(inside ? 1 : 0);
            }
    }
};
const DiscTables& disc_tables() {
    static const DiscTables t;
    return t;
}

}  // namespace

float orb_angle_at(HostView level, int x, int y) {
    constexpr int R = o::kOrbHalfPatch;
    int m10 = 0, m01 = 0;
    if (x >= R && y >= R && x + R + 1 < level.width && y + R < level.height) {
        // The 32 columns x - 15 .. x + 16 of rows y + v and y - v together, weights from the tables (integer
        // sums: the same moments in any order).
        const DiscTables& t = disc_tables();
        const std::uint8_t* c = level.row(y) + x - R;
        const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(level.pitch);
        for (int i = 0; i < 32; ++i) m10 += t.u[0][i] * static_cast<std::int16_t>(c[i]);
        for (int v = 1; v <= R; ++v) {
            const std::uint8_t* below = c + v * step;  // row y + v
            const std::uint8_t* above = c - v * step;  // row y - v
            const std::int16_t* wu = t.u[v];
            const std::int16_t* wi = t.in[v];
            int sum = 0, diff = 0;
            for (int i = 0; i < 32; ++i) {
                sum += wu[i] * static_cast<std::int16_t>(below[i] + above[i]);
                diff += wi[i] * static_cast<std::int16_t>(below[i] - above[i]);
            }
            m10 += sum;
            m01 += v * diff;
        }
    } else {
        const auto at = [&](int u, int v) {
            return static_cast<int>(level.row(o::clampi(v, level.height))[o::clampi(u, level.width)]);
        };
        for (int v = -R; v <= R; ++v) {
            const int d = o::orb_umax(v < 0 ? -v : v);
            for (int u = -d; u <= d; ++u) {
                const int p = at(x + u, y + v);
                m10 += u * p;
                m01 += v * p;
            }
        }
    }
    return o::orb_atan2_deg(static_cast<float>(m01), static_cast<float>(m10));
}

void orb_descriptor_at(HostView smoothed, int x, int y, float angle_deg, OrbDescriptor& d) {
    float c = 0.0f, s = 0.0f;
    o::orb_cos_sin_deg(angle_deg, c, s);
    alignas(16) int dx[2 * kOrbDescriptorBits], dy[2 * kOrbDescriptorBits];
    steer_pattern(c, s, dx, dy);
    constexpr int R = o::kOrbPatternReach;
    std::memset(d.bytes, 0, sizeof d.bytes);
    if (x >= R && y >= R && x < smoothed.width - R && y < smoothed.height - R) {
        // The 512 pattern pixels first (point 2i and 2i + 1 of pair i side by side), then the comparisons.
        const std::uint8_t* center = smoothed.row(y) + x;
        const std::ptrdiff_t step = static_cast<std::ptrdiff_t>(smoothed.pitch);
        alignas(16) std::uint8_t v[2 * kOrbDescriptorBits];
        for (int j = 0; j < 2 * kOrbDescriptorBits; ++j) v[j] = center[dy[j] * step + dx[j]];
#if defined(__SSE2__)
        // 16 pairs per step: the first points (even bytes) and the second (odd bytes) packed apart, then
        // first < second (unsigned) is max(first, second) != first; bit i of the mask is pair i.
        const __m128i low = _mm_set1_epi16(0x00FF);
        for (int b = 0; b < 2 * kOrbDescriptorBits; b += 32) {
            const __m128i a0 = _mm_load_si128(reinterpret_cast<const __m128i*>(v + b));
            const __m128i a1 = _mm_load_si128(reinterpret_cast<const __m128i*>(v + b + 16));
            const __m128i first = _mm_packus_epi16(_mm_and_si128(a0, low), _mm_and_si128(a1, low));
            const __m128i second = _mm_packus_epi16(_mm_srli_epi16(a0, 8), _mm_srli_epi16(a1, 8));
            const int ge = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(first, second), first));
            const unsigned lt = ~static_cast<unsigned>(ge) & 0xFFFFu;
            d.bytes[b / 16] = static_cast<std::uint8_t>(lt);
            d.bytes[b / 16 + 1] = static_cast<std::uint8_t>(lt >> 8);
        }
#else
        for (int byte = 0; byte < kOrbDescriptorBytes; ++byte) {
            unsigned bits = 0;
            for (int b = 0; b < 8; ++b) {
                const int i = 8 * byte + b;
                bits |= static_cast<unsigned>(v[2 * i] < v[2 * i + 1]) << b;
            }
            d.bytes[byte] = static_cast<std::uint8_t>(bits);
        }
#endif
        return;
    }
    const auto at = [&](int u, int v) {
        return static_cast<int>(smoothed.row(o::clampi(v, smoothed.height))[o::clampi(u, smoothed.width)]);
    };
    for (int i = 0; i < kOrbDescriptorBits; ++i) {
        const bool bit = at(x + dx[2 * i], y + dy[2 * i]) < at(x + dx[2 * i + 1], y + dy[2 * i + 1]);
        d.bytes[i / 8] = static_cast<std::uint8_t>(d.bytes[i / 8] | (bit ? 1u << (i % 8) : 0u));
    }
}

void orb_compute_into(const std::vector<HostImage>& pyramid, const PyramidConfig& cfg,
                      const std::vector<Keypoint>& keypoints, OrbCpu& scratch, OrbFeatures& f) {
    const char* where = "orb_compute_cpu";
    validate(cfg, where);
    if (pyramid.size() != static_cast<std::size_t>(cfg.levels))
        fail(where, "pyramid", "has " + to_text(pyramid.size()) + " levels, cfg.levels = " + to_text(cfg.levels));
    for (std::size_t i = 0; i < keypoints.size(); ++i)
        if (keypoints[i].level < 0 || keypoints[i].level >= cfg.levels)
            check_range(where, ("keypoints[" + std::to_string(i) + "].level").c_str(), keypoints[i].level, 0,
                        cfg.levels - 1);
    scratch.smoothed.resize(static_cast<std::size_t>(cfg.levels));
    float scale[kMaxLevels];
    for (int k = 0; k < cfg.levels; ++k) {
        const HostView level = pyramid[static_cast<std::size_t>(k)].view();
        validate_view(where, "pyramid", level);
        orb_smooth_into(level, scratch.smoothed[static_cast<std::size_t>(k)], scratch.ring);
        scale[k] = level_scale(cfg, k);
    }
    f.angles.resize(keypoints.size());
    f.descriptors.resize(keypoints.size());
    // Keypoints visited by level, then row (the order of the image rows in memory), each result written to
    // its own index: the same results, with the rows that neighbouring keypoints share still in cache.
    std::vector<std::uint64_t>& order = scratch.order;
    order.resize(keypoints.size());
    for (std::size_t i = 0; i < keypoints.size(); ++i) {
        const Keypoint& kp = keypoints[i];
        const float yl = kp.y / scale[kp.level];  // an order only: any value gives the same results
        const std::uint64_t row = yl >= 0.0f && yl < 65535.0f ? static_cast<std::uint64_t>(yl) : 65535u;
        order[i] = static_cast<std::uint64_t>(kp.level) << 48 | row << 32 | i;
    }
    std::sort(order.begin(), order.end());
    for (const std::uint64_t o_i : order) {
        const std::size_t i = static_cast<std::size_t>(o_i & 0xFFFFFFFFu);
        const Keypoint& kp = keypoints[i];
        const float s = scale[kp.level];
        const int x = o::orb_level_coord(kp.x, s), y = o::orb_level_coord(kp.y, s);
        f.angles[i] = orb_angle_at(pyramid[static_cast<std::size_t>(kp.level)].view(), x, y);
        orb_descriptor_at(scratch.smoothed[static_cast<std::size_t>(kp.level)].view(), x, y, f.angles[i],
                          f.descriptors[i]);
    }
}

}  // namespace detail

HostImage orb_smooth_cpu(HostView level) {
    validate_view("orb_smooth_cpu", "level", level);
    HostImage out;
    std::vector<float> ring;
    detail::orb_smooth_into(level, out, ring);
    return out;
}

float orb_angle_cpu(HostView level, int x, int y) {
    validate_view("orb_angle_cpu", "level", level);
    return detail::orb_angle_at(level, x, y);
}

OrbDescriptor orb_descriptor_cpu(HostView smoothed, int x, int y, float angle_deg) {
    validate_view("orb_descriptor_cpu", "smoothed", smoothed);
    OrbDescriptor d;
    detail::orb_descriptor_at(smoothed, x, y, angle_deg, d);
    return d;
}

OrbFeatures orb_compute_cpu(const std::vector<HostImage>& pyramid, const PyramidConfig& cfg,
                            const std::vector<Keypoint>& keypoints) {
    detail::OrbCpu scratch;
    OrbFeatures f;
    detail::orb_compute_into(pyramid, cfg, keypoints, scratch, f);
    return f;
}

}  // namespace kestrel
