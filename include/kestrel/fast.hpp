// FAST corner response with bounded rectification: configuration, CPU reference score maps and the
// GPU score stage. Semantics: include/kestrel/detail/fast_rules.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/fast_types.hpp"
#include "kestrel/image.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {


/// Throws InvalidArgument naming the parameter and bound.
void validate(const FastConfig& cfg, const char* where = "FastConfig");

/// Pixels from each edge that a score type needs (3, or 4 for Harris); nearer pixels score 0.
int score_border(ScoreType t);

/// The 8 KiB corner lookup table for (arc_min, arc_max): bit m set when mask m is a corner arc.
std::vector<std::uint32_t> corner_lut(int arc_min, int arc_max);

/// A dense score map of one level (host memory), width*height floats, row-major.
struct ScoreMap {
    int width = 0, height = 0;
    std::vector<float> scores;
    float at(int x, int y) const { return scores[static_cast<std::size_t>(y) * width + x]; }
};

/// CPU reference: the score map of one image (the definition the GPU must match bit for bit).
ScoreMap fast_score_map_cpu(HostView image, const FastConfig& cfg);

/// CPU reference over all pyramid levels.
std::vector<ScoreMap> fast_score_maps_cpu(const std::vector<HostImage>& pyramid, const FastConfig& cfg);

/// GPU score stage: one float map per level in device memory, all levels in one launch.
/// Created once for a pyramid geometry; compute() is stream-ordered, allocation-free, no sync.
class DeviceScoreMaps {
public:
    DeviceScoreMaps();
    DeviceScoreMaps(const std::vector<Size2>& level_sizes, const FastConfig& cfg);
    DeviceScoreMaps(DeviceScoreMaps&&) noexcept;
    DeviceScoreMaps& operator=(DeviceScoreMaps&&) noexcept;
    ~DeviceScoreMaps();

    const FastConfig& config() const;
    int levels() const;
    /// Device pointer, size and pitch (bytes) of a level's map, for the NMS stage.
    const float* level_data(int k) const;
    std::size_t level_pitch(int k) const;
    Size2 level_size(int k) const;
    /// Device pointer to the 2048-word lookup table of this configuration.
    const std::uint32_t* lut() const;

    void compute(const DevicePyramid& pyramid, StreamHandle stream);
    /// Pyramid and scores fused: scores the pyramid of the device image `level0` (read in place, not
    /// copied) and writes that pyramid's levels 1.. into `pyramid` (same geometry as the maps; its level 0
    /// is left alone). With 2 levels of factor 2 and a score other than Harris this is ONE launch (each
    /// level-1 block derives its pixels from level 0 while staging); otherwise it copies `level0` into
    /// `pyramid` (unless it is that level already), builds it and scores it. Same maps and pyramid levels
    /// as build + compute, bit for bit.
    void compute_fused(DeviceView level0, DevicePyramid& pyramid, StreamHandle stream);
    /// True when compute_fused() is one launch for this configuration and `pyramid`'s geometry.
    bool fuses(const DevicePyramid& pyramid) const;
    /// Synchronous download of one level's map (tests and tools).
    ScoreMap download(int k) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
