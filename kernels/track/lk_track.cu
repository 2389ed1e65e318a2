// Pyramidal inverse-compositional Lucas-Kanade with gain and offset, one warp per feature.
// CPU reference it must match: kestrel::lk_track_cpu (src/track/lk_cpu.cpp); both run
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
// factorized and inverted once per level (LDL^T, then H1^-1 = L^-T D^-1 L^-1: an iteration's solve is one
// product with H1^-1, dt = dq_t * (1/alpha); a level without the gain inverts the 3x3 system over translation
// and offset); inactive parameters (by LkMode) get an identity row and column.
// Update, inverse composition of the translation warp W(x; t) = x + t with W(x; dt)^-1:
//     t <- t - dt,   alpha <- alpha + dalpha,   beta_c <- beta_c + dbeta_c.
// Sign check (1-D): T(x) = x, I(x) = x - d, t = 0: e = d, H = n, b = n d, dt = -d, t <- d. Correct.
// Stop when |dt|^2 < min_update^2 (level pixels), when a step undoes the previous one (oscillation:
// settle half-way), or after max_iterations.
// Sampling: a patch is a grid of n x n samples at (cx - h + i, cy - h + j), h = (n-1)/2, that share one
// pair of bilinear weights (detail::PatchGrid, as in OpenCV's LK): per iteration one floor per axis,
// then four taps, three multiplies and three fused multiply-adds per pixel at fixed offsets from the grid's
// first tap.
// Gradients: central differences of bilinear samples of the reference level on the template's grid,
// (T(i+1, j) - T(i-1, j)) / 2.
// Coarse to fine: level-0 coordinate X maps to level k as (X + 0.5) / s_k - 0.5, s_k = level_scale(k);
// each level starts from the coarser one's estimate. The gain is estimated on level 0 only; coarse
// levels that do not fit, are singular, end worse than they started or leave the search window are
// skipped or discarded; on level 0 the same events end the track. The full policy and the status
// rules: "Level policy" in detail/lk_rules.hpp, and docs/tracker.md.
//
// GPU mapping: warp w tracks feature w (the 16 x 16 instances also run a feature on 16 lanes, two per warp:
// WarpEngine<N, G>, KESTREL_LK_LANES=16, the same sums in the same order). Lane l owns the patch pixels
// detail::lane_pixel(l, j, n) (at most
// 8 for 16x16: for 16x16 lane l owns column l % 16, rows 8 (l / 16) .. + 7), keeps T (centred, T - mu,
// once mu is known), gx, gy of its pixels in registers (when n divides 32 they form a run of rows of one
// patch column, so their taps lie at fixed offsets from one window address and neighbouring samples
// share a tap row; for 16x16 every lane has 8 pixels and the pixel loops run without per-pixel
// branches: `full`),
// accumulates its partial sums in that order, and the xor butterfly's sums (offsets 16, 8, 4, 2, 1; run as a
// reduce-scatter with the same additions, kernels/track/warp_sums.cuh) give every lane the identical full sums,
// so every lane runs the same Gauss-Newton iterations and the control flow stays warp-uniform. All levels in
// one launch. Tracks whose anchor warp is near the identity (detail::stored_patch_from) take their templates
// and the levels' prepared Hessians from the store written when their reference patch was stored
// (lk_store_kernel) instead of the previous frame.
// Image reads go through one shared-memory window per warp (struct Window, stage()): per level the
// template's neighbourhood is copied in and the template taken from it, then the current image's
// neighbourhood replaces it (both loaded together: one memory latency), re-copied only when the estimate
// leaves it (one window per warp keeps shared memory from limiting the warps an SM holds on small GPUs);
// the samples are bit-identical to reading the image (detail::grid_sample with detail::GridTaps). A window starts at a 4-aligned column and is copied in aligned 4-byte words (8 loads per lane and window);
// where it reaches past the image (the border rule, detail::kLkBorder) it replicates the edge pixels.
// Two instances of each tracking kernel: N = 16 (16 x 16 patches on every level, the default: no
// per-pixel guards, patch offsets without divisions, only that layout's code) and N = 0 (any layout).
// With LkLaunch::with_anchor each warp then runs its track's anchor fit (anchor_engine.cuh) in the same launch.
// All arithmetic is __fmul_rn/__fadd_rn/... (no FMA contraction) and __fmaf_rn where the rules fuse a * b + c
// (detail::ffma; std::fma on the CPU), matching the CPU bit for bit.
#include <cstdlib>
#include <string>

#include "kernels/common/cuda_check.hpp"
#include "kernels/common/warp_scan.cuh"
#include "kernels/detect/grid_constant.cuh"
#include "kernels/track/anchor_engine.cuh"
#include "kernels/track/warp_sums.cuh"
#include "kestrel/error.hpp"
#include "lk_track.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kWarpsPerBlock = 2;  // one staged window buffer of 4.7 KiB per track: 9.4 KiB static shared memory
// Blocks an SM must be able to hold: 8, i.e. at most 128 registers per thread (without the bound the compiler
// takes 130-180, which leaves an SM 12-14 warps). A tighter bound (80 registers, 24 warps) spills into
// local memory inside the iterations and measured slower at every SM count (H200: LK of 200 tracks 28.8
// against 19.4 us on 132 SMs, 50 against 42 us on 8); at 128 the default 16 x 16 instances spill nothing
// (a few bytes), the general instances (other patch sizes) a few hundred.
constexpr int kMinBlocksPerSm = 8;
/// Lanes per track of the 16 x 16 instances (32: a warp per track; 16: two tracks per warp, KESTREL_LK_LANES=16).
/// Measured on an H200 (docs/tracker.md): 16 lanes execute 14 % fewer warp instructions (the two tracks of a warp
/// share the scalar work only where their paths agree) but take 1.1-1.4 x as long at 8, 16 and 132 SMs (a lane's
/// 16 pixels lengthen the chain of dependent instructions that bounds the launch, and diverging tracks run one
/// after the other); 8 lanes (the engine supports them; not instantiated), 1.8-2.3 x.
constexpr int kLkLanesPerTrack = 32;
/// The 16-lane instances' blocks per SM: 168 registers (at 128 they spill; 1.1 x the time of 168 at 8 SMs).
constexpr int kMinBlocks16 = 6;

// Staged neighbourhoods: a window of kWin columns and kCurRows (the current image) or kRefRows (the reference
// level, for a template) rows of a pyramid level, copied from global memory into shared memory as floats. The
// window's first column is a multiple of 4, so a lane copies aligned 4-byte words (lane l of a track's G: word
// l % 8 of rows l / 8 + (G / 8) i). Row stride kWinStride = 50: a 16-wide patch puts rows r (lanes 0-15) and r + 8
// (lanes 16-31) in one warp instruction, 8 * 50 = 400 = 16 mod 32 banks apart, so the samples have no bank
// conflicts. A 16x16 patch reads 17 x 17 taps (its template 19 x 19, all in the 20 reference rows), so the
// current-image window lets the estimate move at least +-4 px across and +-3 px down or up (a level's start is the
// coarser level's estimate: its iterations move it by less) before it is staged again.
constexpr int kWin = 32;
constexpr int kCurRows = 24;
constexpr int kRefRows = 20;
constexpr int kWinStride = kWin + 18;
constexpr int kWinFloats = kCurRows * kWinStride;  // one buffer per track: the reference window, then the current
constexpr int kWinWords = kWin / 4;                // 4-byte words per window row
/// Staging by the G lanes of one track: rows one G-lane load covers, loads per lane for a window of Rows rows
/// (G = 32: 4 rows, 6 loads for the current image's window).
template <int G>
constexpr int kWinRowsPerLoad = G / kWinWords;
template <int G, int Rows>
constexpr int kWinLoads = Rows / kWinRowsPerLoad<G>;
static_assert(kCurRows % 4 == 0 && kRefRows % 4 == 0 && kRefRows <= kCurRows, "whole loads of 32 lanes");
/// Floats between the windows of consecutive tracks of a block (kWinFloats = 16 mod 32), so that the groups of a
/// warp (G < 32) sampling the same pixel slot of their tracks start on different banks when their grids sit alike
/// in their windows: G = 16, 16 banks apart; G = 8 (+8 floats), 24, 16 and 8 banks.
template <int G>
constexpr int kWinBufStride = kWinFloats + (G == 8 ? 8 : 0);
static_assert(kWinBufStride<16> % 32 == 16 && kWinBufStride<8> % 32 == 24 && kWinBufStride<8> % 4 == 0,
              "track windows on disjoint banks, 16-byte aligned");
static_assert(kWinStride % 2 == 0 && (8 * kWinStride) % 32 == 16, "8-byte aligned rows, half-warps on disjoint banks");
// Window::place<Rows> covers the taps [ix - 14, ix + 14] x [iy - Rows / 2 + 1, iy + Rows / 2] around (ix, iy) =
// floor of the centre: [iy - 11, iy + 12] for the current image, [iy - 9, iy + 10] for a template; a template's taps
// are within [ix - 9, ix + 10] x [iy - 9, iy + 10] for n <= 16 (PatchGrid: floor(c - h) - 1 >= c - h - 2 > ix - 10
// and floor(c - h) + n + 1 <= c + h + 2 < ix + 11 with h = (n - 1) / 2), a patch's within [ix - 8, ix + 9].
static_assert(kMaxPatchSize <= 16 && kRefRows == 20, "the reference window must cover a template");

/// A staged window: pixel (x, y) of the level at buf[(y - y0) * kWinStride + (x - x0)], for
/// x0 <= x < x0 + kWin, y0 <= y < y0 + rows (kCurRows or kRefRows, as placed).
struct Window {
    float* buf;
    int x0, y0;
    float xa, xb, ya, yb;  // covers()'s bounds, set by place()

    /// Window address of pixel (x, y).
    __device__ __forceinline__ const float* ptr(int x, int y) const { return buf + (y - y0) * kWinStride + (x - x0); }

    /// True when the window holds every tap of the grid whose first sample is at (vx, vy) (detail::PatchGrid,
    /// side and margin as given to place()): the taps x0g - m .. x0g + n + m with x0g = floor(vx). For integer
    /// bounds, floor(vx) - m >= x0 <=> vx >= x0 + m and floor(vx) + n + m <= x0 + kWin - 1 <=> vx < x0 + kWin - n - m
    /// (rows likewise): four float compares against bounds fixed at placement.
    __device__ __forceinline__ bool covers(float vx, float vy) const { return vx >= xa && vx < xb && vy >= ya && vy < yb; }

    /// Chooses the window of kWin columns and Rows rows around (cx, cy) for grids of side n widened by `margin`
    /// taps. It may reach past the image's edges (the border rule, detail::kLkBorder): load_words replicates the
    /// edge pixels there, as detail::GridTaps clamps its taps. Uniform in the track's lanes. x0 is a multiple of 4
    /// (aligned word loads): x0 = (ix - 14) rounded down to a multiple of 4, so the window [x0, x0 + 31] contains
    /// [ix - 14, ix + 14]; rows [iy - Rows / 2 + 1, iy + Rows / 2]. Afterwards covers() holds for the grid around
    /// (cx, cy) (see the static_assert above).
    template <int Rows>
    __device__ __forceinline__ void place(float cx, float cy, int n, int margin) {
        // Clamp before the conversion: the estimate may be far outside (it is then not used).
        const int ix = static_cast<int>(floorf(fminf(fmaxf(cx, -1.0e6f), 1.0e6f)));
        const int iy = static_cast<int>(floorf(fminf(fmaxf(cy, -1.0e6f), 1.0e6f)));
        x0 = (ix - (kWin / 2 - 2)) & ~3;
        y0 = iy - (Rows / 2 - 1);
        xa = static_cast<float>(x0 + margin);
        xb = static_cast<float>(x0 + kWin - n - margin);
        ya = static_cast<float>(y0 + margin);
        yb = static_cast<float>(y0 + Rows - n - margin);
    }
};

/// Taps of a grid from a staged window (detail::grid_sample's tap source): p = the window address of the
/// grid's tap (x0g + di, y0g + dj) for this lane's (di, dj); at(i, j) is then tap (x0g + di + i, y0g + dj + j).
struct WinTaps {
    const float* p;
    __device__ __forceinline__ float at(int i, int j) const { return p[j * kWinStride + i]; }
};

/// The 4-byte words of window `win` (Rows rows) that this lane copies: word (lane % 8) of rows lane / 8 + (G / 8) i.
/// A window inside the image is read with plain strided loads. Rows outside the image read its nearest row; a word inside the row is one aligned load (DevicePyramid
/// levels start 4-byte aligned with a pitch that is a multiple of 4, checked on the host), a word that
/// reaches past either end of the row is assembled from its pixels with clamped columns (the border
/// rule: the edge pixel is replicated, as detail::GridTaps reads it).
template <int G, int Rows>
__device__ __forceinline__ void load_words(const detail::LkImage& im, const Window& win, int lane,
                                           unsigned (&v)[kWinLoads<G, Rows>]) {
    const int col = win.x0 + (lane % kWinWords) * 4, row = win.y0 + lane / kWinWords;
    const int last_x = im.width - 1, last_y = im.height - 1;
    if (win.x0 >= 0 && win.x0 + kWin - 1 <= last_x && win.y0 >= 0 && win.y0 + Rows - 1 <= last_y) {
        // The window lies inside the image (the usual case; uniform in the track's lanes): no row is clamped and
        // every word is one aligned load, rows kWinRowsPerLoad<G> apart.
        const std::uint8_t* r = im.data + static_cast<std::size_t>(row) * im.pitch + col;
        const std::size_t step = static_cast<std::size_t>(kWinRowsPerLoad<G>) * im.pitch;
#pragma unroll
        for (int i = 0; i < kWinLoads<G, Rows>; ++i) v[i] = __ldg(reinterpret_cast<const unsigned*>(r + i * step));
        return;
    }
    const bool whole = col >= 0 && col + 3 <= last_x;
    int c[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) c[j] = detail::clamp_tap(col + j, last_x);
#pragma unroll
    for (int i = 0; i < kWinLoads<G, Rows>; ++i) {
        const std::uint8_t* r =
            im.data + static_cast<std::size_t>(detail::clamp_tap(row + i * kWinRowsPerLoad<G>, last_y)) * im.pitch;
        if (whole) {
            v[i] = __ldg(reinterpret_cast<const unsigned*>(r + col));
        } else {
            v[i] = static_cast<unsigned>(__ldg(r + c[0])) | (static_cast<unsigned>(__ldg(r + c[1])) << 8) |
                   (static_cast<unsigned>(__ldg(r + c[2])) << 16) | (static_cast<unsigned>(__ldg(r + c[3])) << 24);
        }
    }
}

/// Stores the words of load_words as floats (little-endian: byte j is column col + j), 8 bytes at a time.
template <int G, int Rows>
__device__ __forceinline__ void store_words(const Window& win, int lane, const unsigned (&v)[kWinLoads<G, Rows>]) {
    const int col = (lane % kWinWords) * 4, row = lane / kWinWords;
#pragma unroll
    for (int i = 0; i < kWinLoads<G, Rows>; ++i) {
        float2* dst = reinterpret_cast<float2*>(win.buf + (row + i * kWinRowsPerLoad<G>) * kWinStride + col);
        dst[0] = make_float2(static_cast<float>(v[i] & 0xffu), static_cast<float>((v[i] >> 8) & 0xffu));
        dst[1] = make_float2(static_cast<float>((v[i] >> 16) & 0xffu), static_cast<float>(v[i] >> 24));
    }
}

/// Copies the placed current-image window w from its image by the G lanes of its track (lane: the lane in the
/// group, mask: the group's lanes): every load is issued before the first store, so the copy costs one memory
/// latency.
template <int G>
__device__ __forceinline__ void stage(const detail::LkImage& im, const Window& w, int lane, unsigned mask) {
    unsigned v[kWinLoads<G, kCurRows>];
    load_words<G, kCurRows>(im, w, lane, v);
    __syncwarp(mask);  // every lane is done reading the previous contents
    store_words<G, kCurRows>(w, lane, v);
    __syncwarp(mask);  // the copy is visible to every lane
}

/// Window w placed around (cx, cy) on *cur (grids of side n) and staged. Not inlined: it runs rarely, and out
/// of line it keeps the iteration loop's code short (16x16: 389 SASS instructions instead of 695). Window
/// and result by value, so that the engine itself stays in registers.
template <int G>
__device__ __noinline__ Window restaged(Window w, const detail::LkImage* cur, float cx, float cy, int n, int lane,
                                        unsigned mask) {
    w.place<kCurRows>(cx, cy, n, 0);
    stage<G>(*cur, w, lane, mask);
    return w;
}

/// The G lanes of one track as the engine of detail::lk_track_one (one instance per lane; G = 32: a warp
/// per track, G = 16 or 8: two or four tracks per warp, for N = 16 only). N > 0: every level's patch
/// side is N, known at compile time (the default 16 x 16 on all levels: the pixel loops have no guards
/// and the code holds only that layout); N = 0: the side of level k is setup.patch[k]. Per level it stages the
/// template's neighbourhood of the reference level (live templates) and the neighbourhood of the
/// level's start in the current level together, computes T, gx, gy of its pixels from shared memory,
/// and samples the current image from its window; the window is staged again (centred on the
/// estimate) only when the patch's grid no longer fits in it. The samples are the same bytes and the same
/// arithmetic as detail::grid_sample on the image, so the results do not depend on the staging.
/// Lane l of the group does the work of the 32-lane warp's lanes l + G r, r < 32 / G (its "virtual lanes"):
/// slot p = 8 r + j holds pixel i = detail::lane_pixel(l + G r, j, n), at grid column i % n and row i / n, and
/// virtual lane r's partial sums are kept apart (acc[r]) until the butterfly's stages inside the lane
/// (track_sums::group_allreduce_add_rn): every sum is the 32-lane warp's, bit for bit. When n divides 32 the
/// pixels of a virtual lane are rows (l / n) R + j of column l % n (`column`, R = ceil(n^2 / 32)): their taps
/// are at fixed offsets from one window address, so a sample is shared-memory loads with immediate offsets
/// and the weights' arithmetic, and consecutive samples share a tap row (16 x 16, G = 16: lane l holds all of
/// column l, 17 tap rows for 16 samples; G = 8: columns l and l + 8).
template <int N, int G>
struct WarpEngine {
    static_assert(G == 32 || N == 16, "fewer lanes per track: 16 x 16 patches only");
    static constexpr bool kFixed = N > 0;
    static constexpr int kR = 32 / G;                           // virtual lanes per lane
    static constexpr int kP = detail::kLkMaxPerLane * kR;       // pixel slots per lane
    const detail::LkSetup& s;
    const detail::LkImage* ref;   // live templates (nullptr: stored)
    const float* slot_base;       // stored templates of this feature
    const std::int32_t* valid;    // their per-level flags
    const detail::LkLevelPrep* lprep;  // their preparations (nullptr: none)
    int from_level;               // with ref and slot_base: the first level of stored templates
    bool from_store;              // the current level's template is the stored one
    int lane;                     // lane in the group
    unsigned mask;                // the group's lanes in the warp
    Window cw;                    // current-image window (cw_level: the level it holds, -1: none)
    Window rw;                    // reference window (template extraction)
    int cw_level;
    bool one_column;              // n divides 32: all of this lane's pixels lie in one patch column
    bool full;                    // n == 16: every lane has kLkMaxPerLane pixels (and one_column)
    float half_k;                 // patch_half(n) of the level being tracked
    // T (after hessian_sums: T - mu), gx, gy of this lane's pixels
    float t[kP], gx[kP], gy[kP];
    // Pixel p of this lane is grid pixel (org_x + px(p), org_y + py(p)): in the column layout org = (l % n,
    // first row (l / n) R) and, for N = 16, (px, py) compile-time offsets (virtual lane r = p / 8 sits
    // (G r) % 16 columns right of and 8 ((G r) / 16) rows below lane l's first pixel); N = 0 keeps them in
    // pi, pj ((0, j) in the column layout, else (i % n, i / n) with org = (0, 0)).
    int org_x, org_y;
    int pi[kFixed ? 1 : kP], pj[kFixed ? 1 : kP];
    unsigned slots;               // bit p: slot p holds a pixel (detail::lane_pixel >= 0)

    __device__ WarpEngine(const detail::LkSetup& setup, const detail::LkImage* r, const float* slots,
                          const std::int32_t* flags, int l, unsigned m, float* cur_buf, float* ref_buf,
                          const detail::LkLevelPrep* prep = nullptr, int from = 0)
        : s(setup), ref(r), slot_base(slots), valid(flags), lprep(prep), from_level(from), from_store(false), lane(l),
          mask(m), cw{cur_buf, 0, 0, 0, 0}, rw{ref_buf, 0, 0, 0, 0},
          cw_level(-1), one_column(false), full(false), half_k(0.0f), org_x(0), org_y(0), slots(0u) {}

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
    /// Slot p of this lane holds a pixel.
    __device__ __forceinline__ bool has(int p) const { return is_full() || ((slots >> p) & 1u) != 0u; }
    /// The patch pixel of slot p (detail::lane_pixel of its virtual lane), -1: none.
    __device__ __forceinline__ int pixel(int p, int n) const {
        return detail::lane_pixel(lane + G * (p / detail::kLkMaxPerLane), p % detail::kLkMaxPerLane, n);
    }
    /// Grid offsets of slot p from (org_x, org_y).
    __device__ __forceinline__ int px(int p) const {
        if constexpr (kFixed) return (G * (p / detail::kLkMaxPerLane)) % N;
        else return pi[p];
    }
    __device__ __forceinline__ int py(int p) const {
        if constexpr (kFixed)
            return detail::kLkMaxPerLane * ((G * (p / detail::kLkMaxPerLane)) / N) + p % detail::kLkMaxPerLane;
        else return pj[p];
    }
    /// The lane's taps on grid g from window w: at(px(p) + di, py(p) + dj) is tap (di, dj) of pixel p.
    __device__ __forceinline__ WinTaps taps(const Window& w, const detail::PatchGrid& g) const {
        return WinTaps{w.ptr(g.x0 + org_x, g.y0 + org_y)};
    }

    /// K sums over the patch (track_sums::patch_sums over the slots that hold a pixel) into out[0 .. K-1].
    template <int K, class Add>
    __device__ __forceinline__ void patch_sums(float* out, Add&& add) {
        track_sums::patch_sums<K, G, detail::kLkMaxPerLane>(out, lane, mask, [&](int p) { return has(p); }, add);
    }

    __device__ __forceinline__ bool load_template(int k, float rx, float ry, const detail::LkImage& cur, float cx,
                                                  float cy) {
        const int n = side(k);
        const int npx = n * n;
        one_column = detail::kLkLanes % n == 0;  // all of the lane's pixels lie in column l % n (lane_pixel)
        full = npx == detail::kLkLanes * detail::kLkMaxPerLane;  // 16 x 16: every lane has 8 pixels
        half_k = detail::patch_half(n);
        slots = 0u;
        org_x = is_column() ? lane % n : 0;
        org_y = is_column() ? (lane / n) * ((npx + detail::kLkLanes - 1) / detail::kLkLanes) : 0;  // (l / n) R
        if constexpr (!kFixed) {
#pragma unroll
            for (int p = 0; p < kP; ++p) {
                const int i = pixel(p, n);
                slots |= (i >= 0 ? 1u : 0u) << p;
                pi[p] = is_column() ? 0 : i % n;
                pj[p] = is_column() ? p : i / n;
            }
        }
        cw.place<kCurRows>(cx, cy, n, 0);
        cw_level = k;
        from_store = ref == nullptr || (slot_base != nullptr && k >= from_level);
        if (from_store) {  // the stored template
            if (valid[k] == 0) {
                stage<G>(cur, cw, lane, mask);
                return false;
            }
            const float* base = slot_base + detail::store_level_offset(s, k);
#pragma unroll
            for (int p = 0; p < kP; ++p) {
                if (has(p)) {
                    const int i = pixel(p, n);
                    t[p] = base[i];
                    gx[p] = base[npx + i];
                    gy[p] = base[2 * npx + i];
                }
            }
            stage<G>(cur, cw, lane, mask);
            return true;
        }
        if (!detail::inside(ref[k], rx, ry, n, 1)) {
            stage<G>(cur, cw, lane, mask);
            return false;
        }
        // One buffer for both windows: every load of both is issued first (one memory latency), the
        // reference window is stored and the template taken from it, then the current window replaces it.
        rw.place<kRefRows>(rx, ry, n, 1);  // covers the template's taps (see Window::place)
        unsigned vr[kWinLoads<G, kRefRows>], vc[kWinLoads<G, kCurRows>];
        load_words<G, kRefRows>(ref[k], rw, lane, vr);
        load_words<G, kCurRows>(cur, cw, lane, vc);
        __syncwarp(mask);  // every lane is done reading the previous contents
        store_words<G, kRefRows>(rw, lane, vr);
        __syncwarp(mask);
        const detail::PatchGrid g = detail::patch_grid(rx, ry, half_k);
        const WinTaps src = taps(rw, g);
#pragma unroll
        for (int p = 0; p < kP; ++p)
            if (has(p)) detail::grid_template(src, g, px(p), py(p), t[p], gx[p], gy[p]);
        __syncwarp(mask);  // the template is read before the current window overwrites it
        store_words<G, kCurRows>(cw, lane, vc);
        __syncwarp(mask);
        return true;
    }

    /// Level k's preparation, read from the store when the level's template is a stored one with a preparation;
    /// centres the template (t[p] <- T - mu) as hessian_sums would.
    __device__ __forceinline__ bool prepared(int k, detail::LkLevelPrep& pr) {
        if (!from_store || lprep == nullptr) return false;
        pr = lprep[k];
#pragma unroll
        for (int p = 0; p < kP; ++p)
            if (has(p)) t[p] = detail::fsub(t[p], pr.mu);
        return true;
    }

    __device__ __forceinline__ float template_sum(int) {
        float out[1];
        patch_sums<1>(out, [&](float* acc, int p) { acc[0] = detail::fadd(acc[0], t[p]); });
        return out[0];
    }

    /// Also centres the template in place: t[p] <- T - mu, which the level's iterations then use
    /// directly (the CPU reference computes the same fsub(T, mu) per use).
    __device__ __forceinline__ void hessian_sums(int, float mu, float* out) {
        patch_sums<detail::kLkHessianSums>(out, [&](float* acc, int p) {
            t[p] = detail::fsub(t[p], mu);
            detail::add_hessian_centred(acc, t[p], gx[p], gy[p]);
        });
    }

    /// Current-image samples of this lane's pixels on the grid at (cx, cy) (precondition: inside(cur, cx,
    /// cy, n, 0)); the window is staged again, centred on the estimate, when it no longer covers the grid.
    __device__ __forceinline__ void sample(int k, const detail::LkImage& cur, float cx, float cy, float* img) {
        const int n = side(k);
        const detail::PatchGrid g = detail::patch_grid(cx, cy, half_k);
        if (!(cw_level == k && cw.covers(g.vx, g.vy))) {
            cw = restaged<G>(cw, &cur, cx, cy, n, lane, mask);
            cw_level = k;
        }
        const WinTaps src = taps(cw, g);
#pragma unroll
        for (int p = 0; p < kP; ++p)
            if (has(p)) img[p] = detail::grid_sample(src, g, px(p), py(p));
    }

    /// The image sums of this iteration, packed (detail::add_image_sums_packed): sum |e| (out[4]) only when with_sad
    /// (the coarse levels' discard test needs it, level 0's iterations do not), sum a I (out[2]) only on a level that
    /// estimates the gain (level 0; elsewhere its error term serves nothing): one value fewer in the pixel loop and
    /// the warp sums each (the default: 4 values on every level instead of 5 and 4).
    template <bool Sad, bool Gain>
    __device__ __forceinline__ void packed_sums(const float* img, float alpha, float beta_c, float* out) {
        float v[detail::kLkImageSumsPacked<Sad, Gain>];
        patch_sums<detail::kLkImageSumsPacked<Sad, Gain>>(v, [&](float* acc, int p) {
            detail::add_image_sums_packed<Sad, Gain>(acc, t[p], gx[p], gy[p], img[p], alpha, beta_c);
        });
        detail::unpack_image_sums<Sad, Gain>(v, out);
    }
    __device__ __forceinline__ void image_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha,
                                               float beta_c, float /*mu: t is centred*/, float* out, bool with_sad) {
        float img[kP];
        sample(k, cur, cx, cy, img);
        const bool gain = k == 0 && s.est_gain != 0;
        if (with_sad) {
            if (gain) packed_sums<true, true>(img, alpha, beta_c, out);
            else packed_sums<true, false>(img, alpha, beta_c, out);
        } else {
            if (gain) packed_sums<false, true>(img, alpha, beta_c, out);
            else packed_sums<false, false>(img, alpha, beta_c, out);
        }
    }

    __device__ __forceinline__ void residual_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha,
                                                  float beta_c, float alpha0, float beta_c0, float /*mu*/, float* sad,
                                                  float* sad0) {
        float img[kP];
        sample(k, cur, cx, cy, img);
        float v[2];
        patch_sums<2>(v, [&](float* acc, int p) {
            acc[0] = detail::fadd(acc[0], fabsf(detail::pixel_error_centred(t[p], img[p], alpha, beta_c)));
            acc[1] = detail::fadd(acc[1], fabsf(detail::pixel_error_centred(t[p], img[p], alpha0, beta_c0)));
        });
        *sad = v[0];
        *sad0 = v[1];
    }
};

__device__ __forceinline__ int warp_index() { return static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) >> 5); }

/// The tracking kernels' launch shape for G lanes per track: warps per block and tracks per block. An instance asks
/// for B blocks per SM (its template argument): kMinBlocksPerSm, 128 registers per thread, for G = 32; kMinBlocks16,
/// 168, for G = 16; G = 8 would take one warp per block at 255 registers (its lanes hold 32 pixels each). A block
/// holds one window buffer per track.
template <int G>
struct LkShape {
    static constexpr int kWarps = G == 8 ? 1 : kWarpsPerBlock;
    static constexpr int kThreads = kWarps * 32;
    static constexpr int kTracks = kThreads / G;
};

/// A track's G lanes: the track index, the lane in the group and the group's mask.
template <int G>
struct TrackLanes {
    int f, lane;
    unsigned mask;
    __device__ __forceinline__ TrackLanes()
        : f(static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / G)),
          lane(static_cast<int>(threadIdx.x % G)),
          mask(track_sums::group_mask<G>(static_cast<int>(threadIdx.x & 31u))) {}
};

// The launch descriptor is copied once per block into shared memory: the driver indexes the level
// arrays with the runtime level k, which on kernel parameters would force a per-thread local copy. With
// __grid_constant__ (KESTREL_GRID_CONSTANT) every thread of the block copies a share of its 4-byte words, read from
// the parameter in place (about 20 instructions a warp instead of 220 for the one thread that copied it whole);
// without it, thread 0 copies it.
static_assert(sizeof(LkLaunch) % 4 == 0 && alignof(LkLaunch) >= 4, "the launch descriptor copies as 4-byte words");
template <int Threads, class T>
__device__ __forceinline__ void copy_params(T& dst, const T& src) {
#if KESTREL_HAS_GRID_CONSTANT
    constexpr int kWords = static_cast<int>(sizeof(T) / 4);
    const unsigned* from = reinterpret_cast<const unsigned*>(&src);
    unsigned* to = reinterpret_cast<unsigned*>(&dst);
    const int t = static_cast<int>(threadIdx.x);
#pragma unroll
    for (int i = 0; i < kWords; i += Threads)
        if (i + t < kWords) to[i + t] = from[i + t];
#else
    if (threadIdx.x == 0) dst = src;
#endif
}
#define KESTREL_LK_SHARED_PARAMS(p_in, p, threads) \
    __shared__ LkLaunch p;                         \
    copy_params<threads>(p, p_in);                 \
    __syncthreads();

// The staged windows of the block: per track one buffer for the current-image and the reference window.
#define KESTREL_LK_WINDOWS(G, cur_buf, ref_buf)                                                  \
    __shared__ __align__(16) float lk_windows[LkShape<G>::kTracks * kWinBufStride<G>];           \
    float* cur_buf = lk_windows + (threadIdx.x / (G)) * kWinBufStride<G>;                        \
    float* ref_buf = cur_buf;

/// The anchor fit of track f after its LK result (LkLaunch::with_anchor): in the same launch, so that the
/// kernel lasts as long as the longest LK + fit of one track rather than the longest LK plus the longest fit
/// (tracks that LK loses, the slow ones, skip the fit).
/// The fit samples level 0 from the track's staged window where its taps lie there (the window LK left around
/// the track's final estimate, when LK ended on level 0), else from the image: the same values either way.
/// buf: the track's window buffer (the fit's window, when valid, is always this one: shared memory to the compiler).
template <int N, int G, class Engine>
__device__ __forceinline__ void anchor_after(const LkLaunch& p, const TrackLanes<G>& tl, const LkResult& res,
                                             const Engine* eng, const float* buf) {
    if (!p.with_anchor) return;
    AnchorWindow win;
    win.buf = buf;
    if (eng != nullptr && eng->cw_level == 0)
        win = AnchorWindow{buf, eng->cw.x0, eng->cw.y0, kWin, kCurRows, kWinStride, true};
    const detail::AnchorResult a = anchor_track<N, G>(p.anchor, p.cur[0], tl.f, tl.lane, tl.mask, res, win);
    if (tl.lane == 0) p.anchor.results[tl.f] = a;
}

template <int N, int G, int B = kMinBlocksPerSm>
__global__ void __launch_bounds__(LkShape<G>::kThreads, B) lk_track_live_kernel(KESTREL_GRID_CONSTANT const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p, LkShape<G>::kThreads)
    const TrackLanes<G> tl;
    const int f = tl.f;
    if (f >= p.count) return;  // uniform in the track's lanes
    const Point2f r = p.points[f];
    const LkGuess g = p.guesses ? p.guesses[f] : LkGuess{r.x, r.y, 1.0f, 0.0f};
    KESTREL_LK_WINDOWS(G, cur_buf, ref_buf)
    // The levels from LkSetup::stored_from_level on from the track's stored reference patch, when the launch has a
    // store and the track's anchor warp allows it (detail::stored_patch_from: the coarse levels, or all).
    const int slot = p.store != nullptr ? p.slots[f] : -1;
    const int from = slot >= 0 && slot < p.capacity && p.with_anchor
                         ? detail::stored_patch_from(p.anchor.setup, p.anchor.states[f], p.setup.stored_from_level,
                                                     p.setup.levels)
                         : p.setup.levels;
    const bool stored = from < p.setup.levels;
    WarpEngine<N, G> eng(p.setup, p.ref,
                         stored ? p.store + static_cast<std::size_t>(slot) * detail::store_floats_per_slot(p.setup)
                                : nullptr,
                         stored ? p.store_valid + static_cast<std::size_t>(slot) * p.setup.levels : nullptr, tl.lane,
                         tl.mask, cur_buf, ref_buf,
                         stored && p.prep ? p.prep + static_cast<std::size_t>(slot) * p.setup.levels : nullptr, from);
    const int top = detail::lk_top_level(p.setup, p.skips != nullptr ? p.skips[f] : 0);
    const LkResult res = detail::lk_track_one(eng, p.setup, p.cur, r.x, r.y, g, top);
    if (tl.lane == 0) p.results[f] = res;
    anchor_after<N, G>(p, tl, res, &eng, cur_buf);
}

template <int N, int G, int B = kMinBlocksPerSm>
__global__ void __launch_bounds__(LkShape<G>::kThreads, B) lk_track_stored_kernel(KESTREL_GRID_CONSTANT const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p, LkShape<G>::kThreads)
    const TrackLanes<G> tl;
    const int f = tl.f;
    if (f >= p.count) return;
    const int slot = p.slots[f];
    const LkGuess g = p.guesses[f];
    KESTREL_LK_WINDOWS(G, cur_buf, ref_buf)
    if (slot < 0 || slot >= p.capacity) {
        LkResult res;
        res.x = g.x; res.y = g.y; res.gain = g.gain; res.offset = g.offset;
        res.status = TrackStatus::LostOutOfBounds;  // no such slot
        if (tl.lane == 0) p.results[f] = res;
        anchor_after<N, G>(p, tl, res, static_cast<const WarpEngine<N, G>*>(nullptr), cur_buf);
    } else {
        WarpEngine<N, G> eng(p.setup, nullptr,
                             p.store + static_cast<std::size_t>(slot) * detail::store_floats_per_slot(p.setup),
                             p.store_valid + static_cast<std::size_t>(slot) * p.setup.levels, tl.lane, tl.mask, cur_buf,
                             ref_buf);
        const int top = detail::lk_top_level(p.setup, p.skips != nullptr ? p.skips[f] : 0);
        const LkResult res = detail::lk_track_one(eng, p.setup, p.cur, 0.0f, 0.0f, g, top);
        if (tl.lane == 0) p.results[f] = res;
        anchor_after<N, G>(p, tl, res, &eng, cur_buf);
    }
}

/// The engine of detail::lk_prepare_level over a stored template in global memory (the sums of WarpEngine, in its
/// lane layout and order: the same values).
struct StoredLevelEngine {
    const float* base;  // level k's T, gx, gy (n * n each)
    int n, lane;
    __device__ float template_sum(int) const {
        float acc[1] = {0.0f};
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            if (i >= 0) acc[0] = detail::fadd(acc[0], base[i]);
        }
        track_sums::allreduce_add_rn<1>(acc, lane);
        return acc[0];
    }
    __device__ void hessian_sums(int, float mu, float* out) const {
#pragma unroll
        for (int q = 0; q < detail::kLkHessianSums; ++q) out[q] = 0.0f;
        const int npx = n * n;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            if (i >= 0) detail::add_hessian_centred(out, detail::fsub(base[i], mu), base[npx + i], base[2 * npx + i]);
        }
        track_sums::allreduce_add_rn<detail::kLkHessianSums>(out, lane);
    }
};

/// One warp per point and level (w = f * per + k, per = levels, plus one with the anchor store): the levels of a
/// point are stored side by side instead of one after the other (the store's latency is that of one level), and
/// warp k == levels runs the point's anchor store (anchor_store_one).
__global__ void lk_store_kernel(KESTREL_GRID_CONSTANT const LkLaunch p_in, const AnchorStoreLaunch a,
                                int with_anchor_store) {
    KESTREL_LK_SHARED_PARAMS(p_in, p, kWarpsPerBlock * 32)
    const int per = p.setup.levels + with_anchor_store;
    const int w = warp_index();
    const int f = w / per, k = w - f * per;
    if (f >= p.count) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    if (k == p.setup.levels) {
        anchor_store_one(a, f, lane);
        return;
    }
    const int slot = p.slots[f];
    if (slot < 0 || slot >= p.capacity) return;
    const Point2f r = p.points[f];
    float* base = p.store + static_cast<std::size_t>(slot) * detail::store_floats_per_slot(p.setup);
    const float sk = p.setup.scale[k];
    const float rx = detail::to_level(r.x, sk), ry = detail::to_level(r.y, sk);
    // The CPU's extract_template_cpu, its pixels spread over the lanes.
    const bool ok = detail::extract_template(p.ref[k], rx, ry, p.setup.patch[k],
                                             base + detail::store_level_offset(p.setup, k), lane, detail::kLkLanes);
    if (lane == 0) p.store_valid[static_cast<std::size_t>(slot) * p.setup.levels + k] = ok ? 1 : 0;
    if (p.prep != nullptr && k >= p.setup.stored_from_level) {  // the level's preparation, once
        detail::LkLevelPrep prep{};
        if (ok) {
            __syncwarp();  // every lane's template pixels are written (and visible to the warp)
            StoredLevelEngine e{base + detail::store_level_offset(p.setup, k), p.setup.patch[k], lane};
            detail::lk_prepare_level(e, p.setup, k, prep);
        }
        if (lane == 0) p.prep[static_cast<std::size_t>(slot) * p.setup.levels + k] = prep;
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

/// Round trip (stereo matching): track f forward, template from `ref` at points[f] into `cur` from guesses[f];
/// then back, template from `cur` at the forward result into `ref` from points[f] (a lost forward result starts
/// the backward track at NaN, which ends it at once), unless detail::round_trip_needed (a trusted seed whose
/// forward result converged near it) says the way back is not needed: then detail::skipped_round_trip. The CPU
/// twin: src/stereo/stereo_matcher_cpu.cpp, the same rules and lk_track_one calls; one launch instead of forward,
/// backward inputs and backward.
template <int N, int G, int B = kMinBlocksPerSm>
__global__ void __launch_bounds__(LkShape<G>::kThreads, B)
    lk_track_round_trip_kernel(KESTREL_GRID_CONSTANT const LkLaunch p_in) {
    KESTREL_LK_SHARED_PARAMS(p_in, p, LkShape<G>::kThreads)
    const TrackLanes<G> tl;
    const int f = tl.f;
    if (f >= p.count) return;  // uniform in the track's lanes
    const float nan = __int_as_float(0x7fc00000);
    Point2f r;
    LkGuess g;
    if (p.stage.lk != nullptr) {
        // The tracker's verdict on track f, as its host bookkeeping will find it (the host checks the position).
        const Point2f o = p.stage.origins[f];
        const detail::TrackVerdict v =
            detail::track_verdict(p.stage.lk[f], p.stage.back != nullptr ? p.stage.back + f : nullptr, o.x, o.y,
                                  p.stage.anchor != nullptr ? p.stage.anchor + f : nullptr, p.stage.rule);
        r = v.status == TrackStatus::Tracked ? Point2f{v.x, v.y} : Point2f{nan, nan};
        const Point2f off = p.stage.offsets[f];
        g = LkGuess{detail::fadd(r.x, off.x), detail::fadd(r.y, off.y), 1.0f, 0.0f};
        if (tl.lane == 0) p.stage.points[f] = r;
    } else {
        r = p.points[f];
        g = p.guesses ? p.guesses[f] : LkGuess{r.x, r.y, 1.0f, 0.0f};
    }
    KESTREL_LK_WINDOWS(G, cur_buf, ref_buf)
    const std::int32_t seed = p.refine != nullptr ? p.refine[f] : detail::kSeedSearch;
    const detail::LkSetup& su = detail::match_refines(seed) ? p.refine_setup : p.setup;
    WarpEngine<N, G> fwd(su, p.ref, nullptr, nullptr, tl.lane, tl.mask, cur_buf, ref_buf);
    const LkResult res = detail::lk_track_one(fwd, su, p.cur, r.x, r.y, g);
    if (tl.lane == 0) p.results[f] = res;
    if (!detail::round_trip_needed(seed, res.status, res.x, res.y, g.x, g.y, p.trust_distance)) {
        if (tl.lane == 0) p.back_results[f] = detail::skipped_round_trip(r.x, r.y);
        return;
    }
    const bool alive = res.status == TrackStatus::Tracked || res.status == TrackStatus::NotConverged;
    WarpEngine<N, G> back(su, p.cur, nullptr, nullptr, tl.lane, tl.mask, cur_buf, ref_buf);
    const LkResult b = detail::lk_track_one(back, su, p.ref, alive ? res.x : nan, alive ? res.y : nan,
                                            LkGuess{r.x, r.y, 1.0f, 0.0f});
    if (tl.lane == 0) p.back_results[f] = b;
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

/// The lanes per track of the 16 x 16 instances: kLkLanesPerTrack, or the environment variable KESTREL_LK_LANES
/// (32 or 16; the instances are the same arithmetic in the same order, so both give the same results).
int lanes_per_track() {
    const char* v = std::getenv("KESTREL_LK_LANES");
    if (v == nullptr || *v == '\0') return kLkLanesPerTrack;
    const std::string s = v;
    if (s == "32") return 32;
    if (s == "16") return 16;
    throw InvalidArgument("KESTREL_LK_LANES", "kestrel: environment variable KESTREL_LK_LANES = '" + s +
                                                  "' must be 32 or 16 (or unset)");
}

/// Launches kernel<N, G> (G lanes per track) over count tracks.
template <int G>
void launch_tracks(void (*kernel)(const LkLaunch), const LkLaunch& p, cudaStream_t stream) {
    const unsigned blocks = static_cast<unsigned>((p.count + LkShape<G>::kTracks - 1) / LkShape<G>::kTracks);
    kernel<<<blocks, LkShape<G>::kThreads, 0, stream>>>(p);
}

}  // namespace

void launch_lk_track_live(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    if (!every_patch_full(p.setup)) launch_tracks<32>(lk_track_live_kernel<0, 32>, p, stream);
    else switch (lanes_per_track()) {
        case 16: launch_tracks<16>(lk_track_live_kernel<kMaxPatchSize, 16, kMinBlocks16>, p, stream); break;
        default: launch_tracks<32>(lk_track_live_kernel<kMaxPatchSize, 32>, p, stream); break;
    }
    KESTREL_CUDA_LAUNCH("lk track");
}

void launch_lk_track_round_trip(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    if (!every_patch_full(p.setup)) launch_tracks<32>(lk_track_round_trip_kernel<0, 32>, p, stream);
    else switch (lanes_per_track()) {
        case 16: launch_tracks<16>(lk_track_round_trip_kernel<kMaxPatchSize, 16, kMinBlocks16>, p, stream); break;
        default: launch_tracks<32>(lk_track_round_trip_kernel<kMaxPatchSize, 32>, p, stream); break;
    }
    KESTREL_CUDA_LAUNCH("lk track round trip");
}

void launch_lk_track_stored(const LkLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    if (!every_patch_full(p.setup)) launch_tracks<32>(lk_track_stored_kernel<0, 32>, p, stream);
    else switch (lanes_per_track()) {
        case 16: launch_tracks<16>(lk_track_stored_kernel<kMaxPatchSize, 16, kMinBlocks16>, p, stream); break;
        default: launch_tracks<32>(lk_track_stored_kernel<kMaxPatchSize, 32>, p, stream); break;
    }
    KESTREL_CUDA_LAUNCH("lk track stored");
}

void launch_lk_store(const LkLaunch& p, cudaStream_t stream, const AnchorStoreLaunch* anchor) {
    if (p.count <= 0) return;
    const int with_anchor_store = anchor != nullptr ? 1 : 0;
    lk_store_kernel<<<grid_for(p.count * (p.setup.levels + with_anchor_store)), kWarpsPerBlock * 32, 0, stream>>>(
        p, anchor != nullptr ? *anchor : AnchorStoreLaunch{}, with_anchor_store);
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
