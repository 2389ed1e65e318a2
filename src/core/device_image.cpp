// DeviceImage, PinnedImage and CudaStream moves, the same in every build: an object owns its buffer alone, and the
// buffer is freed by the destructor of the build (src/core/device_image_cuda.cpp; without CUDA no
// object ever holds one, src/core/core_nocuda.cpp).
#include <utility>

#include "kestrel/device_image.hpp"

namespace kestrel {

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

CudaStream::CudaStream(CudaStream&& o) noexcept : stream_(std::exchange(o.stream_, nullptr)) {}

CudaStream& CudaStream::operator=(CudaStream&& o) noexcept {
    if (this != &o) {
        CudaStream tmp(std::move(o));
        std::swap(stream_, tmp.stream_);
    }
    return *this;
}

}  // namespace kestrel
