#include "kestrel/device_image.hpp"

#include <utility>

#include "cuda_check.hpp"

namespace kestrel {

bool cuda_available() noexcept {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
        return false;
    }
    return n > 0;
}

DeviceImage::DeviceImage(int width, int height) {
    detail::check_range("DeviceImage", "width", width, 1, kMaxImageSide);
    detail::check_range("DeviceImage", "height", height, 1, kMaxImageSide);
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

DeviceImage::DeviceImage(DeviceImage&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), width_(std::exchange(o.width_, 0)),
      height_(std::exchange(o.height_, 0)), pitch_(std::exchange(o.pitch_, 0)) {}

DeviceImage& DeviceImage::operator=(DeviceImage&& o) noexcept {
    if (this != &o) {
        DeviceImage tmp(std::move(o));
        std::swap(data_, tmp.data_);
        std::swap(width_, tmp.width_);
        std::swap(height_, tmp.height_);
        std::swap(pitch_, tmp.pitch_);
    }
    return *this;
}

PinnedImage::PinnedImage(int width, int height) {
    detail::check_range("PinnedImage", "width", width, 1, kMaxImageSide);
    detail::check_range("PinnedImage", "height", height, 1, kMaxImageSide);
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, static_cast<std::size_t>(width) * height), "PinnedImage allocation");
    data_ = static_cast<std::uint8_t*>(p);
    width_ = width;
    height_ = height;
}

PinnedImage::~PinnedImage() {
    if (data_) (void)cudaFreeHost(data_);
}

PinnedImage::PinnedImage(PinnedImage&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), width_(std::exchange(o.width_, 0)), height_(std::exchange(o.height_, 0)) {}

PinnedImage& PinnedImage::operator=(PinnedImage&& o) noexcept {
    if (this != &o) {
        PinnedImage tmp(std::move(o));
        std::swap(data_, tmp.data_);
        std::swap(width_, tmp.width_);
        std::swap(height_, tmp.height_);
    }
    return *this;
}

namespace {
template <typename Src, typename Dst>
void copy_2d(const char* where, Src src, Dst dst, cudaMemcpyKind kind, StreamHandle stream) {
    validate_view(where, "src", src);
    validate_view(where, "dst", dst);
    if (src.width != dst.width || src.height != dst.height)
        detail::fail(where, "dst",
                  "size " + detail::to_text(dst.width) + "x" + detail::to_text(dst.height) + " must equal src size " +
                      detail::to_text(src.width) + "x" + detail::to_text(src.height));
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
