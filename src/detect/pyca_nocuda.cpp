// PyCA's CUDA stage in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of src/detect/pyca_cuda.cpp:
// the arguments are checked as in the CUDA build, then NoDeviceError says how to rebuild.
#include "kestrel/pyca_select.hpp"
#include "pyca_geometry.hpp"
#include "src/core/backend.hpp"

namespace kestrel::detail {

std::vector<std::uint64_t> pyca_cull_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                          const DetectionMasks& masks, PycaReduction) {
    (void)check_pyca_args("pyca_cull_cuda", maps, cfg, masks);
    built_without_cuda("pyca_cull_cuda");
}

std::vector<Keypoint> pyca_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks) {
    (void)check_pyca_args("pyca_select_cuda", maps, cfg, masks);
    built_without_cuda("pyca_select_cuda");
}

}  // namespace kestrel::detail
