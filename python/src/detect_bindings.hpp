// The detector's Python object and keypoint results, shared with the areas built on it (track, features).
#pragma once
#include <vector>

#include "common.hpp"
#include "kestrel/feature_detector.hpp"

namespace kestrel::py {

/// kestrel.FeatureDetector: the C++ detector, the packed copy of strided host frames and the last host result.
struct PyFeatureDetector {
    FeatureDetector det;
    std::vector<std::uint8_t> scratch;
    std::vector<Keypoint> host_result;
    mutable std::atomic<bool> busy{false};
};

/// A structured NumPy array (x, y, level, score) holding a copy of `n` keypoints.
nb::object keypoints_array(const Keypoint* kps, std::size_t n);
/// kestrel.KEYPOINT_DTYPE.
nb::handle keypoint_dtype();

}  // namespace kestrel::py
