// Internal launch interface of kernels/pyramid/pyramid.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/pyramid_types.hpp"

namespace kestrel::kernels {

struct PyramidLevel {
    std::uint8_t* data;
    int width, height;
    std::size_t pitch;
};

/// All levels of one pyramid, passed by value to the kernels (no __constant__ state).
struct PyramidDesc {
    int levels;
    std::int32_t scale_q16;
    PyramidLevel level[kMaxLevels];
};

/// Computes levels 1..levels-1 from level 0. s = 2: one launch for all levels; otherwise one per level.
void launch_pyramid(const PyramidDesc& desc, cudaStream_t stream);
/// The same for two pyramids of equal level sizes and scale in the same launches (the caller checks that).
void launch_pyramid_pair(const PyramidDesc& a, const PyramidDesc& b, cudaStream_t stream);

}  // namespace kestrel::kernels
