// DevicePyramid in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of src/pyramid/pyramid_cuda.cpp:
// the constructor checks its arguments as the CUDA build does, then throws NoDeviceError saying how to
// rebuild; an empty object answers every call with StateError, as in the CUDA build.
#include "kestrel/pyramid.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

struct DevicePyramid::Impl {};

DevicePyramid::DevicePyramid() = default;
DevicePyramid::DevicePyramid(int width, int height, const PyramidConfig& cfg) {
    (void)pyramid_sizes(width, height, cfg);
    detail::built_without_cuda("DevicePyramid");
}
DevicePyramid::DevicePyramid(DevicePyramid&&) noexcept = default;
DevicePyramid& DevicePyramid::operator=(DevicePyramid&&) noexcept = default;
DevicePyramid::~DevicePyramid() = default;

// Every object is empty here: no constructor completes.
DevicePyramid::Impl& DevicePyramid::impl(const char* where) const { detail::empty_object("DevicePyramid", where); }
int DevicePyramid::levels() const { detail::empty_object("DevicePyramid", "levels"); }
const PyramidConfig& DevicePyramid::config() const { detail::empty_object("DevicePyramid", "config"); }
DeviceView DevicePyramid::level(int) const { detail::empty_object("DevicePyramid", "level"); }
DeviceMutView DevicePyramid::level0() { detail::empty_object("DevicePyramid", "level0"); }
void DevicePyramid::build(StreamHandle) { detail::empty_object("DevicePyramid", "build"); }
void DevicePyramid::build(DeviceView, StreamHandle) { detail::empty_object("DevicePyramid", "build"); }
void DevicePyramid::build_pair(DevicePyramid&, DevicePyramid&, StreamHandle) {
    detail::empty_object("DevicePyramid", "build_pair");
}

}  // namespace kestrel
