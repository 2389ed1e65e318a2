// Internal: typed owning buffers in device memory (cudaMalloc) and pinned host memory (cudaMallocHost), allocated
// once by an object's constructor. n + 1 bytes at least, so that a zero count still gets a valid pointer.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/common/cuda_check.hpp"

namespace kestrel::detail {

template <typename T, bool kPinned>
class CudaBuffer {
public:
    CudaBuffer(std::size_t n, const char* stage) {
        void* p = nullptr;
        if constexpr (kPinned)
            KESTREL_CUDA(cudaMallocHost(&p, n * sizeof(T) + 1), stage);
        else
            KESTREL_CUDA(cudaMalloc(&p, n * sizeof(T) + 1), stage);
        p_ = static_cast<T*>(p);
    }
    ~CudaBuffer() {
        if constexpr (kPinned)
            (void)cudaFreeHost(p_);
        else
            (void)cudaFree(p_);
    }
    CudaBuffer(const CudaBuffer&) = delete;
    CudaBuffer& operator=(const CudaBuffer&) = delete;
    T* get() const { return p_; }

private:
    T* p_ = nullptr;
};

template <typename T>
using PinnedBuffer = CudaBuffer<T, true>;
template <typename T>
using DeviceBuffer = CudaBuffer<T, false>;

}  // namespace kestrel::detail
