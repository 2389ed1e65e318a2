// Relative pose of two calibrated views: RANSAC over the five-point solver (or, with a rotation prior, the
// two-point translation solver), MSAC-scored by the Sampson error in pixels, adaptive stop, refinement on the
// inliers, decomposition into R and unit t with the cheirality test, and the choice of a rotation-only model
// when the camera did not translate. Docs: docs/geometry.md.
//
// The tracker's entry: estimate_device_async(const PoseDeviceInput&, stream) below. Device arrays of unit
// bearings (float x, y, z) or normalized points, the count as a host int or as a device int with a host bound,
// the optional rotation prior (host, read at enqueue); the mask (device_mask()) and the result record
// (device_record(), PoseRecord) are written on the stream, in device memory; finish() waits and copies them to
// the host only when called. No allocation and no host synchronization inside the call on Backend::Cuda.
#pragma once
#include <cstdint>
#include <memory>

#include "kestrel/keypoint.hpp"
#include "kestrel/relative_pose_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// Created once for at most `max_points` correspondences and a backend; every call reuses its buffers (no
/// allocation per call). Points are normalized image coordinates (x, y interleaved: x1[2i], x1[2i + 1]) of
/// the first and the second view; the result's pose maps the first camera's frame into the second's.
/// The same input, configuration and seed give the same result run to run and on every backend.
class RelativePoseEstimator {
public:
    RelativePoseEstimator();  ///< empty: every call throws StateError
    RelativePoseEstimator(int max_points, const RelativePoseConfig& cfg = {}, Backend backend = Backend::Cpu);
    RelativePoseEstimator(RelativePoseEstimator&&) noexcept;
    RelativePoseEstimator& operator=(RelativePoseEstimator&&) noexcept;
    ~RelativePoseEstimator();

    Backend backend() const;
    const RelativePoseConfig& config() const;
    int max_points() const;

    /// Synchronous form. n in [0, max_points] (fewer than the method's minimum gives TooFewPoints);
    /// `inlier_mask` (n bytes, 1 = inlier of the final model) may be null. `rotation_prior` (3x3 row-major,
    /// X2 = R X1 + t) is required by PoseMethod::TwoPointWithRotation and ignored otherwise.
    RelativePoseResult estimate(const double* x1, const double* x2, int n, std::uint8_t* inlier_mask = nullptr,
                                const double* rotation_prior = nullptr);
    RelativePoseResult estimate(const float* x1, const float* x2, int n, std::uint8_t* inlier_mask = nullptr,
                                const double* rotation_prior = nullptr);

    /// Stream-ordered form: enqueues the work on `stream` (the host arrays are copied before it returns);
    /// finish() waits and returns the result, writing the mask when given. CPU backend: the work is done here.
    void estimate_async(const double* x1, const double* x2, int n, StreamHandle stream,
                        const double* rotation_prior = nullptr);
    void estimate_async(const float* x1, const float* x2, int n, StreamHandle stream,
                        const double* rotation_prior = nullptr);
    /// Device arrays (CUDA backend only): 2n doubles each in device or mapped memory, valid until finish().
    void estimate_device_async(const double* d_x1, const double* d_x2, int n, StreamHandle stream,
                               const double* rotation_prior = nullptr);
    RelativePoseResult finish(std::uint8_t* inlier_mask = nullptr);

    /// Unit bearing vectors (3 doubles x, y, z per point, any direction: a fisheye's points beyond 90 degrees
    /// off axis too), host arrays. The inlier test is the tangent-plane Sampson error in radians times the
    /// point's pixels per radian (`pixels_per_radian[i]`, n doubles; null: focal_px for every point), against
    /// threshold_px. Bearings need not be exactly unit (they are normalized when staged).
    RelativePoseResult estimate_bearings(const double* b1, const double* b2, int n, std::uint8_t* inlier_mask = nullptr,
                                         const double* rotation_prior = nullptr,
                                         const double* pixels_per_radian = nullptr);
    void estimate_bearings_async(const double* b1, const double* b2, int n, const double* rotation_prior,
                                 const double* pixels_per_radian, StreamHandle stream);

    /// The tracker's entry (CUDA backend only): device inputs (PoseDeviceInput), everything enqueued on
    /// `stream` with no host synchronization and no allocation; the mask and the record land in device memory
    /// (device_mask(), device_record()), readable by later work on the same stream. With `rotation_prior` the
    /// two-point RANSAC runs, else the five-point one (cfg.method is not used here). finish() waits and returns
    /// the host copy. The arrays must stay valid until the stream has run the work.
    void estimate_device_async(const PoseDeviceInput& in, StreamHandle stream);
    /// Device memory owned by the estimator (CUDA backend; null on the CPU backend): the inlier mask (one byte per
    /// point, max_points bytes; entries at and beyond the used count are 0) and the result record. Written by
    /// every call on the CUDA backend, in stream order.
    const std::uint8_t* device_mask() const;
    const PoseRecord* device_record() const;

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
