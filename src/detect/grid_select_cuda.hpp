// Internal: kernel arguments of a DeviceGridSelect, for the detector's CUDA-graph path (which launches
// and patches the grid-NMS kernel node itself) and for grid_select_cuda (host score maps).
#pragma once
#include "kernels/detect/grid_nms.cuh"
#include "kestrel/grid_select.hpp"

namespace kestrel::detail {

struct GridSelectAccess {
    /// Full kernel arguments for one run on `scores` with `masks` (checked; allocation-free).
    static kernels::GridNmsParams params(const DeviceGridSelect& s, const DeviceScoreMaps& scores,
                                         const DeviceDetectionMasks& masks);
    /// The same on explicit level maps (levels[k] must match the geometry).
    static kernels::GridNmsParams params(const DeviceGridSelect& s, const kernels::GridLevel* levels,
                                         const DeviceDetectionMasks& masks);
};

}  // namespace kestrel::detail
