// The Lucas-Kanade rules shared verbatim by the CPU reference (src/lk_cpu.cpp) and the CUDA kernel
// (kernels/lk_track.cu): sampling, template, per-pixel sums, the 4x4 solve and the coarse-to-fine
// driver. Derivation and conventions: kernels/lk_track.cu and docs/tracker.md.
//
// Exactness: every float operation goes through fmul/fadd/fsub/fdiv below, which are the IEEE
// round-to-nearest operations on both sides (on the device __fmul_rn & co., which nvcc never fuses
// into FMA), and the CPU reference emulates the warp's summation order (lane l sums pixels
// l, l + 32, ... in order; then the xor butterfly 16, 8, 4, 2, 1). The CPU and GPU therefore run the
// same operations in the same order; the stated tolerance (1e-3 px, 1e-4 gain/offset) only covers
// host compilers that contract a*b+c into FMA despite this (see docs/tracker.md).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kestrel/detail/hd.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/pyramid.hpp"

#if defined(__CUDACC__)
#define KESTREL_HD_TEMPLATE_CHECK _Pragma("nv_exec_check_disable")
#else
#define KESTREL_HD_TEMPLATE_CHECK
#endif
#if defined(__CUDA_ARCH__)
#define KESTREL_UNROLL _Pragma("unroll")
#else
#define KESTREL_UNROLL
#endif

namespace kestrel::detail {

constexpr int kLkLanes = 32;
constexpr int kLkMaxPerLane = (kMaxPatchSize * kMaxPatchSize + kLkLanes - 1) / kLkLanes;  // 8
constexpr int kLkHessianSums = 9;  // gx^2, gx gy, gy^2, gx a, gy a, a^2, gx, gy, a
constexpr int kLkErrorSums = 5;    // gx e, gy e, a e, e, |e|
constexpr float kLkMinGain = 0.1f;     // a gain outside [0.1, 10] -> LostResidual (no correlation left)
constexpr float kLkPivotEps = 1e-6f;   // LDL^T pivot d_j <= eps * H_jj -> singular

// ---- exact float operations ---------------------------------------------------------------------
KESTREL_HD float fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
KESTREL_HD float fadd(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
KESTREL_HD float fsub(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
KESTREL_HD float fdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}
KESTREL_HD bool finite(float v) { return v == v && v - v == 0.0f; }  // false for NaN and +-inf

// ---- images and setup ---------------------------------------------------------------------------
struct LkImage {
    const std::uint8_t* data;
    int width, height;
    std::size_t pitch;
};

/// Everything the driver needs from LkConfig, resolved on the host (plain data, passed by value).
struct LkSetup {
    int levels;
    float scale[kMaxLevels];  // level_scale(pyramid, k): level-0 = (level-k + 0.5) * scale - 0.5
    int patch[kMaxLevels];    // patch side on level k
    int est_gain, est_offset;
    int max_iterations;
    float min_update;
    float min_update_sq;
    float max_residual;
    float min_eigenvalue;
    float reach;  // search window half-side around the initial guess, level-0 px: sum_k patch[k] * scale[k]
};

// ---- sampling -----------------------------------------------------------------------------------
/// Level-0 coordinate X to level k: x_k = (X + 0.5) / s_k - 0.5 (pixel centres, the pyramid's rule).
KESTREL_HD float to_level(float x0, float s) { return fsub(fdiv(fadd(x0, 0.5f), s), 0.5f); }
KESTREL_HD float from_level(float xk, float s) { return fsub(fmul(fadd(xk, 0.5f), s), 0.5f); }

/// True when every bilinear sample within +-extent of (x, y) has all four taps inside the image:
/// x - extent >= 0 and x + extent < width - 1 (same for y). False for NaN.
KESTREL_HD bool inside(const LkImage& im, float x, float y, float extent) {
    return fsub(x, extent) >= 0.0f && fadd(x, extent) < static_cast<float>(im.width - 1) &&
           fsub(y, extent) >= 0.0f && fadd(y, extent) < static_cast<float>(im.height - 1);
}
/// Half extent of an n x n patch of sample offsets (i - (n-1)/2): (n - 1) / 2.
KESTREL_HD float patch_half(int n) { return fmul(static_cast<float>(n - 1), 0.5f); }

/// 8-bit pixels of an LkImage, as a tap source of bilinear_at (at(x, y) = I(x, y) as float).
struct LkImageTaps {
    const LkImage& im;
    KESTREL_HD float at(int x, int y) const {
        return static_cast<float>(im.data[static_cast<std::size_t>(y) * im.pitch + static_cast<std::size_t>(x)]);
    }
};

/// Bilinear sample (precondition: all four taps readable from `src`). ax = x - floor(x), ay likewise;
/// top = (1-ax) I00 + ax I10, bottom = (1-ax) I01 + ax I11, value = (1-ay) top + ay bottom.
/// The tap source only decides where the pixel values come from (the GPU reads a shared-memory copy
/// of the neighbourhood); the values and the arithmetic are the same for every source.
/// The x half of a bilinear sample (x0 = floor(x), ax = x - x0, bx = 1 - ax): samples that share x
/// share it (the GPU computes it once for a lane's pixels when they lie in one patch column).
struct BilinearX {
    int x0;
    float ax, bx;
};
KESTREL_HD BilinearX bilinear_x(float x) {
    const float fx = floorf(x);
    const float ax = fsub(x, fx);
    return BilinearX{static_cast<int>(fx), ax, fsub(1.0f, ax)};
}
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD float bilinear_at_x(const Taps& src, const BilinearX& h, float y) {
    const float fy = floorf(y);
    const int y0 = static_cast<int>(fy);
    const float ay = fsub(y, fy);
    const float by = fsub(1.0f, ay);
    const float top = fadd(fmul(h.bx, src.at(h.x0, y0)), fmul(h.ax, src.at(h.x0 + 1, y0)));
    const float bot = fadd(fmul(h.bx, src.at(h.x0, y0 + 1)), fmul(h.ax, src.at(h.x0 + 1, y0 + 1)));
    return fadd(fmul(by, top), fmul(ay, bot));
}
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD float bilinear_at(const Taps& src, float x, float y) {
    return bilinear_at_x(src, bilinear_x(x), y);
}
/// Bilinear sample of an image (precondition: inside).
KESTREL_HD float bilinear(const LkImage& im, float x, float y) { return bilinear_at(LkImageTaps{im}, x, y); }

/// Offset of patch pixel i (row-major) from the patch centre: (i % n - (n-1)/2, i / n - (n-1)/2).
KESTREL_HD void patch_offset(int i, int n, float& ox, float& oy) {
    const float h = patch_half(n);
    ox = fsub(static_cast<float>(i % n), h);
    oy = fsub(static_cast<float>(i / n), h);
}

/// Template pixel at (rx + ox, ry + oy): T and its central differences
/// gx = (T(x+1, y) - T(x-1, y)) / 2, gy = (T(x, y+1) - T(x, y-1)) / 2 (bilinear samples).
/// Precondition: inside(im, rx, ry, patch_half(n) + 1).
/// The x halves of a template pixel's five samples, at sx = rx + ox: sx, sx + 1, sx - 1.
struct TemplateX {
    BilinearX c, p, m;
};
KESTREL_HD TemplateX template_x(float rx, float ox) {
    const float sx = fadd(rx, ox);
    return TemplateX{bilinear_x(sx), bilinear_x(fadd(sx, 1.0f)), bilinear_x(fsub(sx, 1.0f))};
}
/// template_pixel_at with the x halves precomputed (template_x(rx, ox)).
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD void template_pixel_at_x(const Taps& src, const TemplateX& h, float ry, float oy, float& t, float& gx,
                                    float& gy) {
    const float sy = fadd(ry, oy);
    t = bilinear_at_x(src, h.c, sy);
    gx = fmul(0.5f, fsub(bilinear_at_x(src, h.p, sy), bilinear_at_x(src, h.m, sy)));
    gy = fmul(0.5f, fsub(bilinear_at_x(src, h.c, fadd(sy, 1.0f)), bilinear_at_x(src, h.c, fsub(sy, 1.0f))));
}
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD void template_pixel_at(const Taps& src, float rx, float ry, float ox, float oy, float& t, float& gx,
                                  float& gy) {
    template_pixel_at_x(src, template_x(rx, ox), ry, oy, t, gx, gy);
}
KESTREL_HD void template_pixel(const LkImage& im, float rx, float ry, float ox, float oy, float& t, float& gx,
                               float& gy) {
    template_pixel_at(LkImageTaps{im}, rx, ry, ox, oy, t, gx, gy);
}

/// Current-image sample of patch pixel (ox, oy) around the estimate (cx, cy). Precondition: inside(im, cx, cy, half).
KESTREL_HD float image_pixel(const LkImage& im, float cx, float cy, float ox, float oy) {
    return bilinear(im, fadd(cx, ox), fadd(cy, oy));
}

/// Integer tap range [lo, hi] (per axis) that covers every bilinear sample at c + o, o in
/// [-extent, extent], with one pixel to spare on each side (so that sums of offsets rounded in another
/// order stay covered): lo = floor(c - extent) - 1, hi = floor(c + extent) + 2. It defines when the GPU's
/// shared-memory copy of a neighbourhood covers a patch (the kernel's Window::covers_patch evaluates
/// the same condition as float compares).
KESTREL_HD void tap_range(float c, float extent, int& lo, int& hi) {
    lo = static_cast<int>(floorf(fsub(c, extent))) - 1;
    hi = static_cast<int>(floorf(fadd(c, extent))) + 2;
}

/// Layout of stored templates (first-frame mode), the same on CPU and GPU: slot s, level k starts at
/// s * store_floats_per_slot + store_level_offset(k) and holds T[n*n], gx[n*n], gy[n*n] (n = patch
/// side of k); the valid flag of (s, k) is at s * levels + k.
KESTREL_HD int store_level_offset(const LkSetup& s, int k) {
    int off = 0;
    for (int j = 0; j < k; ++j) off += 3 * s.patch[j] * s.patch[j];
    return off;
}
KESTREL_HD int store_floats_per_slot(const LkSetup& s) { return store_level_offset(s, s.levels); }

// ---- per-pixel accumulation (in this order, per lane) -------------------------------------------
/// Hessian sums from the centred template value a = T - mu: gx^2, gx gy, gy^2, gx a, gy a, a^2, gx, gy, a.
KESTREL_HD void add_hessian_centred(float* acc, float a, float gx, float gy) {
    acc[0] = fadd(acc[0], fmul(gx, gx));
    acc[1] = fadd(acc[1], fmul(gx, gy));
    acc[2] = fadd(acc[2], fmul(gy, gy));
    acc[3] = fadd(acc[3], fmul(gx, a));
    acc[4] = fadd(acc[4], fmul(gy, a));
    acc[5] = fadd(acc[5], fmul(a, a));
    acc[6] = fadd(acc[6], gx);
    acc[7] = fadd(acc[7], gy);
    acc[8] = fadd(acc[8], a);
}
KESTREL_HD void add_hessian(float* acc, float t, float gx, float gy, float mu) {
    add_hessian_centred(acc, fsub(t, mu), gx, gy);
}

/// The error of one pixel from the centred template value a = T - mu: e = alpha * a + beta_c - I.
KESTREL_HD float pixel_error_centred(float a, float image, float alpha, float beta_c) {
    return fsub(fadd(fmul(alpha, a), beta_c), image);
}
/// The error of one pixel: e = alpha * (T - mu) + beta_c - I.
KESTREL_HD float pixel_error(float t, float image, float alpha, float beta_c, float mu) {
    return pixel_error_centred(fsub(t, mu), image, alpha, beta_c);
}

/// The first four error sums (gx e, gy e, a e, e) from the centred template value a = T - mu (the GPU
/// keeps a per pixel for the whole level), e = alpha * a + beta_c - I; returns e.
KESTREL_HD float add_error_centred4(float* acc, float a, float gx, float gy, float image, float alpha, float beta_c) {
    const float e = pixel_error_centred(a, image, alpha, beta_c);
    acc[0] = fadd(acc[0], fmul(gx, e));
    acc[1] = fadd(acc[1], fmul(gy, e));
    acc[2] = fadd(acc[2], fmul(a, e));
    acc[3] = fadd(acc[3], e);
    return e;
}
/// All five error sums: gx e, gy e, a e, e, |e| (the first four exactly as add_error_centred4).
KESTREL_HD void add_error_centred(float* acc, float a, float gx, float gy, float image, float alpha, float beta_c) {
    const float e = add_error_centred4(acc, a, gx, gy, image, alpha, beta_c);
    acc[4] = fadd(acc[4], fabsf(e));
}
/// Error sums, e = alpha * (T - mu) + beta_c - I: gx e, gy e, a e, e, |e| (the same operations as
/// add_error_centred(acc, T - mu, ...)).
KESTREL_HD void add_error(float* acc, float t, float gx, float gy, float image, float alpha, float beta_c, float mu) {
    add_error_centred(acc, fsub(t, mu), gx, gy, image, alpha, beta_c);
}

/// The warp's xor butterfly, emulated on the host: after it every lane holds the same sum, whose
/// value is lanes[0][k] here. lanes[l][k] are the per-lane partial sums.
template <int K>
inline void emulate_butterfly(float (&lanes)[kLkLanes][K], float* out) {
    for (int off = kLkLanes / 2; off >= 1; off /= 2) {
        float next[kLkLanes][K];
        for (int l = 0; l < kLkLanes; ++l)
            for (int k = 0; k < K; ++k) next[l][k] = fadd(lanes[l][k], lanes[l ^ off][k]);
        for (int l = 0; l < kLkLanes; ++l)
            for (int k = 0; k < K; ++k) lanes[l][k] = next[l][k];
    }
    for (int k = 0; k < K; ++k) out[k] = lanes[0][k];
}

// ---- the normal equations -----------------------------------------------------------------------
/// LDL^T factors of the 4x4 Hessian over (tx, ty, gain, offset); inactive parameters get an identity
/// row and column so their update is exactly 0.
struct LkSystem {
    float l[4][4];
    float d[4];
    float inv_d[4];  // 1 / d[j], once per factorization: the per-iteration solve multiplies
};

/// Builds H from the 9 sums (n = pixel count) and factorizes it. Returns false when singular:
/// the translation block's smaller eigenvalue / n below min_eigenvalue (tested without a square root:
/// lambda_min(G - m I) >= 0 <=> trace >= 0 and det >= 0, with m = min_eigenvalue * n), or a pivot
/// d_j <= kLkPivotEps * H_jj.
KESTREL_HD bool lk_factorize(const float* s, float n, int est_gain, int est_offset, float min_eigenvalue,
                             LkSystem& sys) {
    float h[4][4];
    h[0][0] = s[0]; h[0][1] = s[1]; h[1][1] = s[2];
    h[0][2] = est_gain ? s[3] : 0.0f;
    h[1][2] = est_gain ? s[4] : 0.0f;
    h[2][2] = est_gain ? s[5] : 1.0f;
    h[0][3] = est_offset ? s[6] : 0.0f;
    h[1][3] = est_offset ? s[7] : 0.0f;
    h[2][3] = (est_gain && est_offset) ? s[8] : 0.0f;
    h[3][3] = est_offset ? n : 1.0f;
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i)
        KESTREL_UNROLL
        for (int j = 0; j < i; ++j) h[i][j] = h[j][i];

    const float m = fmul(min_eigenvalue, n);
    const float a = fsub(h[0][0], m), c = fsub(h[1][1], m);
    if (!(fadd(a, c) >= 0.0f && fsub(fmul(a, c), fmul(h[0][1], h[0][1])) >= 0.0f)) return false;

    KESTREL_UNROLL

    for (int j = 0; j < 4; ++j) {
        float dj = h[j][j];
        KESTREL_UNROLL
        for (int k = 0; k < j; ++k) dj = fsub(dj, fmul(fmul(sys.l[j][k], sys.l[j][k]), sys.d[k]));
        if (!(dj > fmul(kLkPivotEps, h[j][j])) || !finite(dj)) return false;
        sys.d[j] = dj;
        sys.inv_d[j] = fdiv(1.0f, dj);
        sys.l[j][j] = 1.0f;
        KESTREL_UNROLL
        for (int i = j + 1; i < 4; ++i) {
            float v = h[i][j];
            KESTREL_UNROLL
            for (int k = 0; k < j; ++k) v = fsub(v, fmul(fmul(sys.l[i][k], sys.l[j][k]), sys.d[k]));
            sys.l[i][j] = fdiv(v, dj);
        }
    }
    return true;
}

/// Solves H x = -b (the Gauss-Newton step for e ~ e0 + J dq): forward, diagonal (z_i * (1 / d_i), the
/// reciprocals from lk_factorize: no division per iteration), backward.
KESTREL_HD void lk_solve(const LkSystem& sys, const float* b, int est_gain, int est_offset, float* x) {
    float r[4] = {b[0], b[1], est_gain ? b[2] : 0.0f, est_offset ? b[3] : 0.0f};
    float z[4];
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i) {
        float v = -r[i];
        KESTREL_UNROLL
        for (int k = 0; k < i; ++k) v = fsub(v, fmul(sys.l[i][k], z[k]));
        z[i] = v;
    }
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i) z[i] = fmul(z[i], sys.inv_d[i]);
    KESTREL_UNROLL
    for (int i = 3; i >= 0; --i) {
        float v = z[i];
        KESTREL_UNROLL
        for (int k = i + 1; k < 4; ++k) v = fsub(v, fmul(sys.l[k][i], x[k]));
        x[i] = v;
    }
}

// ---- the driver -------------------------------------------------------------------------------
/// Coarse-to-fine tracking of one feature. Engine (the warp on the GPU, a 32-lane emulation on the CPU):
///   bool  load_template(int k, float rx, float ry, const LkImage& cur, float cx, float cy)
///         // template of level k at (rx, ry); false: unusable. (cx, cy): where the level starts in
///         // cur, a hint only (the GPU stages that neighbourhood of cur at the same time)
///   float template_sum(int k)                        // sum of T over the patch (all lanes)
///   void  hessian_sums(int k, float mu, float* s9)
///   void  error_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float mu, float* s5,
///                    bool with_sad)   // s5[4] (sum |e|) is only needed, and only defined, when with_sad
///   void  final_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float alpha0,
///                    float beta_c0, float mu, float* s5, float* sad0)
///         // error_sums(.., alpha, beta_c, ..) into s5 and, in the same pass, *sad0 = the sum |e| that
///         // error_sums(.., alpha0, beta_c0, ..) would give (same per-lane order and butterfly)
/// ref_x, ref_y: the template position (level 0), only used by load_template. cur: current pyramid.
///
/// Level policy: the gain is estimated on level 0 only (coarser levels estimate translation and, when
/// the mode has it, the offset, with the gain held): far from the optimum the joint fit drives the
/// gain towards 0 (a misaligned patch correlates weakly with the template) and the exact step dq / gain
/// then diverges. A coarse level whose template or patch does not fit, whose Hessian is singular, or
/// whose iterations leave the image or break down is cut short: the estimate goes on from the last
/// iterate that was valid. A coarse level whose iterate leaves the search window (half-side: the
/// pyramid's reach sum_k patch_k * s_k level-0 px, around the initial guess, in x or y), or whose last
/// sum |e| exceeds its first (something moving across the patch dragged it), is discarded: the
/// estimate goes on from the level's start.
/// On level 0 these events end the track: LostOutOfBounds (template or patch outside the image, or the
/// search window left), LostSingular (Hessian test, or a non-finite step); after the iterations
/// LostResidual (mean |e| > max_residual, or the gain left [kLkMinGain, 1 / kLkMinGain]: the patch no
/// longer correlates with the template; the smaller of the mean |e| with the fitted and with the
/// initial illumination is tested), else NotConverged when no step fell below min_update.
/// Oscillation (a step undoing the previous one within min_update) ends a level half-way, converged.
KESTREL_HD_TEMPLATE_CHECK
template <class Engine>
KESTREL_HD LkResult lk_track_one(Engine& eng, const LkSetup& s, const LkImage* cur, float ref_x, float ref_y,
                                 LkGuess g) {
    LkResult res;
    float X = g.x, Y = g.y, alpha = g.gain, beta = g.offset;
    // Loop invariants held in locals: on the GPU `s` and `cur` live in shared memory, which the staging
    // stores could alias, so members read inside the iteration loop would be reloaded every iteration.
    const int est_offset = s.est_offset, max_iterations = s.max_iterations;
    const float min_update = s.min_update, min_update_sq = s.min_update_sq;
    res.status = TrackStatus::Tracked;
    if (!finite(X) || !finite(Y) || !finite(alpha) || !finite(beta)) {
        res.status = TrackStatus::LostOutOfBounds;
        res.x = X; res.y = Y; res.gain = alpha; res.offset = beta;
        return res;
    }
    for (int k = s.levels - 1; k >= 0; --k) {
        const int n = s.patch[k];
        const float npx = static_cast<float>(n * n);
        const float half = patch_half(n);
        const float sk = s.scale[k];
        const int est_gain = k == 0 ? s.est_gain : 0;
        float cx = to_level(X, sk), cy = to_level(Y, sk);
        const LkImage cur_k = cur[k];
        const bool tmpl = eng.load_template(k, to_level(ref_x, sk), to_level(ref_y, sk), cur_k, cx, cy);
        if (!tmpl || !inside(cur_k, cx, cy, half)) {
            if (k == 0) { res.status = TrackStatus::LostOutOfBounds; break; }
            continue;
        }
        const float mu = est_offset ? fdiv(eng.template_sum(k), npx) : 0.0f;
        float hs[kLkHessianSums];
        eng.hessian_sums(k, mu, hs);
        LkSystem sys;
        if (!lk_factorize(hs, npx, est_gain, est_offset, s.min_eigenvalue, sys)) {
            if (k == 0) { res.status = TrackStatus::LostSingular; break; }
            continue;
        }
        float beta_c = fadd(beta, fmul(alpha, mu));  // beta + alpha * T  ==  beta_c + alpha * (T - mu)
        const float x_start = cx, y_start = cy, a_start = alpha, b_start = beta_c;
        const float gx_k = to_level(g.x, sk), gy_k = to_level(g.y, sk);  // the initial guess on this level
        const float window = fdiv(s.reach, sk);                           // the search window, level pixels
        int it = 0;
        bool converged = false, gain_lost = false;
        const float inv_alpha_level = fdiv(1.0f, alpha);  // alpha's reciprocal while it is held (est_gain == 0)
        float pdx = 0.0f, pdy = 0.0f;  // previous step
        float first_sad = 0.0f, last_sad = 0.0f;  // sum |e| at the level's start and at the last evaluation
        for (; it < max_iterations; ++it) {
            float es[kLkErrorSums];
            // sum |e| serves only the coarse levels' discard test (level 0's residual is computed after the loop)
            eng.error_sums(k, cur_k, cx, cy, alpha, beta_c, mu, es, k > 0);
            if (k > 0) {
                if (it == 0) first_sad = es[4];
                last_sad = es[4];
            }
            float dq[4];
            lk_solve(sys, es, est_gain, est_offset, dq);
            // Exact SIC step: J(alpha) = J(1) diag(alpha, alpha, 1, 1) => dt = dq_t * (1 / alpha)
            // (one reciprocal per iteration; on coarse levels alpha is fixed and so is inv_alpha).
            const float inv_alpha = est_gain ? fdiv(1.0f, alpha) : inv_alpha_level;
            const float dtx = fmul(dq[0], inv_alpha), dty = fmul(dq[1], inv_alpha);
            const float nx = fsub(cx, dtx), ny = fsub(cy, dty);  // t <- t - dt (inverse composition)
            const float na = est_gain ? fadd(alpha, dq[2]) : alpha;
            const float nb = est_offset ? fadd(beta_c, dq[3]) : beta_c;
            // Every reason to stop before the update, evaluated first and tested with one branch (they
            // have no side effects; NaN fails every compare), then handled in this order of precedence:
            // a non-finite step; the gain out of range ((fdiv(1, kLkMinGain) == 10 exactly; the division
            // stays: as a constant, ptxas spills the kernel); the patch outside the image; the search
            // window left; oscillation (a step that undoes the previous one, as bilinear sampling makes
            // near pixel boundaries: |dt + dt_prev| < min_update in both coordinates).
            const bool ok_finite = finite(nx) && finite(ny) && finite(nb) && finite(na);
            const bool ok_gain = na >= kLkMinGain && na <= fdiv(1.0f, kLkMinGain);
            const bool ok_inside = inside(cur_k, nx, ny, half);
            const bool ok_window = fabsf(fsub(nx, gx_k)) <= window && fabsf(fsub(ny, gy_k)) <= window;
            const bool oscillates =
                it > 0 && fabsf(fadd(dtx, pdx)) < min_update && fabsf(fadd(dty, pdy)) < min_update;
            if (!(ok_finite && ok_gain && ok_inside && ok_window) || oscillates) {
                if (!ok_finite) {
                    if (k == 0) res.status = TrackStatus::LostSingular;
                } else if (!ok_gain) {
                    gain_lost = true;
                } else if (!ok_inside) {
                    if (k == 0) { res.status = TrackStatus::LostOutOfBounds; cx = nx; cy = ny; }
                } else if (!ok_window) {
                    // Wandered off its search window: level 0 is lost, a coarser level is discarded.
                    if (k == 0) { res.status = TrackStatus::LostOutOfBounds; cx = nx; cy = ny; }
                    else { cx = x_start; cy = y_start; alpha = a_start; beta_c = b_start; }
                } else {  // oscillation: settle half-way and stop
                    cx = fadd(cx, fmul(0.5f, fsub(nx, cx)));
                    cy = fadd(cy, fmul(0.5f, fsub(ny, cy)));
                    alpha = fadd(alpha, fmul(0.5f, fsub(na, alpha)));
                    beta_c = fadd(beta_c, fmul(0.5f, fsub(nb, beta_c)));
                    converged = true;
                    ++it;
                }
                break;
            }
            cx = nx; cy = ny; alpha = na; beta_c = nb;
            if (fadd(fmul(dtx, dtx), fmul(dty, dty)) < min_update_sq) { converged = true; ++it; break; }
            pdx = dtx; pdy = dty;
        }
        if (k > 0 && last_sad > first_sad) {
            // A coarse level that ends with a worse match than it started from (the patch was dragged
            // by something moving across it) is discarded.
            cx = x_start; cy = y_start; alpha = a_start; beta_c = b_start;
        }
        X = from_level(cx, sk);
        Y = from_level(cy, sk);
        beta = fsub(beta_c, fmul(alpha, mu));
        if (k == 0 && res.status == TrackStatus::Tracked) {
            res.iterations = it;
            float es[kLkErrorSums];
            float sad0 = 0.0f;
            if (s.est_gain || s.est_offset)
                eng.final_sums(0, cur_k, cx, cy, alpha, beta_c, g.gain, fadd(g.offset, fmul(g.gain, mu)), mu, es,
                               &sad0);
            else
                eng.error_sums(0, cur_k, cx, cy, alpha, beta_c, mu, es, true);
            res.residual = fdiv(es[4], npx);
            // The loss test takes the better of the fitted illumination and the initial one at the final
            // position: the least-squares fit of gain/offset can raise mean |e| on a partly occluded
            // patch (it splits the difference between the parts), and a correction that only makes the
            // match look worse must not end a track that translation alone would keep.
            float test = res.residual;
            if (s.est_gain || s.est_offset) {
                const float plain = fdiv(sad0, npx);
                if (plain < test) test = plain;
            }
            if (gain_lost || !(test <= s.max_residual)) res.status = TrackStatus::LostResidual;
            else if (!converged) res.status = TrackStatus::NotConverged;
        }
    }
    res.x = X; res.y = Y; res.gain = alpha; res.offset = beta;
    return res;
}

}  // namespace kestrel::detail
