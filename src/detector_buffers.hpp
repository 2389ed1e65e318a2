// Internal: owning device and pinned byte buffers for the detector (cudaMalloc / cudaMallocHost), and the
// layout of its result buffer (count header + keypoint slots, one contiguous block: one copy per frame).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>

#include "cuda_check.hpp"
#include "kestrel/keypoint.hpp"

namespace kestrel::detail {

struct CudaFree {
    void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
struct CudaFreeHost {
    void operator()(void* p) const noexcept { (void)cudaFreeHost(p); }
};
using DeviceBytes = std::unique_ptr<void, CudaFree>;
using PinnedBytes = std::unique_ptr<void, CudaFreeHost>;

inline DeviceBytes device_bytes(std::size_t n, const char* stage) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMalloc(&p, n > 0 ? n : 1), stage);
    return DeviceBytes(p);
}
inline PinnedBytes pinned_bytes(std::size_t n, const char* stage) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, n > 0 ? n : 1), stage);
    return PinnedBytes(p);
}

/// Result block: [int count | 12 bytes padding | Keypoint slots[capacity]].
constexpr std::size_t kResultHeaderBytes = 16;
static_assert(sizeof(Keypoint) == 16, "Keypoint slots are 16 bytes");
inline std::size_t result_bytes(int capacity) {
    return kResultHeaderBytes + sizeof(Keypoint) * static_cast<std::size_t>(capacity);
}
inline int* result_count(void* block) { return static_cast<int*>(block); }
inline Keypoint* result_keypoints(void* block) {
    return reinterpret_cast<Keypoint*>(static_cast<unsigned char*>(block) + kResultHeaderBytes);
}

}  // namespace kestrel::detail
