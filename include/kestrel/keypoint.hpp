// A detected feature.
#pragma once

namespace kestrel {

/// A position in level-0 pixels (a track, a prediction, a matcher's search centre).
struct Point2f {
    float x = 0.0f;
    float y = 0.0f;
};

/// x, y in level-0 pixels: a maximum at (u, v) on level k is reported at (u * s^k, v * s^k), with
/// s^k = level_scale(pyramid, k). score as defined in detail/fast_rules.hpp.
struct Keypoint {
    float x = 0.0f;
    float y = 0.0f;
    float score = 0.0f;
    int level = 0;
};

inline bool operator==(const Keypoint& a, const Keypoint& b) {
    return a.x == b.x && a.y == b.y && a.score == b.score && a.level == b.level;
}
inline bool operator!=(const Keypoint& a, const Keypoint& b) { return !(a == b); }

/// Which implementation runs: the CUDA kernels, or the CPU reference (identical results).
enum class Backend { Cuda, Cpu };

const char* to_string(Backend b);

/// Backend::Cuda when a CUDA device is usable (and the library was built with CUDA), else Backend::Cpu
/// (never throws).
Backend default_backend() noexcept;

}  // namespace kestrel
