// The stereo tracker's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/stereo/stereo_matcher_cuda.cpp. StereoTracker checks detail::require_cuda() before it asks for it.
#include "src/core/backend.hpp"
#include "stereo_matcher.hpp"

namespace kestrel::detail {

std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig&, int) {
    built_without_cuda("StereoTracker");
}

}  // namespace kestrel::detail
