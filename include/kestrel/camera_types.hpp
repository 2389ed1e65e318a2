// Camera models (plain data): the model, the intrinsics and distortion coefficients, the undistortion
// settings and the per-point status of an unprojection. Equations, conventions and the convergence bound:
// docs/geometry.md and include/kestrel/detail/camera_rules.hpp; functions: include/kestrel/camera.hpp.
#pragma once
#include <cstdint>

namespace kestrel {

/// The projection model of a Camera (Kalibr's camera_model + distortion_model, OpenCV's names beside).
enum class CameraModel : std::int32_t {
    Pinhole = 0,        ///< pinhole, no distortion (the coefficients must be zero)
    PinholeRadtan = 1,  ///< pinhole + radial-tangential k1, k2, p1, p2, k3 (Kalibr "radtan"; cv::undistortPoints
                        ///< with (k1, k2, p1, p2[, k3]))
    Fisheye = 2,        ///< pinhole + equidistant k1..k4 (Kalibr "equidistant"; cv::fisheye, Kannala-Brandt)
};

/// A calibrated camera. Pixel (u, v) of normalized point (x, y) (= (X/Z, Y/Z) of a point in the camera
/// frame) is u = fx * xd + cx, v = fy * yd + cy, where (xd, yd) is (x, y) distorted by the model.
/// Pixel centres are at integer coordinates (OpenCV's and Kalibr's convention). validate() checks it.
struct Camera {
    CameraModel model = CameraModel::Pinhole;
    int width = 0;   ///< image size in pixels, each in [1, kMaxImageSide = 16383] (image.hpp)
    int height = 0;
    double fx = 0, fy = 0;  ///< focal lengths in pixels, finite and > 0
    /// Principal point in pixels: within the image extended by kPrincipalPointMargin of its size on each side
    /// (principal_point_range(); calibrations put it off-centre, a crop can leave it near or past the border).
    double cx = 0, cy = 0;
    /// Distortion coefficients, each finite with |value| <= kMaxDistortionCoefficient.
    /// PinholeRadtan: d = {k1, k2, p1, p2, k3} (k3 = 0 for the 4-coefficient model).
    /// Fisheye:       d = {k1, k2, k3, k4, 0} (the fifth must be 0).
    /// Pinhole:       all zero.
    double d[5] = {0, 0, 0, 0, 0};
};

/// The bound validate() puts on every distortion coefficient (real calibrations stay far below it).
constexpr double kMaxDistortionCoefficient = 1e3;

/// How far past the image validate() lets the principal point lie, as a fraction of the image's size on each
/// side: a principal point far outside the image is a wrong calibration (a value in the wrong unit, a sign lost),
/// which would otherwise give wrong geometry in silence.
constexpr double kPrincipalPointMargin = 0.5;

/// The range validate() accepts for the principal point's coordinate along an image side of `size` pixels (cx:
/// the width, cy: the height): the image, whose pixels span [-0.5, size - 0.5], extended by
/// kPrincipalPointMargin * size on each side. E.g. 752 px: cx in [-376.5, 1127.5].
struct PrincipalPointRange {
    double lo, hi;
};
constexpr PrincipalPointRange principal_point_range(int size) {
    return {-0.5 - kPrincipalPointMargin * size, size - 0.5 + kPrincipalPointMargin * size};
}

/// Settings of the iterative undistortion (detail/camera_rules.hpp). A point counts as undistorted when the
/// residual |distort(x) - xd| in the distorted normalized plane is <= tolerance (for the fisheye model: the
/// residual of the distorted angle, theta_d). After reprojection that is an error of at most
/// max(fx, fy) * tolerance pixels (plus rounding); a point that does not get there within max_iterations is
/// flagged UnprojectStatus::NotConverged, never returned silently.
struct UndistortConfig {
    int max_iterations = 20;   ///< in [1, 100]; the test calibrations need at most 5 Newton steps
    double tolerance = 1e-12;  ///< in [1e-15, 1e-3] normalized units (1e-12 ~ 5e-10 px at fx = 500)
};

/// What became of one point's unprojection. Only Ok carries coordinates; the others return NaN.
enum class UnprojectStatus : std::uint8_t {
    Ok = 0,
    NonFinite = 1,     ///< the pixel was NaN or infinite
    OutsideModel = 2,  ///< no valid preimage: beyond the fold of the radial distortion, or (fisheye) a ray at or
                       ///< beyond 90 degrees from the axis, or the normalized point overflows
    NotConverged = 3,  ///< the residual stayed above UndistortConfig::tolerance after max_iterations
};

/// A double-precision 2-D point: normalized coordinates (x, y) = (X/Z, Y/Z), or a pixel (u, v).
struct Point2d {
    double x = 0, y = 0;
};

/// Throws InvalidArgument naming the field and its bound (e.g. "Camera: parameter 'fx' = -1 is outside
/// [1e-06, 1e+09]") unless every field of `cam` is valid for its model. `where` prefixes the message.
void validate(const Camera& cam, const char* where = "Camera");
/// Throws InvalidArgument naming the field and its bound unless `cfg` is valid.
void validate(const UndistortConfig& cfg, const char* where = "UndistortConfig");

/// "Pinhole", "PinholeRadtan", "Fisheye" (or "unknown").
const char* to_string(CameraModel m);
/// "Ok", "NonFinite", "OutsideModel", "NotConverged" (or "unknown").
const char* to_string(UnprojectStatus s);

}  // namespace kestrel
