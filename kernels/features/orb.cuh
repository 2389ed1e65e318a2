// Internal launch interface of kernels/features/orb.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/keypoint.hpp"
#include "kestrel/orb_types.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::kernels {

struct OrbLevel {
    const std::uint8_t* image;  ///< the pyramid level (orientation)
    std::size_t pitch;
    std::uint8_t* smooth;       ///< its smoothed copy (descriptors)
    std::size_t smooth_pitch;
    int width, height;
    float scale;                ///< level_scale of the level: level-0 -> level coordinates
};

/// Every level, passed by value (no __constant__ state).
struct OrbDesc {
    const signed char* pattern;  ///< device copy of detail::orb::orb_pattern(0 .. 4 * kOrbDescriptorBits - 1)
    int levels;
    int max_width, max_height;  ///< level 0's size: the smoothing grid
    OrbLevel level[kMaxLevels];
};

/// Smooths every level (one launch).
void launch_orb_smooth(const OrbDesc& d, cudaStream_t stream);

/// Angle and descriptor of keypoints 0 .. n-1, n = min(*device_count, capacity) when device_count is not
/// null, else host_count; one warp per keypoint, every level in one launch.
void launch_orb_describe(const OrbDesc& d, const Keypoint* keypoints, const int* device_count, int host_count,
                         int capacity, float* angles, OrbDescriptor* descriptors, cudaStream_t stream);

}  // namespace kestrel::kernels
