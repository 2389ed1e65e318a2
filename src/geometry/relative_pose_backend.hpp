// Internal: the backends of RelativePoseEstimator (src/geometry/relative_pose.cpp): the CPU reference
// (relative_pose_cpu.cpp) and the CUDA side (relative_pose_cuda.cpp; stand-in in geometry_nocuda.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/detail/ransac_rules.hpp"
#include "kestrel/relative_pose_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel::detail {

/// One call, staged on the host: points as doubles (2n each), the rotation prior, the stop-count table.
struct PoseCall {
    const double* x1 = nullptr;
    const double* x2 = nullptr;
    bool device_points = false;  // x1, x2 are device pointers (CUDA backend)
    int n = 0;
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const int* required = nullptr;  // required[c], c in [0, n]: hypotheses needed once the best has c inliers
};

/// The number of hypotheses needed for `confidence` when the best model has c of n inliers and samples have
/// m points: ceil(log(1 - confidence) / log(1 - (c / n)^m)), clamped to [1, max_hypotheses]; computed on the
/// host once per (n, confidence, m) and shared by both backends (so the stop is the same on both).
void pose_required_table(int n, int m, double confidence, int max_hypotheses, std::vector<int>& table);

class PoseBackend {
public:
    virtual ~PoseBackend() = default;
    virtual void enqueue(const PoseCall& call, StreamHandle stream) = 0;
    virtual RelativePoseResult finish(std::uint8_t* mask) = 0;
};

std::unique_ptr<PoseBackend> make_cpu_pose_backend(int max_points, const RelativePoseConfig& cfg);
std::unique_ptr<PoseBackend> make_cuda_pose_backend(int max_points, const RelativePoseConfig& cfg);

/// Scratch of one round of cfg.batch hypotheses (costs, inlier counts, models), made once per estimator.
struct PoseScratch {
    std::vector<double> cost, E;
    std::vector<int> inliers;
    explicit PoseScratch(int batch)
        : cost(static_cast<std::size_t>(batch)), E(static_cast<std::size_t>(batch) * 9),
          inliers(static_cast<std::size_t>(batch)) {}
};

/// The CPU reference of one call (the definition the kernels match): result and mask (n bytes). `scratch`
/// (sized for cfg.batch) makes it allocation-free.
RelativePoseResult relative_pose_cpu(const PoseCall& call, const RelativePoseConfig& cfg, std::uint8_t* mask,
                                     PoseScratch& scratch);

}  // namespace kestrel::detail

namespace kestrel::detail {

/// From the winning model E to the result: the mask, decomposition with cheirality, refinement (when on, kept
/// only when it lowers the MSAC cost), the final mask and counts. Host code shared by both backends.
RelativePoseResult pose_finish(const PoseCall& call, const RelativePoseConfig& cfg, const double* x1,
                               const double* x2, const double* E, const PoseScan& scan, std::uint8_t* mask);

}  // namespace kestrel::detail
