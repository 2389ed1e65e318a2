// CPU reference of the FAST score stage: the definition kernels/detect/fast_score.cu matches bit for bit.
// All semantics come from include/kestrel/detail/fast_rules.hpp. Per row, in blocks of 32 pixels: the compass
// pre-test first (compass_run_holds: a necessary condition of the segment test, never a rule; a block where no
// pixel passes it has no corner), then one vectorizable pass computes the segment test's bright and dark masks
// (bytes) and whether either mask has a circular run of arc_min ones (runs_of: 16-bit shifts and ands; with
// arc_max = 16 exactly the segment test, otherwise a necessary condition of it); the table lookups (arc_max < 16)
// and the score then run on the flagged pixels only, SAD-B by psadbw and MaxThreshold with arc_max = 16 by its
// closed form (max_threshold_full_arc, equal to the rules' score_max_threshold for every corner) on the circle read into
// one register (x86-64), the other scores by the rules' functions.
#include "fast_cpu.hpp"

#include <cstring>

// x86-64: the scores of a corner read its circle into one SSE2 register (circle_bytes).
#if defined(__SSE2__) && defined(__x86_64__)
#define KESTREL_FAST_SSE2 1
#include <emmintrin.h>
#else
#define KESTREL_FAST_SSE2 0
#endif

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

/// Positions of the circular runs of at least N ones in a 16-bit mask: bit i is set when bits i, i + 1, ...,
/// i + N - 1 (mod 16) all are. So the mask has a run of N or more ones (longest_circular_run(m) >= N) exactly
/// when the result is not 0. By doubling: R_1 = m, R_2L = R_L & rotr(R_L, L) (bit i of rotr(x, L) is bit
/// i + L of x), and for N between the powers of two k < N < 2k, R_N = R_k & rotr(R_k, N - k) (two windows of
/// k covering the N bits). Shifts, ands and ors of 16-bit words only: vectorizable.
/// r & rotr(r, S) on a 16-bit word.
template <int S>
KESTREL_FAST_INLINE std::uint16_t and_rotr(std::uint16_t r) {
    return static_cast<std::uint16_t>(r & ((r >> S) | (r << (16 - S))));
}
template <int N>
KESTREL_FAST_INLINE std::uint16_t runs_of(std::uint16_t m) {
    constexpr int k = N >= 16 ? 16 : N >= 8 ? 8 : N >= 4 ? 4 : N >= 2 ? 2 : 1;  // largest power of two <= N
    std::uint16_t r = m;  // straight-line code (no inner loop), so that the row loop vectorizes
    if constexpr (k >= 2) r = and_rotr<1>(r);
    if constexpr (k >= 4) r = and_rotr<2>(r);
    if constexpr (k >= 8) r = and_rotr<4>(r);
    if constexpr (k >= 16) r = and_rotr<8>(r);
    if constexpr (k < N) r = and_rotr<N - k>(r);
    return r;
}

/// The segment test's masks of a row, vectorizable (bytes and 16-bit words only): for x in [x0, x1), bit i of
/// blo[x] (i < 8) or bhi[x] (i >= 8, bit i - 8) is set when circle pixel i is bright, p_i > c + t, i.e.
/// p_i > min(c + t, 255) (no byte exceeds 255); dlo/dhi likewise for dark, p_i < c - t, i.e.
/// p_i < max(c - t, 0). flag[x] = 1 where the bright or the dark mask has a circular run of at least
/// N = arc_min ones (runs_of), else 0: with arc_max = 16 exactly the segment test of the rules (the table's
/// bit is run >= arc_min), with arc_max < 16 a necessary condition of it (the table then decides).
/// q[i] points at circle pixel i of x = 0.
template <int N>
KESTREL_FAST_INLINE void segment_row(const std::uint8_t* const* q, const std::uint8_t* __restrict mid, std::uint8_t t,
                 std::uint8_t* __restrict blo, std::uint8_t* __restrict bhi, std::uint8_t* __restrict dlo,
                 std::uint8_t* __restrict dhi, std::uint8_t* __restrict flag, int x0, int x1) {
    const std::uint8_t *__restrict q0 = q[0], *__restrict q1 = q[1], *__restrict q2 = q[2], *__restrict q3 = q[3],
                       *__restrict q4 = q[4], *__restrict q5 = q[5], *__restrict q6 = q[6], *__restrict q7 = q[7],
                       *__restrict q8 = q[8], *__restrict q9 = q[9], *__restrict q10 = q[10], *__restrict q11 = q[11],
                       *__restrict q12 = q[12], *__restrict q13 = q[13], *__restrict q14 = q[14],
                       *__restrict q15 = q[15];
    constexpr int kBlock = 32;  // pixels per pre-tested block
    for (int xb = x0; xb < x1; xb += kBlock) {
        const int xe = xb + kBlock < x1 ? xb + kBlock : x1;
        if constexpr (N >= 4) {
            // The compass pre-test (compass_run_holds of the rules: a necessary condition of the segment test,
            // never a rule) over the block first: where no pixel of it passes, no pixel is a corner.
            std::uint8_t any = 0;
            for (int x = xb; x < xe; ++x) {
                const std::uint8_t c = mid[x];
                std::uint8_t hi = static_cast<std::uint8_t>(c + t);
                hi = hi < c ? 255 : hi;
                std::uint8_t lo = static_cast<std::uint8_t>(c - t);
                lo = lo > c ? 0 : lo;
                const std::uint8_t cb =
                    compass_run_holds<std::uint8_t>(q0[x] > hi, q4[x] > hi, q8[x] > hi, q12[x] > hi, 1, N);
                const std::uint8_t cd =
                    compass_run_holds<std::uint8_t>(q0[x] < lo, q4[x] < lo, q8[x] < lo, q12[x] < lo, 1, N);
                any = static_cast<std::uint8_t>(any | cb | cd);
            }
            if (!any) {
                for (int x = xb; x < xe; ++x) flag[x] = 0;
                continue;
            }
        }
        for (int x = xb; x < xe; ++x) {
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
            const std::uint16_t mb = static_cast<std::uint16_t>(b0 | b1 << 8);
            const std::uint16_t md = static_cast<std::uint16_t>(d0 | d1 << 8);
            flag[x] = static_cast<std::uint8_t>(static_cast<std::uint16_t>(runs_of<N>(mb) | runs_of<N>(md)) != 0);
        }
    }
}

#define KESTREL_SEGMENT_CASE(n) \
    case n: segment_row<n>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;
#define KESTREL_SEGMENT_SWITCH                                                                                    \
    switch (arc_min) {                                                                                            \
        KESTREL_SEGMENT_CASE(1) KESTREL_SEGMENT_CASE(2) KESTREL_SEGMENT_CASE(3) KESTREL_SEGMENT_CASE(4)           \
        KESTREL_SEGMENT_CASE(5) KESTREL_SEGMENT_CASE(6) KESTREL_SEGMENT_CASE(7) KESTREL_SEGMENT_CASE(8)           \
        KESTREL_SEGMENT_CASE(9) KESTREL_SEGMENT_CASE(10) KESTREL_SEGMENT_CASE(11) KESTREL_SEGMENT_CASE(12)        \
        KESTREL_SEGMENT_CASE(13) KESTREL_SEGMENT_CASE(14) KESTREL_SEGMENT_CASE(15)                                \
        default: segment_row<16>(q, mid, t, blo, bhi, dlo, dhi, flag, x0, x1); break;                             \
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
#undef KESTREL_SEGMENT_CASE

using SegmentFn = void (*)(int, const std::uint8_t* const*, const std::uint8_t*, std::uint8_t, std::uint8_t*,
                           std::uint8_t*, std::uint8_t*, std::uint8_t*, std::uint8_t*, int, int);

SegmentFn segment_for_this_cpu() {
#if KESTREL_FAST_AVX2
    if (__builtin_cpu_supports("avx2")) return segment_avx2;
#endif
    return segment_generic;
}

}  // namespace

namespace {

constexpr int pow2_floor(int n) { return n >= 16 ? 16 : n >= 8 ? 8 : n >= 4 ? 4 : n >= 2 ? 2 : 1; }

/// max_threshold_full_arc for arc_min = N, portable: windows by doubling on the circle written out twice (32
/// entries per polarity, so that no index wraps); after the step of length L, entry i holds the minimum over
/// the L entries from i on; the windows that start at 0..15 never read past entry 30.
template <int N>
int max_threshold_portable_n(const int* p, int c) {
    constexpr int k = pow2_floor(N);
    int b[2 * kCircleSize], d[2 * kCircleSize];  // p - c (bright margins), c - p (dark margins)
    for (int i = 0; i < 2 * kCircleSize; ++i) {
        b[i] = p[i & (kCircleSize - 1)] - c;
        d[i] = c - p[i & (kCircleSize - 1)];
    }
    for (int L = 1; L < k; L *= 2)
        for (int i = 0; i < 2 * kCircleSize - L; ++i) {  // ascending: entry i + L is read before it is rewritten
            b[i] = b[i] < b[i + L] ? b[i] : b[i + L];
            d[i] = d[i] < d[i + L] ? d[i] : d[i + L];
        }
    int m = -256;  // M: the best window's least margin over both polarities
    for (int i = 0; i < kCircleSize; ++i) {
        const int wb = b[i] < b[i + N - k] ? b[i] : b[i + N - k];  // two windows of k cover the N pixels
        const int wd = d[i] < d[i + N - k] ? d[i] : d[i + N - k];
        m = wb > m ? wb : m;
        m = wd > m ? wd : m;
    }
    return m - 1;
}

#if KESTREL_FAST_SSE2
/// The 16 circle pixels q[i][x] as the bytes of one register, in circle order, gathered through two 64-bit
/// general registers (a vector load of pixels just stored to memory would stall on the stores).
KESTREL_FAST_INLINE __m128i circle_bytes(const std::uint8_t* const* q, int x) {
    std::uint64_t w0 = 0, w1 = 0;
    for (int i = 0; i < 8; ++i) {
        w0 |= static_cast<std::uint64_t>(q[i][x]) << (8 * i);
        w1 |= static_cast<std::uint64_t>(q[i + 8][x]) << (8 * i);
    }
    return _mm_unpacklo_epi64(_mm_cvtsi64_si128(static_cast<long long>(w0)),
                              _mm_cvtsi64_si128(static_cast<long long>(w1)));
}

/// score_sad_circle (sum of |p_i - c|) of the circle at x: psadbw sums the absolute byte differences of each
/// half, exactly.
KESTREL_FAST_INLINE int sad_circle(const std::uint8_t* const* q, int x, int c) {
    const __m128i sad = _mm_sad_epu8(circle_bytes(q, x), _mm_set1_epi8(static_cast<char>(c)));
    return _mm_cvtsi128_si32(sad) + _mm_cvtsi128_si32(_mm_srli_si128(sad, 8));
}

/// Lanes L..L+7 (mod 16) of the 16-lane circle held as (lo = lanes 0..7, hi = lanes 8..15); L in [0, 8].
template <int L>
KESTREL_FAST_INLINE __m128i rotate_lanes(__m128i lo, __m128i hi) {
    if constexpr (L == 0) return lo;
    else if constexpr (L == 8) return hi;
    else return _mm_or_si128(_mm_srli_si128(lo, 2 * L), _mm_slli_si128(hi, 16 - 2 * L));
}
/// Window minima of length 2L from those of length L: lane i takes min(lane i, lane i + L mod 16).
template <int L>
KESTREL_FAST_INLINE void min_step(__m128i& lo, __m128i& hi) {
    const __m128i a = _mm_min_epi16(lo, rotate_lanes<L>(lo, hi));
    hi = _mm_min_epi16(hi, rotate_lanes<L>(hi, lo));
    lo = a;
}

/// The same in SSE2 registers (16-bit lanes, the circle as two registers per polarity): the same minima and
/// maximum, so the same result.
template <int N>
int max_threshold_n(const std::uint8_t* const* q, int x, int c) {
    constexpr int k = pow2_floor(N);
    const __m128i bytes = circle_bytes(q, x);
    const __m128i zero = _mm_setzero_si128();
    const __m128i lo = _mm_unpacklo_epi8(bytes, zero), hi = _mm_unpackhi_epi8(bytes, zero);
    const __m128i cv = _mm_set1_epi16(static_cast<short>(c));
    __m128i blo = _mm_sub_epi16(lo, cv), bhi = _mm_sub_epi16(hi, cv);  // p - c
    __m128i dlo = _mm_sub_epi16(cv, lo), dhi = _mm_sub_epi16(cv, hi);  // c - p
    if constexpr (k >= 2) { min_step<1>(blo, bhi); min_step<1>(dlo, dhi); }
    if constexpr (k >= 4) { min_step<2>(blo, bhi); min_step<2>(dlo, dhi); }
    if constexpr (k >= 8) { min_step<4>(blo, bhi); min_step<4>(dlo, dhi); }
    if constexpr (k >= 16) { min_step<8>(blo, bhi); min_step<8>(dlo, dhi); }
    if constexpr (N > k) {  // two windows of k cover the N pixels
        min_step<N - k>(blo, bhi);
        min_step<N - k>(dlo, dhi);
    }
    __m128i m = _mm_max_epi16(_mm_max_epi16(blo, bhi), _mm_max_epi16(dlo, dhi));
    m = _mm_max_epi16(m, _mm_srli_si128(m, 8));
    m = _mm_max_epi16(m, _mm_srli_si128(m, 4));
    m = _mm_max_epi16(m, _mm_srli_si128(m, 2));
    return static_cast<short>(_mm_cvtsi128_si32(m)) - 1;
}
#else
template <int N>
int max_threshold_n(const std::uint8_t* const* q, int x, int c) {
    int p[kCircleSize];
    for (int i = 0; i < kCircleSize; ++i) p[i] = q[i][x];
    return max_threshold_portable_n<N>(p, c);
}
#endif

using MaxThresholdFn = int (*)(const std::uint8_t* const*, int, int);  // (circle rows q, x, centre)
MaxThresholdFn max_threshold_for(int arc_min) {
    static constexpr MaxThresholdFn fns[17] = {
        nullptr,             max_threshold_n<1>,  max_threshold_n<2>,  max_threshold_n<3>,  max_threshold_n<4>,
        max_threshold_n<5>,  max_threshold_n<6>,  max_threshold_n<7>,  max_threshold_n<8>,  max_threshold_n<9>,
        max_threshold_n<10>, max_threshold_n<11>, max_threshold_n<12>, max_threshold_n<13>, max_threshold_n<14>,
        max_threshold_n<15>, max_threshold_n<16>};
    return fns[arc_min < 1 ? 1 : (arc_min > 16 ? 16 : arc_min)];
}

}  // namespace

int max_threshold_full_arc(const int* p, int c, int arc_min) {
    std::uint8_t bytes[kCircleSize];
    const std::uint8_t* q[kCircleSize];
    for (int i = 0; i < kCircleSize; ++i) {
        bytes[i] = static_cast<std::uint8_t>(p[i]);
        q[i] = bytes + i;
    }
    return max_threshold_for(arc_min)(q, 0, c);
}

int max_threshold_full_arc_portable(const int* p, int c, int arc_min) {
    static constexpr int (*fns[17])(const int*, int) = {
        nullptr,
        max_threshold_portable_n<1>,  max_threshold_portable_n<2>,  max_threshold_portable_n<3>,
        max_threshold_portable_n<4>,  max_threshold_portable_n<5>,  max_threshold_portable_n<6>,
        max_threshold_portable_n<7>,  max_threshold_portable_n<8>,  max_threshold_portable_n<9>,
        max_threshold_portable_n<10>, max_threshold_portable_n<11>, max_threshold_portable_n<12>,
        max_threshold_portable_n<13>, max_threshold_portable_n<14>, max_threshold_portable_n<15>,
        max_threshold_portable_n<16>};
    return fns[arc_min < 1 ? 1 : (arc_min > 16 ? 16 : arc_min)](p, c);
}

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
    const bool flag_exact = cfg.arc_max == 16;  // segment_row's flag is the segment test itself
    const bool full_arc_mt = cfg.score == ScoreType::MaxThreshold && cfg.arc_max == 16;
    const MaxThresholdFn max_threshold = max_threshold_for(cfg.arc_min);
    [[maybe_unused]] const bool sad = cfg.score == ScoreType::SadCircle;
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
                // The segment test of the rules (is_corner): the table's bit of each mask. With arc_max = 16 the
                // flag already is that test (a run of arc_min ones is the table's bit; tests check it for every
                // arc_min), so the lookups only run for arc_max < 16. mask_is_arc's popcount gate only skips
                // lookups whose bit is 0.
                if (!flag_exact) {
                    const std::uint32_t mb = blo[x] | static_cast<std::uint32_t>(bhi[x]) << 8;
                    const std::uint32_t md = dlo[x] | static_cast<std::uint32_t>(dhi[x]) << 8;
                    if (!lut_test(lut, mb) && !lut_test(lut, md)) continue;
                }
                const int c = mid[x];
                float s;
                if (harris) {
                    s = harris_cpu(image, x, y);
                } else if (full_arc_mt) {  // score_max_threshold of a corner, restated (max_threshold_full_arc)
                    s = static_cast<float>(max_threshold(q, x, c));
#if KESTREL_FAST_SSE2
                } else if (sad) {  // score_sad_circle
                    s = static_cast<float>(sad_circle(q, x, c));
#endif
                } else {
                    int p[kCircleSize];
                    for (int i = 0; i < kCircleSize; ++i) p[i] = q[i][x];
                    s = static_cast<float>(circle_score(cfg.score, lut, p, c, t, cfg.arc_min, cfg.arc_max));
                }
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
