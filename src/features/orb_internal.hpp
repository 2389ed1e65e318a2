// Internal: the argument checks that DeviceOrb runs in both builds (src/features/orb_config.cpp), and the CPU
// ORB with reused memory (src/features/orb_cpu.cpp) for the CPU detector.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/orb.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::detail {

/// InvalidArgument naming the parameter: capacity in [1, 2^20], the pyramid config valid and its levels
/// fitting a width x height image.
void check_orb_args(const char* where, int width, int height, const PyramidConfig& cfg, int capacity);

/// Reused memory of the CPU ORB: the smoothed levels and the smoothing's row ring.
struct OrbCpu {
    std::vector<HostImage> smoothed;
    std::vector<float> ring;
    std::vector<std::uint64_t> order;  // the keypoints' visiting order
};

/// orb_compute_cpu into `out`, reusing `scratch` (no allocation per call at a fixed size).
void orb_compute_into(const std::vector<HostImage>& pyramid, const PyramidConfig& cfg,
                      const std::vector<Keypoint>& keypoints, OrbCpu& scratch, OrbFeatures& out);
/// orb_smooth_cpu into `out` (resized when its size differs); ring: scratch.
void orb_smooth_into(HostView level, HostImage& out, std::vector<float>& ring);
/// orb_angle_cpu and orb_descriptor_cpu without the view checks.
float orb_angle_at(HostView level, int x, int y);
void orb_descriptor_at(HostView smoothed, int x, int y, float angle_deg, OrbDescriptor& d);

}  // namespace kestrel::detail
