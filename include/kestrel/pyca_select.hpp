// PyCA selection alone (pyramidal culling and aggregation, DetectorConfig::selection == PyCA): the CPU
// reference and the CUDA stage on given score maps, for tests, tools and per-stage benchmarks.
// FeatureDetector is the interface for applications. Rules: include/kestrel/detail/pyca_rules.hpp.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"

namespace kestrel::detail {

/// How the CUDA culling reduces a cell (both give the same survivors).
enum class PycaReduction : int {
    Mlpt = 0,  ///< the detector's kernel: vertical culling with several locations per thread, then
               ///< horizontal culling across the cell's columns (TEWA warp mapping)
    Tree = 1,  ///< one thread per location and a log2 (tree) reduction of the cell in shared memory
               ///< (the comparison row of the benchmarks)
};

/// Stage 1 alone (feature culling): the survivor key of every PyCA cell (0 = none), level by level,
/// cells row-major within a level. cfg.selection must be PyCA; maps as for grid_select_cpu.
std::vector<std::uint64_t> pyca_cull_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                         const DetectionMasks& masks = {});
/// The same through the CUDA culling kernel (uploads, runs, downloads; synchronous).
std::vector<std::uint64_t> pyca_cull_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                          const DetectionMasks& masks = {},
                                          PycaReduction reduction = PycaReduction::Mlpt);

/// The whole PyCA selection (culling, aggregation, q x q NMS, per-cell budget, cap) on score maps.
std::vector<Keypoint> pyca_select_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                      const DetectionMasks& masks = {});
/// The same through the CUDA kernels (two launches; uploads, runs, downloads; synchronous).
std::vector<Keypoint> pyca_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks = {});

}  // namespace kestrel::detail
