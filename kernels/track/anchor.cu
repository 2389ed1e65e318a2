// The anchor template store on the GPU: the level-0 reference patch of each new or re-anchored track and
// what it alone determines (detail::anchor_prepare: the template mean and the LDL^T factors of H), so that
// every frame's fit (kernels/track/anchor_engine.cuh, run inside the LK kernels) starts from them.
// Reference: FeatureTracker's CPU backend, store_templates (src/track/feature_tracker_cpu.cpp), matched
// bit for bit.
#include "kernels/track/anchor.cuh"

#include "kernels/common/cuda_check.hpp"
#include "kernels/track/anchor_engine.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kWarpsPerBlock = 4;

// The store: lane l computes its engine pixels' T, gx, gy (detail::grid_template, as extract_template), keeps
// them in registers for the preparation and writes them to the slot; lane 0 writes the flag and the
// preparation.
__global__ void __launch_bounds__(kWarpsPerBlock * 32) anchor_store_kernel(const AnchorStoreLaunch p) {
    const int f = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / detail::kLkLanes);
    if (f >= p.count) return;
    const int lane = static_cast<int>(threadIdx.x & 31u);
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

}  // namespace

void launch_anchor_store(const AnchorStoreLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const dim3 grid(static_cast<unsigned>((p.count + kWarpsPerBlock - 1) / kWarpsPerBlock));
    anchor_store_kernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("anchor template store");
}

}  // namespace kestrel::kernels
