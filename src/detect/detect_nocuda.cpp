// The detector's CUDA side in a build without CUDA (KESTREL_WITH_CUDA=OFF), in place of
// src/detect/{fast,grid_select,grid_select_sync,detector,frame_graph}_cuda.cpp: a GPU stage checks its
// arguments as the CUDA build does, then throws NoDeviceError saying how to rebuild; an empty object
// answers every call with StateError, as in the CUDA build. FeatureDetector checks
// detail::require_cuda() before it makes a CudaDetector, so the CPU backend never reaches these.
#include "kestrel/fast.hpp"
#include "kestrel/grid_select.hpp"
#include "src/core/backend.hpp"
#include "src/detect/detector_cuda.hpp"
#include "src/detect/detector_geometry.hpp"

namespace kestrel {

struct DeviceScoreMaps::Impl {};

DeviceScoreMaps::DeviceScoreMaps() = default;
DeviceScoreMaps::DeviceScoreMaps(const std::vector<Size2>& sizes, const FastConfig& cfg) {
    detail::check_score_maps_args("DeviceScoreMaps", sizes, cfg);
    detail::built_without_cuda("DeviceScoreMaps");
}
DeviceScoreMaps::DeviceScoreMaps(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps& DeviceScoreMaps::operator=(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps::~DeviceScoreMaps() = default;

// Every object is empty here: no constructor completes.
DeviceScoreMaps::Impl& DeviceScoreMaps::impl(const char* where) const { detail::empty_object("DeviceScoreMaps", where); }
const FastConfig& DeviceScoreMaps::config() const { detail::empty_object("DeviceScoreMaps", "config"); }
int DeviceScoreMaps::levels() const { detail::empty_object("DeviceScoreMaps", "levels"); }
const float* DeviceScoreMaps::level_data(int) const { detail::empty_object("DeviceScoreMaps", "level_data"); }
std::size_t DeviceScoreMaps::level_pitch(int) const { detail::empty_object("DeviceScoreMaps", "level_pitch"); }
Size2 DeviceScoreMaps::level_size(int) const { detail::empty_object("DeviceScoreMaps", "level_size"); }
const std::uint32_t* DeviceScoreMaps::lut() const { detail::empty_object("DeviceScoreMaps", "lut"); }
void DeviceScoreMaps::compute(const DevicePyramid&, StreamHandle) { detail::empty_object("DeviceScoreMaps", "compute"); }
void DeviceScoreMaps::compute_fused(DeviceView, DevicePyramid&, StreamHandle) {
    detail::empty_object("DeviceScoreMaps", "compute_fused");
}
bool DeviceScoreMaps::fuses(const DevicePyramid&) const { detail::empty_object("DeviceScoreMaps", "fuses"); }
ScoreMap DeviceScoreMaps::download(int) const { detail::empty_object("DeviceScoreMaps", "download"); }

namespace detail {

std::vector<Keypoint> grid_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks) {
    (void)check_grid_select_args("grid_select_cuda", maps, cfg, masks);
    built_without_cuda("grid_select_cuda");
}

struct DeviceGridSelect::Impl {};

DeviceGridSelect::DeviceGridSelect() = default;
DeviceGridSelect::DeviceGridSelect(int width, int height, const DetectorConfig& cfg) {
    (void)grid_geometry("DeviceGridSelect", width, height, cfg);
    built_without_cuda("DeviceGridSelect");
}
DeviceGridSelect::DeviceGridSelect(DeviceGridSelect&&) noexcept = default;
DeviceGridSelect& DeviceGridSelect::operator=(DeviceGridSelect&&) noexcept = default;
DeviceGridSelect::~DeviceGridSelect() = default;

DeviceGridSelect::Impl& DeviceGridSelect::impl(const char* where) const { empty_object("DeviceGridSelect", where); }
void DeviceGridSelect::run(const DeviceScoreMaps&, StreamHandle, const DeviceDetectionMasks&) {
    empty_object("DeviceGridSelect", "run");
}
int DeviceGridSelect::capacity() const { empty_object("DeviceGridSelect", "capacity"); }
const Keypoint* DeviceGridSelect::device_keypoints() const { empty_object("DeviceGridSelect", "device_keypoints"); }
const int* DeviceGridSelect::device_count() const { empty_object("DeviceGridSelect", "device_count"); }
const void* DeviceGridSelect::device_result() const { empty_object("DeviceGridSelect", "device_result"); }
std::size_t DeviceGridSelect::result_bytes() const { empty_object("DeviceGridSelect", "result_bytes"); }

struct CudaDetector::Frame {};  // never created here; complete only so that the destructor compiles
struct CudaDetector::Sync {};

CudaDetector::CudaDetector(const DetectorConfig&) { built_without_cuda("FeatureDetector"); }
CudaDetector::~CudaDetector() = default;
void CudaDetector::enqueue(DeviceView, StreamHandle, const DeviceDetectionMasks&) { built_without_cuda("detect_async"); }
void CudaDetector::enqueue(HostView, StreamHandle, const DeviceDetectionMasks&) { built_without_cuda("detect_async"); }
std::vector<Keypoint> CudaDetector::detect(HostView, const DetectionMasks&) { built_without_cuda("detect"); }
const Keypoint* CudaDetector::device_keypoints() const { built_without_cuda("device_keypoints"); }
const int* CudaDetector::device_count() const { built_without_cuda("device_count"); }
const Keypoint* CudaDetector::host_keypoints() const { built_without_cuda("host_keypoints"); }
int CudaDetector::host_count() const { built_without_cuda("host_count"); }
int CudaDetector::capacity() const { built_without_cuda("capacity"); }
const DeviceOrb* CudaDetector::orb() const { built_without_cuda("orb"); }

}  // namespace detail
}  // namespace kestrel
