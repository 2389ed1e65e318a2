// Internal: PyCA's GPU stage for one image size (kernels/detect/pyca.cu): owns the survivor slots and the
// kernels' geometry; the grid slots, ticket and result block are a DeviceGridSelect's (the same budget,
// cap and result layout as the grid policy). No allocation or synchronization after construction.
#pragma once
#include <cuda_runtime.h>

#include "detector_buffers_cuda.hpp"
#include "kernels/detect/pyca.cuh"
#include "kestrel/pyca_select.hpp"
#include "pyca_geometry.hpp"

namespace kestrel::detail {

class PycaStage {
public:
    PycaStage() = default;
    PycaStage(const GridGeometry& g, const DetectorConfig& cfg);  ///< allocates the slots, uploads the coordinate tables

    /// Enqueues culling + aggregation on `grid` (the kernel arguments of the grid policy on the same score
    /// maps, masks and result block): two launches.
    void run(const kernels::GridNmsParams& grid, cudaStream_t stream) const;
    /// Culling alone (tests, benchmarks): the survivors land in survivors().
    void cull(const kernels::GridNmsParams& grid, cudaStream_t stream, PycaReduction reduction) const;

    const unsigned long long* survivors() const { return params_.survivors; }
    int survivor_count() const { return params_.geo.total; }

private:
    kernels::PycaParams params_{};
    DeviceBytes survivors_;
    DeviceBytes coords_;  // pyca_coord_tables of the geometry, uploaded once
};

}  // namespace kestrel::detail
