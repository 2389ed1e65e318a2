// Internal: the grid geometry of one image size and the mask checks, shared by both backends.
#pragma once
#include <cstdint>

#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"

namespace kestrel {

constexpr int kMaxPerCell = 8;               ///< K in [1, 8]
constexpr int kMaxFeaturesCap = 1 << 24;     ///< largest max_features accepted

namespace detail {

/// Everything both backends derive from (image size, config), computed once per size.
struct GridGeometry {
    int width = 0, height = 0;  // level 0
    int cols = 0, rows = 0;     // cells
    int levels = 0;
    Size2 level_size[kMaxLevels]{};
    float scale[kMaxLevels]{};  // s_k = level_scale(pyramid, k)
    int capacity = 0;           // min(cols * rows * per_cell, max_features if > 0)
    int cells() const { return cols * rows; }
};

/// Validates cfg and the image size (border, levels) and computes the geometry. Allocates: call it
/// once per image size, not per frame.
GridGeometry grid_geometry(const char* where, int width, int height, const DetectorConfig& cfg);

/// Masks: cell_skip needs cell_grid == (cols, rows); a pixel mask must be a valid view of the image's
/// size. Allocation-free unless they throw.
void check_cell_mask(const char* where, const GridGeometry& g, const std::uint8_t* cell_skip, Size2 cell_grid);
[[noreturn]] void fail_pixel_mask_size(const char* where, const GridGeometry& g, int w, int h);

template <typename View>
void check_pixel_mask(const char* where, const GridGeometry& g, const View& mask) {
    if (mask.data == nullptr) return;
    validate_view(where, "masks.pixel_mask", mask);
    if (mask.width != g.width || mask.height != g.height) fail_pixel_mask_size(where, g, mask.width, mask.height);
}

}  // namespace detail
}  // namespace kestrel

namespace kestrel::detail {

/// CPU reference of the selection stage on score maps of geometry g (the definition; see
/// include/kestrel/detail/grid_rules.hpp). Masks already checked.
std::vector<Keypoint> grid_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                            const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                                            HostView pixel_mask);

/// Inserts key into the best-first list top[0..K-1] (0 = empty) when it beats the last entry.
void insert_best_first(std::uint64_t* top, int K, std::uint64_t key);

/// The selection's end, shared by the grid and PyCA references: `slots` holds cells * per_cell keys
/// (best first per cell, 0 = empty); keeps the max_features largest keys (0 = all) and returns them in
/// slot order as keypoints.
std::vector<Keypoint> finish_selection(const GridGeometry& g, const std::vector<std::uint64_t>& slots,
                                       int max_features);
/// Every positive score of the maps, as lists of y << 16 | x: level k's are lists[k * parts .. k * parts + parts - 1]
/// (the CPU score stage writes one list per row range).
struct CornerLists {
    std::vector<std::vector<std::uint32_t>> lists;
    int parts = 1;
};

/// Reused memory of the selection stage (the cells' lists, the keys of the global cap).
struct GridScratch {
    std::vector<std::uint64_t> slots, keys;
    std::vector<int> x0, y0, cx, cy;  // per level: level-0 pixel and cell of each column and row
};

/// grid_select_reference into `out`, with reused memory. corners (may be null: every pixel is scanned) lists
/// every positive score of the maps; the result is the same (a cell keeps the K largest keys it is offered,
/// in any order).
void grid_select_into(const GridGeometry& g, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                      const std::uint8_t* cell_skip, HostView pixel_mask, const CornerLists* corners,
                      GridScratch& scratch, std::vector<Keypoint>& out);

/// Checks score maps handed to detail::grid_select_*: count, sizes and values; returns their geometry.
GridGeometry check_score_maps(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg);

/// check_score_maps, then the masks: the argument checks of grid_select_cpu and grid_select_cuda.
GridGeometry check_grid_select_args(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                    const DetectionMasks& masks);

/// The argument checks of DeviceScoreMaps (both builds run them before anything else;
/// src/detect/fast_config.cpp).
void check_score_maps_args(const char* where, const std::vector<Size2>& sizes, const FastConfig& cfg);

}  // namespace kestrel::detail
