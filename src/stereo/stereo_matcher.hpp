// Internal: the left-to-right matching of StereoTracker (detail/stereo_rules.hpp, step 1), per backend. The
// tracker stages each track's left position and seed in the matcher's buffers; match() runs the two LK passes
// (left -> right from the seed; right -> left from the forward result, guessed at the left position) with
// StereoMatchConfig::lk, on the CPU engines or the track area's LK kernels: the same rules, so the same numbers.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/pyramid.hpp"
#include "kestrel/stereo_tracker.hpp"

namespace kestrel::detail {

class StereoMatcher {
public:
    virtual ~StereoMatcher() = default;
    /// Staging, capacity entries each: left positions and seeds (the right-image initial guesses).
    virtual Point2f* points() = 0;
    virtual LkGuess* seeds() = 0;
    /// Non-zero: the track is refined on the finest StereoMatchConfig::refine_levels levels (a carried seed).
    virtual std::int32_t* refine() = 0;
    /// CPU backend: matches `count` staged points from `left` into `right` and back; the results are ready on return.
    virtual void match(const std::vector<HostImage>& left, const std::vector<HostImage>& right, int count);
    /// CUDA backend: the same on `stream`, then waits for it.
    virtual void match(const DevicePyramid& left, const DevicePyramid& right, int count, StreamHandle stream);
    virtual const LkResult* forward() const = 0;
    virtual const LkResult* backward() const = 0;
};

/// The matching LK's two setups: every level, and the finest refine_levels (= the first when refine_levels is 0).
LkConfig refine_lk_config(const StereoConfig& cfg);

/// threads: the matcher's pool (as TrackerConfig::threads).
std::unique_ptr<StereoMatcher> make_cpu_stereo_matcher(const StereoConfig& cfg, int capacity, int threads);
std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig& cfg, int capacity);

}  // namespace kestrel::detail
