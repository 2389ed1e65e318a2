// Internal: owning device and pinned byte buffers of the features area (cudaMalloc / cudaMallocHost).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "kernels/common/cuda_check.hpp"

namespace kestrel::detail {

struct FeaturesCudaFree {
    void operator()(void* p) const { (void)cudaFree(p); }
};
struct FeaturesCudaFreeHost {
    void operator()(void* p) const { (void)cudaFreeHost(p); }
};
using FeaturesDeviceBytes = std::unique_ptr<void, FeaturesCudaFree>;
using FeaturesPinnedBytes = std::unique_ptr<void, FeaturesCudaFreeHost>;

inline FeaturesDeviceBytes features_device_alloc(std::size_t n, const char* stage) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMalloc(&p, n > 0 ? n : 1), stage);
    return FeaturesDeviceBytes(p);
}
inline FeaturesPinnedBytes features_pinned_alloc(std::size_t n, const char* stage) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, n > 0 ? n : 1), stage);
    return FeaturesPinnedBytes(p);
}

}  // namespace kestrel::detail
