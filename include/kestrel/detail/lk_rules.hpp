// The Lucas-Kanade rules shared verbatim by the CPU reference (src/track/lk_cpu.cpp) and the CUDA kernel
// (kernels/track/lk_track.cu): sampling, template, per-pixel sums, the 4x4 solve and the coarse-to-fine
// driver. Derivation and conventions: kernels/track/lk_track.cu and docs/tracker.md.
//
// Exactness: every float operation goes through fmul/fadd/fsub/fdiv/ffma below, which are the IEEE
// round-to-nearest operations on both sides (on the device __fmul_rn & co., which nvcc never fuses
// into FMA; where a formula fuses a * b + c it says so with ffma, rounded once on both sides), and the
// CPU reference emulates the warp's summation order (lane l sums its pixels lane_pixel(l, 0, n),
// lane_pixel(l, 1, n), ... in order; then the xor butterfly 16, 8, 4, 2, 1). The CPU and GPU therefore
// run the same operations in the same order; the stated tolerance (1e-3 px, 1e-4 gain/offset) only covers
// host compilers that contract a*b+c into FMA despite this (see docs/tracker.md).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/lk_types.hpp"
#include "kestrel/pyramid_types.hpp"

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
constexpr int kLkImageSums = 4;    // gx I, gy I, a I, I (+ |e| on the coarse levels)
constexpr float kLkMinGain = 0.1f;     // a gain outside [0.1, 10] -> LostResidual (no correlation left)
constexpr float kLkMaxGain = 10.0f;    // 1 / kLkMinGain: the float division 1.0f / 0.1f rounds to exactly 10
constexpr float kLkPivotEps = 1e-6f;   // LDL^T pivot d_j <= eps * H_jj -> singular
/// FeatureTracker's stop bound on the coarse levels (level pixels; LkConfig::min_update when that is larger): a
/// coarse level only seeds the next one, whose own iterations absorb a seed a few hundredths of a pixel off. On
/// the vtest sequence (3 levels) it cuts levels 1 and 2 from 2.2 and 1.9 iterations per track to 1.3 and 1.2
/// (level 0 from 2.7 to 2.8), with the same accuracy on the evaluation set, with and without anchoring.
/// Standalone LK (DeviceLkTracker, lk_track_cpu) and the stereo matching stop at min_update on every level.
constexpr float kTrackerCoarseMinUpdate = 0.05f;

// ---- exact float operations: fmul, fadd, fsub, fdiv, ffma (detail/exact_float.hpp) --------------------
// The predicates below combine their compares with & (no short circuit: no branches in the GPU's iteration).
KESTREL_HD bool finite(float v) { return (v == v) & (v - v == 0.0f); }  // false for NaN and +-inf

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
    int max_iterations;     // level 0
    int coarse_iterations;  // every other level: min(LkConfig::coarse_max_iterations, max_iterations)
    float min_update;
    float min_update_sq;
    float coarse_min_update;     // the same bound on levels >= 1 (make_lk_setup: min_update; FeatureTracker's
                                 // setup: at least kTrackerCoarseMinUpdate)
    float coarse_min_update_sq;
    float max_residual;
    float min_eigenvalue;
    float reach;  // search window half-side around the initial guess, level-0 px: sum_k patch[k] * scale[k]
    // Resolved once on the host (make_lk_setup), so that the driver divides only where it must:
    float inv_scale[kMaxLevels];  // 1 / scale[k] when scale[k] is a power of two (exact), else 0
    float inv_npx[kMaxLevels];    // 1 / patch[k]^2 when that is a power of two (exact), else 0
    float window[kMaxLevels];     // fdiv(reach, scale[k]): the search window in level-k pixels
    // Levels k >= stored_from_level take their template from the track's store (the reference patch stored
    // when the track was born or re-anchored) when the engine has one, the levels below from the reference
    // frame (live); levels: every level live. Set by FeatureTracker with anchoring (which keeps such a store),
    // for the tracks whose anchor warp allows it (detail::stored_patch_from, which may start them later).
    int stored_from_level;
};

/// The reciprocal of v when v is a power of two (then x / v == x * (1 / v) exactly for every float x: both
/// round the same real number once), else 0.
inline float exact_reciprocal(float v) {
    int e = 0;
    return (v > 0.0f && std::frexp(v, &e) == 0.5f) ? 1.0f / v : 0.0f;
}

/// x / d as fdiv, or as fmul(x, inv) when inv = exact_reciprocal(d) != 0: the same bits.
KESTREL_HD float div_by(float x, float d, float inv) { return inv != 0.0f ? fmul(x, inv) : fdiv(x, d); }

// ---- sampling -----------------------------------------------------------------------------------
/// Level-0 coordinate X to level k: x_k = (X + 0.5) / s_k - 0.5 (pixel centres, the pyramid's rule).
KESTREL_HD float to_level(float x0, float s) { return fsub(fdiv(fadd(x0, 0.5f), s), 0.5f); }
KESTREL_HD float from_level(float xk, float s) { return fsub(fmul(fadd(xk, 0.5f), s), 0.5f); }
/// to_level on level k of a setup: the division as a multiply where the scale is a power of two (the same bits).
KESTREL_HD float to_level_k(const LkSetup& s, int k, float x0) {
    return fsub(div_by(fadd(x0, 0.5f), s.scale[k], s.inv_scale[k]), 0.5f);
}

/// Half extent of an n x n patch of sample offsets (i - (n-1)/2): (n - 1) / 2.
KESTREL_HD float patch_half(int n) { return fmul(static_cast<float>(n - 1), 0.5f); }

/// The sampling grid of an n x n patch centred at (cx, cy): its samples lie at (vx + i, vy + j),
/// i, j = 0 .. n-1, with vx = cx - h, vy = cy - h (h = patch_half(n), one rounding per axis), and all of
/// them share one pair of bilinear weights (as OpenCV's pyramidal LK computes its weights once per patch):
///     x0 = floor(vx), ax = vx - x0, bx = 1 - ax   (y0, ay, by likewise)
///     row(i, j)    = fma(ax, I(x0 + i + 1, y0 + j), bx * I(x0 + i, y0 + j))
///     sample(i, j) = fma(ay, row(i, j + 1), by * row(i, j))
/// i.e. the bilinear interpolation of the level at (vx + i, vy + j), exactly the sample at offset
/// (i - h, j - h) from the centre. The template adds its central differences on the same grid:
///     gx(i, j) = (sample(i + 1, j) - sample(i - 1, j)) / 2,  gy(i, j) = (sample(i, j + 1) - sample(i, j - 1)) / 2,
/// so a template reads the taps x0 - 1 .. x0 + n + 1, a patch x0 .. x0 + n (and the same rows).
struct PatchGrid {
    float vx, vy;  // position of sample (0, 0)
    int x0, y0;    // its top-left tap
    float ax, bx, ay, by;
};
/// Precondition: vx and vy finite and within int range (the callers test inside() first).
KESTREL_HD PatchGrid patch_grid(float cx, float cy, float half) {
    PatchGrid g;
    g.vx = fsub(cx, half);
    g.vy = fsub(cy, half);
    const float fx = floorf(g.vx), fy = floorf(g.vy);
    g.x0 = static_cast<int>(fx);
    g.y0 = static_cast<int>(fy);
    g.ax = fsub(g.vx, fx);
    g.bx = fsub(1.0f, g.ax);
    g.ay = fsub(g.vy, fy);
    g.by = fsub(1.0f, g.ay);
    return g;
}

/// Border rule: a grid may reach up to kLkBorder taps past the image's edges; those taps read the nearest
/// edge pixel (replication, as clamp_tap below). A feature is thus tracked until its centre leaves the
/// image, as OpenCV's pyramidal LK tracks up to its border (instead of losing it when the patch touches
/// the edge, 9 px earlier for 16 x 16 patches).
constexpr int kLkBorder = 16;

/// True when the n x n grid at (x, y), widened by `margin` taps on each side (0: a patch, 1: a template
/// with its gradients), may be sampled: its taps x0 - margin .. x0 + n + margin lie within kLkBorder of
/// the image (x0 - margin >= -kLkBorder and x0 + n + margin <= width - 1 + kLkBorder; y likewise), and
/// the centre (x, y) is within the image, [0, width - 1] x [0, height - 1]. With x0 = floor(vx) and integer
/// bounds the first is vx >= margin - kLkBorder and vx < width - n - margin + kLkBorder: float compares
/// only (false for NaN, no conversion).
KESTREL_HD bool inside(const LkImage& im, float x, float y, int n, int margin) {
    const float h = patch_half(n);
    const float vx = fsub(x, h), vy = fsub(y, h);
    const float lo = static_cast<float>(margin - kLkBorder);
    const bool taps = (vx >= lo) & (vx < static_cast<float>(im.width - n - margin + kLkBorder)) & (vy >= lo) &
                      (vy < static_cast<float>(im.height - n - margin + kLkBorder));
    const bool centre = (x >= 0.0f) & (x <= static_cast<float>(im.width - 1)) & (y >= 0.0f) &
                        (y <= static_cast<float>(im.height - 1));
    return taps & centre;
}

/// Tap coordinate clamped into [0, last]: a tap past the edge reads the edge pixel.
KESTREL_HD int clamp_tap(int v, int last) { return v < 0 ? 0 : (v > last ? last : v); }

/// The patch pixel in slot j of warp lane l (row-major index; -1: the slot is empty), j = 0 ..
/// kLkMaxPerLane - 1. A side n that divides 32 (4, 8, 16) gives every lane a run of R = ceil(n^2 / 32)
/// consecutive rows of one column: column l % n, rows (l / n) R + j, so a lane's neighbouring samples
/// share a tap row (17 x 17 taps of a 16 x 16 patch: 9 rows of 2 taps per lane instead of 16). Any other
/// side: pixel l + 32 j.
KESTREL_HD int lane_pixel(int l, int j, int n) {
    if (kLkLanes % n == 0) {
        const int r = (n * n + kLkLanes - 1) / kLkLanes;
        const int row = (l / n) * r + j;
        return (j < r && row < n) ? row * n + l % n : -1;
    }
    const int i = l + kLkLanes * j;
    return i < n * n ? i : -1;
}

/// Taps of a grid: at(i, j) = I(x0 + i, y0 + j) as float (coordinates clamped into the image: the border
/// rule above), relative to the grid's top-left tap. The CPU
/// reads the image (GridTaps); the GPU reads a shared-memory copy of the neighbourhood. The values and
/// the arithmetic are the same for every source.
struct GridTaps {
    const std::uint8_t* data;
    std::size_t pitch;
    int x0, y0, last_x, last_y;
    KESTREL_HD GridTaps(const LkImage& im, const PatchGrid& g)
        : data(im.data), pitch(im.pitch), x0(g.x0), y0(g.y0), last_x(im.width - 1), last_y(im.height - 1) {}
    KESTREL_HD float at(int i, int j) const {
        const std::size_t y = static_cast<std::size_t>(clamp_tap(y0 + j, last_y));
        return static_cast<float>(data[y * pitch + static_cast<std::size_t>(clamp_tap(x0 + i, last_x))]);
    }
};

KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD float grid_row(const Taps& src, const PatchGrid& g, int i, int j) {
    return ffma(g.ax, src.at(i + 1, j), fmul(g.bx, src.at(i, j)));
}
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD float grid_sample(const Taps& src, const PatchGrid& g, int i, int j) {
    return ffma(g.ay, grid_row(src, g, i, j + 1), fmul(g.by, grid_row(src, g, i, j)));
}
/// Template pixel (i, j) of the grid: T and its central differences gx, gy (see PatchGrid).
KESTREL_HD_TEMPLATE_CHECK
template <class Taps>
KESTREL_HD void grid_template(const Taps& src, const PatchGrid& g, int i, int j, float& t, float& gx, float& gy) {
    t = grid_sample(src, g, i, j);
    gx = fmul(0.5f, fsub(grid_sample(src, g, i + 1, j), grid_sample(src, g, i - 1, j)));
    gy = fmul(0.5f, fsub(grid_sample(src, g, i, j + 1), grid_sample(src, g, i, j - 1)));
}

/// The template of the n x n patch at (rx, ry) on `im` (level coordinates) in the stored layout: T, gx, gy
/// of pixel i (row-major) at out[i], out[n*n + i], out[2*n*n + i], for i = first, first + step, ... (the
/// CPU writes all pixels, a warp's lane l every 32nd from l). Returns false, writing nothing, when the
/// template's taps leave the image (inside(im, rx, ry, n, 1)).
KESTREL_HD bool extract_template(const LkImage& im, float rx, float ry, int n, float* out, int first, int step) {
    if (!inside(im, rx, ry, n, 1)) return false;
    const PatchGrid g = patch_grid(rx, ry, patch_half(n));
    const GridTaps src(im, g);
    const int npx = n * n;
    for (int i = first; i < npx; i += step) grid_template(src, g, i % n, i / n, out[i], out[npx + i], out[2 * npx + i]);
    return true;
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
/// Hessian sums from the centred template value a = T - mu: gx^2, gx gy, gy^2, gx a, gy a, a^2 (each product
/// accumulated by one ffma), gx, gy, a.
KESTREL_HD void add_hessian_centred(float* acc, float a, float gx, float gy) {
    acc[0] = ffma(gx, gx, acc[0]);
    acc[1] = ffma(gx, gy, acc[1]);
    acc[2] = ffma(gy, gy, acc[2]);
    acc[3] = ffma(gx, a, acc[3]);
    acc[4] = ffma(gy, a, acc[4]);
    acc[5] = ffma(a, a, acc[5]);
    acc[6] = fadd(acc[6], gx);
    acc[7] = fadd(acc[7], gy);
    acc[8] = fadd(acc[8], a);
}
KESTREL_HD void add_hessian(float* acc, float t, float gx, float gy, float mu) {
    add_hessian_centred(acc, fsub(t, mu), gx, gy);
}

/// The error of one pixel from the centred template value a = T - mu: e = fma(alpha, a, beta_c) - I.
KESTREL_HD float pixel_error_centred(float a, float image, float alpha, float beta_c) {
    return fsub(ffma(alpha, a, beta_c), image);
}

/// The image sums of one pixel, the only per-pixel work of an iteration: gx I, gy I, a I, I (a = T - mu,
/// I = the current image's sample); with Sad also |e|, e = alpha a + beta_c - I (the coarse levels'
/// discard test). error_terms() turns them into the error terms.
/// Packed form (add_image_sums_packed<Sad, Gain>): a I serves only the gain's error term b[2], which lk_solve reads
/// only on a level that estimates the gain; without Gain it is left out and the others move up (gx I, gy I, I, |e|),
/// so that an engine sums one value fewer per pixel and per warp reduction. Every value is the same sum in the same
/// order either way; unpack_image_sums puts them back in add_image_sums' places, with a I = 0.
template <bool Sad, bool Gain>
constexpr int kLkImageSumsPacked = 3 + (Gain ? 1 : 0) + (Sad ? 1 : 0);
template <bool Sad, bool Gain>
KESTREL_HD void add_image_sums_packed(float* acc, float a, float gx, float gy, float image, float alpha, float beta_c) {
    constexpr int q = Gain ? 3 : 2;  // I's place
    acc[0] = ffma(gx, image, acc[0]);
    acc[1] = ffma(gy, image, acc[1]);
    if constexpr (Gain) acc[2] = ffma(a, image, acc[2]);
    acc[q] = fadd(acc[q], image);
    if constexpr (Sad) acc[q + 1] = fadd(acc[q + 1], fabsf(pixel_error_centred(a, image, alpha, beta_c)));
}
template <bool Sad>
KESTREL_HD void add_image_sums(float* acc, float a, float gx, float gy, float image, float alpha, float beta_c) {
    add_image_sums_packed<Sad, true>(acc, a, gx, gy, image, alpha, beta_c);
}
/// out[0 .. kLkImageSums] (add_image_sums' places; |e| = 0 without Sad, a I = 0 without Gain) from the packed sums.
template <bool Sad, bool Gain>
KESTREL_HD void unpack_image_sums(const float* packed, float* out) {
    constexpr int q = Gain ? 3 : 2;
    out[0] = packed[0];
    out[1] = packed[1];
    out[2] = Gain ? packed[2] : 0.0f;
    out[3] = packed[q];
    out[4] = Sad ? packed[q + 1] : 0.0f;
}

/// The error terms b = sum J(1)^T e (gx e, gy e, a e, e) of e = alpha a + beta_c - I, from the template's
/// sums (hessian sums hs: hs[3] = sum gx a, hs[4] = sum gy a, hs[5] = sum a^2, hs[6] = sum gx, hs[7] =
/// sum gy, hs[8] = sum a; n pixels) and the image sums is (add_image_sums), by linearity:
///     sum gx e = alpha sum gx a + beta_c sum gx - sum gx I      (gy, a likewise)
///     sum e    = alpha sum a    + beta_c n      - sum I,
/// each as fma(alpha, sum gx a, fma(beta_c, sum gx, -sum gx I)).
/// Rounding: each image sum is at most ~1e6 (|g| <= 255, I <= 255, 256 pixels), so its float error is
/// below ~0.1, i.e. below 1e-4 px of step for any Hessian that passes the eigenvalue test at n = 256.
KESTREL_HD void error_terms(const float* hs, float n, const float* is, float alpha, float beta_c, float* b) {
    b[0] = ffma(alpha, hs[3], ffma(beta_c, hs[6], -is[0]));
    b[1] = ffma(alpha, hs[4], ffma(beta_c, hs[7], -is[1]));
    b[2] = ffma(alpha, hs[5], ffma(beta_c, hs[8], -is[2]));
    b[3] = ffma(alpha, hs[8], ffma(beta_c, n, -is[3]));
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
/// The inverted 4x4 Hessian over (tx, ty, gain, offset); inactive parameters get an identity row and
/// column so their update is exactly 0. lk_factorize computes the LDL^T factors and from them the inverse
/// once per level, so that an iteration's step is one 4x4 product (a short dependency chain: one
/// multiply and two additions per component) instead of two triangular substitutions.
struct LkSystem {
    float hinv[4][4];  // H^-1 = L^-T D^-1 L^-1 (symmetric)
};

/// The LDL^T factorisation and inverse of a P x P symmetric h (lower triangle read), as lk_factorize
/// describes; false on a pivot d_j <= kLkPivotEps * h_jj or a non-finite one.
KESTREL_HD_TEMPLATE_CHECK
template <int P>
KESTREL_HD bool lk_invert(const float (&h)[P][P], float (&hinv)[P][P]) {
    float l[P][P], d[P], inv_d[P];  // the factors, inv_d[j] = 1 / d[j]
    KESTREL_UNROLL
    for (int j = 0; j < P; ++j) {
        float dj = h[j][j];
        KESTREL_UNROLL
        for (int k = 0; k < j; ++k) dj = fsub(dj, fmul(fmul(l[j][k], l[j][k]), d[k]));
        if (!(dj > fmul(kLkPivotEps, h[j][j])) || !finite(dj)) return false;
        d[j] = dj;
        inv_d[j] = fdiv(1.0f, dj);
        l[j][j] = 1.0f;
        KESTREL_UNROLL
        for (int i = j + 1; i < P; ++i) {
            float v = h[i][j];
            KESTREL_UNROLL
            for (int k = 0; k < j; ++k) v = fsub(v, fmul(fmul(l[i][k], l[j][k]), d[k]));
            l[i][j] = fmul(v, inv_d[j]);  // not a division: v is often 0, which sends the GPU's division to
                                          // its slow path
        }
    }
    float mi[P][P];  // L^-1
    KESTREL_UNROLL
    for (int i = 0; i < P; ++i) {
        mi[i][i] = 1.0f;
        KESTREL_UNROLL
        for (int j = i - 1; j >= 0; --j) {
            float v = l[i][j];
            KESTREL_UNROLL
            for (int k = j + 1; k < i; ++k) v = fadd(v, fmul(l[i][k], mi[k][j]));
            mi[i][j] = -v;
        }
    }
    KESTREL_UNROLL
    for (int i = 0; i < P; ++i) {
        KESTREL_UNROLL
        for (int j = 0; j <= i; ++j) {
            float v = fmul(fmul(mi[i][i], inv_d[i]), mi[i][j]);
            KESTREL_UNROLL
            for (int k = i + 1; k < P; ++k) v = fadd(v, fmul(fmul(mi[k][i], inv_d[k]), mi[k][j]));
            hinv[i][j] = v;
            hinv[j][i] = v;
        }
    }
    return true;
}

/// Builds H from the 9 sums (n = pixel count), factorizes it (H = L D L^T, L_ij = v_ij * (1 / d_j)) and
/// inverts it (lk_invert): the 4 x 4 system with the gain, else the 3 x 3 one over (tx, ty, offset), whose inverse
/// goes into the 4 x 4 places with the gain's identity row and column (the values of the 4 x 4 computation).
/// Returns false when singular: the translation block's smaller eigenvalue / n below min_eigenvalue (tested without a
/// square root: lambda_min(G - m I) >= 0 <=> trace >= 0 and det >= 0, with m = min_eigenvalue * n), or a
/// pivot d_j <= kLkPivotEps * H_jj.
/// Inverse: M = L^-1 (unit lower triangular, M_ij = -(L_ij + sum_{k=j+1}^{i-1} L_ik M_kj) for i > j), then
/// (H^-1)_ij = sum_{k >= max(i, j)} M_ki (1 / d_k) M_kj, summed in increasing k.
KESTREL_HD bool lk_factorize(const float* s, float n, int est_gain, int est_offset, float min_eigenvalue,
                             LkSystem& sys) {
    const float m = fmul(min_eigenvalue, n);
    const float a = fsub(s[0], m), c = fsub(s[2], m);
    if (!(fadd(a, c) >= 0.0f && fsub(fmul(a, c), fmul(s[1], s[1])) >= 0.0f)) return false;
    if (est_gain) {
        float h[4][4];
        h[0][0] = s[0]; h[0][1] = s[1]; h[1][1] = s[2];
        h[0][2] = s[3];
        h[1][2] = s[4];
        h[2][2] = s[5];
        h[0][3] = est_offset ? s[6] : 0.0f;
        h[1][3] = est_offset ? s[7] : 0.0f;
        h[2][3] = est_offset ? s[8] : 0.0f;
        h[3][3] = est_offset ? n : 1.0f;
        KESTREL_UNROLL
        for (int i = 0; i < 4; ++i)
            KESTREL_UNROLL
            for (int j = 0; j < i; ++j) h[i][j] = h[j][i];
        return lk_invert<4>(h, sys.hinv);
    }
    // Without the gain (every coarse level): the 3 x 3 system over (tx, ty, offset), the gain's identity row and
    // column left out. The same values as the 4 x 4 factorisation with that identity row: its pivot is exactly 1,
    // its entries of L and L^-1 are zeros, and the terms they add to the other entries are zeros.
    float h[3][3];
    h[0][0] = s[0]; h[0][1] = s[1]; h[1][1] = s[2];
    h[0][2] = est_offset ? s[6] : 0.0f;
    h[1][2] = est_offset ? s[7] : 0.0f;
    h[2][2] = est_offset ? n : 1.0f;
    h[1][0] = h[0][1]; h[2][0] = h[0][2]; h[2][1] = h[1][2];
    float hi[3][3];
    if (!lk_invert<3>(h, hi)) return false;
    constexpr int kAt[3] = {0, 1, 3};  // (tx, ty, offset) in the 4 x 4 order
    KESTREL_UNROLL
    for (int i = 0; i < 4; ++i) {
        sys.hinv[i][2] = i == 2 ? 1.0f : 0.0f;
        sys.hinv[2][i] = i == 2 ? 1.0f : 0.0f;
    }
    KESTREL_UNROLL
    for (int i = 0; i < 3; ++i)
        KESTREL_UNROLL
        for (int j = 0; j < 3; ++j) sys.hinv[kAt[i]][kAt[j]] = hi[i][j];
    return true;
}

/// Solves H x = -b (the Gauss-Newton step for e ~ e0 + J dq) with the inverse from lk_factorize:
/// x_i = -(fma(Hinv_i1, r_1, Hinv_i0 r_0) + fma(Hinv_i3, r_3, Hinv_i2 r_2)), r = b with inactive entries 0;
/// without the gain (its row and column of Hinv are the identity's and r_2 = 0): x_i = -(fma(Hinv_i1, r_1,
/// Hinv_i0 r_0) + Hinv_i3 r_3), and x_2 = 0.
KESTREL_HD void lk_solve(const LkSystem& sys, const float* b, int est_gain, int est_offset, float* x) {
    const float r[4] = {b[0], b[1], est_gain ? b[2] : 0.0f, est_offset ? b[3] : 0.0f};
    if (est_gain) {
        KESTREL_UNROLL
        for (int i = 0; i < 4; ++i)
            x[i] = -fadd(ffma(sys.hinv[i][1], r[1], fmul(sys.hinv[i][0], r[0])),
                         ffma(sys.hinv[i][3], r[3], fmul(sys.hinv[i][2], r[2])));
    } else {
        KESTREL_UNROLL
        for (int i = 0; i < 4; ++i)
            x[i] = i == 2 ? 0.0f
                          : -fadd(ffma(sys.hinv[i][1], r[1], fmul(sys.hinv[i][0], r[0])), fmul(sys.hinv[i][3], r[3]));
    }
}

/// What a level's template alone determines (the template mean mu, 0 without the offset; the 9 sums; the inverse
/// of H): lk_prepare_level computes it; an engine may hand it in ready-made for a stored template (computed once,
/// when the template was stored, by the same operations: the same values). Aligned: the GPU reads a stored one with
/// 16-byte loads.
struct alignas(16) LkLevelPrep {
    float hs[kLkHessianSums];
    LkSystem sys;
    float mu;
    std::int32_t ok;  // 0: H singular (lk_factorize false)
};

/// The preparation of level k's loaded template: mu = sum T / n (with the offset), the hessian sums at mu and
/// lk_factorize (the gain on level 0 only).
KESTREL_HD_TEMPLATE_CHECK
template <class Engine>
KESTREL_HD void lk_prepare_level(Engine& eng, const LkSetup& s, int k, LkLevelPrep& p) {
    const float npx = static_cast<float>(s.patch[k] * s.patch[k]);
    p.mu = s.est_offset ? div_by(eng.template_sum(k), npx, s.inv_npx[k]) : 0.0f;
    eng.hessian_sums(k, p.mu, p.hs);
    p.ok = lk_factorize(p.hs, npx, k == 0 ? s.est_gain : 0, s.est_offset, s.min_eigenvalue, p.sys) ? 1 : 0;
}

/// Engines with `bool prepared(int k, LkLevelPrep& p)` (true: p holds level k's preparation) skip lk_prepare_level
/// where they have one; the others always compute it.
template <class E, class = void>
struct LkHasPrepared : std::false_type {};
template <class E>
struct LkHasPrepared<E, std::void_t<decltype(std::declval<E&>().prepared(0, std::declval<LkLevelPrep&>()))>>
    : std::true_type {};

// ---- motion prediction (FeatureTracker) ---------------------------------------------------------
/// A track's start without a caller's prediction when TrackerConfig::motion.constant_velocity is on: its position
/// plus its last frame's displacement, x + (x - x_prev) (level-0 px; a track born in the last frame: x).
KESTREL_HD float constant_velocity_start(float x, float x_prev) { return fadd(x, fsub(x, x_prev)); }

/// The levels a track with a predicted start (a caller's prediction, or its constant-velocity start) leaves out at
/// the top of the pyramid: its search starts on the finest level k whose reach covers the predicted displacement
/// (dx, dy) from its previous position, |dx|, |dy| <= reach * scale_k (level-0 px; TrackerConfig::motion.level_reach),
/// and on the coarsest level when none does. With the defaults (reach 4 px, 3 levels of scale 2): level 0 alone
/// within 4 px, levels 1 and 0 within 8 px, else all three. Returns levels - 1 - k.
KESTREL_HD int predicted_levels_skipped(const LkSetup& s, float dx, float dy, float reach) {
    const float d = fmaxf(fabsf(dx), fabsf(dy));
    int k = 0;
    while (k < s.levels - 1 && !(d <= fmul(reach, s.scale[k]))) ++k;
    return s.levels - 1 - k;
}

/// The coarsest level LK searches: setup.levels - 1 - skip (predicted_levels_skipped), at least 0.
KESTREL_HD int lk_top_level(const LkSetup& s, int skip) { return s.levels - 1 - skip >= 0 ? s.levels - 1 - skip : 0; }

// ---- the driver -------------------------------------------------------------------------------
/// Coarse-to-fine tracking of one feature. Engine (the warp on the GPU, a 32-lane emulation on the CPU):
///   bool  load_template(int k, float rx, float ry, const LkImage& cur, float cx, float cy)
///         // template of level k at (rx, ry); false: unusable. (cx, cy): where the level starts in
///         // cur, a hint only (the GPU stages that neighbourhood of cur at the same time)
///   float template_sum(int k)                        // sum of T over the patch (all lanes)
///   void  hessian_sums(int k, float mu, float* s9)
///   void  image_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float mu,
///                    float* s5, bool with_sad)  // add_image_sums<with_sad> over the patch at (cx, cy):
///         // s5[0..3]; s5[4] = sum |e| only when with_sad
///   void  residual_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float alpha0,
///                       float beta_c0, float mu, float* sad, float* sad0)
///         // sum |e| at (alpha, beta_c) and at (alpha0, beta_c0), in the same pass (per-lane order, butterfly)
/// ref_x, ref_y: the template position (level 0), only used by load_template. cur: current pyramid. top: the
/// coarsest level searched (lk_top_level; -1 or out of range: setup.levels - 1).
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
/// Oscillation (a step undoing the previous one within min_update) ends a level half-way, converged. The levels
/// >= 1 stop at coarse_min_update instead of min_update (both tests).
/// A coarse level runs at most coarse_iterations iterations (level 0: max_iterations): it only seeds the
/// next level, and the few tracks that would use more set the GPU launch's length (docs/tracker.md).

KESTREL_HD_TEMPLATE_CHECK
template <class Engine>
KESTREL_HD LkResult lk_track_one(Engine& eng, const LkSetup& s, const LkImage* cur, float ref_x, float ref_y,
                                 LkGuess g, int top = -1) {
    LkResult res;
    float X = g.x, Y = g.y, alpha = g.gain, beta = g.offset;
    // Loop invariants held in locals: on the GPU `s` and `cur` live in shared memory, which the staging
    // stores could alias, so members read inside the iteration loop would be reloaded every iteration.
    const int est_offset = s.est_offset, max_iterations = s.max_iterations, coarse_iterations = s.coarse_iterations;
    const float min_update0 = s.min_update, min_update_sq0 = s.min_update_sq;
    const float coarse_min_update = s.coarse_min_update, coarse_min_update_sq = s.coarse_min_update_sq;
    res.status = TrackStatus::Tracked;
    if (!finite(X) || !finite(Y) || !finite(alpha) || !finite(beta)) {
        res.status = TrackStatus::LostOutOfBounds;
        res.x = X; res.y = Y; res.gain = alpha; res.offset = beta;
        return res;
    }
    for (int k = top >= 0 && top < s.levels ? top : s.levels - 1; k >= 0; --k) {
        const int n = s.patch[k];
        const float npx = static_cast<float>(n * n);
        const float sk = s.scale[k], inv_npx = s.inv_npx[k];
        const int est_gain = k == 0 ? s.est_gain : 0;
        const float min_update = k == 0 ? min_update0 : coarse_min_update;
        const float min_update_sq = k == 0 ? min_update_sq0 : coarse_min_update_sq;
        float cx = to_level_k(s, k, X), cy = to_level_k(s, k, Y);
        const LkImage cur_k = cur[k];
        const bool tmpl = eng.load_template(k, to_level_k(s, k, ref_x), to_level_k(s, k, ref_y), cur_k, cx, cy);
        if (!tmpl || !inside(cur_k, cx, cy, n, 0)) {
            if (k == 0) { res.status = TrackStatus::LostOutOfBounds; break; }
            continue;
        }
        LkLevelPrep prep;
        bool have = false;
        if constexpr (LkHasPrepared<Engine>::value) have = eng.prepared(k, prep);
        if (!have) lk_prepare_level(eng, s, k, prep);
        const float mu = prep.mu;
        const float* hs = prep.hs;
        const LkSystem& sys = prep.sys;
        if (prep.ok == 0) {
            if (k == 0) { res.status = TrackStatus::LostSingular; break; }
            continue;
        }
        float beta_c = fadd(beta, fmul(alpha, mu));  // beta + alpha * T  ==  beta_c + alpha * (T - mu)
        const float x_start = cx, y_start = cy, a_start = alpha, b_start = beta_c;
        const float gx_k = to_level_k(s, k, g.x), gy_k = to_level_k(s, k, g.y);  // the initial guess on this level
        const float window = s.window[k];                                         // the search window, level pixels
        int it = 0;
        bool converged = false, gain_lost = false;
        // alpha's reciprocal, renewed with alpha (a loop-carried value: its division overlaps the next
        // iteration's sampling instead of waiting for the step)
        float inv_alpha = fdiv(1.0f, alpha);
        float pdx = 0.0f, pdy = 0.0f;  // previous step
        float first_sad = 0.0f, last_sad = 0.0f;  // sum |e| at the level's start and at the last evaluation
        const int level_iterations = k == 0 ? max_iterations : coarse_iterations;
        for (; it < level_iterations; ++it) {
            float is[kLkImageSums + 1];
            // sum |e| serves only the coarse levels' discard test (level 0's residual is computed after the loop)
            eng.image_sums(k, cur_k, cx, cy, alpha, beta_c, mu, is, k > 0);
            if (k > 0) {
                if (it == 0) first_sad = is[4];
                last_sad = is[4];
            }
            float es[4];
            error_terms(hs, npx, is, alpha, beta_c, es);
            float dq[4];
            lk_solve(sys, es, est_gain, est_offset, dq);
            // Exact SIC step: J(alpha) = J(1) diag(alpha, alpha, 1, 1) => dt = dq_t * (1 / alpha)
            // (one reciprocal per update of alpha; on coarse levels alpha is fixed and so is inv_alpha).
            const float dtx = fmul(dq[0], inv_alpha), dty = fmul(dq[1], inv_alpha);
            const float nx = fsub(cx, dtx), ny = fsub(cy, dty);  // t <- t - dt (inverse composition)
            const float na = est_gain ? fadd(alpha, dq[2]) : alpha;
            const float nb = est_offset ? fadd(beta_c, dq[3]) : beta_c;
            // Every reason to stop before the update, evaluated first and tested with one branch (they
            // have no side effects; NaN fails every compare), then handled in this order of precedence:
            // a non-finite step; the gain out of range; the patch outside the image; the search
            // window left; oscillation (a step that undoes the previous one, as bilinear sampling makes
            // near pixel boundaries: |dt + dt_prev| < min_update in both coordinates).
            // (& on named bools: no short circuit, so no branches before the one test)
            const bool fin_x = finite(nx), fin_y = finite(ny), fin_b = finite(nb), fin_a = finite(na);
            const bool ok_finite = fin_x & fin_y & fin_b & fin_a;
            const bool ok_gain = (na >= kLkMinGain) & (na <= kLkMaxGain);
            const bool ok_inside = inside(cur_k, nx, ny, n, 0);
            const float wx = fabsf(fsub(nx, gx_k)), wy = fabsf(fsub(ny, gy_k));
            const bool ok_window = (wx <= window) & (wy <= window);
            const float ox = fabsf(fadd(dtx, pdx)), oy = fabsf(fadd(dty, pdy));
            const bool oscillates = (it > 0) & (ox < min_update) & (oy < min_update);
            const bool ok = ok_finite & ok_gain & ok_inside & ok_window;
            if (!ok || oscillates) {
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
            if (est_gain) inv_alpha = fdiv(1.0f, alpha);  // (alpha is unchanged without est_gain)
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
            float sad = 0.0f, sad0 = 0.0f;
            eng.residual_sums(0, cur_k, cx, cy, alpha, beta_c, g.gain, fadd(g.offset, fmul(g.gain, mu)), mu, &sad,
                              &sad0);
            res.residual = div_by(sad, npx, inv_npx);
            // The loss test takes the better of the fitted illumination and the initial one at the final
            // position: the least-squares fit of gain/offset can raise mean |e| on a partly occluded
            // patch (it splits the difference between the parts), and a correction that only makes the
            // match look worse must not end a track that translation alone would keep.
            float test = res.residual;
            if (s.est_gain || s.est_offset) {
                const float plain = div_by(sad0, npx, inv_npx);
                if (plain < test) test = plain;
            }
            if (gain_lost || !(test <= s.max_residual)) res.status = TrackStatus::LostResidual;
            else if (!converged) res.status = TrackStatus::NotConverged;
        }
    }
    res.x = X; res.y = Y; res.gain = alpha; res.offset = beta;
    return res;
}

// ---- The round trip's seed classes (LK there and back, as the stereo matching runs it: StereoTracker assigns the
// classes, detail/stereo_rules.hpp the verdicts; the round-trip kernel and the CPU matcher apply these rules).

/// A track's seed, as the matchers receive it per track (an int32: 0, 1, 2).
enum MatchSeed : std::int32_t {
    kSeedSearch = 0,   ///< no carried offset (a neighbours' median or zero): every level, and the way back
    kSeedCarried = 1,  ///< an offset carried from an older frame (the track found no match in the previous one):
                       ///< every level from it, and the way back
    kSeedTrusted = 2,  ///< matched in the previous frame: the finest refine_levels levels; the way back only where
                       ///< round_trip_needed says so
};

/// Whether a track of seed class `seed` is matched on the finest StereoMatchConfig::refine_levels levels only
/// (else on every level of StereoMatchConfig::lk).
KESTREL_HD bool match_refines(std::int32_t seed) { return seed == kSeedTrusted; }

/// The seed class of a track: `carried` whether it has a carried offset, `matched_last` whether it was Matched in
/// the previous frame (its offset is that match's).
inline std::int32_t match_seed(bool carried, bool matched_last) {
    return !carried ? kSeedSearch : (matched_last ? kSeedTrusted : kSeedCarried);
}

/// Whether the way back (right -> left LK) runs for a track of seed class `seed` whose forward LK gave `status`,
/// (fx, fy), from the seed position (sx, sy): always, except for a trusted seed whose forward LK converged
/// (Tracked) within trust_distance px of the seed (float arithmetic without contraction: the same on the host and
/// the device). trust_distance 0: always.
KESTREL_HD bool round_trip_needed(std::int32_t seed, TrackStatus status, float fx, float fy, float sx, float sy,
                                  float trust_distance) {
    if (seed != kSeedTrusted || status != TrackStatus::Tracked || !(trust_distance > 0.0f)) return true;
    const float dx = fsub(fx, sx), dy = fsub(fy, sy);
    const float d2 = fadd(fmul(dx, dx), fmul(dy, dy));
    return !(d2 <= fmul(trust_distance, trust_distance));
}

/// The backward result of a track that skipped the way back: the left position (x, y) itself, Tracked, so its
/// round trip is zero.
KESTREL_HD LkResult skipped_round_trip(float x, float y) {
    LkResult r;
    r.x = x;
    r.y = y;
    r.gain = 1.0f;
    r.offset = 0.0f;
    r.residual = 0.0f;
    r.iterations = 0;
    r.status = TrackStatus::Tracked;
    return r;
}

}  // namespace kestrel::detail
