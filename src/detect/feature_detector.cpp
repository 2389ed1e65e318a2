// FeatureDetector (both backends) and detect_cpu, the CPU reference of the whole detector:
// pyramid -> FAST score maps -> grid selection (src/detect/grid_select_cpu.cpp) or PyCA selection
// (src/detect/pyca_cpu.cpp).
#include "kestrel/feature_detector.hpp"

#include "detector_cpu.hpp"
#include "detector_cuda.hpp"
#include "detector_geometry.hpp"
#include "pyca_geometry.hpp"
#include "src/core/backend.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/orb.hpp"
#include "src/features/orb_internal.hpp"

namespace kestrel {

std::vector<Keypoint> detect_cpu(HostView image, const DetectorConfig& cfg, const DetectionMasks& masks) {
    validate(cfg, "detect_cpu");
    detail::CpuDetector det(cfg, nullptr);  // one thread
    std::vector<Keypoint> out;
    det.detect("detect_cpu", image, masks, out);
    return out;
}

struct FeatureDetector::Impl {
    DetectorConfig cfg;
    Backend backend = Backend::Cuda;
    std::unique_ptr<detail::CudaDetector> cuda;  // Backend::Cuda
    std::unique_ptr<detail::ThreadPool> pool;    // Backend::Cpu: this detector's threads
    std::unique_ptr<detail::CpuDetector> cpu;    // Backend::Cpu
    std::vector<Keypoint> cpu_result;            // Backend::Cpu: the last detect()
    OrbFeatures cpu_orb;                         // Backend::Cpu with orb_descriptors: the last detect()
    detail::OrbCpu cpu_orb_scratch;              // Backend::Cpu with orb_descriptors: the smoothed levels
};

FeatureDetector::FeatureDetector(const DetectorConfig& cfg, Backend backend) {
    const char* where = "FeatureDetector";
    validate(cfg, where);
    if (backend != Backend::Cuda && backend != Backend::Cpu)
        detail::fail(where, "backend", "must be Backend::Cuda or Backend::Cpu");
    auto m = std::make_unique<Impl>();
    m->cfg = cfg;
    m->backend = backend;
    if (backend == Backend::Cuda) {
        detail::require_cuda(where);
        m->cuda = std::make_unique<detail::CudaDetector>(cfg);
    } else {
        m->pool = std::make_unique<detail::ThreadPool>(cfg.threads);
        m->cpu = std::make_unique<detail::CpuDetector>(cfg, m->pool.get());
    }
    impl_ = std::move(m);
}

FeatureDetector::FeatureDetector(FeatureDetector&&) noexcept = default;
FeatureDetector& FeatureDetector::operator=(FeatureDetector&&) noexcept = default;
FeatureDetector::~FeatureDetector() = default;

FeatureDetector::Impl& FeatureDetector::impl(const char* where) const {
    if (!impl_) detail::empty_object("FeatureDetector", where);
    return *impl_;
}

const DetectorConfig& FeatureDetector::config() const { return impl("config").cfg; }
Backend FeatureDetector::backend() const { return impl("backend").backend; }

std::vector<Keypoint> FeatureDetector::detect(HostView image, const DetectionMasks& masks) {
    Impl& m = impl("detect");
    if (m.cuda) return m.cuda->detect(image, masks);
    m.cpu->detect("detect_cpu", image, masks, m.cpu_result);
    if (m.cfg.orb_descriptors)  // on the detector's own pyramid (build_pyramid_cpu of the image)
        detail::orb_compute_into(m.cpu->pyramid(), m.cfg.pyramid, m.cpu_result, m.cpu_orb_scratch, m.cpu_orb);
    return m.cpu_result;
}

namespace {
[[noreturn]] void cuda_only(const char* what) {
    throw StateError(std::string("kestrel: FeatureDetector::") + what +
                     ": needs Backend::Cuda (this detector uses Backend::Cpu; call detect())");
}
}  // namespace

void FeatureDetector::detect_async(DeviceView image, StreamHandle stream, const DeviceDetectionMasks& masks) {
    Impl& m = impl("detect_async");
    if (!m.cuda) cuda_only("detect_async");
    m.cuda->enqueue(image, stream, masks);
}

void FeatureDetector::detect_async(HostView pinned_image, StreamHandle stream, const DeviceDetectionMasks& masks) {
    Impl& m = impl("detect_async");
    if (!m.cuda) cuda_only("detect_async");
    m.cuda->enqueue(pinned_image, stream, masks);
}

const Keypoint* FeatureDetector::device_keypoints() const {
    const Impl& m = impl("device_keypoints");
    return m.cuda ? m.cuda->device_keypoints() : nullptr;
}
const int* FeatureDetector::device_count() const {
    const Impl& m = impl("device_count");
    return m.cuda ? m.cuda->device_count() : nullptr;
}
const Keypoint* FeatureDetector::host_keypoints() const {
    const Impl& m = impl("host_keypoints");
    if (m.cuda) return m.cuda->host_keypoints();
    return m.cpu_result.empty() ? nullptr : m.cpu_result.data();
}
int FeatureDetector::host_count() const {
    const Impl& m = impl("host_count");
    return m.cuda ? m.cuda->host_count() : static_cast<int>(m.cpu_result.size());
}
int FeatureDetector::capacity() const {
    const Impl& m = impl("capacity");
    return m.cuda ? m.cuda->capacity() : m.cpu->capacity();
}

}  // namespace kestrel

namespace kestrel {
bool FeatureDetector::uses_cuda_graph() const {
    const Impl& m = impl("uses_cuda_graph");
    return m.cuda ? m.cuda->last_frame_used_graph() : false;
}
}  // namespace kestrel

namespace kestrel {
const float* FeatureDetector::host_angles() const {
    const Impl& m = impl("host_angles");
    if (m.cuda) return m.cuda->orb() ? m.cuda->orb()->host_angles() : nullptr;
    return m.cfg.orb_descriptors && !m.cpu_orb.angles.empty() ? m.cpu_orb.angles.data() : nullptr;
}
const OrbDescriptor* FeatureDetector::host_descriptors() const {
    const Impl& m = impl("host_descriptors");
    if (m.cuda) return m.cuda->orb() ? m.cuda->orb()->host_descriptors() : nullptr;
    return m.cfg.orb_descriptors && !m.cpu_orb.descriptors.empty() ? m.cpu_orb.descriptors.data() : nullptr;
}
const float* FeatureDetector::device_angles() const {
    const Impl& m = impl("device_angles");
    return m.cuda && m.cuda->orb() ? m.cuda->orb()->device_angles() : nullptr;
}
const OrbDescriptor* FeatureDetector::device_descriptors() const {
    const Impl& m = impl("device_descriptors");
    return m.cuda && m.cuda->orb() ? m.cuda->orb()->device_descriptors() : nullptr;
}
}  // namespace kestrel
