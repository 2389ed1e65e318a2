// Internal launch interface of kernels/grid_nms.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/keypoint.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel::kernels {

struct GridLevel {
    const float* scores;  // score map of level k
    std::size_t pitch;    // bytes
    int width, height;
    float scale;          // s_k = level_scale(pyramid, k)
};

/// Everything one frame's selection needs, by value (no __constant__ or other global state).
struct GridNmsParams {
    int levels;
    GridLevel level[kMaxLevels];
    int image_width, image_height;  // level 0
    int cell_width, cell_height, cols, rows;
    int nms_radius, per_cell, max_features, border;
    const std::uint8_t* cell_skip;   // cols * rows bytes, non-zero = skip; or null
    const std::uint8_t* pixel_mask;  // level-0 sized, non-zero = detect; or null
    std::size_t mask_pitch;
    unsigned long long* cell_keys;   // scratch: cols * rows * per_cell slots
    unsigned int* ticket;            // 0 before every launch; the last block resets it
    int* count;                      // out: keypoints written
    Keypoint* keypoints;             // out: dense list in cell order, at most min(cells * K, max_features)
    int* host_count;                 // optional (or null): the same count and list written a second time,
    Keypoint* host_keypoints;        // through mapped pinned host memory (zero copy: no download after the kernel)
};

/// The kernel, grid and block of the single launch (also used to fill CUDA-graph kernel nodes).
struct GridNmsLaunch {
    const void* func;
    dim3 grid, block;
};
GridNmsLaunch grid_nms_launch(const GridNmsParams& p);

/// NMS + best K per cell over all levels + global cap + compaction + count: one launch.
void launch_grid_nms(const GridNmsParams& p, cudaStream_t stream);

}  // namespace kestrel::kernels
