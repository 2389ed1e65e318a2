// Internal: FeatureTracker's geometric check (TrackerConfig::geometric_check; policy in docs/tracker.md,
// "Geometric check"). The CPU path runs here on the frame's verdicts; the CUDA backend runs the same rules on the
// device (kernels/track/geo_check.cu around RelativePoseEstimator's device entry) and this class turns its summary
// into the frame's result. Both backends end the same tracks as Outlier, bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/detail/geo_check_rules.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/relative_pose.hpp"

namespace kestrel::detail {

/// The relative-pose settings of the check (the estimator's method aside: five-point, or two-point with a prior).
RelativePoseConfig geo_pose_config(const GeometricCheckConfig& cfg, PoseMethod method);

class GeometricCheck {
public:
    /// cfg validated by validate(TrackerConfig); `capacity` tracks at most per frame. `cpu`: make the CPU
    /// estimators (the CPU backend's path). Allocates everything here.
    GeometricCheck(const GeometricCheckConfig& cfg, int capacity, bool cpu);

    /// The CPU path: tracks i in [0, n) with verdicts v[i] from origins[i]; `R_prior` (or null) the frame's
    /// rotation prior. Sets outlier[i] = 1 for every track the check ends (0 elsewhere); returns the result.
    const GeometricCheckResult& run(const TrackVerdict* v, const Point2f* origins, int n, const double* R_prior,
                                    std::uint8_t* outlier);
    /// The CUDA path: the device's summary and flags (n tracks) -> the frame's result.
    const GeometricCheckResult& take(const GeoCheckSummary& s, const std::uint8_t* outlier, int n);

    const GeometricCheckResult& result() const { return res_; }
    void clear() { res_ = GeometricCheckResult{}; }
    const CameraSetup& camera() const { return cam_; }

private:
    GeometricCheckConfig cfg_;
    CameraSetup cam_{};
    std::unique_ptr<RelativePoseEstimator> five_, two_;
    std::vector<double> x1_, x2_;    // normalized points of the checked tracks
    std::vector<int> index_;         // checked point k -> track index
    std::vector<std::uint8_t> mask_;  // the estimate's inlier mask
    GeometricCheckResult res_;
};

}  // namespace kestrel::detail
