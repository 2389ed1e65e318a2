// FeatureTracker's geometric check on the device: the gather before the relative-pose estimator's device entry
// and the verdicts after it, on the frame's stream (no host synchronization; the host reads the flags, the
// evidence and the summary after the frame's one wait). CPU reference it must match: detail::GeometricCheck::run
// (src/track/geometric_check.cpp); the rules: detail::geo_check_bearings / geo_check_applies / geo_evidence_update
// (include/kestrel/detail/geo_check_rules.hpp), detail::track_verdict (anchor_rules.hpp),
// detail::unproject_bearing_pixel and pixels_per_radian_at (camera_rules.hpp).
//
// Gather: one block of kThreads threads walks the tracks in chunks of kThreads; each thread takes one track of the
// chunk, and the checked ones are compacted in track order by a block-wide exclusive scan (warp inclusive sums,
// then the warps' totals), so that the arrays equal the CPU's sequential compaction. Apply: one block; when the
// estimate applies, thread 0 finds the frame's judging model (detail::geo_frame_model: its sums in track order),
// then every checked point k updates the evidence of track index[k] and flags it when it ends.
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
        float a[3] = {0.0f, 0.0f, 0.0f}, b[3] = {0.0f, 0.0f, 0.0f}, s = 0.0f;
        double na[2] = {0.0, 0.0}, nb[2] = {0.0, 0.0};
        bool take = false;
        if (i < p.count) {
            p.outlier[i] = 0;
            const Point2f o = p.origins[i];
            const detail::TrackVerdict v =
                detail::track_verdict(p.fwd[i], p.back != nullptr ? p.back + i : nullptr, o.x, o.y,
                                      p.anchors != nullptr ? p.anchors + i : nullptr, p.rule);
            take = detail::geo_check_bearings(p.cam, v, o.x, o.y, a, b, &s, p.n1 ? na : nullptr, p.n1 ? nb : nullptr);
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
            for (int c = 0; c < 3; ++c) {
                p.b1[3 * k + c] = a[c];
                p.b2[3 * k + c] = b[c];
            }
            p.ppr[k] = s;
            if (p.n1) {
                p.n1[2 * k] = na[0];
                p.n1[2 * k + 1] = na[1];
                p.n2[2 * k] = nb[0];
                p.n2[2 * k + 1] = nb[1];
            }
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
    if (applies) {
        // The judging model: one thread (its sums run in track order, as the CPU's), then every thread reads it.
        __shared__ detail::GeoModel frame_model;
        if (threadIdx.x == 0)
            frame_model = detail::geo_frame_model(p.record->model, p.record->R, p.record->E, p.b1, p.b2, p.ppr, n,
                                                  p.rule.threshold, p.has_prior ? p.prior : nullptr);
        __syncthreads();
        const detail::GeoModel model = frame_model;
        for (int k = static_cast<int>(threadIdx.x); k < n; k += kThreads) {
            const int i = p.index[k];
            p.outlier[i] = static_cast<std::uint8_t>(
                detail::geo_evidence_update(model, p.b1 + 3 * k, p.b2 + 3 * k, p.ppr[k], p.rule, p.evidence[i]));
        }
    }
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
