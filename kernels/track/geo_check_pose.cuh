// The tracker's geometric check on the device: one two-point RANSAC call (kernels/geometry/ransac.cuh's
// parameters and buffers, prep.mode 3) whose kernel stages the checked tracks of detail::PoseTrackStage itself
// and writes the verdicts (kernels/track/geo_check_pose.cu).
#pragma once
#include <cuda_runtime.h>

#include "kernels/geometry/ransac.cuh"
#include "kestrel/detail/geo_check_rules.hpp"

namespace kestrel::kernels {

/// The call of launch_pose2_call with the tracks of `g` as its points (prm.prep.mode 3; the count known on the
/// device only) and the verdicts to g.outlier, g.flags and *g.out.
void launch_geo_check_pose2(const PoseCallParams& prm, const PoseBuffers& b, const detail::PoseTrackStage& g,
                            int blocks, cudaStream_t stream);

}  // namespace kestrel::kernels
