// Internal: the left-to-right matching of StereoTracker (detail/stereo_rules.hpp, step 1), per backend. The
// tracker stages each track's left position and seed in the matcher's buffers; match() runs the two LK passes
// (left -> right from the seed; right -> left from the forward result, guessed at the left position) with
// StereoMatchConfig::lk, on the CPU engines or the track area's LK kernels: the same rules, so the same numbers.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stereo_tracker.hpp"

namespace kestrel::detail {

/// The left tracker's frame as the CUDA matcher reads it to match the tracks in the same stream, before the host
/// bookkeeping: its LK (and backward) results, the previous positions, the anchor fits (pinned memory), the rule.
struct TrackerFrame {
    const LkResult* lk = nullptr;
    const LkResult* back = nullptr;
    const Point2f* origins = nullptr;
    const AnchorResult* anchor = nullptr;
    TrackVerdictRule rule{};
};

class StereoMatcher {
public:
    virtual ~StereoMatcher() = default;
    /// Staging, capacity entries each: left positions and seeds (the right-image initial guesses).
    virtual Point2f* points() = 0;
    virtual LkGuess* seeds() = 0;
    /// The seed class (detail::MatchSeed): kSeedTrusted, the track is refined on the finest
    /// StereoMatchConfig::refine_levels levels (detail::match_refines) and matched back only where
    /// detail::round_trip_needed says so (else its backward result is detail::skipped_round_trip()); the others
    /// search every level and go back.
    virtual std::int32_t* refine() = 0;
    /// CPU backend: matches `count` staged points from `left` into `right` and back; the results are ready on return.
    virtual void match(const std::vector<HostImage>& left, const std::vector<HostImage>& right, int count);
    /// CUDA backend: the same on `stream`, then waits for it.
    virtual void match(const DevicePyramid& left, const DevicePyramid& right, int count, StreamHandle stream);
    virtual const LkResult* forward() const = 0;
    virtual const LkResult* backward() const = 0;

    /// CUDA backend: the tracks of the left tracker's frame in flight, matched on `stream` after its launches from
    /// the positions detail::track_verdict gives them, seeded at position + offset; staging (capacity entries):
    /// stage_offsets(), stage_refine(). Results after the stream's wait: staged_points() (the positions used,
    /// NaN for lost tracks), staged_forward(), staged_backward(). Not supported by the CPU matcher.
    virtual bool can_stage() const { return false; }
    virtual Point2f* stage_offsets() { return nullptr; }
    virtual std::int32_t* stage_refine() { return nullptr; }
    virtual void enqueue_staged(const DevicePyramid& left, const DevicePyramid& right, const TrackerFrame& frame,
                                int count, StreamHandle stream);
    virtual const Point2f* staged_points() const { return nullptr; }
    virtual const LkResult* staged_forward() const { return nullptr; }
    virtual const LkResult* staged_backward() const { return nullptr; }
};

/// The matching LK's two setups: every level, and the finest refine_levels (= the first when refine_levels is 0).
LkConfig refine_lk_config(const StereoConfig& cfg);

/// threads: the matcher's pool (as TrackerConfig::threads).
std::unique_ptr<StereoMatcher> make_cpu_stereo_matcher(const StereoConfig& cfg, int capacity, int threads);
std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig& cfg, int capacity);

}  // namespace kestrel::detail
