// FeatureTracker's geometric check on the device: the gather before the relative-pose estimator's device entry
// and the verdicts after it, on the frame's stream (no host synchronization; the host reads the flags and the
// summary after the frame's one wait). CPU reference it must match: detail::GeometricCheck::run
// (src/track/geometric_check.cpp); the rules: detail::geo_check_points / geo_check_applies
// (include/kestrel/detail/geo_check_rules.hpp), detail::track_verdict (anchor_rules.hpp), detail::unproject_pixel
// (camera_rules.hpp).
//
// Gather: one block of kThreads threads walks the tracks in chunks of kThreads; each thread takes one track of the
// chunk, and the checked ones are compacted in track order by a block-wide exclusive scan (warp inclusive sums,
// then the warps' totals), so that the arrays equal the CPU's sequential compaction. Apply: one block; every
// checked point k whose mask byte is 0 flags track index[k] when the estimate applies.
#include "geo_check.cuh"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/warp_scan.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads) geo_gather_kernel(const GeoGatherLaunch p) {
    __shared__ unsigned warp_totals[kWarps];
    __shared__ unsigned base;
    const int tid = static_cast<int>(threadIdx.x);
    const int warp_id = tid >> 5, lane = tid & 31;
    if (tid == 0) base = 0;
    __syncthreads();
    for (int start = 0; start < p.count; start += kThreads) {
        const int i = start + tid;
        double a[2] = {0.0, 0.0}, b[2] = {0.0, 0.0};
        bool take = false;
        if (i < p.count) {
            p.outlier[i] = 0;
            const Point2f o = p.origins[i];
            const detail::TrackVerdict v =
                detail::track_verdict(p.fwd[i], p.back != nullptr ? p.back + i : nullptr, o.x, o.y,
                                      p.anchors != nullptr ? p.anchors + i : nullptr, p.rule);
            take = detail::geo_check_points(p.cam, v, o.x, o.y, a, b);
        }
        const unsigned incl = warp::inclusive_sum(take ? 1u : 0u);
        if (lane == 31) warp_totals[warp_id] = incl;
        __syncthreads();
        unsigned before = 0, chunk = 0;
        for (int w = 0; w < kWarps; ++w) {
            if (w < warp_id) before += warp_totals[w];
            chunk += warp_totals[w];
        }
        if (take) {
            const unsigned k = base + before + incl - 1u;
            p.x1[2 * k] = a[0];
            p.x1[2 * k + 1] = a[1];
            p.x2[2 * k] = b[0];
            p.x2[2 * k + 1] = b[1];
            p.index[k] = i;
        }
        __syncthreads();  // everyone has read base and warp_totals
        if (tid == 0) base += chunk;
        __syncthreads();
    }
    if (tid == 0) *p.checked = static_cast<int>(base);
}

__global__ void __launch_bounds__(kThreads) geo_apply_kernel(const GeoApplyLaunch p) {
    const int n = *p.checked;
    const bool applies = detail::geo_check_applies(n, p.min_tracks, p.record->status);
    if (applies)
        for (int k = static_cast<int>(threadIdx.x); k < n; k += kThreads)
            if (p.mask[k] == 0) p.outlier[p.index[k]] = 1;
    if (threadIdx.x == 0) {
        p.summary->count = n;
        p.summary->record = *p.record;
    }
}

}  // namespace

void launch_geo_gather(const GeoGatherLaunch& p, cudaStream_t stream) {
    geo_gather_kernel<<<1, kThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("geometric check gather");
}

void launch_geo_apply(const GeoApplyLaunch& p, cudaStream_t stream) {
    geo_apply_kernel<<<1, kThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("geometric check verdicts");
}

}  // namespace kestrel::kernels
