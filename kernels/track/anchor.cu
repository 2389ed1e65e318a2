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

__global__ void __launch_bounds__(kWarpsPerBlock * 32) anchor_store_kernel(const AnchorStoreLaunch p) {
    const int f = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / detail::kLkLanes);
    if (f >= p.count) return;
    anchor_store_one(p, f, static_cast<int>(threadIdx.x & 31u));
}

}  // namespace

void launch_anchor_store(const AnchorStoreLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const dim3 grid(static_cast<unsigned>((p.count + kWarpsPerBlock - 1) / kWarpsPerBlock));
    anchor_store_kernel<<<grid, kWarpsPerBlock * 32, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("anchor template store");
}

}  // namespace kestrel::kernels
