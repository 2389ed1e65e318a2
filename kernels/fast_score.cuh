// Internal launch interface of kernels/fast_score.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/fast.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel::kernels {

struct ScoreLevel {
    const std::uint8_t* image;
    int width, height;
    std::size_t pitch;        // bytes
    bool aligned4;            // image and pitch 4-byte aligned: the tile is staged with 32-bit loads
    float* scores;
    std::size_t score_pitch;  // bytes
    int blocks_x;             // tiles across this level
    int block_begin;          // first flat block index of this level
};

/// Every level of one frame, by value (no __constant__ state): one launch scores all levels.
struct ScoreDesc {
    int levels;
    int threshold;
    int arc_min;               // lookups of masks with fewer ones are skipped (mask_is_arc)
    bool arc_max_is_16;        // MT may bisect (fast_rules.hpp)
    const std::uint32_t* lut;  // 2048 words, device memory
    int total_blocks;
    ScoreLevel level[kMaxLevels];
};

constexpr int kScoreTileW = 32;
constexpr int kScoreTileH = 8;  // one pixel per thread: the stage is latency-bound, so more warps beat reuse

/// Fills block geometry (blocks_x, block_begin, total_blocks) from the level sizes.
void plan_score_blocks(ScoreDesc& desc);

void launch_fast_score(const ScoreDesc& desc, ScoreType type, cudaStream_t stream);

}  // namespace kestrel::kernels
