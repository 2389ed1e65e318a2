// The geometry area's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/geometry/relative_pose_cuda.cpp: RelativePoseEstimator checks detail::require_cuda() before it asks for
// the CUDA backend, so this stand-in only names the missing backend.
#include "src/core/backend.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel::detail {

std::unique_ptr<PoseBackend> make_cuda_pose_backend(int, const RelativePoseConfig&) {
    built_without_cuda("RelativePoseEstimator");
}

}  // namespace kestrel::detail
