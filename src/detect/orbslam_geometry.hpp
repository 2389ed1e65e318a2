// Internal: the per-level policies (SelectionPolicy::OrbSlam, LevelHarris) for one image size, and their CPU
// reference, shared by both backends (src/detect/orbslam_select_cpu.cpp, src/detect/orbslam_select_cuda.cpp).
// Rules: include/kestrel/detail/orbslam_rules.hpp.
#pragma once
#include <cstdint>
#include <vector>

#include "detector_geometry.hpp"
#include "kestrel/detail/orbslam_rules.hpp"

namespace kestrel::detail {

inline bool per_level_policy(const DetectorConfig& cfg) {
    return cfg.selection == SelectionPolicy::OrbSlam || cfg.selection == SelectionPolicy::LevelHarris;
}

/// The checks of DetectorConfig under a per-level policy (orbslam.*, max_features > 0, fast.arc_max = 16,
/// fast.score = MaxThreshold); src/detect/orbslam_config.cpp.
void validate_orbslam(const DetectorConfig& cfg, const char* where);

/// The FAST configuration of the detector's score maps: cfg.fast, or under a per-level policy MT with cfg.fast's
/// arcs at min(threshold_initial, threshold_min) (OrbSlam) or threshold_initial (LevelHarris).
FastConfig score_config(const DetectorConfig& cfg);

/// Everything the per-level policies derive from (image size, config), computed once per size.
struct OrbSlamGeometry {
    int levels = 0;
    bool harris = false;             // LevelHarris (no quadtree, Harris response)
    OrbSlamCells cells[kMaxLevels]{};
    int budget[kMaxLevels]{};        // N_l
    int out_offset[kMaxLevels]{};    // sum of the budgets of the levels before
    int cell_offset[kMaxLevels + 1]{};  // index of level k's first cell over all levels; [levels] = total
    int roots[kMaxLevels]{};         // quadtree roots
    int cand_capacity[kMaxLevels]{}; // most candidates a level can have (one per 2x2 pixels of every cell)
    int node_capacity[kMaxLevels]{}; // most live quadtree nodes, max(N_l, roots) + 3 (LevelHarris: its 2 N_l pool + 1)
};

OrbSlamGeometry orbslam_geometry(const GridGeometry& g, const DetectorConfig& cfg);

/// The whole selection on the score maps (score_config(cfg)) and the pyramid they were scored on: the
/// definition the CUDA kernels match exactly. Masks already checked.
std::vector<Keypoint> orbslam_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                               const std::vector<HostImage>& pyramid, const DetectorConfig& cfg,
                                               const std::uint8_t* cell_skip, HostView pixel_mask);

}  // namespace kestrel::detail
