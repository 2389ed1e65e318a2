// The features area's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/features/{orb,matcher}_cuda.cpp: the constructors check their arguments as the CUDA build does,
// then throw NoDeviceError saying how to rebuild; an empty object answers with StateError.
#include "kestrel/orb.hpp"
#include "src/core/backend.hpp"
#include "src/features/matcher_internal.hpp"
#include "src/features/orb_internal.hpp"

namespace kestrel {

struct DeviceOrb::Impl {};

DeviceOrb::DeviceOrb() = default;
DeviceOrb::DeviceOrb(int width, int height, const PyramidConfig& cfg, int capacity) {
    detail::check_orb_args("DeviceOrb", width, height, cfg, capacity);
    detail::built_without_cuda("DeviceOrb");
}
DeviceOrb::DeviceOrb(DeviceOrb&&) noexcept = default;
DeviceOrb& DeviceOrb::operator=(DeviceOrb&&) noexcept = default;
DeviceOrb::~DeviceOrb() = default;

DeviceOrb::Impl& DeviceOrb::impl(const char* where) const { detail::empty_object("DeviceOrb", where); }
int DeviceOrb::capacity() const { detail::empty_object("DeviceOrb", "capacity"); }
const PyramidConfig& DeviceOrb::config() const { detail::empty_object("DeviceOrb", "config"); }
void DeviceOrb::compute_async(const DevicePyramid&, const Keypoint*, const int*, StreamHandle) {
    detail::empty_object("DeviceOrb", "compute_async");
}
void DeviceOrb::compute_async(const DevicePyramid&, const Keypoint*, int, StreamHandle) {
    detail::empty_object("DeviceOrb", "compute_async");
}
const float* DeviceOrb::device_angles() const { detail::empty_object("DeviceOrb", "device_angles"); }
const OrbDescriptor* DeviceOrb::device_descriptors() const { detail::empty_object("DeviceOrb", "device_descriptors"); }
const float* DeviceOrb::host_angles() const { detail::empty_object("DeviceOrb", "host_angles"); }
const OrbDescriptor* DeviceOrb::host_descriptors() const { detail::empty_object("DeviceOrb", "host_descriptors"); }
DeviceView DeviceOrb::smoothed_level(int) const { detail::empty_object("DeviceOrb", "smoothed_level"); }

namespace detail {

struct CudaMatcher::Impl {};
CudaMatcher::CudaMatcher(const MatcherConfig&, int) { built_without_cuda("HammingMatcher"); }
CudaMatcher::~CudaMatcher() = default;
void CudaMatcher::enqueue(const OrbDescriptor*, int, const OrbDescriptor*, int, const Point2f*, const Point2f*,
                          StreamHandle) {
    built_without_cuda("HammingMatcher::match_async");
}
void CudaMatcher::match_host(const OrbDescriptor*, int, const OrbDescriptor*, int, const Point2f*, const Point2f*,
                             Match*) {
    built_without_cuda("HammingMatcher::match");
}
const Match* CudaMatcher::device_matches() const { built_without_cuda("HammingMatcher::device_matches"); }
const Match* CudaMatcher::host_matches() const { built_without_cuda("HammingMatcher::host_matches"); }

}  // namespace detail
}  // namespace kestrel
