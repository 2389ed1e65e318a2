// Brute-force Hamming matching of ORB descriptors: k = 2 nearest with the ratio test, optional
// cross-check, optional search radius around predicted positions or epipolar row band; the lower index
// wins a tie. CPU reference and GPU matcher give identical matches (integer distances; rules in
// include/kestrel/detail/orb_rules.hpp). docs/features.md.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/keypoint.hpp"
#include "kestrel/orb_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// Throws InvalidArgument naming the field and the bound: ratio in (0, 1], radius >= 0 and finite,
/// epipolar_band finite, max_distance in [0, 256].
void validate(const MatcherConfig& cfg, const char* where = "MatcherConfig");

/// CPU reference: one Match per query. Positions (level-0 pixels) are needed when cfg.radius > 0 or
/// cfg.epipolar_band >= 0 (query_pos: the predicted positions of the queries; train_pos: the train
/// points' positions), else they may be null.
std::vector<Match> match_cpu(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                             const MatcherConfig& cfg, const Point2f* query_pos = nullptr,
                             const Point2f* train_pos = nullptr);

/// The matcher. Backend::Cuda throws NoDeviceError when no CUDA device is usable; Backend::Cpu runs
/// match_cpu(). Buffers for `capacity` queries and `capacity` train descriptors are allocated at
/// construction: no call allocates.
class HammingMatcher {
public:
    HammingMatcher(const MatcherConfig& cfg, int capacity, Backend backend = Backend::Cuda);
    HammingMatcher(HammingMatcher&&) noexcept;
    HammingMatcher& operator=(HammingMatcher&&) noexcept;
    ~HammingMatcher();

    const MatcherConfig& config() const;
    Backend backend() const;
    int capacity() const;

    /// Synchronous, host arrays (any host memory), both backends: one Match per query.
    std::vector<Match> match(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                             const Point2f* query_pos = nullptr, const Point2f* train_pos = nullptr);

    /// Stream-ordered (Backend::Cuda only; StateError otherwise): arrays in device memory, counts on the
    /// host (each in [0, capacity]). Results valid once `stream` completes: device_matches() (device),
    /// host_matches() (pinned), n_query slots.
    void match_async(const OrbDescriptor* device_query, int n_query, const OrbDescriptor* device_train,
                     int n_train, StreamHandle stream, const Point2f* device_query_pos = nullptr,
                     const Point2f* device_train_pos = nullptr);
    const Match* device_matches() const;
    const Match* host_matches() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
