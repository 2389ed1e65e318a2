// The geometry area's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/geometry/camera_cuda.cpp and src/geometry/relative_pose_cuda.cpp.
//
// DeviceUnprojector checks its arguments as the CUDA build does, then throws NoDeviceError saying how to
// rebuild; an empty object answers every call with StateError, as in the CUDA build.
//
// RelativePoseEstimator checks detail::require_cuda() before it asks for the CUDA backend, so the pose
// stand-in only names the missing backend.
#include "camera_internal.hpp"
#include "src/core/backend.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel {

struct DeviceUnprojector::Impl {};

DeviceUnprojector::DeviceUnprojector() = default;
DeviceUnprojector::DeviceUnprojector(const Camera& cam, int capacity, const UndistortConfig& cfg) {
    (void)detail::make_camera_setup(cam, cfg, "DeviceUnprojector");
    detail::check_range("DeviceUnprojector", "capacity", capacity, 1, kMaxUnprojectPoints);
    detail::built_without_cuda("DeviceUnprojector");
}
DeviceUnprojector::DeviceUnprojector(DeviceUnprojector&&) noexcept = default;
DeviceUnprojector& DeviceUnprojector::operator=(DeviceUnprojector&&) noexcept = default;
DeviceUnprojector::~DeviceUnprojector() = default;

// Every object is empty here: no constructor completes.
DeviceUnprojector::Impl& DeviceUnprojector::impl(const char* where) const {
    detail::empty_object("DeviceUnprojector", where);
}
const Camera& DeviceUnprojector::camera() const { detail::empty_object("DeviceUnprojector", "camera"); }
const UndistortConfig& DeviceUnprojector::config() const { detail::empty_object("DeviceUnprojector", "config"); }
int DeviceUnprojector::capacity() const { detail::empty_object("DeviceUnprojector", "capacity"); }
void DeviceUnprojector::unproject_async(const float*, int, Point2d*, UnprojectStatus*, StreamHandle) {
    detail::empty_object("DeviceUnprojector", "unproject_async");
}
void DeviceUnprojector::unproject(const float*, int, Point2d*, UnprojectStatus*) {
    detail::empty_object("DeviceUnprojector", "unproject");
}

}  // namespace kestrel

namespace kestrel::detail {

std::unique_ptr<PoseBackend> make_cuda_pose_backend(int, const RelativePoseConfig&, const std::vector<int>&) {
    built_without_cuda("RelativePoseEstimator");
}

}  // namespace kestrel::detail
