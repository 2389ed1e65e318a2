// Plain data of the features area: the ORB descriptor, the matcher's configuration and its matches, a
// 2-D point. No class; the rules header (detail/orb_rules.hpp) and the kernels include this header.
#pragma once
#include <cstdint>

#include "kestrel/keypoint.hpp"  // Point2f

namespace kestrel {

constexpr int kOrbDescriptorBytes = 32;                        ///< 256-bit rBRIEF
constexpr int kOrbDescriptorBits = kOrbDescriptorBytes * 8;

/// A 256-bit ORB descriptor: bit i is bit (i % 8) of bytes[i / 8], the layout of cv::ORB's rows.
struct alignas(16) OrbDescriptor {
    std::uint8_t bytes[kOrbDescriptorBytes] = {};
};

inline bool operator==(const OrbDescriptor& a, const OrbDescriptor& b) {
    for (int i = 0; i < kOrbDescriptorBytes; ++i)
        if (a.bytes[i] != b.bytes[i]) return false;
    return true;
}
inline bool operator!=(const OrbDescriptor& a, const OrbDescriptor& b) { return !(a == b); }

/// Brute-force Hamming matching of query descriptors against train descriptors.
struct MatcherConfig {
    /// Ratio test: a query's best match is kept when d1 < ratio * d2 (d2: second-best distance, or 257
    /// when there is none). In (0, 1]; 1 disables the test.
    float ratio = 0.8f;
    /// Keep a match only when the query is also the best match of its train descriptor (among the
    /// queries whose candidate it is).
    bool cross_check = false;
    /// > 0: only train points within this distance (level-0 pixels) of the query's position are
    /// candidates (tracking by matching: pass predicted positions). 0 = no limit.
    float radius = 0.0f;
    /// >= 0: only train points whose y is within this many pixels of the query's y are candidates
    /// (stereo on rectified images: the epipolar rows). < 0 = no band.
    float epipolar_band = -1.0f;
    /// Keep a match only when its distance is at most this, in [0, 256].
    int max_distance = kOrbDescriptorBits;
};

/// The result of one query: its best train index (-1 when rejected or no candidate), the best and
/// second-best distances (257 when absent).
struct Match {
    int train = -1;
    int distance = kOrbDescriptorBits + 1;
    int second = kOrbDescriptorBits + 1;
};

inline bool operator==(const Match& a, const Match& b) {
    return a.train == b.train && a.distance == b.distance && a.second == b.second;
}
inline bool operator!=(const Match& a, const Match& b) { return !(a == b); }

}  // namespace kestrel
