// Owning images in device memory (pitched) and in pinned host memory, and the stream-ordered
// copies between them. The CUDA runtime stays behind this header: no CUDA type appears here.
#pragma once
#include "kestrel/image.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// True when a CUDA device is present and usable by this process (never throws). Always false in a
/// build without CUDA (built_with_cuda() false).
bool cuda_available() noexcept;

/// True when this build of the library has the CUDA backend (configured with KESTREL_WITH_CUDA=ON).
/// Without it, every CUDA entry point throws NoDeviceError saying how to rebuild.
bool built_with_cuda() noexcept;

/// Owning, pitched 8-bit grey image in device memory (cudaMallocPitch). Move-only.
class DeviceImage {
public:
    DeviceImage() = default;
    DeviceImage(int width, int height);  ///< allocates; contents undefined
    ~DeviceImage();
    DeviceImage(DeviceImage&& o) noexcept;
    DeviceImage& operator=(DeviceImage&& o) noexcept;
    DeviceImage(const DeviceImage&) = delete;
    DeviceImage& operator=(const DeviceImage&) = delete;

    int width() const { return width_; }
    int height() const { return height_; }
    std::size_t pitch() const { return pitch_; }
    bool empty() const { return data_ == nullptr; }
    DeviceView view() const { return {data_, width_, height_, pitch_}; }
    DeviceMutView mut_view() { return {data_, width_, height_, pitch_}; }

private:
    std::uint8_t* data_ = nullptr;
    int width_ = 0, height_ = 0;
    std::size_t pitch_ = 0;
};

/// Owning 8-bit grey image in page-locked host memory (cudaMallocHost): the source of fast,
/// truly asynchronous uploads. Move-only.
class PinnedImage {
public:
    PinnedImage() = default;
    PinnedImage(int width, int height);
    ~PinnedImage();
    PinnedImage(PinnedImage&& o) noexcept;
    PinnedImage& operator=(PinnedImage&& o) noexcept;
    PinnedImage(const PinnedImage&) = delete;
    PinnedImage& operator=(const PinnedImage&) = delete;

    int width() const { return width_; }
    int height() const { return height_; }
    std::size_t pitch() const { return static_cast<std::size_t>(width_); }
    bool empty() const { return data_ == nullptr; }
    std::uint8_t* data() { return data_; }
    HostView view() const { return {data_, width_, height_, pitch()}; }
    HostMutView mut_view() { return {data_, width_, height_, pitch()}; }

private:
    std::uint8_t* data_ = nullptr;
    int width_ = 0, height_ = 0;
};

/// An owned non-blocking CUDA stream (cudaStreamNonBlocking), for callers that want one without including
/// a CUDA header: get() converts to cudaStream_t. Move-only. Creating one throws CudaError when the runtime
/// fails, NoDeviceError in a build without CUDA.
class CudaStream {
public:
    CudaStream();
    ~CudaStream();
    CudaStream(CudaStream&& o) noexcept;
    CudaStream& operator=(CudaStream&& o) noexcept;
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;

    StreamHandle get() const { return stream_; }

private:
    StreamHandle stream_ = nullptr;
};

/// Stream-ordered copies (cudaMemcpy2DAsync). Sizes of src and dst must match. A host source that
/// is not pinned makes the copy synchronous with respect to the host (CUDA's rule).
void copy_async(HostView src, DeviceMutView dst, StreamHandle stream);
void copy_async(DeviceView src, HostMutView dst, StreamHandle stream);
void copy_async(DeviceView src, DeviceMutView dst, StreamHandle stream);

/// Synchronous conveniences.
DeviceImage upload(HostView src);
HostImage download(DeviceView src);

/// Blocks until all work on `stream` is done; a failure is thrown as CudaError naming `stage`.
void synchronize(StreamHandle stream, const char* stage = "synchronize");

}  // namespace kestrel
