// Internal launch interface of kernels/geometry/ransac.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include "kestrel/detail/ransac_rules.hpp"

namespace kestrel::kernels {

/// One round of hypotheses [first, first + count), by value.
struct PoseRound {
    detail::PoseProblem problem;  // points (device), n, f2, thr2, seed, method, rotation prior
    const int* required;          // stop table, n + 1 entries (device)
    int max_hypotheses;
    int first, count;
    double* cost;                 // count (device scratch)
    int* inliers;                 // count
    double* E;                    // 9 * count
    detail::PoseScan* scan;       // the scan state (device), carried over rounds
    double* best_E;               // 9 (device): the winning model so far
};

/// Scores hypotheses [first, first + count) (one thread each), unless the scan has stopped already.
void launch_pose_hypotheses(const PoseRound& r, cudaStream_t stream);
/// Scans them in index order (one thread), updating the scan state and best_E.
void launch_pose_scan(const PoseRound& r, cudaStream_t stream);
/// Resets the scan state.
void launch_pose_reset(detail::PoseScan* scan, cudaStream_t stream);

}  // namespace kestrel::kernels
