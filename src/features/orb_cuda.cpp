// Host side of the GPU ORB stage: the smoothed levels, the result buffers (device and pinned), the
// launches (kernels/features/orb.cu) and the copies to the host, stream-ordered and allocation-free.
#include <cuda_runtime.h>

#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kernels/features/orb.cuh"
#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/orb.hpp"
#include "src/core/backend.hpp"
#include "src/features/buffers_cuda.hpp"
#include "src/features/orb_internal.hpp"

namespace kestrel {

struct DeviceOrb::Impl {
    PyramidConfig cfg;
    int width = 0, height = 0, capacity = 0;
    std::vector<Size2> sizes;
    std::vector<DeviceImage> smooth;
    detail::FeaturesDeviceBytes angles, descriptors;
    detail::FeaturesDeviceBytes pattern;  // device copy of the learned pattern (detail::orb::orb_pattern)
    detail::FeaturesPinnedBytes host_angles, host_descriptors;
    kernels::OrbDesc desc{};

    void enqueue(const DevicePyramid& pyramid, const Keypoint* kps, const int* device_count, int host_count,
                 StreamHandle stream, const char* where);
};

DeviceOrb::DeviceOrb() = default;
DeviceOrb::DeviceOrb(DeviceOrb&&) noexcept = default;
DeviceOrb& DeviceOrb::operator=(DeviceOrb&&) noexcept = default;
DeviceOrb::~DeviceOrb() = default;

DeviceOrb::DeviceOrb(int width, int height, const PyramidConfig& cfg, int capacity) {
    const char* where = "DeviceOrb";
    detail::check_orb_args(where, width, height, cfg, capacity);
    detail::require_cuda(where);
    auto m = std::make_unique<Impl>();
    m->cfg = cfg;
    m->width = width;
    m->height = height;
    m->capacity = capacity;
    m->sizes = pyramid_sizes(width, height, cfg);
    const char* alloc = "ORB allocation";
    const auto n = static_cast<std::size_t>(capacity);
    m->angles = detail::features_device_alloc(n * sizeof(float), alloc);
    m->descriptors = detail::features_device_alloc(n * sizeof(OrbDescriptor), alloc);
    m->host_angles = detail::features_pinned_alloc(n * sizeof(float), alloc);
    m->host_descriptors = detail::features_pinned_alloc(n * sizeof(OrbDescriptor), alloc);
    // Slots beyond a frame's count are copied too (the count may live on the device): defined contents.
    KESTREL_CUDA(cudaMemset(m->angles.get(), 0, n * sizeof(float)), alloc);
    KESTREL_CUDA(cudaMemset(m->descriptors.get(), 0, n * sizeof(OrbDescriptor)), alloc);
    {
        signed char table[4 * kOrbDescriptorBits];
        for (int i = 0; i < 4 * kOrbDescriptorBits; ++i) table[i] = static_cast<signed char>(detail::orb::orb_pattern(i));
        m->pattern = detail::features_device_alloc(sizeof table, alloc);
        KESTREL_CUDA(cudaMemcpy(m->pattern.get(), table, sizeof table, cudaMemcpyHostToDevice), alloc);
    }
    m->desc.pattern = static_cast<const signed char*>(m->pattern.get());
    m->desc.levels = cfg.levels;
    m->desc.max_width = width;
    m->desc.max_height = height;
    m->smooth.reserve(static_cast<std::size_t>(cfg.levels));
    for (int k = 0; k < cfg.levels; ++k) {
        const Size2 s = m->sizes[static_cast<std::size_t>(k)];
        m->smooth.emplace_back(s.width, s.height);
        kernels::OrbLevel& l = m->desc.level[k];
        l.width = s.width;
        l.height = s.height;
        l.scale = level_scale(cfg, k);
        l.smooth = m->smooth.back().mut_view().data;
        l.smooth_pitch = m->smooth.back().mut_view().pitch;
    }
    impl_ = std::move(m);
}

DeviceOrb::Impl& DeviceOrb::impl(const char* where) const {
    if (!impl_) detail::empty_object("DeviceOrb", where);
    return *impl_;
}

int DeviceOrb::capacity() const { return impl("capacity").capacity; }
const PyramidConfig& DeviceOrb::config() const { return impl("config").cfg; }

void DeviceOrb::Impl::enqueue(const DevicePyramid& pyramid, const Keypoint* kps, const int* device_count,
                              int host_count, StreamHandle stream, const char* where) {
    Impl& m = *this;
    if (pyramid.levels() != m.cfg.levels || pyramid.config().scale != m.cfg.scale || pyramid.level(0).width != m.width ||
        pyramid.level(0).height != m.height)
        detail::fail(where, "pyramid",
                     "geometry differs from this DeviceOrb's (" + detail::to_text(m.width) + "x" +
                         detail::to_text(m.height) + ", " + detail::to_text(m.cfg.levels) + " levels of " +
                         detail::to_text(m.cfg.scale) + ")");
    if (kps == nullptr && (device_count != nullptr || host_count > 0)) detail::fail(where, "keypoints", "must not be null");
    for (int k = 0; k < m.cfg.levels; ++k) {
        const DeviceView v = pyramid.level(k);
        m.desc.level[k].image = v.data;
        m.desc.level[k].pitch = v.pitch;
    }
    const auto s = static_cast<cudaStream_t>(stream);
    kernels::launch_orb_smooth(m.desc, s);
    kernels::launch_orb_describe(m.desc, kps, device_count, host_count, m.capacity,
                                 static_cast<float*>(m.angles.get()), static_cast<OrbDescriptor*>(m.descriptors.get()), s);
    const std::size_t n = device_count ? static_cast<std::size_t>(m.capacity) : static_cast<std::size_t>(host_count);
    if (n > 0) {
        KESTREL_CUDA(cudaMemcpyAsync(m.host_angles.get(), m.angles.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s),
                     "ORB download");
        KESTREL_CUDA(cudaMemcpyAsync(m.host_descriptors.get(), m.descriptors.get(), n * sizeof(OrbDescriptor),
                                     cudaMemcpyDeviceToHost, s),
                     "ORB download");
    }
}

void DeviceOrb::compute_async(const DevicePyramid& pyramid, const Keypoint* kps, const int* device_count,
                              StreamHandle stream) {
    Impl& m = impl("compute_async");
    if (device_count == nullptr) detail::fail("DeviceOrb::compute_async", "device_count", "must not be null");
    m.enqueue(pyramid, kps, device_count, 0, stream, "DeviceOrb::compute_async");
}

void DeviceOrb::compute_async(const DevicePyramid& pyramid, const Keypoint* kps, int count, StreamHandle stream) {
    Impl& m = impl("compute_async");
    detail::check_range("DeviceOrb::compute_async", "count", count, 0, m.capacity);
    m.enqueue(pyramid, kps, nullptr, count, stream, "DeviceOrb::compute_async");
}

const float* DeviceOrb::device_angles() const { return static_cast<const float*>(impl("device_angles").angles.get()); }
const OrbDescriptor* DeviceOrb::device_descriptors() const {
    return static_cast<const OrbDescriptor*>(impl("device_descriptors").descriptors.get());
}
const float* DeviceOrb::host_angles() const { return static_cast<const float*>(impl("host_angles").host_angles.get()); }
const OrbDescriptor* DeviceOrb::host_descriptors() const {
    return static_cast<const OrbDescriptor*>(impl("host_descriptors").host_descriptors.get());
}
DeviceView DeviceOrb::smoothed_level(int k) const {
    const Impl& m = impl("smoothed_level");
    detail::check_range("DeviceOrb::smoothed_level", "k", k, 0, m.cfg.levels - 1);
    return m.smooth[static_cast<std::size_t>(k)].view();
}

}  // namespace kestrel
