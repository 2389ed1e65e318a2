// The core's CUDA entry points in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/core/device_image_cuda.cpp: no device is ever available, and whatever needs one checks its arguments
// as the CUDA build does, then throws NoDeviceError saying that the library was built without CUDA and how
// to rebuild.
#include "kestrel/device_image.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

bool cuda_available() noexcept { return false; }
bool built_with_cuda() noexcept { return false; }

DeviceImage::DeviceImage(int width, int height) {
    detail::check_image_size("DeviceImage", width, height);
    detail::built_without_cuda("DeviceImage");
}
DeviceImage::~DeviceImage() = default;  // never holds memory here
PinnedImage::PinnedImage(int width, int height) {
    detail::check_image_size("PinnedImage", width, height);
    detail::built_without_cuda("PinnedImage");
}
PinnedImage::~PinnedImage() = default;
CudaStream::CudaStream() { detail::built_without_cuda("CudaStream"); }
CudaStream::~CudaStream() = default;

namespace {
template <typename Src, typename Dst>
[[noreturn]] void copy_2d(const char* where, const Src& src, const Dst& dst) {
    detail::check_copy(where, src, dst);
    detail::built_without_cuda(where);
}
}  // namespace

void copy_async(HostView src, DeviceMutView dst, StreamHandle) { copy_2d("copy_async(host->device)", src, dst); }
void copy_async(DeviceView src, HostMutView dst, StreamHandle) { copy_2d("copy_async(device->host)", src, dst); }
void copy_async(DeviceView src, DeviceMutView dst, StreamHandle) { copy_2d("copy_async(device->device)", src, dst); }

DeviceImage upload(HostView src) {
    validate_view("upload", "src", src);
    detail::built_without_cuda("upload");
}

HostImage download(DeviceView src) {
    validate_view("download", "src", src);
    detail::built_without_cuda("download");
}

void synchronize(StreamHandle, const char* stage) { detail::built_without_cuda(stage); }

}  // namespace kestrel
