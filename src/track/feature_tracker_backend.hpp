// Internal: what FeatureTracker needs from a backend (CPU reference or CUDA). The tracker stages the
// per-frame inputs in the backend's buffers, start() runs or enqueues pyramid + LK (+ backward LK),
// wait() makes the results readable, detect() runs the detector on the current frame, and swap()
// makes the current frame the previous one.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/feature_tracker.hpp"

namespace kestrel::detail {

/// The verdict rule of a configuration (detail::track_verdict): the host bookkeeping's and the kernels'.
inline TrackVerdictRule verdict_rule(const TrackerConfig& cfg) {
    return {cfg.forward_backward ? 1 : 0, cfg.fb_max_error, cfg.anchor.enabled ? 1 : 0, cfg.anchor.reanchor ? 1 : 0,
            cfg.anchor.max_residual, cfg.anchor.max_distance};
}

/// A second frame whose pyramid is built in the same launch as the tracker's (StereoTracker's right image).
struct PyramidCompanion {
    DevicePyramid* pyramid = nullptr;
    HostView host{};      ///< the frame, when on the host (pinned for an asynchronous upload) ...
    DeviceView device{};  ///< ... or in device memory (on_device)
    bool on_device = false;
};

class TrackerBackend {
public:
    virtual ~TrackerBackend() = default;

    // Staging buffers, capacity() entries each, host-writable: previous positions, initial guesses,
    // template slots (first-frame templates) of the live tracks; positions and slots of new tracks.
    virtual Point2f* origins() = 0;
    virtual LkGuess* guesses() = 0;
    /// Per live track: non-zero when its search skips the pyramid's coarsest level (detail::lk_top_level).
    virtual std::uint8_t* coarse_skips() = 0;
    virtual std::int32_t* slots() = 0;
    virtual Point2f* new_points() = 0;
    virtual std::int32_t* new_slots() = 0;
    /// Anchoring (cfg.anchor.enabled): the anchor states of the live tracks (their x, y are replaced by the
    /// forward LK result before the fit), and the fits after wait() (valid where the forward status was
    /// Tracked or NotConverged).
    virtual AnchorState* anchor_states() = 0;
    virtual const AnchorResult* anchor_results() const = 0;

    /// Frame into the current pyramid, then tracking of `count` staged tracks (and the backward pass
    /// when enabled). Backends that cannot take a device frame throw StateError.
    virtual void start(HostView frame, int count, StreamHandle stream) = 0;
    virtual void start(DeviceView frame, int count, StreamHandle stream) = 0;
    /// Waits for start()'s work; then results() (and back_results() with forward-backward) are valid.
    virtual void wait() = 0;
    virtual const LkResult* results() const = 0;
    virtual const LkResult* back_results() const = 0;

    /// Detection on the current frame with the given cell mask: enqueued on the frame's stream (the CPU
    /// backend runs it here); detect_wait() waits for it and copies the keypoints into `out` (whose capacity
    /// the caller keeps, so that the CUDA backend does not allocate).
    virtual void detect_async(const std::uint8_t* cell_skip, Size2 grid) = 0;
    virtual void detect_wait(std::vector<Keypoint>& out) = 0;

    /// Re-detection without a second host round trip. Before start(), the tracker says how likely the frame is to
    /// re-detect: Certain (whatever the LK results: too few tracks went in), Likely (it may), or None. The CUDA
    /// backend then plans the re-detection on the device after the tracking (kernels/track/redetect_plan.cu, the
    /// rules of detail/redetect_rules.hpp) and enqueues the detection with the plan's cell mask in the same stream:
    /// Certain unconditionally, Likely (with KESTREL_REDETECT_PLAN=likely only) as the body of a conditional graph
    /// node that runs when the plan says so (CUDA 12.4 and later; otherwise Likely is None). After wait(), detection_ran(cell_skip) is true when that
    /// detection ran with exactly `cell_skip` masked (the host's final mask): detect_wait() then collects it and
    /// detect_async() is not called. Otherwise the tracker calls detect_async() as without a plan.
    enum class RedetectHint { None, Likely, Certain };
    virtual void set_redetect_hint(RedetectHint hint) { (void)hint; }
    virtual bool detection_ran(const std::uint8_t* cell_skip) {
        (void)cell_skip;
        return false;
    }
    /// Frames so far: planned on the device (of which through the conditional graph), whose planned detection the
    /// tracker used, and that re-detected through detect_async().
    struct RedetectCounts {
        long long planned = 0, conditional = 0, used = 0, enqueued_after = 0;
        const char* graph_failure = nullptr;  ///< the step where the conditional graph could not be built, if any
    };
    virtual RedetectCounts redetect_counts() const { return {}; }
    /// First-frame templates (also for anchoring): stores the templates of `count` staged new tracks from
    /// the current frame.
    virtual void store_templates(int count) = 0;
    /// The current frame becomes the previous one.
    virtual void swap() = 0;

    /// StereoTracker: the pyramid of the last frame start() took (after wait(), until the next start()); the
    /// backend's own kind (the other returns null).
    virtual const std::vector<HostImage>* host_frame_pyramid() const { return nullptr; }
    virtual const DevicePyramid* device_frame_pyramid() const { return nullptr; }
    /// StereoTracker (CUDA backend): the next start() also uploads `image` into `pyramid`'s level 0 and builds
    /// that pyramid, on a stream of its own that overlaps the frame's tracking and that the frame's stream joins
    /// before start() returns. Cleared by that start(); null clears it.
    virtual void set_companion(const PyramidCompanion* c) { (void)c; }
};

/// White-box tests: a tracker's backend.
struct TrackerAccess {
    static TrackerBackend& backend(const FeatureTracker& t) { return t.backend_internal(); }
    /// finish() in its two halves (timed apart).
    static void finish_begin(FeatureTracker& t) { t.finish_begin(); }
    static const std::vector<Track>& finish_end(FeatureTracker& t) { return t.finish_end(); }
};

/// MultiCameraTracker's streams (CUDA backend): one per camera, forked from the caller's stream before the
/// cameras' work is enqueued and joined back into it after, so that the cameras run concurrently.
class StreamFan {
public:
    virtual ~StreamFan() = default;
    virtual StreamHandle stream(int camera) const = 0;
    /// Every camera stream waits for the work enqueued on `from` so far.
    virtual void fork(StreamHandle from) = 0;
    /// `into` waits for the work enqueued on every camera stream so far.
    virtual void join(StreamHandle into) = 0;
};
std::unique_ptr<StreamFan> make_stream_fan(int cameras);

/// pyramid_levels >= cfg.lk.pyramid.levels: the frames' pyramids get that many levels (StereoTracker: the matching
/// may search more levels than the temporal tracking, on the same pyramid); the tracking uses the first ones.
std::unique_ptr<TrackerBackend> make_cpu_tracker_backend(int width, int height, const TrackerConfig& cfg,
                                                         int pyramid_levels);
std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int width, int height, const TrackerConfig& cfg,
                                                          int pyramid_levels);

}  // namespace kestrel::detail
