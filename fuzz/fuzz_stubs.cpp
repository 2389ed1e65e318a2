// The fuzzers link only the CPU sources (fuzz/CMakeLists.txt). The CUDA-side symbols those sources
// still reference are answered here, for a process without a GPU:
//   - cuda_available() (src/device_image.cpp): false, so default_backend() is Backend::Cpu and no
//     CUDA object is ever constructed;
//   - detail::CudaDetector (src/cuda_detector.cpp), referenced by src/feature_detector.cpp, which also
//     holds detect_cpu(): never constructed (FeatureDetector throws NoDeviceError first); every
//     member aborts, so reaching one is reported as a crash;
//   - detail::make_cuda_tracker_backend (src/feature_tracker_cuda.cpp), referenced by
//     src/feature_tracker.cpp: never called (FeatureTracker throws NoDeviceError first); aborts.
// Keep these stubs in step with src/cuda_detector.hpp and src/feature_tracker_backend.hpp (a link
// error says when).
#include <cstdio>
#include <cstdlib>

#include "cuda_detector.hpp"
#include "feature_tracker_backend.hpp"
#include "kestrel/device_image.hpp"

namespace kestrel {

bool cuda_available() noexcept { return false; }

namespace detail {
namespace {
[[noreturn]] void unreachable(const char* what) {
    std::fprintf(stderr, "fuzz stub: CUDA backend reached (%s) in a no-GPU build\n", what);
    std::abort();
}
}  // namespace

struct CudaDetector::Frame {};  // never created here; complete only so that the destructor compiles
struct CudaDetector::Sync {};

CudaDetector::CudaDetector(const DetectorConfig&) { unreachable("CudaDetector"); }
CudaDetector::~CudaDetector() = default;
void CudaDetector::enqueue(DeviceView, StreamHandle, const DeviceDetectionMasks&) { unreachable("enqueue"); }
void CudaDetector::enqueue(HostView, StreamHandle, const DeviceDetectionMasks&) { unreachable("enqueue"); }
std::vector<Keypoint> CudaDetector::detect(HostView, const DetectionMasks&) { unreachable("detect"); }
const Keypoint* CudaDetector::device_keypoints() const { unreachable("device_keypoints"); }
const int* CudaDetector::device_count() const { unreachable("device_count"); }
const Keypoint* CudaDetector::host_keypoints() const { unreachable("host_keypoints"); }
int CudaDetector::host_count() const { unreachable("host_count"); }
int CudaDetector::capacity() const { unreachable("capacity"); }

std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int, int, const TrackerConfig&) {
    unreachable("make_cuda_tracker_backend");
}

}  // namespace detail
}  // namespace kestrel
