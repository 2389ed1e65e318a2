// Internal: PyCA's geometry of one image size and its CPU reference, shared by both backends
// (src/detect/pyca_cpu.cpp, src/detect/pyca_cuda.cpp). Rules: include/kestrel/detail/pyca_rules.hpp.
#pragma once
#include <cstdint>
#include <vector>

#include "detector_geometry.hpp"
#include "kestrel/detail/pyca_rules.hpp"

namespace kestrel::detail {

/// PyCA cells of every level for geometry g (cfg validated with selection == PyCA).
PycaGeometry pyca_geometry(const GridGeometry& g, const DetectorConfig& cfg);

/// The level coordinates of every level-0 column and row by the rule (pyca_level_coord; -1: none): the level-j
/// column of level-0 column X0 at [j * width + X0], the level-j row of level-0 row Y0 at
/// [levels * width + j * height + Y0]. The aggregation kernel reads them (PycaRuleCoords' values, computed once
/// per image size) instead of evaluating the rule at every lookup.
std::vector<std::int16_t> pyca_coord_tables(const PycaGeometry& pg);

/// Feature culling: survivor keys, pg.total slots (0 = none). Masks already checked.
std::vector<std::uint64_t> pyca_cull_reference(const GridGeometry& g, const PycaGeometry& pg,
                                               const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                               const std::uint8_t* cell_skip, HostView pixel_mask);

/// The whole selection: the definition the CUDA kernels match exactly. Masks already checked.
std::vector<Keypoint> pyca_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                            const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                                            HostView pixel_mask);

/// The argument checks of pyca_*_cpu / pyca_*_cuda: grid_select's, and selection == PyCA.
GridGeometry check_pyca_args(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                             const DetectionMasks& masks);

}  // namespace kestrel::detail
