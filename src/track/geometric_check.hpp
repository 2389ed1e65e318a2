// Internal: FeatureTracker's geometric check (TrackerConfig::geometric_check; policy in docs/tracker.md,
// "Geometric check"). Both backends run it here, on the host after the frame's wait, on the frame's verdicts (the
// CPU estimator): they end the same tracks as Outlier, bit for bit.
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
    /// cfg validated by validate(TrackerConfig); `capacity` tracks at most per frame. Allocates everything here.
    GeometricCheck(const GeometricCheckConfig& cfg, int capacity);

    /// Tracks i in [0, n) with verdicts v[i] from origins[i]; `R_prior` (or null) the frame's rotation prior. Sets
    /// outlier[i] = 1 for every track the check ends (0 elsewhere); returns the result (the frame pair's estimate;
    /// `outliers` counts both tests). `base` (or null): the baseline test, from base[i] (NaN: track i is not
    /// tested) with `R_base` (or null) the rotation prior over that baseline.
    const GeometricCheckResult& run(const TrackVerdict* v, const Point2f* origins, int n, const double* R_prior,
                                    std::uint8_t* outlier, const Point2f* base = nullptr,
                                    const double* R_base = nullptr);

    const GeometricCheckResult& result() const { return res_; }
    void clear() { res_ = GeometricCheckResult{}; }
    const CameraSetup& camera() const { return cam_; }

private:
    /// One estimate over the tracks i with from[i] -> v[i] checked and outlier[i] == 0; ends those outside its
    /// mask. Returns the estimate (status NoModel when fewer than min_tracks were checked) and sets *checked.
    RelativePoseResult judge(const TrackVerdict* v, const Point2f* from, int n, const double* R_prior,
                             std::uint8_t* outlier, int* checked, int* ended);

    GeometricCheckConfig cfg_;
    CameraSetup cam_{};
    std::unique_ptr<RelativePoseEstimator> five_, two_;
    std::vector<double> b1_, b2_, ppr_;  // the checked tracks' unit bearings (3 each) and pixels per radian
    std::vector<double> n1_, n2_;        // their normalized points (geo_check_on_plane)
    bool plane_ = true;
    std::vector<int> index_;             // checked point k -> track index
    std::vector<std::uint8_t> mask_;  // the estimate's inlier mask
    GeometricCheckResult res_;
};

}  // namespace kestrel::detail
