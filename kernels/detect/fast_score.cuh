// Internal launch interface of kernels/detect/fast_score.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kestrel/fast_types.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::kernels {

struct ScoreLevel {
    const std::uint8_t* image;
    int width, height;
    std::size_t pitch;        // bytes
    bool aligned4;            // image and pitch 4-byte aligned: the tile is staged with 32-bit loads
    float* scores;
    std::size_t score_pitch;  // bytes
    int blocks_x;             // tiles across this level
    std::uint32_t blocks_x_magic;  // div_magic(blocks_x) (kernels/detect/cell_index.hpp): no division per block
    int block_begin;          // first flat block index of this level
    // Fused pyramid (SWAR kernel only): when parent is set, this level is not read from `image` but
    // derived from its parent level (factor 2: detail::average4 of the 2x2 parent pixels) while staging,
    // and the block writes its tile of the derived level into build_out (pitch `pitch`).
    const std::uint8_t* parent;
    std::size_t parent_pitch;
    bool parent_aligned8;     // parent and its pitch 8-byte aligned: two 64-bit loads per 4 derived pixels
    std::uint8_t* build_out;
};

/// Every level of one frame, by value (no __constant__ state): one launch scores all levels.
struct ScoreDesc {
    int levels;
    int threshold;
    int arc_min;               // lookups of masks with fewer ones are skipped (mask_is_arc)
    const std::uint32_t* lut;  // 2048 words, device memory
    int total_blocks;
    int tile_w, tile_h;        // level pixels scored by one block (set by plan_score_blocks)
    ScoreLevel level[kMaxLevels];
    // Corner list (SAD-B, SAD-A, MT; or null): every pixel with a positive score is also appended as its
    // detail::keypoint_key to corners[*corner_count ...] (one global atomic per warp and 32 corners; the
    // order is not deterministic, the set is). corners holds every pixel of every level; *corner_count
    // is 0 before the launch (kernels/detect/corner_select.cu resets it).
    unsigned long long* corners;
    unsigned* corner_count;
    bool generic_compass;  // with corners: one kernel for every arc_min instead of one per arc_min >> 2
    // SAD-B, SAD-A, MT: the bit-sliced segment test (fast_score_bits_kernel, kBitsTileW x kBitsTileH tiles; set
    // before plan_score_blocks); else the SIMD-lane one.
    bool bit_sliced;
    int arc_max;               // the bit-sliced segment test's bound and MT's (arc_min..16)
};

/// Harris: one pixel per thread, 32x8 tiles (the block shares its Sobel gradients).
constexpr int kScoreTileW = 32;
constexpr int kScoreTileH = 8;
/// SAD-B, SAD-A, MT: four centres per thread (16-bit SIMD lanes, kernels/detect/fast_swar.cuh), 128x8 tiles.
constexpr int kSwarTileW = 128;
constexpr int kSwarTileH = 8;

/// SAD-B, SAD-A, MT with the corner list, bit-sliced: 32 centres per thread (kernels/detect/fast_bits.cuh),
/// 128x32 tiles, 128 threads.
constexpr int kBitsTileW = 128;
constexpr int kBitsTileH = 32;

/// Fills block geometry (tile size, blocks_x, block_begin, total_blocks) for `type` from the level sizes.
void plan_score_blocks(ScoreDesc& desc, ScoreType type);

/// The SIMD-lane kernel's blocks (128x8 tiles) for these levels per SM of the current context.
double swar_score_blocks_per_sm(const ScoreDesc& desc);

void launch_fast_score(const ScoreDesc& desc, ScoreType type, cudaStream_t stream);

}  // namespace kestrel::kernels
