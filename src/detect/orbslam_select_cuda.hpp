// Internal: the per-level policies' GPU stage for one image size (kernels/detect/orbslam_select.cu): owns the
// candidate lists, quadtree nodes and level keys; the ticket and result block are a DeviceGridSelect's (the
// result layout of every policy). No allocation or synchronization after construction.
#pragma once
#include <cuda_runtime.h>

#include <vector>

#include "detector_buffers_cuda.hpp"
#include "kernels/detect/orbslam_select.cuh"
#include "kestrel/fast.hpp"
#include "kestrel/pyramid.hpp"
#include "orbslam_geometry.hpp"

namespace kestrel::detail {

class OrbSlamStage {
public:
    OrbSlamStage() = default;
    OrbSlamStage(const GridGeometry& g, const DetectorConfig& cfg);  ///< allocates everything once

    /// Enqueues the selection on `scores` (score_config(cfg)) of `pyramid`, whose level 0 is `level0`, with
    /// the masks, ticket and result block of `grid`: two launches.
    void run(const kernels::GridNmsParams& grid, const DeviceScoreMaps& scores, const DevicePyramid& pyramid,
             DeviceView level0, cudaStream_t stream) const;

private:
    kernels::OrbSlamParams params_{};
    std::vector<DeviceBytes> buffers_;
};

}  // namespace kestrel::detail
