// Camera models: projection, unprojection (iterative undistortion to normalized coordinates) on the CPU,
// and the GPU batch unprojection of a frame's keypoints. Models, equations and the convergence bound:
// docs/geometry.md; the shared rules: include/kestrel/detail/camera_rules.hpp.
#pragma once
#include <memory>

#include "kestrel/camera_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// Pixel of normalized point `normalized` = (X/Z, Y/Z) (validates `cam`; NaN in, NaN out).
Point2d project(const Camera& cam, Point2d normalized);

/// One pixel's unprojection: the normalized point when status is Ok, else NaN coordinates.
struct Unprojection {
    Point2d normalized;
    UnprojectStatus status = UnprojectStatus::NonFinite;
};

/// Normalized point of `pixel` (validates `cam` and `cfg`, and derives the valid region: for one point at
/// a time; use unproject_cpu for many). The status flags what has no valid preimage (UnprojectStatus).
Unprojection unproject(const Camera& cam, Point2d pixel, const UndistortConfig& cfg = {});

/// One pixel's unit bearing vector (x, y, z): any direction the model sees, for a fisheye also beyond 90 degrees
/// off the axis (z < 0), where no normalized point exists (detail::unproject_bearing_pixel). NaN unless Ok.
struct BearingUnprojection {
    double bearing[3];
    UnprojectStatus status = UnprojectStatus::NonFinite;
};
BearingUnprojection unproject_bearing(const Camera& cam, Point2d pixel, const UndistortConfig& cfg = {});

/// The CPU reference of DeviceUnprojector: pixels (xy[2i], xy[2i+1]) for i in [0, count) (float, as
/// keypoints are: an array of {float x, y} structs may be passed as float*) -> normalized[i], status[i]
/// (coordinates NaN unless Ok). count in [0, kMaxUnprojectPoints]; the pointers may be null when count = 0.
void unproject_cpu(const Camera& cam, const float* xy, int count, Point2d* normalized, UnprojectStatus* status,
                   const UndistortConfig& cfg = {});

/// Pixels per radian of a bearing's motion at the direction `bearing` (x, y, z; any length) in this camera: the
/// geometric mean of the radial and the tangential magnification (detail::pixels_per_radian_at). threshold_px
/// divided by it is the point's angular threshold (RelativePoseEstimator::estimate_bearings,
/// PoseDeviceInput::pixels_per_radian). Validates `cam`; NaN where the model has no image of the direction.
double pixels_per_radian(const Camera& cam, const double* bearing);

/// The largest count (and DeviceUnprojector capacity) accepted.
constexpr int kMaxUnprojectPoints = 1 << 24;

/// GPU batch unprojection for up to `capacity` points of one camera. Allocates once (device buffers for
/// the pixels, the normalized points and the statuses); a call allocates nothing and does not synchronize.
/// Results equal unproject_cpu's: the same statuses, coordinates within 1e-6 normalized units, relative beyond 1
/// (bit-identical for Pinhole and PinholeRadtan on an x86-64 host; the fisheye model differs only by the math
/// libraries' tan/atan).
class DeviceUnprojector {
public:
    DeviceUnprojector();
    /// Validates cam and cfg; capacity in [1, kMaxUnprojectPoints].
    DeviceUnprojector(const Camera& cam, int capacity, const UndistortConfig& cfg = {});
    DeviceUnprojector(DeviceUnprojector&&) noexcept;
    DeviceUnprojector& operator=(DeviceUnprojector&&) noexcept;
    ~DeviceUnprojector();

    const Camera& camera() const;
    const UndistortConfig& config() const;
    int capacity() const;

    /// Enqueues on `stream`: the 2 * count floats at `xy` are copied into the object's buffer, unprojected
    /// in one launch, and the results copied to normalized[0, count) and status[0, count). Every pointer must be
    /// device or page-locked host memory (cudaMalloc, cudaMallocHost, cudaHostRegister; InvalidArgument naming it
    /// otherwise: a pageable copy would synchronize). Buffers must stay valid until the stream reaches the work;
    /// calls on one object are ordered only when they share a stream (they share its buffers).
    /// count in [0, capacity].
    void unproject_async(const float* xy, int count, Point2d* normalized, UnprojectStatus* status,
                         StreamHandle stream);
    /// The same on the legacy default stream from and to any memory (pageable host memory too), then waits.
    void unproject(const float* xy, int count, Point2d* normalized, UnprojectStatus* status);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
