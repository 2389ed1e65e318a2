// Internal launch interface of kernels/detect/cell_detect.cu (host-callable, no device code): the fused
// detection kernel, FAST scores + grid NMS + best K per cell + cap + compaction in one launch.
#pragma once
#include <cstddef>

#include "grid_nms.cuh"
#include "kestrel/fast_types.hpp"

namespace kestrel::kernels {

/// Largest dynamic shared memory the fused kernel is planned for: with its static shared memory (under
/// 2 KiB) within the 48 KiB a block gets without an opt-in attribute, on every architecture. Larger cells
/// (or radii) use the two-kernel path (score maps, then grid_nms.cu).
constexpr int kCellDetectMaxSmem = 44 * 1024;

/// Plans the fused kernel's shared memory for the geometry in p (levels with width, height, scale; cell
/// size, cols, rows, nms_radius): fills p.src[k].tile_off / score_off, p.list_off and p.smem_bytes.
/// Returns false (p unchanged otherwise) when the score type is Harris or the plan exceeds
/// kCellDetectMaxSmem. Host-only, allocation-free; call it once per image size.
bool plan_cell_detect(GridNmsParams& p, ScoreType type);

/// Can all of the fused kernel's blocks (one per cell) be resident at once on the current device? The
/// fused kernel trades the score maps' round trip through global memory and one launch for recomputed
/// halo scores and a lower occupancy: it wins while the frame is one wave of blocks (latency-bound),
/// and the two-kernel path wins on larger frames (throughput-bound). Host-only; call it once per size.
bool cell_detect_fits_one_wave(const GridNmsParams& p);

/// The fused kernel's launch for p (p.fused set, planned by plan_cell_detect).
GridNmsLaunch cell_detect_launch(const GridNmsParams& p);

}  // namespace kestrel::kernels
