// DeviceImage, PinnedImage and CudaStream on the CUDA runtime (cudaMallocPitch, cudaMallocHost,
// cudaStreamCreateWithFlags), the stream-ordered copies, synchronize() and the device query.
// Stand-ins without CUDA: src/core/core_nocuda.cpp.
#include "kestrel/device_image.hpp"

#include <utility>

#include "kernels/common/cuda_check.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

bool cuda_available() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
        return false;
    }
    return n > 0;
}

bool built_with_cuda() noexcept { return true; }

DeviceImage::DeviceImage(int width, int height) {
    detail::check_image_size("DeviceImage", width, height);
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocPitch(&p, &pitch_, static_cast<std::size_t>(width), static_cast<std::size_t>(height)),
                 "DeviceImage allocation");
    data_ = static_cast<std::uint8_t*>(p);
    width_ = width;
    height_ = height;
}

DeviceImage::~DeviceImage() {
    if (data_) (void)cudaFree(data_);  // a destructor must not throw; a failing free leaves nothing to do
}

PinnedImage::PinnedImage(int width, int height) {
    detail::check_image_size("PinnedImage", width, height);
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, static_cast<std::size_t>(width) * height), "PinnedImage allocation");
    data_ = static_cast<std::uint8_t*>(p);
    width_ = width;
    height_ = height;
}

PinnedImage::~PinnedImage() {
    if (data_) (void)cudaFreeHost(data_);
}

CudaStream::CudaStream() {
    KESTREL_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "CudaStream creation");
}

CudaStream::~CudaStream() {
    if (stream_) (void)cudaStreamDestroy(stream_);
}

namespace {
template <typename Src, typename Dst>
void copy_2d(const char* where, Src src, Dst dst, cudaMemcpyKind kind, StreamHandle stream) {
    detail::check_copy(where, src, dst);
    KESTREL_CUDA(cudaMemcpy2DAsync(dst.data, dst.pitch, src.data, src.pitch, static_cast<std::size_t>(src.width),
                                   static_cast<std::size_t>(src.height), kind, stream),
                 where);
}
}  // namespace

void copy_async(HostView src, DeviceMutView dst, StreamHandle stream) {
    copy_2d("copy_async(host->device)", src, dst, cudaMemcpyHostToDevice, stream);
}
void copy_async(DeviceView src, HostMutView dst, StreamHandle stream) {
    copy_2d("copy_async(device->host)", src, dst, cudaMemcpyDeviceToHost, stream);
}
void copy_async(DeviceView src, DeviceMutView dst, StreamHandle stream) {
    copy_2d("copy_async(device->device)", src, dst, cudaMemcpyDeviceToDevice, stream);
}

DeviceImage upload(HostView src) {
    validate_view("upload", "src", src);
    DeviceImage out(src.width, src.height);
    copy_async(src, out.mut_view(), nullptr);
    synchronize(nullptr, "upload");
    return out;
}

HostImage download(DeviceView src) {
    validate_view("download", "src", src);
    HostImage out(src.width, src.height);
    copy_async(src, out.mut_view(), nullptr);
    synchronize(nullptr, "download");
    return out;
}

void synchronize(StreamHandle stream, const char* stage) { KESTREL_CUDA(cudaStreamSynchronize(stream), stage); }

}  // namespace kestrel
