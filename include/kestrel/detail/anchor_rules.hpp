// The anchor rules: a track's position from frame-to-frame LK is refined against the track's FIRST observation
// (every frame, or on the frames the fit schedule anchor_due / anchor_fit_wanted calls) with an affine warp plus gain
// and offset (Shi & Tomasi's feature monitoring, "Good Features to Track", 1994: affine dissimilarity against the
// first frame). Shared verbatim by the CPU reference (src/track/anchor_cpu.cpp) and the CUDA kernels
// (kernels/track/anchor_engine.cuh, anchor.cu).
//
// Summary: frame-to-frame LK is robust to appearance change but its small per-frame errors add up (drift);
// aligning to the first observation removes the drift but a translation-only fit is biased once the patch
// rotates, scales or tilts. The affine fit against the first observation has neither problem.
//
// Model: template T (the n x n level-0 patch of the first observation with its central-difference
// gradients gx, gy: detail::extract_template), pixel offsets (u, v) = (i - h, j - h), h = (n - 1) / 2:
//     I(W(u, v)) ~= alpha T(u, v) + beta,   W(u, v) = (a00 u + a01 v + tx, a10 u + a11 v + ty)
// Simultaneous inverse compositional Gauss-Newton (Baker & Matthews, "Lucas-Kanade 20 Years On", Part 1
// section 3.2 and Part 3 section 4, as the LK rules): steepest-descent images at alpha = 1
//     SD = [gx u, gy u, gx v, gy v, gx, gy, a, 1],   a = T - mu
// for the incremental warp dW = [1 + d0, d2, d4; d1, 1 + d3, d5] and the appearance (dalpha, dbeta_c);
// H = sum SD SD^T (8 x 8, the template's: constant over the iterations), b = sum SD e with
// e = alpha a + beta_c - I(W); dq = -H^-1 b, d = dq[0..5] / alpha (exact for the current gain, as in
// lk_rules.hpp), alpha += dq[6], beta_c += dq[7], and W <- W o dW^-1.
//
// Exactness: the float operations are lk_rules.hpp's (fmul/fadd/fsub/fdiv/ffma) in a fixed order; per-pixel
// sums run per warp lane over detail::lane_pixel in order, then the xor butterfly (the CPU emulates it).
#pragma once
#include "kestrel/detail/lk_rules.hpp"

namespace kestrel::detail {

constexpr int kAnchorParams = 8;                                     // d0..d5, alpha, beta_c
constexpr int kAnchorHessianSums = kAnchorParams * (kAnchorParams + 1) / 2;  // upper triangle, row-major
constexpr float kAnchorMinDet = 0.25f;  // det(A) outside [1/4, 4]: the patch shrank or grew 2x -> lost
constexpr float kAnchorMaxDet = 4.0f;
/// The fit stops after its first step when that step moves no patch corner by kAnchorFirstStop px or more (the
/// frame-to-frame estimate was already close; on the quick evaluation set of docs/tracker.md, against iterating
/// to min_update: median error +0.5 % at 0.1 px, +3 % at 0.2 px, +8 % at 0.5 px); later steps stop at kAnchorLaterStop.
constexpr float kAnchorFirstStop = 0.1f;
/// The later steps' stop bound (px, as kAnchorFirstStop; LkConfig::min_update when that is larger): a fit whose step
/// moves no patch corner by this much has converged for the tracker's purposes. On the vtest sequence 0.05
/// instead of min_update (0.01) cuts the fit's iterations from 2.16 to 1.71 per track (the rest mostly tracks
/// whose affine part keeps moving the corners by a few hundredths of a pixel until the iteration cap), with the
/// evaluation set's median error, > 1 px share and mean length within 0.2 %, 1.5 % and 0.1 %.
constexpr float kAnchorLaterStop = 0.05f;
/// stored_patch_from's bounds on the anchor warp's distance from the identity: the coarse levels (and 4x it on the
/// gain), level 0. On the vtest sequence 28 % of the track-frames take every level from the stored patch, 42 % the
/// coarse levels only. Level 0's bound: FeatureTrackerCpu.DemoSequenceErrorTail's 200 frames have 0.08 % of the
/// track-frames over 1 px at 0.02 and 0.025, 0.18 % at 0.03, 0.42 % at 0.04, 0.58 % at 0.05 (re-anchored at biased
/// level-0 estimates); the evaluation set of docs/tracker.md is unchanged at 0.02.
constexpr float kStoredPatchBound = 0.05f;
constexpr float kStoredPatchBound0 = 0.02f;
/// The fit schedule (anchor_due, anchor_fit_wanted) with AnchorConfig::interval > 1: a track fits on its first
/// kAnchorSettleFrames frames after its reference patch was stored (born or re-anchored), ...
constexpr int kAnchorSettleFrames = 2;
/// ... on every frame after a fit that moved it by more than kAnchorDriftBound level-0 px from its frame-to-frame
/// estimate (its frame-to-frame estimate may drift that far again before its next scheduled fit), ...
/// The bound decides what skipping costs: on the evaluation set of docs/tracker.md with interval 2, 0.015 px skips
/// 11 % of the fits at +3.5 % median error, 0.02 px 16 % at +5.6 %, 0.03 px 25 % at +10 %, 0.1 px 47 % at +23 %.
constexpr float kAnchorDriftBound = 0.015f;
/// ... and on a frame whose frame-to-frame LK ended with a mean |residual| above kAnchorRefitResidual grey levels or
/// did not converge (the estimate is less certain than usual; on the evaluation set 4 instead of 8 changes nothing).
constexpr float kAnchorRefitResidual = 8.0f;

/// What the anchor stage needs, resolved on the host (plain data, by value).
struct AnchorSetup {
    int n;               // level-0 patch side (the stored first-observation template)
    int est_gain, est_offset;
    int max_iterations;  // Gauss-Newton iterations
    float min_update;    // later steps: stop when the update moves every patch corner by less than this (px)
    float min_eigenvalue;  // as LkConfig::min_eigenvalue, on the translation block
    float first_update;  // the fit stops after its first step when that moves every corner by less than this (px)
    float inv_npx;       // 1 / n^2 when a power of two (exact_reciprocal), else 0
    float stored_bound;  // stored_patch_from's bound on the warp's distance from the identity (coarse levels)
    float stored_bound0;  // the same for level 0
    int interval;         // AnchorConfig::interval: a track's scheduled fits are interval frames apart
    float drift_bound;    // anchor_due: fit on every frame after a fit that corrected LK by more than this (px)
    float refit_residual;  // anchor_fit_wanted: fit when LK's mean |residual| exceeds this (grey levels)
};

/// A track's anchor state: the warp from its first observation's patch to the current frame, and the
/// illumination relative to the first observation.
struct AnchorState {
    float a00 = 1.0f, a01 = 0.0f, a10 = 0.0f, a11 = 1.0f;
    float x = 0.0f, y = 0.0f;  // the patch centre in the current frame (level-0 pixels)
    float gain = 1.0f, offset = 0.0f;
    // The fit schedule (AnchorConfig::interval), kept by the tracker's host bookkeeping: whether this frame's fit is
    // due (anchor_due, set before each frame), the frames since the reference patch was stored (up to
    // kAnchorSettleFrames), and how far the last fit moved the track from its frame-to-frame estimate (level-0 px).
    std::int32_t due = 1;
    std::int32_t age = 0;
    float correction = 0.0f;
};

struct AnchorResult {
    AnchorState state;
    float residual = 0.0f;        // mean |e| over the patch at the final warp
    std::int32_t iterations = 0;
    TrackStatus status = TrackStatus::Tracked;  // Tracked, or LostAnchor (see anchor_refine_one)
};

/// Steepest-descent vector of one pixel (alpha = 1): [gx u, gy u, gx v, gy v, gx, gy, a, 1].
KESTREL_HD void anchor_sd(float a, float gx, float gy, float u, float v, float* sd) {
    sd[0] = fmul(gx, u);
    sd[1] = fmul(gy, u);
    sd[2] = fmul(gx, v);
    sd[3] = fmul(gy, v);
    sd[4] = gx;
    sd[5] = gy;
    sd[6] = a;
    sd[7] = 1.0f;
}

/// Pixel offset of patch index i: (i % n - h, i / n - h) (exact: h is a multiple of 1/2).
KESTREL_HD float anchor_u(int i, int n, float h) { return fsub(static_cast<float>(i % n), h); }
KESTREL_HD float anchor_v(int i, int n, float h) { return fsub(static_cast<float>(i / n), h); }

/// Adds one pixel's SD SD^T (upper triangle, row-major) to acc, each product by one ffma.
KESTREL_HD void anchor_add_hessian(float* acc, const float* sd) {
    int k = 0;
    KESTREL_UNROLL
    for (int r = 0; r < kAnchorParams; ++r) {
        KESTREL_UNROLL
        for (int c = r; c < kAnchorParams; ++c, ++k) acc[k] = ffma(sd[r], sd[c], acc[k]);
    }
}

/// The image at the warped position of offset (u, v): bilinear with the grid formula of lk_rules.hpp
/// (row = fma(ax, I(x0 + 1), bx I(x0)), sample = fma(ay, row(y0 + 1), by row(y0))) and the border rule's
/// clamped taps. Position: x = fma(a00, u, fma(a01, v, tx)), y likewise.
KESTREL_HD float anchor_sample(const LkImage& im, const AnchorState& w, float u, float v) {
    const float px = ffma(w.a00, u, ffma(w.a01, v, w.x));
    const float py = ffma(w.a10, u, ffma(w.a11, v, w.y));
    const PatchGrid g = patch_grid(px, py, 0.0f);
    const GridTaps src(im, g);
    return grid_sample(src, g, 0, 0);
}

/// Adds one pixel's error terms SD e (8, by ffma) and |e| to acc[0..8]; e = fma(alpha, a, beta_c) - I.
KESTREL_HD void anchor_add_error(float* acc, const float* sd, float a, float image, float alpha, float beta_c) {
    const float e = pixel_error_centred(a, image, alpha, beta_c);
    KESTREL_UNROLL
    for (int k = 0; k < kAnchorParams; ++k) acc[k] = ffma(sd[k], e, acc[k]);
    acc[kAnchorParams] = fadd(acc[kAnchorParams], fabsf(e));
}

/// The inverse of the 8 x 8 H (from the upper-triangle sums; inactive appearance parameters get an identity
/// row and column), by lk_invert (lk_rules.hpp: LDL^T, then H^-1 = L^-T D^-1 L^-1), kept as its upper triangle
/// (row-major, as the sums), so that an iteration's solve is one product. False when singular: the
/// translation block's smaller eigenvalue / pixels below min_eigenvalue (lk_factorize's test), a pivot
/// d_j <= kLkPivotEps H_jj, or a non-finite pivot.
struct AnchorSystem {
    float hinv[kAnchorHessianSums];
};
/// Index of entry (r, c), r <= c, in the row-major upper triangle of an 8 x 8 symmetric matrix.
KESTREL_HD constexpr int anchor_tri(int r, int c) { return r * kAnchorParams - r * (r - 1) / 2 + (c - r); }

KESTREL_HD bool anchor_factorize(const float* hs, float npx, int est_gain, int est_offset, float min_eigenvalue,
                                 AnchorSystem& sys) {
    float h[kAnchorParams][kAnchorParams];
    int k = 0;
    KESTREL_UNROLL
    for (int r = 0; r < kAnchorParams; ++r) {
        KESTREL_UNROLL
        for (int c = r; c < kAnchorParams; ++c, ++k) {
            h[r][c] = hs[k];
            h[c][r] = hs[k];
        }
    }
    const bool active[kAnchorParams] = {true, true, true, true, true, true, est_gain != 0, est_offset != 0};
    KESTREL_UNROLL
    for (int r = 0; r < kAnchorParams; ++r) {
        KESTREL_UNROLL
        for (int c = 0; c < kAnchorParams; ++c)
            if (!(active[r] && active[c])) h[r][c] = r == c ? 1.0f : 0.0f;
    }
    // Translation block [gx^2, gx gy; gx gy, gy^2] (indices 4, 5): lambda_min >= m = min_eigenvalue * npx.
    const float m = fmul(min_eigenvalue, npx);
    const float p = fsub(h[4][4], m), q = fsub(h[5][5], m);
    const bool eig_ok = (fadd(p, q) >= 0.0f) & (fsub(fmul(p, q), fmul(h[4][5], h[4][5])) >= 0.0f);
    float hi[kAnchorParams][kAnchorParams];
    const bool inv_ok = lk_invert<kAnchorParams>(h, hi);
    k = 0;
    KESTREL_UNROLL
    for (int r = 0; r < kAnchorParams; ++r) {
        KESTREL_UNROLL
        for (int c = r; c < kAnchorParams; ++c, ++k) sys.hinv[k] = inv_ok ? hi[r][c] : 0.0f;
    }
    return eig_ok & inv_ok;
}

/// x = -H^-1 b, row i as -(fma chain of hinv_i0 b_0, hinv_i1 b_1, ... hinv_i7 b_7 in increasing column order);
/// the entries of b of inactive parameters are taken as 0 (their x_i is then 0: identity rows of H).
KESTREL_HD void anchor_solve(const AnchorSystem& sys, const float* b, int est_gain, int est_offset, float* x) {
    float r[kAnchorParams];
    KESTREL_UNROLL
    for (int i = 0; i < kAnchorParams; ++i) r[i] = (i < 6 || (i == 6 && est_gain) || (i == 7 && est_offset)) ? b[i] : 0.0f;
    KESTREL_UNROLL
    for (int i = 0; i < kAnchorParams; ++i) {
        float v = fmul(sys.hinv[anchor_tri(0, i)], r[0]);
        KESTREL_UNROLL
        for (int j = 1; j < kAnchorParams; ++j) v = ffma(sys.hinv[j <= i ? anchor_tri(j, i) : anchor_tri(i, j)], r[j], v);
        x[i] = -v;
    }
}

/// W <- W o dW^-1 for dW = [1 + d0, d2, d4; d1, 1 + d3, d5]: with det = (1 + d0)(1 + d3) - d2 d1,
/// dW^-1 = [1 + d3, -d2; -d1, 1 + d0] / det and translation -dW^-1 (d4, d5); A' = A dW^-1, t' = A t_inv + t.
KESTREL_HD AnchorState anchor_compose(const AnchorState& w, const float* d) {
    const float e00 = fadd(1.0f, d[0]), e11 = fadd(1.0f, d[3]);
    const float det = fsub(fmul(e00, e11), fmul(d[2], d[1]));
    const float r = fdiv(1.0f, det);
    const float i00 = fmul(e11, r), i01 = fmul(-d[2], r), i10 = fmul(-d[1], r), i11 = fmul(e00, r);
    const float itx = -fadd(fmul(i00, d[4]), fmul(i01, d[5]));
    const float ity = -fadd(fmul(i10, d[4]), fmul(i11, d[5]));
    AnchorState o = w;
    o.a00 = fadd(fmul(w.a00, i00), fmul(w.a01, i10));
    o.a01 = fadd(fmul(w.a00, i01), fmul(w.a01, i11));
    o.a10 = fadd(fmul(w.a10, i00), fmul(w.a11, i10));
    o.a11 = fadd(fmul(w.a10, i01), fmul(w.a11, i11));
    o.x = fadd(fadd(fmul(w.a00, itx), fmul(w.a01, ity)), w.x);
    o.y = fadd(fadd(fmul(w.a10, itx), fmul(w.a11, ity)), w.y);
    return o;
}

/// The first level on which frame-to-frame LK takes a track's template from its stored reference patch instead of
/// the previous frame (levels: none; the levels from there on, from LkSetup::stored_from_level at the earliest).
/// The stored patch serves while the track's anchor warp is still close to the identity, so that it still looks
/// like the current one: with d = |a00 - 1| + |a01| + |a10| + |a11 - 1| (a corner of a 16-pixel patch moves by at
/// most 7.5 d level pixels) and |gain - 1| <= 4 stored_bound, the coarse levels (1 on) when d <= stored_bound,
/// level 0 too when d <= stored_bound0. Otherwise (rotation, scale or perspective built up since the patch was
/// stored) the previous frame's patch is the better template. Level 0 has the tighter bound: its estimate is the
/// one a failed anchor fit re-anchors the track at, and a translation-only fit to a slightly deformed patch is
/// biased by a fraction of d; the coarse levels only seed the next level. The stored levels' Hessians are prepared
/// once, when the patch is stored (lk_prepare_level).
KESTREL_HD int stored_patch_from(const AnchorSetup& s, const AnchorState& a, int first, int levels) {
    const float d = fadd(fadd(fabsf(fsub(a.a00, 1.0f)), fabsf(a.a01)), fadd(fabsf(a.a10), fabsf(fsub(a.a11, 1.0f))));
    const bool gain_ok = fabsf(fsub(a.gain, 1.0f)) <= fmul(4.0f, s.stored_bound);
    const int from = !(gain_ok & (d <= s.stored_bound)) ? levels : (d <= s.stored_bound0 ? 0 : 1);
    return from > first ? from : first;
}

/// Largest movement of a patch corner (+-h, +-h) between warps a and b, as |dx| + |dy| (an upper bound of
/// the Euclidean distance): |dt| + h (|dA| row sums).
KESTREL_HD float anchor_change(const AnchorState& a, const AnchorState& b, float h) {
    const float dx = fadd(fabsf(fsub(b.x, a.x)), fmul(h, fadd(fabsf(fsub(b.a00, a.a00)), fabsf(fsub(b.a01, a.a01)))));
    const float dy = fadd(fabsf(fsub(b.y, a.y)), fmul(h, fadd(fabsf(fsub(b.a10, a.a10)), fabsf(fsub(b.a11, a.a11)))));
    return fadd(dx, dy);
}

/// What a track's template alone determines, computed once when the template is stored (the warp that
/// stores it on the GPU, store_templates on the CPU) and reused every frame: the template mean mu (0
/// without the offset) and the LDL^T factors of H. ok = 0 when H is singular (the fit then fails).
struct alignas(16) AnchorPrep {  // aligned: the GPU reads it with 16-byte loads
    AnchorSystem sys;
    float mu;
    std::int32_t ok;
};

/// The preparation of one template. Engine: template_sum() and hessian_sums(mu, hs36) as below.
KESTREL_HD_TEMPLATE_CHECK
template <class Engine>
KESTREL_HD AnchorPrep anchor_prepare(Engine& eng, const AnchorSetup& s) {
    AnchorPrep p{};
    const float npx = static_cast<float>(s.n * s.n);
    p.mu = s.est_offset ? fdiv(eng.template_sum(), npx) : 0.0f;
    float hs[kAnchorHessianSums];
    eng.hessian_sums(p.mu, hs);
    p.ok = anchor_factorize(hs, npx, s.est_gain, s.est_offset, s.min_eigenvalue, p.sys) ? 1 : 0;
    return p;
}

/// The refinement of one track from its template's preparation (anchor_prepare). Engine (the warp on the
/// GPU, its 32-lane emulation on the CPU):
///   float template_sum()                                   // sum of T (all lanes, butterfly)
///   void  hessian_sums(float mu, float* hs36)             // anchor_add_hessian over the patch
///   void  error_sums(const LkImage&, const AnchorState&, float alpha, float beta_c, float mu, float* s9)
///   -- each lane in detail::lane_pixel order, then the butterfly (the first two serve anchor_prepare).
/// Starts from `w` (the frame-to-frame estimate with the previous frame's affine part and illumination).
/// LostAnchor when: the Hessian is singular; a step is not finite; the gain leaves [kLkMinGain,
/// kLkMaxGain]; det(A) leaves [kAnchorMinDet, kAnchorMaxDet]; the centre leaves the image. The caller
/// applies the residual and distance tests (FeatureTracker policy).
KESTREL_HD_TEMPLATE_CHECK
template <class Engine>
KESTREL_HD AnchorResult anchor_refine_one(Engine& eng, const AnchorSetup& s, const LkImage& cur, AnchorState w,
                                          const AnchorPrep& prep) {
    AnchorResult res;
    res.status = TrackStatus::LostAnchor;
    res.state = w;
    const int n = s.n;
    const float npx = static_cast<float>(n * n);
    const float h = patch_half(n);
    const int est_gain = s.est_gain, est_offset = s.est_offset;
    const bool start_ok = finite(w.x) & finite(w.y) & finite(w.gain) & finite(w.offset) & finite(w.a00) &
                          finite(w.a01) & finite(w.a10) & finite(w.a11);
    if (!start_ok || prep.ok == 0) return res;
    const float mu = prep.mu;
    const AnchorSystem& sys = prep.sys;
    float alpha = w.gain;
    float beta_c = fadd(w.offset, fmul(alpha, mu));
    float inv_alpha = fdiv(1.0f, alpha);  // renewed with alpha
    float sad = 0.0f;                     // sum |e| of the last evaluation
    bool ok = true;
    int it = 0;
    for (; it < s.max_iterations; ++it) {
        float es[kAnchorParams + 1];
        eng.error_sums(cur, w, alpha, beta_c, mu, es);
        sad = es[kAnchorParams];
        float dq[kAnchorParams];
        anchor_solve(sys, es, est_gain, est_offset, dq);
        float d[6];
        KESTREL_UNROLL
        for (int k = 0; k < 6; ++k) d[k] = fmul(dq[k], inv_alpha);
        const AnchorState nw = anchor_compose(w, d);
        const float na = est_gain ? fadd(alpha, dq[6]) : alpha;
        const float nb = est_offset ? fadd(beta_c, dq[7]) : beta_c;
        const float det = fsub(fmul(nw.a00, nw.a11), fmul(nw.a01, nw.a10));
        const bool fin = finite(nw.x) & finite(nw.y) & finite(nw.a00) & finite(nw.a01) & finite(nw.a10) &
                         finite(nw.a11) & finite(na) & finite(nb);
        const bool gain_ok = (na >= kLkMinGain) & (na <= kLkMaxGain);
        const bool det_ok = (det >= kAnchorMinDet) & (det <= kAnchorMaxDet);
        const bool centre_ok = (nw.x >= 0.0f) & (nw.x <= static_cast<float>(cur.width - 1)) & (nw.y >= 0.0f) &
                               (nw.y <= static_cast<float>(cur.height - 1));
        if (!(fin & gain_ok & det_ok & centre_ok)) {
            ok = false;
            break;
        }
        const float change = anchor_change(w, nw, h);
        w = nw;
        alpha = na;
        beta_c = nb;
        if (est_gain) inv_alpha = fdiv(1.0f, alpha);
        if (change < (it == 0 ? s.first_update : s.min_update)) {
            ++it;
            break;
        }
    }
    w.gain = alpha;
    w.offset = fsub(beta_c, fmul(alpha, mu));
    res.state = w;
    res.iterations = it;
    if (!ok) return res;
    // The residual is the mean |e| of the last evaluation, before the last step (which moved no corner by more
    // than the stop bound unless the iterations ran out): no pass over the patch of its own.
    res.residual = div_by(sad, npx, s.inv_npx);
    res.status = TrackStatus::Tracked;
    return res;
}

/// The fit schedule, before a frame (FeatureTracker's host bookkeeping; AnchorSetup::interval = 1: every frame).
/// Track `id` (its stable id), anchor state `a` (age: frames since its reference patch was stored; correction: the
/// last fit's distance from the frame-to-frame estimate) is due in frame `frame` (the frame's index from the
/// tracker's start) when: interval is 1; its age is below kAnchorSettleFrames (a new reference: the first fits
/// settle its affine part and illumination); the last fit corrected it by more than drift_bound; or
/// (frame + id) mod interval is 0 (staggered: each frame fits about 1 / interval of the tracks that are not due
/// otherwise, and a track at most interval - 1 frames after its last fit).
KESTREL_HD int anchor_due(const AnchorSetup& s, std::int64_t frame, std::uint64_t id, const AnchorState& a) {
    if (s.interval <= 1 || a.age < kAnchorSettleFrames || !(a.correction <= s.drift_bound)) return 1;
    return (static_cast<std::uint64_t>(frame) + id) % static_cast<std::uint64_t>(s.interval) == 0u ? 1 : 0;
}

/// Whether the track's fit runs this frame, after its frame-to-frame LK result f: when due (anchor_due), or when
/// LK did not converge or ended with a mean |residual| above refit_residual. Uniform in a track's lanes.
KESTREL_HD bool anchor_fit_wanted(const AnchorSetup& s, const AnchorState& a, const LkResult& f) {
    return a.due != 0 || f.status == TrackStatus::NotConverged || !(f.residual <= s.refit_residual);
}

/// The anchor result of a track whose fit does not run this frame: Tracked with 0 iterations (a run fit has at
/// least 1), at the frame-to-frame estimate, with the anchor state's affine part and illumination as they were.
/// track_verdict takes its position without the residual and distance tests.
KESTREL_HD AnchorResult anchor_skipped(const AnchorState& a, const LkResult& f) {
    AnchorResult r;
    r.state = a;
    r.state.x = f.x;
    r.state.y = f.y;
    r.residual = f.residual;
    r.iterations = 0;
    r.status = TrackStatus::Tracked;
    return r;
}

/// The schedule's bookkeeping after a frame, for a track that stays Tracked without re-anchoring: its anchor state
/// `a` from the frame's result, one frame older (counted up to kAnchorSettleFrames, all anchor_due asks), and, when
/// the fit ran (iterations > 0), the distance it moved the track from the frame-to-frame estimate (fx, fy) as the
/// new correction.
KESTREL_HD AnchorState anchor_after_frame(const AnchorResult& r, float fx, float fy) {
    AnchorState a = r.state;
    a.age = a.age < kAnchorSettleFrames ? a.age + 1 : a.age;
    if (r.iterations > 0) {
        const float dx = fsub(a.x, fx), dy = fsub(a.y, fy);
        a.correction = fsqrt(fadd(fmul(dx, dx), fmul(dy, dy)));
    }
    return a;
}

/// FeatureTracker's verdict on one track after a frame's launches (src/track/feature_tracker.cpp, policy steps 2
/// and the anchoring): NotConverged keeps the track; with forward-backward, a backward track that is lost or ends
/// farther than fb_max_error from the previous position loses it; with anchoring, a fit that succeeded, explains the
/// patch and stays within max_distance of the frame-to-frame estimate gives the position, else the track is
/// re-anchored at the frame-to-frame estimate (reanchor) or lost. Also run by the stereo matching's launch, which
/// matches each track from the position this gives (kernels/track/lk_track.cu).
struct TrackVerdictRule {
    int forward_backward;
    float fb_max_error;
    int anchor;
    int reanchor;
    float max_residual;
    float max_distance;
};

struct TrackVerdict {
    TrackStatus status;  // Tracked, or why the track is lost
    int reanchor;        // anchoring failed and the track is re-anchored at (x, y)
    float x, y;          // the track's position in this frame (when Tracked)
};

/// f: the forward LK result; back: the backward one (forward_backward); (ox, oy): the previous position;
/// a: the anchor fit (anchor).
KESTREL_HD TrackVerdict track_verdict(const LkResult& f, const LkResult* back, float ox, float oy, const AnchorResult* a,
                                      const TrackVerdictRule& r) {
    TrackVerdict v;
    v.status = f.status == TrackStatus::NotConverged ? TrackStatus::Tracked : f.status;
    v.reanchor = 0;
    v.x = f.x;
    v.y = f.y;
    if (v.status == TrackStatus::Tracked && r.forward_backward) {
        const float ex = fsub(back->x, ox), ey = fsub(back->y, oy);
        const bool back_ok = back->status == TrackStatus::Tracked || back->status == TrackStatus::NotConverged;
        if (!back_ok || !(fsqrt(fadd(fmul(ex, ex), fmul(ey, ey))) <= r.fb_max_error))
            v.status = TrackStatus::LostForwardBackward;
    }
    if (v.status == TrackStatus::Tracked && r.anchor) {
        const float dx = fsub(a->state.x, f.x), dy = fsub(a->state.y, f.y);
        const bool skipped = a->status == TrackStatus::Tracked && a->iterations == 0;  // anchor_skipped
        if (!skipped && (a->status != TrackStatus::Tracked || !(a->residual <= r.max_residual) ||
                         !(fsqrt(fadd(fmul(dx, dx), fmul(dy, dy))) <= r.max_distance))) {
            if (r.reanchor)
                v.reanchor = 1;  // keeps the frame-to-frame estimate; a new reference patch is stored there
            else
                v.status = TrackStatus::LostAnchor;
        } else {
            v.x = a->state.x;
            v.y = a->state.y;
        }
    }
    return v;
}

}  // namespace kestrel::detail
