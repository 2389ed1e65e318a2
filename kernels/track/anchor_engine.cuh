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
/// x0 <= x < x0 + cols, y0 <= y < y0 + rows, edge pixels replicated where it reaches past the image, so a
/// sample from it equals detail::anchor_sample's (the border rule's clamped taps). valid false: none (buf may still
/// point at the caller's buffer: always the same shared-memory buffer, so that the compiler reads it as shared memory).
struct AnchorWindow {
    const float* buf = nullptr;
    int x0 = 0, y0 = 0, cols = 0, rows = 0, stride = 0;
    bool valid = false;
};

/// Taps of one sample from an AnchorWindow (detail::grid_sample's tap source): p = the address of its
/// top-left tap.
struct AnchorWinTaps {
    const float* p;
    int stride;
    __device__ __forceinline__ float at(int i, int j) const { return p[j * stride + i]; }
};

/// The G lanes of one track as the engine of detail::anchor_refine_one (one instance per lane; G = 32: the warp,
/// G < 32 for N = 16 only). As the LK engine (kernels/track/lk_track.cu, WarpEngine): lane l of the group does
/// the work of the 32-lane warp's lanes l + G r, slot p = 8 r + j holding pixel detail::lane_pixel(l + G r, j, n),
/// with virtual lane r's partial sums kept apart until the butterfly's stages inside the lane
/// (track_sums::group_allreduce_add_rn): the 32-lane warp's sums, bit for bit. N = 16: the pixel offsets (u, v)
/// from the lane's column and row and compile-time steps (exact: multiples of 1/2 below 16), N = 0: any side n.
template <int N = 0, int G = 32>
struct AnchorWarpEngine {
    static_assert(G == 32 || N == 16, "fewer lanes per track: 16 x 16 patches only");
    static constexpr bool kFixed = N > 0;
    static constexpr int kR = 32 / G;
    static constexpr int kP = detail::kLkMaxPerLane * kR;
    AnchorWindow win;  // staged level-0 pixels, when the caller has them (see sample())
    int lane;          // lane in the group
    unsigned mask;     // the group's lanes
    int n;
    float h;
    unsigned has;  // bit p: slot p holds a pixel
    float t[kP], gx[kP], gy[kP];
    float u[kFixed ? 1 : kP], v[kFixed ? 1 : kP];
    float u0, v0;  // N = 16: the offsets (u, v) of the lane's first pixel (column l % 16, row 8 (l / 16))

    /// The patch pixel of slot p (detail::lane_pixel of its virtual lane), -1: none.
    __device__ __forceinline__ int pixel(int p) const {
        return detail::lane_pixel(lane + G * (p / detail::kLkMaxPerLane), p % detail::kLkMaxPerLane, n);
    }
    __device__ __forceinline__ bool holds(int p) const {
        if constexpr (kFixed) return true;
        else return (has & (1u << p)) != 0u;
    }
    /// The offsets of slot p: anchor_u / anchor_v of its pixel (N = 16: u0, v0 plus the slot's column and row
    /// steps, both exact, so the same values).
    __device__ __forceinline__ float pu(int p) const {
        if constexpr (kFixed) {
            const int di = (G * (p / detail::kLkMaxPerLane)) % N;
            return di == 0 ? u0 : detail::fadd(u0, static_cast<float>(di));
        } else {
            return u[p];
        }
    }
    __device__ __forceinline__ float pv(int p) const {
        if constexpr (kFixed) {
            const int dj = detail::kLkMaxPerLane * ((G * (p / detail::kLkMaxPerLane)) / N) + p % detail::kLkMaxPerLane;
            return dj == 0 ? v0 : detail::fadd(v0, static_cast<float>(dj));
        } else {
            return v[p];
        }
    }

    __device__ void set_geometry() {
        h = detail::patch_half(n);
        has = 0u;
        if constexpr (kFixed) {
            u0 = detail::fsub(static_cast<float>(lane % N), h);
            v0 = detail::fsub(static_cast<float>(detail::kLkMaxPerLane * (lane / N)), h);
        } else {
            u0 = v0 = 0.0f;
        }
#pragma unroll
        for (int p = 0; p < kP; ++p) {
            const int i = pixel(p);
            has |= (i >= 0 ? 1u : 0u) << p;
            t[p] = gx[p] = gy[p] = 0.0f;
            if constexpr (!kFixed) {
                u[p] = i >= 0 ? detail::anchor_u(i, n, h) : 0.0f;
                v[p] = i >= 0 ? detail::anchor_v(i, n, h) : 0.0f;
            }
        }
    }

    /// Geometry only (pixel offsets and slots); T, gx, gy are set by the caller.
    __device__ AnchorWarpEngine(const detail::AnchorSetup& s, int l, unsigned m = track_sums::kFullMask)
        : lane(l), mask(m), n(kFixed ? N : s.n) {
        set_geometry();
    }

    __device__ AnchorWarpEngine(const detail::AnchorSetup& s, const float* tmpl, int l,
                                unsigned m = track_sums::kFullMask)
        : lane(l), mask(m), n(kFixed ? N : s.n) {
        set_geometry();
        if constexpr (kFixed) {
            // Slot p's pixel is the lane's first one plus a compile-time offset (its column and row steps): one
            // address, and every load at an immediate offset from it.
            const float* q = tmpl + pixel(0);
#pragma unroll
            for (int p = 0; p < kP; ++p) {
                constexpr int kNpx = N * N;
                const int d = (G * (p / detail::kLkMaxPerLane)) % N +
                              N * (detail::kLkMaxPerLane * ((G * (p / detail::kLkMaxPerLane)) / N) +
                                   p % detail::kLkMaxPerLane);
                t[p] = q[d];
                gx[p] = q[kNpx + d];
                gy[p] = q[2 * kNpx + d];
            }
        } else {
            const int npx = n * n;
#pragma unroll
            for (int p = 0; p < kP; ++p) {
                const int i = pixel(p);
                if (holds(p) && i >= 0) {
                    t[p] = tmpl[i];
                    gx[p] = tmpl[npx + i];
                    gy[p] = tmpl[2 * npx + i];
                }
            }
        }
    }

    /// detail::anchor_sample, its four taps from the staged window when they lie in it (shared memory, the same
    /// values), else from the image.
    __device__ __forceinline__ float sample(const detail::LkImage& cur, const detail::AnchorState& w, float uu,
                                            float vv) const {
        if (win.valid) {
            const float px = detail::ffma(w.a00, uu, detail::ffma(w.a01, vv, w.x));
            const float py = detail::ffma(w.a10, uu, detail::ffma(w.a11, vv, w.y));
            const detail::PatchGrid g = detail::patch_grid(px, py, 0.0f);
            const int i = g.x0 - win.x0, j = g.y0 - win.y0;
            if (i >= 0 && i < win.cols - 1 && j >= 0 && j < win.rows - 1)
                return detail::grid_sample(AnchorWinTaps{win.buf + j * win.stride + i, win.stride}, g, 0, 0);
        }
        return detail::anchor_sample(cur, w, uu, vv);
    }

    /// True when every sample of warp w has its four taps in the staged window, so that error_sums may read them all
    /// from it without a test per sample. A sample's position is an affine function of its offsets (u, v), rounded
    /// (below 1/8 px where the window lies), so it lies between the patch corners' positions (the same formula at
    /// u, v = +-h) to within 1/4 px: its taps floor(p) and floor(p) + 1 lie in [floor(lo) - 1, floor(hi) + 2].
    /// Those bounds inside the window's columns and rows (float compares: false for NaN) suffice.
    __device__ __forceinline__ bool window_holds(const detail::AnchorState& w) const {
        if (!win.valid) return false;
        float lx = 0.0f, hx = 0.0f, ly = 0.0f, hy = 0.0f;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const float cu = (c & 1) ? h : -h, cv = (c & 2) ? h : -h;
            const float px = detail::ffma(w.a00, cu, detail::ffma(w.a01, cv, w.x));
            const float py = detail::ffma(w.a10, cu, detail::ffma(w.a11, cv, w.y));
            lx = c == 0 ? px : fminf(lx, px);
            hx = c == 0 ? px : fmaxf(hx, px);
            ly = c == 0 ? py : fminf(ly, py);
            hy = c == 0 ? py : fmaxf(hy, py);
        }
        const float x0 = static_cast<float>(win.x0), y0 = static_cast<float>(win.y0);
        const float last_x = static_cast<float>(win.cols - 1), last_y = static_cast<float>(win.rows - 1);
        return (floorf(lx) - 1.0f >= x0) & (floorf(hx) + 2.0f <= x0 + last_x) & (floorf(ly) - 1.0f >= y0) &
               (floorf(hy) + 2.0f <= y0 + last_y);
    }

    /// detail::anchor_sample from the staged window, which holds its taps (window_holds). The grid is
    /// patch_grid(px, py, 0) without its subtraction of 0 (px - 0 is px for every float).
    __device__ __forceinline__ float window_sample(const detail::AnchorState& w, float uu, float vv, int bias) const {
        const float px = detail::ffma(w.a00, uu, detail::ffma(w.a01, vv, w.x));
        const float py = detail::ffma(w.a10, uu, detail::ffma(w.a11, vv, w.y));
        detail::PatchGrid g;
        g.vx = px;
        g.vy = py;
        const float fx = floorf(px), fy = floorf(py);
        g.x0 = static_cast<int>(fx);
        g.y0 = static_cast<int>(fy);
        g.ax = detail::fsub(px, fx);
        g.bx = detail::fsub(1.0f, g.ax);
        g.ay = detail::fsub(py, fy);
        g.by = detail::fsub(1.0f, g.ay);
        return detail::grid_sample(AnchorWinTaps{win.buf + (g.y0 * win.stride + g.x0 + bias), win.stride}, g, 0, 0);
    }

    /// K sums over the patch (track_sums::patch_sums over the slots that hold a pixel) into out[0 .. K-1].
    template <int K, class Add>
    __device__ __forceinline__ void patch_sums(float* out, Add&& add) {
        track_sums::patch_sums<K, G, detail::kLkMaxPerLane>(out, lane, mask, [&](int p) { return holds(p); }, add);
    }

    __device__ float template_sum() {
        float out[1];
        patch_sums<1>(out, [&](float* acc, int p) { acc[0] = detail::fadd(acc[0], t[p]); });
        return out[0];
    }

    __device__ void hessian_sums(float mu, float* out) {
        patch_sums<detail::kAnchorHessianSums>(out, [&](float* acc, int p) {
            float sd[detail::kAnchorParams];
            detail::anchor_sd(detail::fsub(t[p], mu), gx[p], gy[p], pu(p), pv(p), sd);
            detail::anchor_add_hessian(acc, sd);
        });
    }

    __device__ void error_sums(const detail::LkImage& cur, const detail::AnchorState& w, float alpha, float beta_c,
                               float mu, float* out) {
        // Every sample first (their reads are independent: one memory latency), then the sums in order.
        float img[kP];
        if (window_holds(w)) {  // the usual case: every tap in the window, no test per sample
            const int bias = -(win.y0 * win.stride + win.x0);
#pragma unroll
            for (int p = 0; p < kP; ++p) img[p] = holds(p) ? window_sample(w, pu(p), pv(p), bias) : 0.0f;
        } else {
#pragma unroll
            for (int p = 0; p < kP; ++p) img[p] = holds(p) ? sample(cur, w, pu(p), pv(p)) : 0.0f;
        }
        patch_sums<detail::kAnchorParams + 1>(out, [&](float* acc, int p) {
            const float a = detail::fsub(t[p], mu);
            float sd[detail::kAnchorParams];
            detail::anchor_sd(a, gx[p], gy[p], pu(p), pv(p), sd);
            detail::anchor_add_error(acc, sd, a, img[p], alpha, beta_c);
        });
    }
};

/// The anchor fit of track f after its frame-to-frame result `fw` on level 0 `cur` (every lane of the track's
/// group calls it: lane in the group, the group's mask; the result is the same in every lane):
/// detail::anchor_refine_one from (fw.x, fw.y, states[f]) when fw is Tracked or NotConverged and the track's slot
/// holds a valid template, else LostAnchor without a fit.
template <int N = 0, int G = 32>
__device__ __forceinline__ detail::AnchorResult anchor_track(const AnchorFuse& a, const detail::LkImage& cur, int f,
                                                             int lane, unsigned mask, const LkResult& fw,
                                                             const AnchorWindow& win = AnchorWindow{}) {
    detail::AnchorResult res;
    res.status = TrackStatus::LostAnchor;
    const int slot = a.slots[f];
    const bool alive = fw.status == TrackStatus::Tracked || fw.status == TrackStatus::NotConverged;
    if (alive && slot >= 0 && slot < a.capacity && a.store_valid[slot] != 0) {
        const int npx = a.setup.n * a.setup.n;
        detail::AnchorState st = a.states[f];
        if (!detail::anchor_fit_wanted(a.setup, st, fw)) return detail::anchor_skipped(st, fw);
        AnchorWarpEngine<N, G> eng(a.setup, a.store + static_cast<std::size_t>(slot) * 3 * npx, lane, mask);
        eng.win = win;
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
        AnchorWarpEngine<> eng(p.setup, lane);
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
