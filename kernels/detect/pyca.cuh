// Internal launch interface of kernels/detect/pyca.cu (host-callable, no device code): PyCA selection
// (feature culling, then aggregation + q x q NMS + the grid's per-cell budget, cap and compaction).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "grid_nms.cuh"
#include "kestrel/detail/pyca_rules.hpp"

namespace kestrel::kernels {

/// Everything one frame's PyCA selection needs, by value (no __constant__ or other global state).
struct PycaParams {
    GridNmsParams grid;              // score maps, level-0 grid, masks, grid slots, ticket, result (as grid NMS)
    detail::PycaGeometry geo;        // PyCA cells of every level
    unsigned long long* survivors;   // geo.total survivor slots (0 = none), written by the culling
    const std::int16_t* coords;      // pyca_coord_tables(geo) (src/detect/pyca_geometry.hpp): level coordinates
    int warp_begin[kMaxLevels + 1];  // culling (TEWA): first warp of level k; warp_begin[levels] = all warps
};

/// Fills p.warp_begin from p.geo (host, allocation-free).
void plan_pyca(PycaParams& p);

/// Warp efficiency of the culling kernel for cell side c: the fraction of lanes mapped to a column of a
/// cell (edge cells that end inside the level aside). 1 for every supported c.
double pyca_cull_warp_efficiency(int c);

/// Feature culling (MLPT vertical, then horizontal across the cell's columns; TEWA warps): one launch.
void launch_pyca_cull(const PycaParams& p, cudaStream_t stream);
/// The same survivors by a log2 (tree) reduction of every cell in shared memory: one launch per level
/// (benchmarks and tests only).
void launch_pyca_cull_tree(const PycaParams& p, cudaStream_t stream);
/// Aggregation + q x q NMS + best per_cell per grid cell + cap + compaction + count: one launch (one
/// block per level-0 grid cell, kernels/detect/grid_select_block.cuh's merge and finish); reads p.coords.
void launch_pyca_aggregate(const PycaParams& p, cudaStream_t stream);

}  // namespace kestrel::kernels
