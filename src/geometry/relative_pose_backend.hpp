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

/// One call. Host entries: the points staged on the host as 3-vectors (x1, x2: 3n doubles; s: n scales or
/// null). The device entry (CUDA backend): `device` set, the points read from it on the device.
struct PoseCall {
    const double* x1 = nullptr;
    const double* x2 = nullptr;
    const double* s = nullptr;  // pixels per unit of the tangent plane, per point (optional)
    int n = 0;                  // host entries: the count; device entry: the bound (device count clamped to it)
    int sphere = 0;             // 1: unit bearings (tangent-plane error), 0: normalized points (z = 1)
    int method = 0;             // 0 five-point, 1 two-point
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    const PoseDeviceInput* device = nullptr;
};

/// The stop tables, (kPoseStopBins + 1) entries for m = 5 then as many for m = 2: table[q] = the hypotheses
/// needed for `confidence` when the best model's inlier fraction is q / kPoseStopBins,
/// ceil(log(1 - confidence) / log(1 - (q / kPoseStopBins)^m)) clamped to [1, max_hypotheses]. Computed on the
/// host once per estimator and shared by both backends (so the stop is the same on both).
void pose_stop_tables(double confidence, int max_hypotheses, std::vector<int>& table);
inline const int* pose_table(const std::vector<int>& tables, int method) {
    return tables.data() + (method == 0 ? 0 : kPoseStopBins + 1);
}

/// The seed of the rotation-only pass (its samples differ from the translation pass').
inline std::uint64_t pose_rotation_seed(std::uint64_t seed) { return seed ^ 0xd1b54a32d192ed03ULL; }

/// The problems of the two passes and the finish's parameters, for n points at x1, x2, s (host or device).
void pose_setup(const PoseCall& call, const RelativePoseConfig& cfg, const double* x1, const double* x2,
                const double* s, int n, int bound, PoseFinishParams& fp, PoseProblem& rotation);
/// The rotation pass' largest hypothesis cap (detail::pose_rotation_cap lowers it per call).
inline int pose_rotation_max(const RelativePoseConfig& cfg) {
    return cfg.max_hypotheses < kPoseRotationMaxHypotheses ? cfg.max_hypotheses : kPoseRotationMaxHypotheses;
}

/// The record as the public result.
RelativePoseResult pose_result(const PoseRecord& rec);

class PoseBackend {
public:
    virtual ~PoseBackend() = default;
    virtual void enqueue(const PoseCall& call, StreamHandle stream) = 0;
    virtual RelativePoseResult finish(std::uint8_t* mask) = 0;
    virtual const std::uint8_t* device_mask() const { return nullptr; }
    /// A host buffer the call's points may be staged in (x1 at 0, x2 at 3n, the scales at 6n doubles; 7 *
    /// max_points), or null: the CUDA backend's pinned block, read by the call's one upload.
    virtual double* host_staging() { return nullptr; }
    virtual const PoseRecord* device_record() const { return nullptr; }
};

std::unique_ptr<PoseBackend> make_cpu_pose_backend(int max_points, const RelativePoseConfig& cfg,
                                                   const std::vector<int>& tables);
std::unique_ptr<PoseBackend> make_cuda_pose_backend(int max_points, const RelativePoseConfig& cfg,
                                                    const std::vector<int>& tables);

/// Scratch of one round of cfg.batch hypotheses (costs, inlier counts, models), made once per estimator.
struct PoseScratch {
    std::vector<double> cost, E;
    std::vector<int> inliers;
    explicit PoseScratch(int batch)
        : cost(static_cast<std::size_t>(batch)), E(static_cast<std::size_t>(batch) * 9),
          inliers(static_cast<std::size_t>(batch)) {}
};

/// The CPU reference of one call (the definition the kernels match): the record and the mask (n bytes).
/// `scratch` (sized for cfg.batch) makes it allocation-free.
void relative_pose_cpu(const PoseCall& call, const RelativePoseConfig& cfg, const std::vector<int>& tables,
                       std::uint8_t* mask, PoseScratch& scratch, PoseRecord& rec);

}  // namespace kestrel::detail
