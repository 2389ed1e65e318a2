// Relative-pose RANSAC on the GPU: the hypotheses of a round in parallel, then the in-order scan.
//
// Model: hypothesis k draws its minimal sample from the counter-based generator (seed, k) and solves it
// (detail::pose_hypothesis_solve: five-point, or two-point with the rotation prior); every solution is scored
// by the MSAC cost of the Sampson error in pixels (detail::pose_msac: lane l sums the points l, l + 32, ... in
// order, then the xor butterfly 16, 8, 4, 2, 1); the lowest cost (lower solution index on ties) is the
// hypothesis' model (detail::pose_hypothesis). One warp per hypothesis: lane 0 samples and solves into shared
// memory, the 32 lanes score. The scan (one thread) then walks the round in index order with
// detail::pose_scan: a strictly lower cost wins, and the adaptive stop reads the host-computed table
// required[inliers of the best]. Rounds after the stop return at once, so the host enqueues every round
// without waiting.
//
// Reference it must match: detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp), bit for bit: the
// same rules header, +, -, *, /, sqrt only, and this file is compiled with --fmad=false (CMakeLists.txt) so
// that nvcc fuses no a * b + c the host does not fuse either (the host side is built with -ffp-contract=off).
#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kWarpsPerBlock = 4;

__global__ void __launch_bounds__(kWarpsPerBlock * detail::kPoseLanes) pose_hypotheses_kernel(PoseRound r) {
    __shared__ double models[kWarpsPerBlock][detail::kFivePointMaxSolutions][9];
    __shared__ int model_count[kWarpsPerBlock];
    if (r.scan->stopped) return;  // the same for every thread: written by the previous round's scan
    const int warp = static_cast<int>(threadIdx.x) / detail::kPoseLanes;
    const int lane = static_cast<int>(threadIdx.x) % detail::kPoseLanes;
    const int j = static_cast<int>(blockIdx.x) * kWarpsPerBlock + warp;
    if (j >= r.count) return;  // a whole warp at once
    if (lane == 0) model_count[warp] = detail::pose_hypothesis_solve(r.problem, r.first + j, models[warp]);
    __syncwarp();
    const int ns = model_count[warp];
    double best = 1e300;
    int best_inliers = 0, best_s = -1;
    for (int s = 0; s < ns; ++s) {
        int inl = 0;
        double c = detail::pose_msac_lane(models[warp][s], r.problem.x1, r.problem.x2, r.problem.n, r.problem.f2,
                                          r.problem.thr2, lane, &inl);
        for (int off = detail::kPoseLanes / 2; off >= 1; off >>= 1) {  // detail::pose_msac's butterfly
            c = c + __shfl_xor_sync(0xffffffffu, c, off);
            inl = inl + __shfl_xor_sync(0xffffffffu, inl, off);
        }
        if (c < best) {
            best = c;
            best_inliers = inl;
            best_s = s;
        }
    }
    if (lane == 0) {
        r.cost[j] = best;
        r.inliers[j] = best_inliers;
        for (int q = 0; q < 9; ++q) r.E[9 * j + q] = best_s >= 0 ? models[warp][best_s][q] : 0.0;
    }
}

__global__ void pose_scan_kernel(PoseRound r) {
    if (threadIdx.x != 0 || blockIdx.x != 0) return;
    detail::PoseScan s = *r.scan;
    if (s.stopped) return;
    const int won = detail::pose_scan(s, r.cost, r.inliers, r.first, r.count, r.required, r.max_hypotheses);
    if (won >= 0)
        for (int q = 0; q < 9; ++q) r.best_E[q] = r.E[9 * won + q];
    *r.scan = s;
}

__global__ void pose_reset_kernel(detail::PoseScan* scan) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *scan = detail::PoseScan{};
}

}  // namespace

void launch_pose_hypotheses(const PoseRound& r, cudaStream_t stream) {
    pose_hypotheses_kernel<<<(r.count + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * detail::kPoseLanes, 0,
                             stream>>>(r);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator hypotheses");
}

void launch_pose_scan(const PoseRound& r, cudaStream_t stream) {
    pose_scan_kernel<<<1, 32, 0, stream>>>(r);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator scan");
}

void launch_pose_reset(detail::PoseScan* scan, cudaStream_t stream) {
    pose_reset_kernel<<<1, 32, 0, stream>>>(scan);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator reset");
}

}  // namespace kestrel::kernels
