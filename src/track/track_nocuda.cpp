// The tracker's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/track/{lk,feature_tracker}_cuda.cpp: DeviceLkTracker checks its arguments as the CUDA build does,
// then throws NoDeviceError saying how to rebuild; an empty tracker answers every call with StateError,
// as in the CUDA build. FeatureTracker checks detail::require_cuda() before it asks for a CUDA backend.
#include "kestrel/lk_tracker.hpp"
#include "src/core/backend.hpp"
#include "src/track/feature_tracker_backend.hpp"
#include "src/track/geometric_check.hpp"
#include "src/track/lk_internal.hpp"

namespace kestrel {

struct DeviceLkTracker::Impl {};

DeviceLkTracker::DeviceLkTracker() = default;
DeviceLkTracker::DeviceLkTracker(const LkConfig& cfg, int capacity) {
    (void)detail::make_lk_setup(cfg);
    detail::check_range("DeviceLkTracker", "capacity", capacity, 1, 65536);
    detail::built_without_cuda("DeviceLkTracker");
}
DeviceLkTracker::DeviceLkTracker(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker& DeviceLkTracker::operator=(DeviceLkTracker&&) noexcept = default;
DeviceLkTracker::~DeviceLkTracker() = default;

// Every object is empty here: no constructor completes.
DeviceLkTracker::Impl& DeviceLkTracker::impl(const char* where) const { detail::empty_object("DeviceLkTracker", where); }
const LkConfig& DeviceLkTracker::config() const { detail::empty_object("DeviceLkTracker", "config"); }
int DeviceLkTracker::capacity() const { detail::empty_object("DeviceLkTracker", "capacity"); }
void DeviceLkTracker::track_async(const DevicePyramid&, const DevicePyramid&, const Point2f*, const LkGuess*, LkResult*,
                                  int, StreamHandle) {
    detail::empty_object("DeviceLkTracker", "track_async");
}
void DeviceLkTracker::store_templates_async(const DevicePyramid&, const Point2f*, const std::int32_t*, int,
                                            StreamHandle) {
    detail::empty_object("DeviceLkTracker", "store_templates_async");
}
void DeviceLkTracker::track_stored_async(const DevicePyramid&, const std::int32_t*, const LkGuess*, LkResult*, int,
                                         StreamHandle) {
    detail::empty_object("DeviceLkTracker", "track_stored_async");
}

namespace detail {

std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int, int, const TrackerConfig&, int) {
    built_without_cuda("FeatureTracker");
}

std::unique_ptr<StreamFan> make_stream_fan(int) { built_without_cuda("MultiCameraTracker"); }

std::unique_ptr<GeoDeviceCheck> make_cuda_geo_check(int, const RelativePoseConfig&, const CameraSetup&, int) {
    built_without_cuda("FeatureTracker's geometric check");
}

}  // namespace detail
}  // namespace kestrel
