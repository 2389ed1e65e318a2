// FeatureTracker's re-detection plan on the device (see redetect_plan.cuh): which tracks stay live after the
// frame's verdicts, the cells they hold, and whether the frame re-detects, by the rules the host bookkeeping
// applies (include/kestrel/detail/redetect_rules.hpp). One block: the tracks are few and the cells a few hundred.
#include "kernels/track/redetect_plan.cuh"

#include "kernels/common/cuda_check.hpp"

namespace kestrel::kernels {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads) redetect_plan_kernel(const RedetectPlanLaunch p) {
    __shared__ int live;
    const detail::RedetectRule& r = p.rule;
    const int cells = r.cols * r.rows;
    if (threadIdx.x == 0) live = 0;
    for (int c = static_cast<int>(threadIdx.x); c < cells; c += kThreads) p.mask[c] = 0;
    __syncthreads();
    int mine = 0;
    for (int i = static_cast<int>(threadIdx.x); i < p.count; i += kThreads) {
        // The inputs lie in mapped host memory: every load is issued before any is used (one round trip over the
        // bus, not one per branch of the verdict).
        const LkResult f = p.results[i];
        const Point2f o = p.origins[i];
        LkResult b;
        if (p.back != nullptr) b = p.back[i];
        detail::AnchorResult a;
        if (p.anchors != nullptr) a = p.anchors[i];
        float x, y;
        if (detail::redetect_track_live(f, p.back != nullptr ? &b : nullptr, o.x, o.y, p.anchors != nullptr ? &a : nullptr,
                                        r, &x, &y)) {
            ++mine;
            p.mask[detail::redetect_cell(x, y, r.cell_width, r.cell_height, r.cols, r.rows)] = 1;
        }
    }
    if (mine != 0) atomicAdd(&live, mine);
    __syncthreads();
    if (p.host_mask != nullptr)
        for (int c = static_cast<int>(threadIdx.x); c < cells; c += kThreads) p.host_mask[c] = p.mask[c];
    if (threadIdx.x == 0) {
        const int redetect = detail::redetect_wanted(live, r.fraction, r.target) ? 1 : 0;
        p.out[0] = redetect;
        p.out[1] = live;
#if defined(CUDART_VERSION) && CUDART_VERSION >= 12040
        if (p.set_condition != 0)
            cudaGraphSetConditional(static_cast<cudaGraphConditionalHandle>(p.condition), static_cast<unsigned>(redetect));
#endif
    }
}

}  // namespace

RedetectPlanShape redetect_plan_shape() {
    return {reinterpret_cast<const void*>(&redetect_plan_kernel), dim3(1), dim3(kThreads)};
}

void launch_redetect_plan(const RedetectPlanLaunch& p, cudaStream_t stream) {
    redetect_plan_kernel<<<1, kThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("FeatureTracker re-detection plan");
}

}  // namespace kestrel::kernels
