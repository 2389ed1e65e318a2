// Internal launch interface of kernels/detect/grid_nms.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/keypoint.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::kernels {

struct GridLevel {
    const float* scores;  // score map of level k
    std::size_t pitch;    // bytes
    int width, height;
    float scale;          // s_k = level_scale(pyramid, k)
};

/// Fused detection (kernels/detect/cell_detect.cu): where the blocks read level k's pixels, and where the
/// level's staged tile and score block lie in each block's dynamic shared memory (plan_cell_detect).
struct DetectSource {
    const std::uint8_t* image;  // the level's image; when derived, level 0's image
    std::size_t pitch;          // bytes
    bool derived;               // level 1 of factor 2 computed from level 0 while staging (detail::average4)
    bool aligned;               // image and pitch 4-byte aligned
    int tile_off, score_off;    // byte offsets in the block's dynamic shared memory (16-byte aligned)
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
    // Fused detection: when `fused`, level[k].scores is unused and the kernel of kernels/detect/cell_detect.cu
    // computes each cell's scores itself from src[k] (FAST parameters below, one launch per frame).
    bool fused;
    DetectSource src[kMaxLevels];
    int threshold, arc_min, score_type;  // score_type: ScoreType as int (not Harris)
    int arc_max;
    const std::uint32_t* lut;            // 2048 words, device memory
    int list_off;                        // corner list (uint32 entries) in dynamic shared memory
    int task_off;                        // list of tasks passing the compass test (uint32 entries)
    int smem_bytes;                      // dynamic shared memory per block
    // Corner-list selection (kernels/detect/corner_select.cu): when `listed`, the score kernel has appended
    // every positive score's keypoint_key to corners[0 .. *corner_count) and one launch of list_blocks
    // blocks selects from that list (NMS against the maps in level[], eligibility, best K per cell by
    // atomics into cell_keys, which are 0 before the launch: finish() leaves them so). Its last block
    // resets *corner_count to 0.
    bool listed;
    const unsigned long long* corners;
    unsigned* corner_count;
    int list_blocks;
    std::uint32_t cell_div_x, cell_div_y;  // kernels::div_magic(cell_width), (cell_height): cell_index.hpp
};

/// The kernel, grid and block of the single launch (also used to fill CUDA-graph kernel nodes).
struct GridNmsLaunch {
    const void* func;
    dim3 grid, block;
    std::size_t smem;  // dynamic shared memory bytes
};
GridNmsLaunch grid_nms_launch(const GridNmsParams& p);

/// The corner-list selection's launch (kernels/detect/corner_select.cu; p.listed, grid of p.list_blocks).
GridNmsLaunch corner_select_launch(const GridNmsParams& p);
/// Blocks of the corner-list selection resident at once on the current context's SMs (its list_blocks:
/// one wave). Host-only; call it once per size.
int corner_select_blocks(const GridNmsParams& p);

/// NMS + best K per cell over all levels + global cap + compaction + count: one launch (with p.fused,
/// the scores too: kernels/detect/cell_detect.cu).
void launch_grid_nms(const GridNmsParams& p, cudaStream_t stream);

}  // namespace kestrel::kernels
