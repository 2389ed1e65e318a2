// Internal launch interface of kernels/track/lk_track.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/track/anchor.cuh"
#include "kestrel/detail/lk_rules.hpp"

namespace kestrel::kernels {

/// A round trip from a tracker's frame (StereoTracker, kernels/track/lk_track.cu): track f is matched from the
/// position detail::track_verdict gives it (NaN when the verdict loses it), seeded at that position plus offsets[f].
struct RoundTripStage {
    const LkResult* lk;                  // null: no stage (LkLaunch::points and guesses are the inputs)
    const LkResult* back;                // the tracker's backward results (rule.forward_backward), else null
    const Point2f* origins;              // the tracks' previous positions
    const detail::AnchorResult* anchor;  // the anchor fits (rule.anchor), else null
    detail::TrackVerdictRule rule;
    const Point2f* offsets;              // seed = position + offsets[f]
    Point2f* points;                     // out: the position matched from, for the host's check
};

/// Everything one launch needs, passed by value (no __constant__ or global state).
struct LkLaunch {
    detail::LkSetup setup;
    detail::LkImage ref[kMaxLevels];  // template pyramid (live tracking, template storing)
    detail::LkImage cur[kMaxLevels];  // pyramid tracked into
    const Point2f* points;            // live: template positions; store: positions to store
    const LkGuess* guesses;           // initial estimates; live mode may pass nullptr (= points)
    const std::uint8_t* skips;        // tracking launches, nullable: non-zero = track i skips the coarsest level
                                      // (detail::lk_top_level)
    const std::int32_t* slots;        // stored-template slots (store / tracking from the store)
    LkResult* results;
    LkResult* back_results;           // round trip: the backward results
    detail::LkSetup refine_setup;     // round trip: the setup of the tracks detail::match_refines(refine[i]) selects
    const std::int32_t* refine;       // round trip, nullable (= every track kSeedSearch): the seed class of track i
                                      // (detail::MatchSeed): refine_setup or setup, and with trust_distance
                                      // detail::round_trip_needed
    float trust_distance;             // round trip: StereoMatchConfig::trust_distance (0: every track goes back)
    RoundTripStage stage;             // round trip: the inputs from a tracker's frame (stage.lk non-null)
    float* store;                     // capacity slots laid out by detail::store_level_offset()
    std::int32_t* store_valid;        // capacity * levels flags
    detail::LkLevelPrep* prep;        // capacity * levels: lk_prepare_level of the stored templates of the levels
                                      // from setup.stored_from_level on (live tracking with stored patches)
    int capacity;
    int count;
    int with_anchor;                  // tracking launches: also the anchor fit of every track (anchor below)
    AnchorFuse anchor;
};

/// Templates from `ref` at points[i], tracked into `cur`: results[i]; with with_anchor, then
/// anchor.results[i] (the fit of track i on cur[0] from results[i]: kernels/track/anchor_engine.cuh).
void launch_lk_track_live(const LkLaunch& p, cudaStream_t stream);
/// Round trip: results[i] as launch_lk_track_live's (without anchoring; with refine_setup where
/// detail::match_refines(refine[i])), then the track back from results[i] (a template of `cur`) into `ref` from
/// points[i]: back_results[i] (NaN start, so lost at once, when results[i] is neither Tracked nor NotConverged;
/// detail::skipped_round_trip where detail::round_trip_needed says the way back is not needed).
void launch_lk_track_round_trip(const LkLaunch& p, cudaStream_t stream);
/// Templates from the store at slots[i], tracked into `cur` from guesses[i]: results[i]; with_anchor as above.
void launch_lk_track_stored(const LkLaunch& p, cudaStream_t stream);
/// Stores the templates of points[i] in `ref` into slots[i] (with their preparations where prep is set), one warp
/// per point and level; with `anchor` (its count and points those of p), also each point's anchor template store
/// (launch_anchor_store's work) in one more warp per point, all in one launch.
void launch_lk_store(const LkLaunch& p, cudaStream_t stream, const AnchorStoreLaunch* anchor = nullptr);

/// Forward-backward check inputs: back_points[i] = forward[i]'s position when it was Tracked or NotConverged, else NaN
/// (the backward track then ends at once); back_guesses[i] = (origins[i], gain 1, offset 0).
void launch_lk_backward_inputs(const LkResult* forward, const Point2f* origins, Point2f* back_points,
                               LkGuess* back_guesses, int count, cudaStream_t stream);

}  // namespace kestrel::kernels
