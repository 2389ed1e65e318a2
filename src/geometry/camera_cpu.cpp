// The camera models on the CPU: project, unproject, and unproject_cpu, the reference DeviceUnprojector
// (kernels/geometry/unproject.cu) must match. Both run detail::unproject_pixel (detail/camera_rules.hpp).
#include "camera_internal.hpp"
#include "kestrel/detail/validate.hpp"

namespace kestrel {

Point2d project(const Camera& cam, Point2d normalized) {
    const detail::CameraSetup s = detail::make_camera_setup(cam, UndistortConfig{}, "project", false);
    return detail::project_point(s, normalized.x, normalized.y);
}

Unprojection unproject(const Camera& cam, Point2d pixel, const UndistortConfig& cfg) {
    const detail::CameraSetup s = detail::make_camera_setup(cam, cfg, "unproject");
    Unprojection r;
    r.status = detail::unproject_pixel(s, pixel.x, pixel.y, r.normalized);
    return r;
}

BearingUnprojection unproject_bearing(const Camera& cam, Point2d pixel, const UndistortConfig& cfg) {
    const detail::CameraSetup s = detail::make_camera_setup(cam, cfg, "unproject_bearing");
    BearingUnprojection r;
    r.status = detail::unproject_bearing_pixel(s, pixel.x, pixel.y, r.bearing);
    return r;
}

double pixels_per_radian(const Camera& cam, const double* bearing) {
    const detail::CameraSetup s = detail::make_camera_setup(cam, UndistortConfig{}, "pixels_per_radian", false);
    detail::check(bearing != nullptr, "pixels_per_radian", "bearing", "must not be null");
    return detail::pixels_per_radian_at(s, bearing[0], bearing[1], bearing[2]);
}

void unproject_cpu(const Camera& cam, const float* xy, int count, Point2d* normalized, UnprojectStatus* status,
                   const UndistortConfig& cfg) {
    const char* where = "unproject_cpu";
    const detail::CameraSetup s = detail::make_camera_setup(cam, cfg, where);
    detail::check_unproject_args(where, xy, count, kMaxUnprojectPoints, normalized, status);
    for (int i = 0; i < count; ++i)
        status[i] = detail::unproject_pixel(s, static_cast<double>(xy[2 * i]), static_cast<double>(xy[2 * i + 1]),
                                            normalized[i]);
}

}  // namespace kestrel
