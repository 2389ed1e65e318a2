// Internal: owning device and pinned byte buffers for the detector (cudaMalloc / cudaMallocHost), and the
// layout of its result buffer (count header + keypoint slots, one contiguous block: one copy per frame).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kestrel/fast.hpp"
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
/// The FAST lookup table of (arc_min, arc_max) (corner_lut: 2048 words) uploaded into new device memory.
inline DeviceBytes device_corner_lut(int arc_min, int arc_max, const char* stage) {
    const std::vector<std::uint32_t> lut = corner_lut(arc_min, arc_max);
    DeviceBytes d = device_bytes(lut.size() * sizeof(std::uint32_t), stage);
    KESTREL_CUDA(cudaMemcpy(d.get(), lut.data(), lut.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice), stage);
    return d;
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
