// Internal launch interface of kernels/detect/orbslam_select.cu (host-callable, no device code): the per-level
// policies SelectionPolicy::OrbSlam and LevelHarris on the detector's score maps. CPU reference they must match
// bit for bit: src/detect/orbslam_select_cpu.cpp (rules: include/kestrel/detail/orbslam_rules.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "grid_nms.cuh"
#include "kestrel/detail/orbslam_rules.hpp"

namespace kestrel::kernels {

/// One level's inputs and scratch (device memory owned by the detector's stage).
struct OrbSlamLevel {
    const float* scores;           // score map (MT at min(threshold_initial, threshold_min))
    std::size_t pitch;             // bytes
    const std::uint8_t* image;     // level image (LevelHarris' responses)
    std::size_t image_pitch;       // bytes
    int width, height;
    float scale;                   // s_k
    detail::OrbSlamCells cells;
    int cell_offset;               // first cell of this level over all levels
    int budget, out_offset, roots;
    int node_capacity;
    unsigned long long* cand;      // candidate keys (cand_capacity), appended by the cell kernel
    int* cand_count;               // 0 before the cell kernel; the distribution kernel resets it
    int* node_of;                  // per candidate: its quadtree node
    unsigned char* quad;           // per candidate: its quadrant in the current round
    int4* rect;                    // per node: x0, y0, x1, y1
    int* count;                    // per node: candidates (also the roots' counters)
    int* child;                    // per node, 4 entries: child counts, then child nodes
    int* order;                    // the split order (E), also root -> node
    int* stamp;                    // per node: the round it was split in (-1: never)
    unsigned long long* best;      // per node: best key; LevelHarris: the Harris-keyed pool
};

/// Everything one frame's selection needs, by value (no __constant__ or other global state).
struct OrbSlamParams {
    GridNmsParams grid;            // level-0 geometry, masks, border, ticket and the result block (as grid NMS)
    int levels;
    OrbSlamLevel lv[kMaxLevels];
    int total_cells;
    int threshold_initial, threshold_min;
    bool harris;                   // LevelHarris
    unsigned long long* level_keys;  // sum of the budgets: level k's keys best first from out_offset
    int* level_count;              // per level
};

/// The candidates of every cell of every level (one warp per cell), then the distribution of every level (one
/// block per level; the last block compacts the levels into the result block): two launches.
void launch_orbslam_select(const OrbSlamParams& p, cudaStream_t stream);

}  // namespace kestrel::kernels
