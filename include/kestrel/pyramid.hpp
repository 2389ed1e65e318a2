// Image pyramid: configuration, level geometry, CPU reference and the GPU pyramid.
// Resampling rule: include/kestrel/detail/pyramid_rules.hpp (exact, integer, shared CPU/GPU).
#pragma once
#include <memory>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/image.hpp"
#include "kestrel/pyramid_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {


/// Throws InvalidArgument unless levels in [1, kMaxLevels] and scale in (1, 2] and finite.
void validate(const PyramidConfig& cfg, const char* where = "PyramidConfig");

/// Sizes of all levels for a level-0 image of width x height; throws InvalidArgument
/// (naming 'levels' and the largest count the image allows) when a level would be smaller than
/// kMinLevelSide.
std::vector<Size2> pyramid_sizes(int width, int height, const PyramidConfig& cfg);

/// Factor from level k coordinates to level 0 coordinates: s^k as float (exactly 2^k for s = 2).
/// The single definition used by CPU and GPU keypoint mapping.
float level_scale(const PyramidConfig& cfg, int level);

/// CPU reference: all levels, level 0 a packed copy of the input.
std::vector<HostImage> build_pyramid_cpu(HostView image, const PyramidConfig& cfg);

/// GPU pyramid of fixed level-0 size, all levels in device memory, allocated once.
/// build() is stream-ordered, allocation-free and does not synchronize.
class DevicePyramid {
public:
    DevicePyramid();
    DevicePyramid(int width, int height, const PyramidConfig& cfg);
    DevicePyramid(DevicePyramid&&) noexcept;
    DevicePyramid& operator=(DevicePyramid&&) noexcept;
    ~DevicePyramid();

    int levels() const;
    const PyramidConfig& config() const;
    DeviceView level(int k) const;
    /// Level 0, writable: upload a frame here, then call build(stream).
    DeviceMutView level0();

    /// Computes levels 1..L-1 from level 0 already in place.
    void build(StreamHandle stream);
    /// Copies `image` (device memory, same size as level 0) into level 0, then builds.
    void build(DeviceView image, StreamHandle stream);
    /// Computes levels 1..L-1 of two pyramids with level 0 in place, in the launches of one (a stereo pair's
    /// left and right images). They must have the same level-0 size and configuration (InvalidArgument otherwise)
    /// and be different objects.
    static void build_pair(DevicePyramid& a, DevicePyramid& b, StreamHandle stream);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
