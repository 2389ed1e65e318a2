// The tracker's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/track/{lk,feature_tracker}_cuda.cpp: constructing a DeviceLkTracker or a CUDA FeatureTracker
// backend throws NoDeviceError saying how to rebuild, and so does every call on an empty tracker.
#include "kestrel/lk_tracker.hpp"
#include "src/core/cuda_required.hpp"
#include "src/track/feature_tracker_backend.hpp"

namespace kestrel {

struct DeviceLkTracker::Impl {};

DeviceLkTracker::DeviceLkTracker() = default;
DeviceLkTracker::DeviceLkTracker(const LkConfig&, int) { detail::built_without_cuda("DeviceLkTracker"); }
DeviceLkTracker::DeviceLkTracker(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker& DeviceLkTracker::operator=(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker::~DeviceLkTracker() = default;

DeviceLkTracker::Impl& DeviceLkTracker::impl(const char* where) const { detail::built_without_cuda(where); }
const LkConfig& DeviceLkTracker::config() const { detail::built_without_cuda("DeviceLkTracker::config"); }
int DeviceLkTracker::capacity() const { detail::built_without_cuda("DeviceLkTracker::capacity"); }
void DeviceLkTracker::track_async(const DevicePyramid&, const DevicePyramid&, const Point2f*, const LkGuess*, LkResult*,
                                  int, StreamHandle) {
    detail::built_without_cuda("DeviceLkTracker::track_async");
}
void DeviceLkTracker::store_templates_async(const DevicePyramid&, const Point2f*, const std::int32_t*, int,
                                            StreamHandle) {
    detail::built_without_cuda("DeviceLkTracker::store_templates_async");
}
void DeviceLkTracker::track_stored_async(const DevicePyramid&, const std::int32_t*, const LkGuess*, LkResult*, int,
                                         StreamHandle) {
    detail::built_without_cuda("DeviceLkTracker::track_stored_async");
}

namespace detail {

std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int, int, const TrackerConfig&) {
    built_without_cuda("FeatureTracker");
}

}  // namespace detail
}  // namespace kestrel
