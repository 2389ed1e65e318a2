// ORB orientation and steered rBRIEF descriptors of keypoints on a pyramid: the CPU reference and the
// GPU stage (every level in one launch). Rules: include/kestrel/detail/orb_rules.hpp (integer moments,
// one atan2 rule, the bit-exact 7x7 smoothing, ORB's learned pattern), shared by both backends, so that
// the GPU's angles and descriptors equal the CPU reference's bit for bit. docs/features.md.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/image.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/orb_types.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// CPU reference: one level smoothed by the 7x7 Gaussian of sigma 2 (bit for bit OpenCV's
/// GaussianBlur(7x7, 2, BORDER_REFLECT_101) on 8-bit images).
HostImage orb_smooth_cpu(HostView level);

/// CPU reference: the intensity-centroid angle (degrees, [0, 360]) of the disc of radius 15 around the
/// level pixel (x, y); pixels outside the level are clamped to its border.
float orb_angle_cpu(HostView level, int x, int y);

/// CPU reference: the 256-bit descriptor at level pixel (x, y) of a smoothed level, the pattern steered by
/// angle_deg; samples outside the level are clamped to its border.
OrbDescriptor orb_descriptor_cpu(HostView smoothed, int x, int y, float angle_deg);

/// Angles and descriptors of a set of keypoints.
struct OrbFeatures {
    std::vector<float> angles;
    std::vector<OrbDescriptor> descriptors;
};

/// CPU reference over a pyramid (build_pyramid_cpu of `cfg`): for each keypoint (level-0 position and
/// level, as FeatureDetector returns them) its angle on its level and its descriptor on its smoothed
/// level. A keypoint's level position is round(x / s^k) (level_scale). Throws InvalidArgument on a level
/// outside the pyramid.
OrbFeatures orb_compute_cpu(const std::vector<HostImage>& pyramid, const PyramidConfig& cfg,
                            const std::vector<Keypoint>& keypoints);

/// GPU stage for a fixed pyramid geometry and keypoint capacity; buffers are allocated once here.
/// compute_async() is stream-ordered, allocation-free and does not synchronize: one launch smooths every
/// level, one launch computes every keypoint's angle and descriptor on every level (one warp per
/// keypoint), then one copy each brings angles and descriptors to pinned host memory.
class DeviceOrb {
public:
    DeviceOrb();
    /// width x height: level 0 of the pyramids it will be given; capacity: most keypoints per call (>= 1).
    DeviceOrb(int width, int height, const PyramidConfig& cfg, int capacity);
    DeviceOrb(DeviceOrb&&) noexcept;
    DeviceOrb& operator=(DeviceOrb&&) noexcept;
    ~DeviceOrb();

    int capacity() const;
    const PyramidConfig& config() const;

    /// Keypoints in device memory; their number is the device int *device_count (clamped to capacity).
    void compute_async(const DevicePyramid& pyramid, const Keypoint* device_keypoints, const int* device_count,
                       StreamHandle stream);
    /// Same with the number given on the host (0..capacity).
    void compute_async(const DevicePyramid& pyramid, const Keypoint* device_keypoints, int count, StreamHandle stream);

    /// Results of the last call, slot i for keypoint i: device memory, and the pinned host copies (valid
    /// once the stream has completed). capacity() slots each.
    const float* device_angles() const;
    const OrbDescriptor* device_descriptors() const;
    const float* host_angles() const;
    const OrbDescriptor* host_descriptors() const;
    /// The smoothed level k of the last call (device memory; tests and tools).
    DeviceView smoothed_level(int k) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
