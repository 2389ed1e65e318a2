// Pyramidal inverse-compositional Lucas-Kanade with gain and offset, one warp per feature.
// CPU reference it must match: kestrel::lk_track_cpu (src/lk_cpu.cpp); both run
// detail::lk_track_one (include/kestrel/detail/lk_rules.hpp), which holds every formula below.
//
// Model (Baker & Matthews, "Lucas-Kanade 20 Years On: A Unifying Framework", Part 1 sec. 3.2 for the
// inverse compositional algorithm, Part 3 (Baker, Gross, Matthews 2003) sec. 4 for the simultaneous
// inverse compositional algorithm with linear appearance variation). For a feature with template
// T(x) (x: patch offsets, sampled at the reference position), translation t, gain alpha, offset beta:
//     I(x + t) ~= alpha * T(x) + beta.
// The appearance basis is {A1 = T - mu, A2 = 1} (mu = mean of T when the offset is estimated, else 0;
// centring changes nothing but the conditioning of H), so beta_c = beta + alpha * mu and the error is
//     e(x) = alpha * (T(x) - mu) + beta_c - I(x + t).
// Simultaneous inverse compositional (SIC): the template side is warped by the increment dt and the
// appearance parameters are incremented, e(x; dq) ~= e(x) + J(x) dq with dq = (dtx, dty, dalpha, dbeta_c),
//     J(x) = [alpha * dT/dx, alpha * dT/dy, T(x) - mu, 1]   (the gradient of alpha*A1 + A2 is alpha*grad T).
// Part 3 approximates J at alpha = 1 so that H = sum J^T J is constant. Here the approximation is not
// needed: J(alpha) = J(1) diag(alpha, alpha, 1, 1), hence with H1 = sum J(1)^T J(1), b1 = sum J(1)^T e,
//     dq = -(J^T J)^-1 J^T e = -diag(1/alpha, 1/alpha, 1, 1) H1^-1 b1,
// which is the exact Gauss-Newton step for the current alpha with H1 computed once per level.
// H1 is built from 9 template sums (gx^2, gx gy, gy^2, gx a, gy a, a^2, gx, gy, a; a = T - mu, n pixels),
// factorized once per level (LDL^T, with the reciprocal pivots 1/d_j: an iteration's solve is two
// triangular substitutions and four multiplies, dt = dq_t * (1/alpha)); inactive parameters (by LkMode)
// get an identity row and column.
// Update, inverse composition of the translation warp W(x; t) = x + t with W(x; dt)^-1:
//     t <- t - dt,   alpha <- alpha + dalpha,   beta_c <- beta_c + dbeta_c.
// Sign check (1-D): T(x) = x, I(x) = x - d, t = 0: e = d, H = n, b = n d, dt = -d, t <- d. Correct.
// Stop when |dt|^2 < min_update^2 (level pixels), when a step undoes the previous one (oscillation:
// settle half-way), or after max_iterations.
// Gradients: central differences of bilinear samples of the reference level, (T(x+1)-T(x-1))/2.
// Coarse to fine: level-0 coordinate X maps to level k as (X + 0.5) / s_k - 0.5, s_k = level_scale(k);
// each level starts from the coarser one's estimate. The gain is estimated on level 0 only; coarse
// levels that do not fit, are singular, end worse than they started or leave the search window are
// skipped or discarded; on level 0 the same events end the track. The full policy and the status
// rules: "Level policy" in detail/lk_rules.hpp, and docs/tracker.md.
//
// GPU mapping: warp w tracks feature w. Lane l owns patch pixels l, l + 32, ... (at most 8 for 16x16),
// keeps T (centred, T - mu, once mu is known), gx, gy of its pixels in registers (when n divides 32
// they share one patch column, so one x half of the bilinear weights serves all of them: BilinearX;
// for 16x16 every lane has 8 pixels and the pixel loops run without per-pixel branches: `full`),
// accumulates its partial sums in that order, and the xor butterfly (offsets 16, 8, 4, 2, 1) gives
// every lane the identical full sums, so every lane runs the same Gauss-Newton iterations and the
// control flow stays warp-uniform. All levels in one launch.
// Image reads go through per-warp shared-memory windows (struct Window, stage()): per level one copy of
// the template's neighbourhood and one of the current image's, re-copied only when the estimate leaves
// it; the bilinear samples are bit-identical to reading the image (detail::bilinear_at). A window starts
// at a 4-aligned column and is copied in aligned 4-byte words (8 loads per lane and window).
// Two instances of each tracking kernel: N = 16 (16 x 16 patches on every level, the default: no
// per-pixel guards, patch offsets without divisions, only that layout's code) and N = 0 (any layout).
// All arithmetic is __fmul_rn/__fadd_rn/... (no FMA contraction), matching the CPU bit for bit.
#include "cuda_check.hpp"
#include "lk_track.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kWarpsPerBlock = 2;  // 2 x 2 staged windows of 6 KiB each: 24 KiB static shared memory
constexpr unsigned kFullMask = 0xffffffffu;

// Staged neighbourhoods: a kWin x kWin window of a pyramid level, copied from global memory into
// shared memory as floats. The window's first column is a multiple of 4, so a lane copies aligned
// 4-byte words (lane l: word l % 8 of rows l / 8 + 4 i): 8 loads and 8 16-byte stores per window.
// Row stride kWinStride = 48 (16 mod 32 banks): the two rows of 16 pixels that a 16-wide patch puts in
// one warp instruction (lanes 0-15 and 16-31) then fall into disjoint banks, so the samples have no
// bank conflicts. A 16x16 patch reads 17 x 17 taps (its template 19 x 19), so the current-image window
// lets the estimate move at least +-4 px (+-5.5 on average) before it is staged again.
constexpr int kWin = 32;
constexpr int kWinStride = kWin + 16;
constexpr int kWinFloats = kWin * kWinStride;
constexpr int kWinWords = kWin / 4;                     // 4-byte words per window row
constexpr int kWinRowsPerLoad = detail::kLkLanes / kWinWords;  // rows one warp-wide load covers
constexpr int kWinLoads = kWin / kWinRowsPerLoad;              // loads per lane and window
static_assert(kWinStride % 4 == 0, "16-byte aligned rows");
// Window::place covers tap ranges of extent <= 11 (columns) and 12 (rows); the largest is a
// template's, (n - 1) / 2 + 1.
static_assert((kMaxPatchSize - 1) / 2.0 + 1.0 <= 11.0, "the window must cover a template");

template <int K>
__device__ __forceinline__ void warp_allreduce(float* v) {
#pragma unroll
    for (int off = detail::kLkLanes / 2; off >= 1; off >>= 1) {
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = __fadd_rn(v[k], __shfl_xor_sync(kFullMask, v[k], off));
    }
}

/// A staged window: pixel (x, y) of the level at buf[(y - y0) * kWinStride + (x - x0)], for
/// x0 <= x < x0 + w, y0 <= y < y0 + h. A tap source of detail::bilinear_at.
struct Window {
    float* buf;
    int x0, y0, w, h;
    float xa, xb, ya, yb;  // covers_patch's bounds, set by place()

    __device__ __forceinline__ float at(int x, int y) const { return buf[(y - y0) * kWinStride + (x - x0)]; }

    /// True when the window holds the tap ranges detail::tap_range(cx, half) x tap_range(cy, half),
    /// clipped to the image (the taps themselves are inside it: the callers' inside() preconditions).
    /// With [lo, hi] = [floor(c - half) - 1, floor(c + half) + 2] and integer m, floor(v) >= m <=> v >= m
    /// and floor(v) < m <=> v < m, so max(lo, 0) >= x0 <=> x0 == 0 or c - half >= x0 + 1, and
    /// min(hi, W - 1) < x0 + w <=> x0 + w == W or c + half < x0 + w - 2: four float compares against
    /// bounds fixed at placement (+-inf for the image's own edges).
    __device__ __forceinline__ bool covers_patch(float cx, float cy, float half) const {
        return detail::fsub(cx, half) >= xa && detail::fadd(cx, half) < xb && detail::fsub(cy, half) >= ya &&
               detail::fadd(cy, half) < yb;
    }

    /// Chooses the window of `im` around (cx, cy), clamped into the image (w, h < kWin only when the
    /// window reaches the image's last column or row). Warp-uniform. x0 is a multiple of 4 (aligned word
    /// loads): x0 = (ix - 14) rounded down to a multiple of 4, so the window [x0, x0 + 31] contains
    /// [ix - 14, ix + 14]; clamped, it starts at 0 or ends at the row's last word (beyond the last
    /// column: covered up to the edge). Rows: [iy - 15, iy + 16], clamped. Afterwards covers_patch()
    /// holds for every tap_range of extent <= 11 around (cx, cy) (ix = floor(cx): the range is within
    /// [ix - extent - 2, ix + extent + 3], clipped to the image).
    __device__ __forceinline__ void place(const detail::LkImage& im, float cx, float cy) {
        // Clamp before the conversion: the estimate may be far outside (it is then not used).
        const int ix = static_cast<int>(floorf(fminf(fmaxf(cx, -1.0e6f), 1.0e6f)));
        const int iy = static_cast<int>(floorf(fminf(fmaxf(cy, -1.0e6f), 1.0e6f)));
        const int last_start = ((im.width + 3) & ~3) - kWin;  // aligned start whose window ends at the row's last word
        x0 = max(0, min((ix - (kWin / 2 - 2)) & ~3, last_start));
        y0 = max(0, min(iy - (kWin / 2 - 1), im.height - kWin));
        w = min(kWin, im.width - x0);
        h = min(kWin, im.height - y0);
        const float inf = __int_as_float(0x7f800000);
        xa = x0 == 0 ? -inf : static_cast<float>(x0 + 1);
        xb = x0 + w == im.width ? inf : static_cast<float>(x0 + w - 2);
        ya = y0 == 0 ? -inf : static_cast<float>(y0 + 1);
        yb = y0 + h == im.height ? inf : static_cast<float>(y0 + h - 2);
    }
};

/// The 4-byte words of window `win` that this lane copies: word (lane % 8) of rows lane / 8 + 4 i.
/// A word is loaded when it starts inside the image row (a word that crosses the row's end reads the
/// row's padding: DevicePyramid levels have a pitch that is a multiple of 4, zeroed padding, and a
/// 4-byte aligned start, checked on the host); rows below the image give 0.
__device__ __forceinline__ void load_words(const detail::LkImage& im, const Window& win, int lane,
                                           unsigned (&v)[kWinLoads]) {
    const int col = (lane % kWinWords) * 4, row = lane / kWinWords;
    const bool in_row = win.x0 + col < im.width;
    const std::uint8_t* p = im.data + static_cast<std::size_t>(win.y0 + row) * im.pitch + win.x0 + col;
    const std::size_t step = kWinRowsPerLoad * im.pitch;
#pragma unroll
    for (int i = 0; i < kWinLoads; ++i)
        v[i] = (in_row && row + i * kWinRowsPerLoad < win.h) ? __ldg(reinterpret_cast<const unsigned*>(p + i * step))
                                                             : 0u;
}

/// Stores the words of load_words as floats (little-endian: byte j is column col + j), 16 bytes at a time.
__device__ __forceinline__ void store_words(const Window& win, int lane, const unsigned (&v)[kWinLoads]) {
    const int col = (lane % kWinWords) * 4, row = lane / kWinWords;
#pragma unroll
    for (int i = 0; i < kWinLoads; ++i) {
        const float4 f = make_float4(static_cast<float>(v[i] & 0xffu), static_cast<float>((v[i] >> 8) & 0xffu),
                                     static_cast<float>((v[i] >> 16) & 0xffu), static_cast<float>(v[i] >> 24));
        *reinterpret_cast<float4*>(win.buf + (row + i * kWinRowsPerLoad) * kWinStride + col) = f;
    }
}

/// Copies the placed windows a (and b when two) from their images: every load is issued before the
/// first store, so the whole copy costs one memory latency.
template <bool Two>
__device__ __forceinline__ void stage(const detail::LkImage& ia, const Window& a, const detail::LkImage& ib,
                                      const Window& b, int lane) {
    unsigned va[kWinLoads], vb[kWinLoads];
    load_words(ia, a, lane, va);
    if (Two) load_words(ib, b, lane, vb);
    __syncwarp();  // every lane is done reading the previous contents
    store_words(a, lane, va);
    if (Two) store_words(b, lane, vb);
    __syncwarp();  // the copy is visible to every lane
}

/// The warp as the engine of detail::lk_track_one (one instance per lane). N > 0: every level's patch
/// side is N, known at compile time (the default 16 x 16 on all levels: the pixel loops have no guards
/// and the code holds only that layout); N = 0: the side of level k is setup.patch[k]. Per level it stages the
/// template's neighbourhood of the reference level (live templates) and the neighbourhood of the
/// level's start in the current level together, computes T, gx, gy of its pixels from shared memory,
/// and samples the current image from its window; the window is staged again (centred on the
/// estimate) only when a patch no longer fits in it. The samples are the same bytes and the same
/// arithmetic as bilinear() on the image, so the results do not depend on the staging.
template <int N>
struct WarpEngine {
    static constexpr bool kFixed = N > 0;
    const detail::LkSetup& s;
    const detail::LkImage* ref;   // live templates (nullptr: stored)
    const float* slot_base;       // stored templates of this feature
    const std::int32_t* valid;    // their per-level flags
    int lane;
    Window cw;                    // current-image window (cw_level: the level it holds, -1: none)
    Window rw;                    // reference window (template extraction)
    int cw_level;
    bool one_column;              // n divides 32: all of this lane's pixels lie in one patch column
    bool full;                    // n == 16: every lane has kLkMaxPerLane pixels (and one_column)
    float half_k;                 // patch_half(n) of the level being tracked
    // T (after hessian_sums: T - mu), gx, gy of this lane's pixels
    float t[detail::kLkMaxPerLane], gx[detail::kLkMaxPerLane], gy[detail::kLkMaxPerLane];
    float ox[detail::kLkMaxPerLane], oy[detail::kLkMaxPerLane];  // patch offsets of this lane's pixels

    __device__ WarpEngine(const detail::LkSetup& setup, const detail::LkImage* r, const float* slots,
                          const std::int32_t* flags, int l, float* cur_buf, float* ref_buf)
        : s(setup), ref(r), slot_base(slots), valid(flags), lane(l), cw{cur_buf, 0, 0, 0, 0}, rw{ref_buf, 0, 0, 0, 0},
          cw_level(-1), one_column(false), full(false), half_k(0.0f) {}

    __device__ __forceinline__ int side(int k) const { return kFixed ? N : s.patch[k]; }
    /// Every lane has kLkMaxPerLane pixels (16 x 16).
    __device__ __forceinline__ bool is_full() const {
        if constexpr (kFixed) return N * N == detail::kLkLanes * detail::kLkMaxPerLane;
        else return full;
    }
    /// All of a lane's pixels lie in one patch column (n divides 32).
    __device__ __forceinline__ bool is_column() const {
        if constexpr (kFixed) return detail::kLkLanes % N == 0;
        else return one_column;
    }

    /// True when the current window (of level k) holds every tap of the n x n patch at (cx, cy).
    __device__ __forceinline__ bool cur_covers(int k, float cx, float cy) const {
        return cw_level == k && cw.covers_patch(cx, cy, half_k);
    }

    __device__ __forceinline__ bool load_template(int k, float rx, float ry, const detail::LkImage& cur, float cx,
                                                  float cy) {
        const int n = side(k);
        const int npx = n * n;
        one_column = detail::kLkLanes % n == 0;  // pixel l + 32 j is in column l % n for every j
        full = npx == detail::kLkLanes * detail::kLkMaxPerLane;  // 16 x 16: every lane has 8 pixels
        half_k = detail::patch_half(n);
        if (is_column()) {
            // detail::patch_offset(l + 32 j, n) without a division per pixel: column l % n, row l / n + j * 32 / n.
            const int col = lane % n, row = lane / n, rows_per_j = detail::kLkLanes / n;
#pragma unroll
            for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
                ox[j] = detail::fsub(static_cast<float>(col), half_k);
                oy[j] = detail::fsub(static_cast<float>(row + j * rows_per_j), half_k);
            }
        } else {
#pragma unroll
            for (int j = 0; j < detail::kLkMaxPerLane; ++j)
                detail::patch_offset(lane + j * detail::kLkLanes, n, ox[j], oy[j]);
        }
        cw.place(cur, cx, cy);
        cw_level = k;
        if (ref == nullptr) {
            if (valid[k] == 0) {
                stage<false>(cur, cw, cur, cw, lane);
                return false;
            }
            const float* base = slot_base + detail::store_level_offset(s, k);
#pragma unroll
            for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
                const int i = lane + j * detail::kLkLanes;
                if (i < npx) {
                    t[j] = base[i];
                    gx[j] = base[npx + i];
                    gy[j] = base[2 * npx + i];
                }
            }
            stage<false>(cur, cw, cur, cw, lane);
            return true;
        }
        const float ext = detail::fadd(detail::patch_half(n), 1.0f);
        if (!detail::inside(ref[k], rx, ry, ext)) {
            stage<false>(cur, cw, cur, cw, lane);
            return false;
        }
        rw.place(ref[k], rx, ry);  // covers the template's taps (extent <= 8.5, see Window::place)
        stage<true>(cur, cw, ref[k], rw, lane);
        if (is_full()) {
            template_pixels<true>(rx, ry, npx);
        } else if (is_column()) {
            template_pixels<false>(rx, ry, npx);
        } else {
#pragma unroll
            for (int j = 0; j < detail::kLkMaxPerLane; ++j)
                if (lane + j * detail::kLkLanes < npx)
                    detail::template_pixel_at(rw, rx, ry, ox[j], oy[j], t[j], gx[j], gy[j]);
        }
        return true;
    }

    /// T, gx, gy of the lane's pixels when they share one column (one_column): the x halves of all
    /// five samples are the same for every pixel. Full (16x16): no per-pixel branch, so the pixels'
    /// independent chains interleave.
    template <bool Full>
    __device__ __forceinline__ void template_pixels(float rx, float ry, int npx) {
        const detail::TemplateX h = detail::template_x(rx, ox[0]);
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j)
            if (Full || lane + j * detail::kLkLanes < npx)
                detail::template_pixel_at_x(rw, h, ry, oy[j], t[j], gx[j], gy[j]);
    }

    __device__ __forceinline__ float template_sum(int k) {
        const int npx = side(k) * side(k);
        float acc[1] = {0.0f};
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j)
            if (lane + j * detail::kLkLanes < npx) acc[0] = detail::fadd(acc[0], t[j]);
        warp_allreduce<1>(acc);
        return acc[0];
    }

    /// Also centres the template in place: t[j] <- T - mu, which the level's iterations then use
    /// directly (the same fsub as add_error(T, .., mu) would repeat every iteration).
    __device__ __forceinline__ void hessian_sums(int k, float mu, float* out) {
        const int npx = side(k) * side(k);
#pragma unroll
        for (int q = 0; q < detail::kLkHessianSums; ++q) out[q] = 0.0f;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (lane + j * detail::kLkLanes < npx) {
                t[j] = detail::fsub(t[j], mu);
                detail::add_hessian_centred(out, t[j], gx[j], gy[j]);
            }
        }
        warp_allreduce<detail::kLkHessianSums>(out);
    }

    /// sample() for one_column: fadd(cx, ox[j]) is the same for every j, so one x half for the lane.
    template <bool Full>
    __device__ __forceinline__ void sample_column(float cx, float cy, int npx, float* img) const {
        const detail::BilinearX h = detail::bilinear_x(detail::fadd(cx, ox[0]));
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j)
            if (Full || lane + j * detail::kLkLanes < npx) img[j] = detail::bilinear_at_x(cw, h, detail::fadd(cy, oy[j]));
    }

    /// Current-image samples of this lane's pixels at (cx, cy) (precondition: inside(cur, cx, cy, half)).
    __device__ __forceinline__ void sample(int k, const detail::LkImage& cur, float cx, float cy, float* img) {
        const int npx = side(k) * side(k);
        if (!cur_covers(k, cx, cy)) {  // re-centre on the estimate: then it covers (Window::place)
            cw.place(cur, cx, cy);
            cw_level = k;
            stage<false>(cur, cw, cur, cw, lane);
        }
        if (is_full()) {
            sample_column<true>(cx, cy, npx, img);
        } else if (is_column()) {
            sample_column<false>(cx, cy, npx, img);
        } else {
#pragma unroll
            for (int j = 0; j < detail::kLkMaxPerLane; ++j)
                if (lane + j * detail::kLkLanes < npx)
                    img[j] = detail::bilinear_at(cw, detail::fadd(cx, ox[j]), detail::fadd(cy, oy[j]));
        }
    }

    /// The first Sums error sums of the lane's pixels (4: without sum |e|, 5: all), reduced over the warp.
    template <int Sums>
    __device__ __forceinline__ void reduce_errors(int npx, const float* img, float alpha, float beta_c, float* out) {
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (is_full() || lane + j * detail::kLkLanes < npx) {
                if constexpr (Sums == detail::kLkErrorSums)
                    detail::add_error_centred(out, t[j], gx[j], gy[j], img[j], alpha, beta_c);
                else
                    (void)detail::add_error_centred4(out, t[j], gx[j], gy[j], img[j], alpha, beta_c);
            }
        }
        warp_allreduce<Sums>(out);
    }

    /// The error sums of this iteration; sum |e| (out[4]) only when with_sad (the coarse levels'
    /// discard test needs it, level 0's iterations do not): one butterfly of 4 values instead of 5 there.
    __device__ __forceinline__ void error_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha,
                                               float beta_c, float mu, float* out, bool with_sad) {
        const int npx = side(k) * side(k);
        float img[detail::kLkMaxPerLane];
        sample(k, cur, cx, cy, img);
#pragma unroll
        for (int q = 0; q < detail::kLkErrorSums; ++q) out[q] = 0.0f;
        if (with_sad)
            reduce_errors<detail::kLkErrorSums>(npx, img, alpha, beta_c, out);
        else
            reduce_errors<detail::kLkErrorSums - 1>(npx, img, alpha, beta_c, out);
    }

    __device__ __forceinline__ void final_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha,
                                               float beta_c, float alpha0, float beta_c0, float mu, float* out,
                                               float* sad0) {
        const int npx = side(k) * side(k);
        float img[detail::kLkMaxPerLane];
        sample(k, cur, cx, cy, img);
        float v[detail::kLkErrorSums + 1];
#pragma unroll
        for (int q = 0; q <= detail::kLkErrorSums; ++q) v[q] = 0.0f;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (lane + j * detail::kLkLanes < npx) {
                detail::add_error_centred(v, t[j], gx[j], gy[j], img[j], alpha, beta_c);
                v[detail::kLkErrorSums] = detail::fadd(
                    v[detail::kLkErrorSums], fabsf(detail::pixel_error_centred(t[j], img[j], alpha0, beta_c0)));
            }
        }
        warp_allreduce<detail::kLkErrorSums + 1>(v);  // each value reduced exactly as in error_sums
#pragma unroll
        for (int q = 0; q < detail::kLkErrorSums; ++q) out[q] = v[q];
        *sad0 = v[detail::kLkErrorSums];
    }
};

__device__ __forceinline__ int warp_index() { return static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) >> 5); }

// The launch descriptor is copied once per block into shared memory: the driver indexes the level
// arrays with the runtime level k, which on kernel parameters would force a per-thread local copy.
#define KESTREL_LK_SHARED_PARAMS(p_in, p)      \
    __shared__ LkLaunch p;                     \
    if (threadIdx.x == 0) p = p_in;            \
    __syncthreads();

// The staged windows of the block: per warp one current-image and one reference window.
#define KESTREL_LK_WINDOWS(cur_buf, ref_buf)                                       \
    __shared__ __align__(16) float lk_windows[kWarpsPerBlock][2][kWinFloats];                    \
    float* cur_buf = lk_windows[threadIdx.x / detail::kLkLanes][0];                \
    float* ref_buf = lk_windows[threadIdx.x / detail::kLkLanes][1];

template <int N>
__global__ void lk_track_live_kernel(const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p)
    const int f = warp_index();
    if (f >= p.count) return;  // warp-uniform
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const Point2f r = p.points[f];
    const LkGuess g = p.guesses ? p.guesses[f] : LkGuess{r.x, r.y, 1.0f, 0.0f};
    KESTREL_LK_WINDOWS(cur_buf, ref_buf)
    WarpEngine<N> eng(p.setup, p.ref, nullptr, nullptr, lane, cur_buf, ref_buf);
    const LkResult res = detail::lk_track_one(eng, p.setup, p.cur, r.x, r.y, g);
    if (lane == 0) p.results[f] = res;
}

template <int N>
__global__ void lk_track_stored_kernel(const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p)
    const int f = warp_index();
    if (f >= p.count) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int slot = p.slots[f];
    const LkGuess g = p.guesses[f];
    LkResult res;
    if (slot < 0 || slot >= p.capacity) {
        res.x = g.x; res.y = g.y; res.gain = g.gain; res.offset = g.offset;
        res.status = TrackStatus::LostOutOfBounds;  // no such slot
    } else {
        KESTREL_LK_WINDOWS(cur_buf, ref_buf)
        WarpEngine<N> eng(p.setup, nullptr,
                       p.store + static_cast<std::size_t>(slot) * detail::store_floats_per_slot(p.setup),
                       p.store_valid + static_cast<std::size_t>(slot) * p.setup.levels, lane, cur_buf, ref_buf);
        res = detail::lk_track_one(eng, p.setup, p.cur, 0.0f, 0.0f, g);
    }
    if (lane == 0) p.results[f] = res;
}

__global__ void lk_store_kernel(const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p)
    const int f = warp_index();
    if (f >= p.count) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int slot = p.slots[f];
    if (slot < 0 || slot >= p.capacity) return;
    const Point2f r = p.points[f];
    float* base = p.store + static_cast<std::size_t>(slot) * detail::store_floats_per_slot(p.setup);
    for (int k = 0; k < p.setup.levels; ++k) {
        const int n = p.setup.patch[k];
        const int npx = n * n;
        const float sk = p.setup.scale[k];
        const float rx = detail::to_level(r.x, sk), ry = detail::to_level(r.y, sk);
        const bool ok = detail::inside(p.ref[k], rx, ry, detail::fadd(detail::patch_half(n), 1.0f));
        if (lane == 0) p.store_valid[static_cast<std::size_t>(slot) * p.setup.levels + k] = ok ? 1 : 0;
        if (!ok) continue;
        float* lvl = base + detail::store_level_offset(p.setup, k);
        for (int i = lane; i < npx; i += detail::kLkLanes) {
            float ox, oy;
            detail::patch_offset(i, n, ox, oy);
            detail::template_pixel(p.ref[k], rx, ry, ox, oy, lvl[i], lvl[npx + i], lvl[2 * npx + i]);
        }
    }
}

__global__ void lk_backward_inputs_kernel(const LkResult* forward, const Point2f* origins, Point2f* back_points,
                                          LkGuess* back_guesses, int count) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= count) return;
    const LkResult f = forward[i];
    const float nan = __int_as_float(0x7fc00000);
    const bool alive = f.status == TrackStatus::Tracked || f.status == TrackStatus::NotConverged;
    back_points[i] = alive ? Point2f{f.x, f.y} : Point2f{nan, nan};
    const Point2f o = origins[i];
    back_guesses[i] = LkGuess{o.x, o.y, 1.0f, 0.0f};
}

dim3 grid_for(int count) {
    return dim3(static_cast<unsigned>((count + kWarpsPerBlock - 1) / kWarpsPerBlock));
}

/// True when every level's patch is kMaxPatchSize x kMaxPatchSize: the kernels' instance N = 16 applies,
/// every other layout runs the general instance N = 0.
bool every_patch_full(const detail::LkSetup& s) {
    for (int k = 0; k < s.levels; ++k)
        if (s.patch[k] != kMaxPatchSize) return false;
    return true;
}

}  // namespace

void launch_lk_track_live(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const auto kernel = every_patch_full(p.setup) ? lk_track_live_kernel<kMaxPatchSize> : lk_track_live_kernel<0>;
    kernel<<<grid_for(p.count), kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("lk track");
}

void launch_lk_track_stored(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const auto kernel = every_patch_full(p.setup) ? lk_track_stored_kernel<kMaxPatchSize> : lk_track_stored_kernel<0>;
    kernel<<<grid_for(p.count), kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("lk track stored");
}

void launch_lk_store(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    lk_store_kernel<<<grid_for(p.count), kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("lk store templates");
}

void launch_lk_backward_inputs(const LkResult* forward, const Point2f* origins, Point2f* back_points,
                               LkGuess* back_guesses, int count, cudaStream_t stream) {
    if (count <= 0) return;
    lk_backward_inputs_kernel<<<(count + 127) / 128, 128, 0, stream>>>(forward, origins, back_points, back_guesses,
                                                                     count);
    KESTREL_CUDA_LAUNCH("lk forward-backward inputs");
}

}  // namespace kestrel::kernels
