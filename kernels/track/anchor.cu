// The anchor stage on the GPU: the affine + gain/offset refinement of every track against its first
// observation (model, derivation and policy: include/kestrel/detail/anchor_rules.hpp, docs/tracker.md).
// Reference: the CPU engine in src/track/anchor_cpu.cpp, which this kernel matches bit for bit.
//
// One warp per track. Lane l owns the template pixels detail::lane_pixel(l, j, n), j = 0 .. 7, in
// registers (T, gx, gy, read once from the store) and accumulates its partial sums in that order; the xor
// butterfly (offsets 16, 8, 4, 2, 1, __fadd_rn) gives every lane the identical sums, so every lane runs
// the same solve and the control flow is warp-uniform (the CPU emulates exactly this). Samples are read
// from global memory through the read-only path with the border rule's clamped taps (detail::GridTaps):
// the warped patch has no fixed grid, so there is no staging. All arithmetic is the rules' fmul/fadd/
// fsub/fdiv/ffma (__fmul_rn & co., __fmaf_rn): no contraction, the CPU's operations in the CPU's order.
#include "kernels/track/anchor.cuh"

#include "kernels/common/cuda_check.hpp"
#include "kernels/common/warp_scan.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kWarpsPerBlock = 4;

/// The warp as the engine of detail::anchor_refine_one (one instance per lane).
struct AnchorWarpEngine {
    int n;
    float h;
    unsigned has;  // bit j: slot j holds a pixel
    float t[detail::kLkMaxPerLane], gx[detail::kLkMaxPerLane], gy[detail::kLkMaxPerLane];
    float u[detail::kLkMaxPerLane], v[detail::kLkMaxPerLane];

    __device__ AnchorWarpEngine(const detail::AnchorSetup& s, const float* tmpl, int lane) : n(s.n) {
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

    __device__ float template_sum() {
        float acc[1] = {0.0f};
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j)
            if (has & (1u << j)) acc[0] = detail::fadd(acc[0], t[j]);
        warp::allreduce_add_rn<1>(acc);
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
        warp::allreduce_add_rn<detail::kAnchorHessianSums>(acc);
#pragma unroll
        for (int k = 0; k < detail::kAnchorHessianSums; ++k) out[k] = acc[k];
    }

    __device__ void error_sums(const detail::LkImage& cur, const detail::AnchorState& w, float alpha, float beta_c,
                               float mu, float* out) {
        float acc[detail::kAnchorParams + 1];
#pragma unroll
        for (int k = 0; k <= detail::kAnchorParams; ++k) acc[k] = 0.0f;
#pragma unroll
        for (int j = 0; j < detail::kLkMaxPerLane; ++j) {
            if (has & (1u << j)) {
                const float a = detail::fsub(t[j], mu);
                float sd[detail::kAnchorParams];
                detail::anchor_sd(a, gx[j], gy[j], u[j], v[j], sd);
                detail::anchor_add_error(acc, sd, a, detail::anchor_sample(cur, w, u[j], v[j]), alpha, beta_c);
            }
        }
        warp::allreduce_add_rn<detail::kAnchorParams + 1>(acc);
#pragma unroll
        for (int k = 0; k <= detail::kAnchorParams; ++k) out[k] = acc[k];
    }
};

__global__ void __launch_bounds__(kWarpsPerBlock * 32) anchor_kernel(const AnchorLaunch p) {
    const int f = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / detail::kLkLanes);
    if (f >= p.count) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const LkResult fw = p.forward[f];
    const int slot = p.slots[f];
    detail::AnchorResult res;
    res.status = TrackStatus::LostAnchor;
    const bool alive = fw.status == TrackStatus::Tracked || fw.status == TrackStatus::NotConverged;
    if (alive && slot >= 0 && slot < p.capacity && p.store_valid[slot] != 0) {
        const int npx = p.setup.n * p.setup.n;
        AnchorWarpEngine eng(p.setup, p.store + static_cast<std::size_t>(slot) * 3 * npx, lane);
        detail::AnchorState st = p.states[f];
        st.x = fw.x;
        st.y = fw.y;
        res = detail::anchor_refine_one(eng, p.setup, p.cur, st);
    }
    if (lane == 0) p.results[f] = res;
}

}  // namespace

void launch_anchor(const AnchorLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const dim3 grid(static_cast<unsigned>((p.count + kWarpsPerBlock - 1) / kWarpsPerBlock));
    anchor_kernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("anchor refinement");
}

}  // namespace kestrel::kernels
