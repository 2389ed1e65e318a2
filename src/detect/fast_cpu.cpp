// CPU reference of the FAST score stage: the definition kernels/detect/fast_score.cu matches bit for bit.
// All semantics come from include/kestrel/detail/fast_rules.hpp. Per row, one vectorizable pass computes
// the segment test's bright and dark masks of every pixel (bytes only) and the compass pre-test
// (compass_run_holds: a necessary condition of the segment test, never a rule); the table lookups and the
// score then run, as the rules state them, on the pixels that pass the pre-test only.
#include "fast_cpu.hpp"

#include <cstring>

#include "kestrel/detail/fast_rules.hpp"

// x86-64 with GCC or Clang: the row pass also gets an AVX2 build (same source, same results: integer bytes).
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define KESTREL_FAST_AVX2 1
#define KESTREL_FAST_INLINE inline __attribute__((always_inline))
#else
#define KESTREL_FAST_AVX2 0
#define KESTREL_FAST_INLINE inline
#endif

// The candidate scan reads 8 flag bytes as one little-endian word (x86-64, aarch64).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fast_score_rows' flag scan assumes little endian");

namespace kestrel {
namespace detail {
namespace {

int sobel_x(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* b = im.row(y);
    const std::uint8_t* c = im.row(y + 1);
    return (a[x + 1] + 2 * b[x + 1] + c[x + 1]) - (a[x - 1] + 2 * b[x - 1] + c[x - 1]);
}

int sobel_y(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* c = im.row(y + 1);
    return (c[x - 1] + 2 * c[x] + c[x + 1]) - (a[x - 1] + 2 * a[x] + a[x + 1]);
}

float harris_cpu(const HostView& im, int x, int y) {
    std::int64_t sxx = 0, syy = 0, sxy = 0;
    for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx) {
            const std::int64_t gx = sobel_x(im, x + dx, y + dy), gy = sobel_y(im, x + dx, y + dy);
            sxx += gx * gx;
            syy += gy * gy;
            sxy += gx * gy;
        }
    return harris_from_sums(sxx, syy, sxy);
}

/// The segment test's masks of a row, vectorizable (bytes only): for x in [x0, x1), bit i of blo[x] (i < 8) or
/// bhi[x] (i >= 8, bit i - 8) is set when circle pixel i is bright, p_i > c + t, i.e. p_i > min(c + t, 255)
/// (no byte exceeds 255); dlo/dhi likewise for dark, p_i < c - t, i.e. p_i < max(c - t, 0). flag[x] = 1 where
/// the compass points of either mask may hold an arc of at least 4 * Q (compass_run_holds, Q = arc_min / 4: a
/// necessary condition of the segment test, never a rule), else 0. q[i] points at circle pixel i of x = 0.
template <int Q>
KESTREL_FAST_INLINE void segment_row(const std::uint8_t* const* q, const std::uint8_t* __restrict mid, std::uint8_t t,
                 std::uint8_t* __restrict blo, std::uint8_t* __restrict bhi, std::uint8_t* __restrict dlo,
                 std::uint8_t* __restrict dhi, std::uint8_t* __restrict flag, int x0, int x1) {
    const std::uint8_t *__restrict q0 = q[0], *__restrict q1 = q[1], *__restrict q2 = q[2], *__restrict q3 = q[3],
                       *__restrict q4 = q[4], *__restrict q5 = q[5], *__restrict q6 = q[6], *__restrict q7 = q[7],
                       *__restrict q8 = q[8], *__restrict q9 = q[9], *__restrict q10 = q[10], *__restrict q11 = q[11],
                       *__restrict q12 = q[12], *__restrict q13 = q[13], *__restrict q14 = q[14],
                       *__restrict q15 = q[15];
    for (int x = x0; x < x1; ++x) {
        const std::uint8_t c = mid[x];
        std::uint8_t hi = static_cast<std::uint8_t>(c + t);
        hi = hi < c ? 255 : hi;  // saturating c + t
        std::uint8_t lo = static_cast<std::uint8_t>(c - t);
        lo = lo > c ? 0 : lo;  // saturating c - t
#define KESTREL_BIT(a, v, k) static_cast<std::uint8_t>(static_cast<std::uint8_t>((a)[x] v) << (k))
        const std::uint8_t b0 = KESTREL_BIT(q0, > hi, 0) | KESTREL_BIT(q1, > hi, 1) | KESTREL_BIT(q2, > hi, 2) |
                                KESTREL_BIT(q3, > hi, 3) | KESTREL_BIT(q4, > hi, 4) | KESTREL_BIT(q5, > hi, 5) |
                                KESTREL_BIT(q6, > hi, 6) | KESTREL_BIT(q7, > hi, 7);
        const std::uint8_t b1 = KESTREL_BIT(q8, > hi, 0) | KESTREL_BIT(q9, > hi, 1) | KESTREL_BIT(q10, > hi, 2) |
                                KESTREL_BIT(q11, > hi, 3) | KESTREL_BIT(q12, > hi, 4) | KESTREL_BIT(q13, > hi, 5) |
                                KESTREL_BIT(q14, > hi, 6) | KESTREL_BIT(q15, > hi, 7);
        const std::uint8_t d0 = KESTREL_BIT(q0, < lo, 0) | KESTREL_BIT(q1, < lo, 1) | KESTREL_BIT(q2, < lo, 2) |
                                KESTREL_BIT(q3, < lo, 3) | KESTREL_BIT(q4, < lo, 4) | KESTREL_BIT(q5, < lo, 5) |
                                KESTREL_BIT(q6, < lo, 6) | KESTREL_BIT(q7, < lo, 7);
        const std::uint8_t d1 = KESTREL_BIT(q8, < lo, 0) | KESTREL_BIT(q9, < lo, 1) | KESTREL_BIT(q10, < lo, 2) |
                                KESTREL_BIT(q11, < lo, 3) | KESTREL_BIT(q12, < lo, 4) | KESTREL_BIT(q13, < lo, 5) |
                                KESTREL_BIT(q14, < lo, 6) | KESTREL_BIT(q15, < lo, 7);
#undef KESTREL_BIT
        blo[x] = b0;
        bhi[x] = b1;
        dlo[x] = d0;
        dhi[x] = d1;
        // compass points: circle pixels 0, 4 (bits 0, 4 of the low byte), 8, 12 (bits 0, 4 of the high byte)
        const std::uint8_t cb = compass_run_holds<std::uint8_t>(b0 & 1, (b0 >> 4) & 1, b1 & 1, (b1 >> 4) & 1, 1, 4 * Q);
        const std::uint8_t cd = compass_run_holds<std::uint8_t>(d0 & 1, (d0 >> 4) & 1, d1 & 1, (d1 >> 4) & 1, 1, 4 * Q);
        flag[x] = static_cast<std::uint8_t>(cb | cd);
    }
}

#define KESTREL_SEGMENT_SWITCH                                                        \
    switch (arc_min >> 2) {                                                           \
        case 0: segment_row<0>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;   \
        case 1: segment_row<1>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;   \
        case 2: segment_row<2>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;   \
        case 3: segment_row<3>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;   \
        default: segment_row<4>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;  \
    }

void segment_generic(int arc_min, const std::uint8_t* const* q, const std::uint8_t* mid, std::uint8_t t,
                     std::uint8_t* blo, std::uint8_t* bhi, std::uint8_t* dlo, std::uint8_t* dhi, std::uint8_t* flag,
                     int x0, int x1) {
    KESTREL_SEGMENT_SWITCH
}

#if KESTREL_FAST_AVX2
// The same loop compiled for AVX2 (32 pixels per vector instead of 16), chosen at run time where the CPU has it.
__attribute__((target("avx2"))) void segment_avx2(int arc_min, const std::uint8_t* const* q, const std::uint8_t* mid,
                                                  std::uint8_t t, std::uint8_t* blo, std::uint8_t* bhi,
                                                  std::uint8_t* dlo, std::uint8_t* dhi, std::uint8_t* flag, int x0,
                                                  int x1) {
    KESTREL_SEGMENT_SWITCH
}
#endif
#undef KESTREL_SEGMENT_SWITCH

using SegmentFn = void (*)(int, const std::uint8_t* const*, const std::uint8_t*, std::uint8_t, std::uint8_t*,
                           std::uint8_t*, std::uint8_t*, std::uint8_t*, std::uint8_t*, int, int);

SegmentFn segment_for_this_cpu() {
#if KESTREL_FAST_AVX2
    if (__builtin_cpu_supports("avx2")) return segment_avx2;
#endif
    return segment_generic;
}

}  // namespace

void fast_score_rows(HostView image, const FastConfig& cfg, const std::uint32_t* lut, float* scores, int y0, int y1,
                     FastRowScratch& scratch, std::vector<std::uint32_t>* corners) {
    const int b = score_border(cfg.score), t = cfg.threshold, w = image.width;
    if (y0 < b) y0 = b;
    if (y1 > image.height - b) y1 = image.height - b;
    if (w - 2 * b <= 0) return;
    const std::size_t len = static_cast<std::size_t>(w) + 8;
    scratch.flag.resize(5 * len);
    std::uint8_t* flag = scratch.flag.data();
    std::uint8_t *blo = flag + len, *bhi = blo + len, *dlo = bhi + len, *dhi = dlo + len;
    std::memset(flag + (w - b), 0, static_cast<std::size_t>(b) + 8);  // the word scan may read past w - b
    const bool harris = cfg.score == ScoreType::Harris;
    const std::uint8_t* q[kCircleSize];
    const SegmentFn segment = segment_for_this_cpu();
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* mid = image.row(y);
        for (int i = 0; i < kCircleSize; ++i) q[i] = image.row(y + circle_dy(i)) + circle_dx(i);
        segment(cfg.arc_min, q, mid, static_cast<std::uint8_t>(t), blo, bhi, dlo, dhi, flag, b, w - b);
        float* out = scores + static_cast<std::size_t>(y) * w;
        for (int x0 = b; x0 < w - b; x0 += 8) {
            std::uint64_t word;  // 8 flags (0 or 1; none past w - b), gathered into 8 bits
            std::memcpy(&word, flag + x0, sizeof word);
            for (unsigned bits = static_cast<unsigned>((word * 0x0102040810204080ull) >> 56); bits; bits &= bits - 1) {
                const int x = x0 + __builtin_ctz(bits);
                // The segment test of the rules (is_corner): the table's bit of each mask. (mask_is_arc's
                // popcount gate only skips lookups whose bit is 0.)
                const std::uint32_t mb = blo[x] | static_cast<std::uint32_t>(bhi[x]) << 8;
                const std::uint32_t md = dlo[x] | static_cast<std::uint32_t>(dhi[x]) << 8;
                if (!lut_test(lut, mb) && !lut_test(lut, md)) continue;
                const int c = mid[x];
                int p[kCircleSize];
                for (int i = 0; i < kCircleSize; ++i) p[i] = q[i][x];
                const float s = harris ? harris_cpu(image, x, y)
                                       : static_cast<float>(circle_score(cfg.score, lut, p, c, t, cfg.arc_min,
                                                                         cfg.arc_max == 16));
                out[x] = s;
                if (s > 0.0f && corners) corners->push_back(static_cast<std::uint32_t>(y) << 16 | static_cast<std::uint32_t>(x));
            }
        }
    }
}

}  // namespace detail

ScoreMap fast_score_map_cpu(HostView image, const FastConfig& cfg) {
    validate_view("fast_score_map_cpu", "image", image);
    validate(cfg, "fast_score_map_cpu");
    const auto lut = corner_lut(cfg.arc_min, cfg.arc_max);
    ScoreMap m;
    m.width = image.width;
    m.height = image.height;
    m.scores.assign(static_cast<std::size_t>(m.width) * m.height, 0.0f);
    detail::FastRowScratch scratch;
    detail::fast_score_rows(image, cfg, lut.data(), m.scores.data(), 0, image.height, scratch, nullptr);
    return m;
}

std::vector<ScoreMap> fast_score_maps_cpu(const std::vector<HostImage>& pyramid, const FastConfig& cfg) {
    detail::check(!pyramid.empty(), "fast_score_maps_cpu", "pyramid", "must hold at least one level");
    std::vector<ScoreMap> maps;
    maps.reserve(pyramid.size());
    for (const HostImage& level : pyramid) maps.push_back(fast_score_map_cpu(level.view(), cfg));
    return maps;
}

}  // namespace kestrel
