// DevicePyramid in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of src/pyramid/pyramid_cuda.cpp:
// constructing one throws NoDeviceError saying how to rebuild; an empty one answers every call the same way.
#include "kestrel/pyramid.hpp"
#include "src/core/cuda_required.hpp"

namespace kestrel {

struct DevicePyramid::Impl {};

DevicePyramid::DevicePyramid() = default;
DevicePyramid::DevicePyramid(int, int, const PyramidConfig&) { detail::built_without_cuda("DevicePyramid"); }
DevicePyramid::DevicePyramid(DevicePyramid&&) noexcept = default;
DevicePyramid& DevicePyramid::operator=(DevicePyramid&&) noexcept = default;
DevicePyramid::~DevicePyramid() = default;

DevicePyramid::Impl& DevicePyramid::impl(const char* where) const { detail::built_without_cuda(where); }
int DevicePyramid::levels() const { detail::built_without_cuda("DevicePyramid::levels"); }
const PyramidConfig& DevicePyramid::config() const { detail::built_without_cuda("DevicePyramid::config"); }
DeviceView DevicePyramid::level(int) const { detail::built_without_cuda("DevicePyramid::level"); }
DeviceMutView DevicePyramid::level0() { detail::built_without_cuda("DevicePyramid::level0"); }
void DevicePyramid::build(StreamHandle) { detail::built_without_cuda("DevicePyramid::build"); }
void DevicePyramid::build(DeviceView, StreamHandle) { detail::built_without_cuda("DevicePyramid::build"); }

}  // namespace kestrel
