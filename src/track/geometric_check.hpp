// Internal: FeatureTracker's geometric check (TrackerConfig::geometric_check; policy in docs/tracker.md,
// "Geometric check"). The CPU backend runs it here, on the host after the frame's wait, on the frame's verdicts
// (the CPU estimator); so does the CUDA backend for five-point and the fisheye. With a rotation prior on a camera
// of the z = 1 plane, the CUDA backend enqueues it on the frame's stream after the tracking launch instead
// (run_device_async: the two-point kernel stages the tracks itself) and reads the verdicts after the frame's one
// wait (finish_device). Both end the same tracks as Outlier, bit for bit.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/detail/geo_check_rules.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/relative_pose.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel::detail {

/// The frame's LK results as the device reads them (the CUDA tracker's pinned buffers), for the check on the device.
struct GeoTrackInputs {
    const LkResult* results = nullptr;
    const LkResult* back = nullptr;
    const AnchorResult* anchors = nullptr;
    const Point2f* origins = nullptr;
    TrackVerdictRule rule{};
    int tracks = 0;
};

/// FeatureTracker's geometric check on the device (CUDA, two-point with the prior, z = 1 plane; PoseTrackStage;
/// src/track/geo_check_cuda.cpp):
/// the frame pair's test and, with R_base, the baseline test from bases(), enqueued on the frame's stream; after
/// the stream's work, outlier() and out(test) hold the verdicts.
class GeoDeviceCheck {
public:
    virtual ~GeoDeviceCheck() = default;
    virtual Point2f* bases() = 0;  // pinned, the capacity: the baseline test's first positions (host-written)
    virtual void enqueue(const GeoTrackInputs& in, const double* R, const double* R_base, StreamHandle stream) = 0;
    virtual const std::uint8_t* outlier() const = 0;
    virtual const GeoDeviceOut& out(int test) const = 0;
};
std::unique_ptr<GeoDeviceCheck> make_cuda_geo_check(int capacity, const RelativePoseConfig& cfg, const CameraSetup& cam,
                                                    int min_tracks);

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

    /// CUDA tracker: makes the check on the device (z = 1 plane cameras; otherwise the check stays on the host).
    void enable_device();
    /// Enqueues the check of run() on the device when it can run there (enable_device took, R_prior given, and
    /// R_base given when base is: else the baseline test would be five-point); `base`: the host's bases, copied
    /// here. False: nothing enqueued (run() on the host after the wait).
    bool run_device_async(const GeoTrackInputs& in, const double* R_prior, const Point2f* base, const double* R_base,
                          StreamHandle stream);
    /// After the frame's wait: run_device_async's verdicts into outlier[0, n) and the result (as run()'s).
    const GeometricCheckResult& finish_device(std::uint8_t* outlier, int n);

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
    std::unique_ptr<GeoDeviceCheck> dev_;
    int capacity_ = 0;
    bool dev_base_ = false;  // the enqueued check has the baseline test
};

}  // namespace kestrel::detail
