// The core's CUDA entry points in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/core/device_image_cuda.cpp: no device is ever available, and whatever needs one throws
// NoDeviceError saying that the library was built without CUDA and how to rebuild.
#include "kestrel/device_image.hpp"
#include "src/core/cuda_required.hpp"

namespace kestrel {

bool cuda_available() noexcept { return false; }
bool built_with_cuda() noexcept { return false; }

DeviceImage::DeviceImage(int, int) { detail::built_without_cuda("DeviceImage"); }
DeviceImage::~DeviceImage() = default;  // never holds memory here
PinnedImage::PinnedImage(int, int) { detail::built_without_cuda("PinnedImage"); }
PinnedImage::~PinnedImage() = default;
CudaStream::CudaStream() { detail::built_without_cuda("CudaStream"); }
CudaStream::~CudaStream() = default;

void copy_async(HostView, DeviceMutView, StreamHandle) { detail::built_without_cuda("copy_async(host->device)"); }
void copy_async(DeviceView, HostMutView, StreamHandle) { detail::built_without_cuda("copy_async(device->host)"); }
void copy_async(DeviceView, DeviceMutView, StreamHandle) { detail::built_without_cuda("copy_async(device->device)"); }
DeviceImage upload(HostView) { detail::built_without_cuda("upload"); }
HostImage download(DeviceView) { detail::built_without_cuda("download"); }
void synchronize(StreamHandle, const char* stage) { detail::built_without_cuda(stage); }

}  // namespace kestrel
