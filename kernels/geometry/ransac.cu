// Relative-pose RANSAC on the GPU: the hypotheses of a round in parallel, then the in-order scan.
//
// Model: hypothesis k draws its minimal sample from the counter-based generator (seed, k), solves it (five-
// point: detail::five_point_solve; two-point with the rotation prior: detail::pose_two_point), and scores every
// solution by the MSAC cost of the Sampson error in pixels over all points in index order; the lowest cost
// (lower solution index on ties) is the hypothesis' model (detail::pose_hypothesis). One thread per
// hypothesis. The scan (one thread) then walks the round in index order with detail::pose_scan: a strictly
// lower cost wins, and the adaptive stop reads the host-computed table required[inliers of the best]. Rounds
// after the stop return at once, so the host enqueues every round without waiting.
//
// Reference it must match: detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp), bit for bit: the
// same rules header, +, -, *, /, sqrt only, and this file is compiled with --fmad=false (CMakeLists.txt) so
// that nvcc fuses no a * b + c the host does not fuse either (the host side is built with -ffp-contract=off).
#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

__global__ void pose_hypotheses_kernel(PoseRound r) {
    if (r.scan->stopped) return;
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= r.count) return;
    int inl = 0;
    r.cost[j] = detail::pose_hypothesis(r.problem, r.first + j, r.E + 9 * j, &inl);
    r.inliers[j] = inl;
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
    constexpr int kThreads = 64;
    pose_hypotheses_kernel<<<(r.count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(r);
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
