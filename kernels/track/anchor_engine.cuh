// Device code of the anchor stage (model, derivation and policy: include/kestrel/detail/anchor_rules.hpp,
// docs/tracker.md; CPU reference: src/track/anchor_cpu.cpp, matched bit for bit): the warp engine of
// detail::anchor_prepare / anchor_refine_one, and the fit of one track as the LK kernels run it after a
// track's frame-to-frame estimate (kernels/track/lk_track.cu) -- one launch for both.
//
// One warp per track. Lane l owns the template pixels detail::lane_pixel(l, j, n), j = 0 .. 7, in
// registers (T, gx, gy, read once from the store) and accumulates its partial sums in that order; the xor
// butterfly's sums (offsets 16, 8, 4, 2, 1, __fadd_rn; as a reduce-scatter with the same additions,
// kernels/track/warp_sums.cuh) give every lane the identical sums, so every lane runs
// the same solve and the control flow is warp-uniform (the CPU emulates exactly this). Samples are read
// from global memory through the read-only path with the border rule's clamped taps (detail::GridTaps):
// the warped patch has no fixed grid, so there is no staging. All arithmetic is the rules' fmul/fadd/
// fsub/fdiv/ffma (__fmul_rn & co., __fmaf_rn): no contraction, the CPU's operations in the CPU's order.
// Each template's mean and H^-1 are computed once, by the warp that stores the template
// (anchor_store_kernel in anchor.cu, detail::anchor_prepare), and read by every frame's fit.
#pragma once
#include "kernels/common/warp_scan.cuh"
#include "kernels/track/anchor.cuh"
#include "kernels/track/warp_sums.cuh"

namespace kestrel::kernels {

/// A staged copy of level 0 that the anchor fit may read instead of the image (the LK kernel's window of the
/// current image around the track's final estimate): pixel (x, y) at buf[(y - y0) * stride + (x - x0)] for
/// x0 <= x < x0 + size, y0 <= y < y0 + size, edge pixels replicated where it reaches past the image, so a
/// sample from it equals detail::anchor_sample's (the border rule's clamped taps). buf null: none.
struct AnchorWindow {
    const float* buf = nullptr;
    int x0 = 0, y0 = 0, size = 0, stride = 0;
};

/// Taps of one sample from an AnchorWindow (detail::grid_sample's tap source): p = the address of its
/// top-left tap.
struct AnchorWinTaps {
    const float* p;
    int stride;
    __device__ __forceinline__ float at(int i, int j) const { return p[j * stride + i]; }
};

/// The warp as the engine of detail::anchor_refine_one (one instance per lane).
struct AnchorWarpEngine {
    AnchorWindow win;  // staged level-0 pixels, when the caller has them (see sample())
    int lane;
    int n;
    float h;
    unsigned has;  // bit j: slot j holds a pixel
    float t[detail::kLkMaxPerLane], gx[detail::kLkMaxPerLane], gy[detail::kLkMaxPerLane];
    float u[detail::kLkMaxPerLane], v[detail::kLkMaxPerLane];

    /// Geometry only (pixel offsets and slots); T, gx, gy are set by the caller.
    __device__ AnchorWarpEngine(const detail::AnchorSetup& s, int l) : lane(l), n(s.n) {
        h = detail::patch_half(n);
        has = 0u;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            has |= (i >= 0 ? 1u : 0u) << j;
            t[j] = gx[j] = gy[j] = 0.0f;
            u[j] = i >= 0 ? detail::anchor_u(i, n, h) : 0.0f;
            v[j] = i >= 0 ? detail::anchor_v(i, n, h) : 0.0f;
        }
    }

    __device__ AnchorWarpEngine(const detail::AnchorSetup& s, const float* tmpl, int l) : lane(l), n(s.n) {
        h = detail::patch_half(n);
        has = 0u;
        const int npx = n * n;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            if (i >= 0) {
                has |= 1u << j;
                t[j] = tmpl[i];
                gx[j] = tmpl[npx + i];
                gy[j] = tmpl[2 * npx + i];
                u[j] = detail::anchor_u(i, n, h);
                v[j] = detail::anchor_v(i, n, h);
            } else {
                t[j] = gx[j] = gy[j] = u[j] = v[j] = 0.0f;
            }
        }
    }

    /// detail::anchor_sample, its four taps from the staged window when they lie in it (shared memory, the same
    /// values), else from the image.
    __device__ __forceinline__ float sample(const detail::LkImage& cur, const detail::AnchorState& w, float uu,
                                            float vv) const {
        if (win.buf != nullptr) {
            const float px = detail::ffma(w.a00, uu, detail::ffma(w.a01, vv, w.x));
            const float py = detail::ffma(w.a10, uu, detail::ffma(w.a11, vv, w.y));
            const detail::PatchGrid g = detail::patch_grid(px, py, 0.0f);
            const int i = g.x0 - win.x0, j = g.y0 - win.y0;
            if (i >= 0 && i < win.size - 1 && j >= 0 && j < win.size - 1)
                return detail::grid_sample(AnchorWinTaps{win.buf + j * win.stride + i, win.stride}, g, 0, 0);
        }
        return detail::anchor_sample(cur, w, uu, vv);
    }

    __device__ float template_sum() {
        float acc[1] = {0.0f};
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j)
            if (has & (1u << j)) acc[0] = detail::fadd(acc[0], t[j]);
        track_sums::allreduce_add_rn<1>(acc, lane);
        return acc[0];
    }

    __device__ void hessian_sums(float mu, float* out) {
        float acc[detail::kAnchorHessianSums];
#pragma unroll
        for (int k = 0; k < detail::kAnchorHessianSums; ++k) acc[k] = 0.0f;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (has & (1u << j)) {
                float sd[detail::kAnchorParams];
                detail::anchor_sd(detail::fsub(t[j], mu), gx[j], gy[j], u[j], v[j], sd);
                detail::anchor_add_hessian(acc, sd);
            }
        }
        track_sums::allreduce_add_rn<detail::kAnchorHessianSums>(acc, lane);
#pragma unroll
        for (int k = 0; k < detail::kAnchorHessianSums; ++k) out[k] = acc[k];
    }

    __device__ void error_sums(const detail::LkImage& cur, const detail::AnchorState& w, float alpha, float beta_c,
                               float mu, float* out) {
        float acc[detail::kAnchorParams + 1];
#pragma unroll
        for (int k = 0; k <= detail::kAnchorParams; ++k) acc[k] = 0.0f;
        // Every sample first (their 32 reads are independent: one memory latency), then the sums in order.
        float img[detail::kLkMaxPerLane];
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) img[j] = (has & (1u << j)) ? sample(cur, w, u[j], v[j]) : 0.0f;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (has & (1u << j)) {
                const float a = detail::fsub(t[j], mu);
                float sd[detail::kAnchorParams];
                detail::anchor_sd(a, gx[j], gy[j], u[j], v[j], sd);
                detail::anchor_add_error(acc, sd, a, img[j], alpha, beta_c);
            }
        }
        track_sums::allreduce_add_rn<detail::kAnchorParams + 1>(acc, lane);
#pragma unroll
        for (int k = 0; k <= detail::kAnchorParams; ++k) out[k] = acc[k];
    }
};

/// The anchor fit of track f after its frame-to-frame result `fw` on level 0 `cur` (every lane calls it;
/// the result is the same in every lane): detail::anchor_refine_one from (fw.x, fw.y, states[f]) when fw
/// is Tracked or NotConverged and the track's slot holds a valid template, else LostAnchor without a fit.
__device__ __forceinline__ detail::AnchorResult anchor_track(const AnchorFuse& a, const detail::LkImage& cur, int f,
                                                             int lane, const LkResult& fw,
                                                             const AnchorWindow& win = AnchorWindow{}) {
    detail::AnchorResult res;
    res.status = TrackStatus::LostAnchor;
    const int slot = a.slots[f];
    const bool alive = fw.status == TrackStatus::Tracked || fw.status == TrackStatus::NotConverged;
    if (alive && slot >= 0 && slot < a.capacity && a.store_valid[slot] != 0) {
        const int npx = a.setup.n * a.setup.n;
        AnchorWarpEngine eng(a.setup, a.store + static_cast<std::size_t>(slot) * 3 * npx, lane);
        eng.win = win;
        detail::AnchorState st = a.states[f];
        st.x = fw.x;
        st.y = fw.y;
        res = detail::anchor_refine_one(eng, a.setup, cur, st, a.prep[slot]);  // H^-1 read from global per iteration
    }
    return res;
}

/// The store of track f's template (every lane of the warp calls it): lane l computes its engine pixels' T, gx, gy
/// (detail::grid_template, as extract_template), keeps them in registers for the preparation and writes them to
/// the slot; lane 0 writes the flag and the preparation (detail::anchor_prepare). Run by anchor_store_kernel
/// (anchor.cu) and, as one more warp per track, by the LK store launch (lk_track.cu).
__device__ __forceinline__ void anchor_store_one(const AnchorStoreLaunch& p, int f, int lane) {
    const int slot = p.slots[f];
    if (slot < 0 || slot >= p.capacity) return;
    const int n = p.setup.n, npx = n * n;
    const Point2f r = p.points[f];
    const float rx = detail::to_level(r.x, p.scale0), ry = detail::to_level(r.y, p.scale0);
    const bool ok = detail::inside(p.ref, rx, ry, n, 1);  // extract_template's test
    detail::AnchorPrep prep{};
    prep.ok = 0;
    if (ok) {
        AnchorWarpEngine eng(p.setup, lane);
        const detail::PatchGrid g = detail::patch_grid(rx, ry, detail::patch_half(n));
        const detail::GridTaps src(p.ref, g);
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            if (i >= 0) detail::grid_template(src, g, i % n, i / n, eng.t[j], eng.gx[j], eng.gy[j]);
        }
        float* out = p.store + static_cast<std::size_t>(slot) * 3 * npx;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            const int i = detail::lane_pixel(lane, j, n);
            if (i >= 0) {
                out[i] = eng.t[j];
                out[npx + i] = eng.gx[j];
                out[2 * npx + i] = eng.gy[j];
            }
        }
        prep = detail::anchor_prepare(eng, p.setup);
    }
    if (lane == 0) {
        p.store_valid[slot] = ok ? 1 : 0;
        p.prep[slot] = prep;
    }
}

}  // namespace kestrel::kernels
