// FeatureTracker: frames in, tracks with stable ids out. Each frame: upload, pyramid, pyramidal LK of
// every live track (lk_tracker.hpp), optional forward-backward check, drop the lost ones, and when
// the live count falls below redetect_fraction * target_features, run the FeatureDetector with the
// occupied grid cells masked so that new features fill empty cells only. Policy: docs/tracker.md.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/camera_types.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/image.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/relative_pose_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

namespace detail {
class TrackerBackend;
struct TrackerAccess;  // white-box tests: the backend of a tracker
}

/// Anchoring (docs/tracker.md, "Anchoring"): after frame-to-frame LK, a track is refined against its
/// FIRST observation with an affine warp plus gain and offset (level 0, the lk.patch_size patch stored when
/// the track was born) and takes the fitted position, so that per-frame errors do not add up: on every frame where
/// its fit is due (interval) or its frame-to-frame estimate may have drifted, else it takes that estimate. When the fit
/// fails (appearance changed too much, the patch reached the border, the fit disagrees with LK), the
/// track keeps the frame-to-frame estimate and is re-anchored there (its reference patch is taken again
/// from the current frame), or with reanchor = false it is lost with status LostAnchor. It is lost also
/// with reanchor = true when that estimate cannot be trusted: LK did not converge (NotConverged), or the
/// level-0 template at the previous or the new position reaches past the frame's edge.
struct AnchorConfig {
    bool enabled = true;
    bool reanchor = true;        ///< on a failed fit: re-anchor (true) or lose the track (false)
    int max_iterations = 5;      ///< Gauss-Newton iterations per frame, [1, 100]
    float max_residual = 20.0f;  ///< LostAnchor when the fit's mean |residual| (grey levels) exceeds it, (0, 255]
    float max_distance = 0.5f;   ///< a failed fit when it ends farther than this (level-0 px) from the
                                 ///< frame-to-frame estimate (one of the two is wrong), (0, 100]
    /// Frames between a track's scheduled fits, [1, 64]; 1: every track fits every frame. With more, each frame fits
    /// about 1 / interval of the tracks (staggered by track id), and besides: a track's first 2 frames after its
    /// reference patch was stored, every frame after a fit that moved it by more than 0.015 px from the
    /// frame-to-frame estimate, and a frame whose frame-to-frame LK did not converge or ended with a mean |residual|
    /// above 8 grey levels. A track that does not fit in a frame takes the frame-to-frame estimate there. 2 skips
    /// about 11 % of the fits at +3.5 % median error on docs/tracker.md's evaluation set and makes the CPU backend's
    /// frame about 10 % shorter; on the GPU it leaves the frame as long (docs/tracker.md, section 4).
    int interval = 1;
};

/// Where LK starts each track and how many pyramid levels it searches (docs/tracker.md, "Motion prediction").
/// Without the caller's predictions, a track born before the last frame starts at its constant-velocity prediction:
/// its position plus its last frame's displacement (one born in the last frame, at its position). A track with a
/// predicted start (that one, or the caller's prediction) searches from the finest level whose reach covers its
/// predicted displacement: level k when the displacement is within level_reach * scale_k px in x and y (scale_k:
/// level k's scale, 1, 2, 4, ...), the coarsest level when none is. With the defaults: level 0 alone within 4 px,
/// levels 1 and 0 within 8 px, all three beyond. Fewer levels is less work per track; a sudden jump beyond the
/// levels searched is lost. Both backends follow the same rules (detail/lk_rules.hpp) and give the same tracks.
struct MotionConfig {
    bool constant_velocity = true;  ///< start from the track's last displacement (false: from its position)
    bool fewer_levels = true;       ///< a track with a predicted start searches only the levels its displacement needs
    float level_reach = 4.0f;       ///< level-0 px per unit of level scale, (0, 1000]
};

/// The detector settings FeatureTracker re-detects with by default: DetectorConfig's defaults, except that new
/// tracks are born at least 20 px from the image's edges (a full patch around them, and not about to leave
/// the view; ORB-SLAM keeps 19) and candidates are ranked by the MaxThreshold score (the corner's contrast).
/// Both lengthen tracks and lower their error (docs/tracker.md, "Accuracy evaluation").
inline DetectorConfig tracking_detector_config() {
    DetectorConfig c;
    c.border = 20;
    c.fast.score = ScoreType::MaxThreshold;
    return c;
}

/// Geometric verification (docs/tracker.md, "Geometric check"): every frame, the tracks that survived LK are
/// tested against one relative pose between the previous and the current frame (RelativePoseEstimator's RANSAC on
/// the camera's normalized points, or on unit bearings for a fisheye: five-point, or two-point when a rotation
/// prior is passed with the frame), and those whose motion disagrees with it (Sampson error at or above
/// threshold_px) end with status Outlier. With baseline_frames > 1 the tracks live that many frames are tested a
/// second time, from their position baseline_frames frames back (one more estimate over a longer baseline: a slow
/// mover's deviation grows with it, an anchored track's noise does not). A static or purely rotating camera (no
/// translation) is decided by the estimator's model selection: its rotation-only model then judges the tracks, so
/// that degenerate motion does not end good tracks. Fewer than min_tracks checkable tracks, or no model: that
/// estimate ends nothing. It runs on the host after the frame's wait (the CPU estimator), except on the CUDA
/// backend with a rotation prior and a pinhole or radial-tangential camera, where both tests run on the device in
/// the frame's stream before its one wait; both backends end the same tracks, bit for bit.
struct GeometricCheckConfig {
    bool enabled = false;
    Camera camera{};              ///< the frames' camera (validate(Camera); its size must be the frames')
    double threshold_px = 1.0;    ///< inlier threshold on the Sampson error (rotation-only: its own error), (0, 100] px
    double confidence = 0.999;    ///< RANSAC's adaptive stop, [0.5, 1)
    int max_hypotheses = 512;     ///< minimal samples drawn at most, [1, 1 << 20] (512: one round of the GPU RANSAC)
    int min_tracks = 12;          ///< fewer checkable tracks: the frame's check ends nothing, [8, 65536]
    std::uint64_t seed = 0;       ///< the sampler's seed (same frames + seed -> same tracks)
    int baseline_frames = 3;      ///< the second test's baseline in frames, [1, 16] (1: the frame pair alone)
};

/// The motion model that decided a frame's geometric check (GeometricCheckResult::model).
enum class CheckModel : std::int32_t {
    None = 0,          ///< the check ended nothing: off, fewer than min_tracks checkable tracks, or no model
    Essential = 1,     ///< five-point relative pose (R, unit t)
    TwoPoint = 2,      ///< the frame's rotation prior and a two-point translation
    RotationOnly = 3,  ///< no translation (static or purely rotating camera): tracks judged against R alone
};
const char* to_string(CheckModel m);

/// The last frame's geometric check (FeatureTracker::geometric_check()).
struct GeometricCheckResult {
    CheckModel model = CheckModel::None;
    PoseStatus pose_status = PoseStatus::NoModel;  ///< the estimate's status (NoModel when not run)
    std::array<double, 9> R{{1, 0, 0, 0, 1, 0, 0, 0, 1}};  ///< X_cur = R X_prev + t (camera frames), row-major
    std::array<double, 3> t{{0, 0, 0}};   ///< unit translation; zero for RotationOnly and None
    int checked = 0;    ///< tracks tested (Tracked by LK, both positions unprojected by the camera)
    int inliers = 0;    ///< of those, inliers of the estimate
    int outliers = 0;   ///< tracks ended as Outlier
    int hypotheses = 0; ///< minimal samples drawn
};

struct TrackerConfig {
    LkConfig lk{};                   ///< tracking (its pyramid is the tracking pyramid)
    DetectorConfig detector = tracking_detector_config();  ///< re-detection (its own pyramid)
    int target_features = 200;       ///< wanted live tracks, [1, 65536]; re-detection tops up to it
    float redetect_fraction = 0.3f;  ///< re-detect when live < fraction * target, [0, 1]
    bool forward_backward = false;   ///< track back from the new frame and drop round trips that miss
    float fb_max_error = 0.5f;       ///< level-0 px, (0, 100]: largest accepted round-trip error
    AnchorConfig anchor{};           ///< refinement against each track's first observation
    MotionConfig motion{};           ///< the tracks' start (constant velocity) and the levels searched
    /// CPU backend: threads of this tracker's own pool (its pyramid, tracks, anchoring and re-detection; the
    /// tracker's detection uses this, not detector.threads), [0, 256]; 0 = the hardware threads. Created with
    /// the tracker (none per frame), shared with no other object. Same results with any count.
    int threads = 0;
    GeometricCheckConfig geometric_check{};  ///< ends tracks that disagree with the frame's relative pose
};

void validate(const TrackerConfig& cfg, const char* where = "TrackerConfig");

/// One live feature track. Positions in level-0 pixels.
struct Track {
    std::uint64_t id = 0;  ///< unique, stable for the track's life, never reused (starts at 1)
    float x = 0.0f, y = 0.0f;            ///< position in the latest frame
    float prev_x = 0.0f, prev_y = 0.0f;  ///< position in the frame before (= x, y when born this frame)
    int age = 0;                         ///< frames tracked since detection (0 = detected in this frame)
    float gain = 1.0f, offset = 0.0f;    ///< last illumination estimate: I_new ~= gain * T + offset
    float residual = 0.0f;               ///< last mean |residual| (0 when born this frame)
    TrackStatus status = TrackStatus::Tracked;  ///< live tracks: Tracked (an LK result NotConverged keeps
                                                ///< the track); lost_tracks(): why it was lost
    float score = 0.0f;                  ///< detection score
    int level = 0;                       ///< detection level
};

class FeatureTracker {
public:
    /// Frames must be width x height (in [kMinLevelSide, kMaxImageSide]); allocates everything here
    /// (CUDA backend: throws NoDeviceError without a device).
    FeatureTracker(int width, int height, const TrackerConfig& cfg, Backend backend = Backend::Cuda);
    FeatureTracker(FeatureTracker&&) noexcept;
    FeatureTracker& operator=(FeatureTracker&&) noexcept;
    ~FeatureTracker();

    const TrackerConfig& config() const;
    Backend backend() const;
    int width() const;
    int height() const;

    /// Synchronous: processes one frame, returns the live tracks (valid until the next call).
    /// predictions: optional initial guesses for the tracks returned by the previous call, in the same
    /// order (size must match, finite), level-0 pixels of `frame`.
    /// rotation_prior: optional R (row-major, X_cur = R X_prev + t, e.g. the integrated gyro) for the geometric
    /// check, which then estimates the translation alone (two-point); must be a rotation (|R^T R - I| <= 1e-6
    /// per entry, det > 0) and needs geometric_check.enabled.
    const std::vector<Track>& track(HostView frame, const std::vector<Point2f>* predictions = nullptr,
                                    const std::array<double, 9>* rotation_prior = nullptr);

    /// Stream-ordered form: enqueues upload (use pinned memory for a truly asynchronous copy), pyramid,
    /// tracking and the result download on `stream`, and returns at once; the frame memory must stay
    /// valid until finish(). finish() waits for `stream`, does the bookkeeping and, when needed, the
    /// re-detection, and returns the live tracks. track() == track_async() + finish(). CPU backend: the
    /// work is done in track_async (stream unused).
    void track_async(HostView frame, StreamHandle stream, const std::vector<Point2f>* predictions = nullptr,
                     const std::array<double, 9>* rotation_prior = nullptr);
    /// Same from a frame already in device memory (CUDA backend only).
    void track_async(DeviceView frame, StreamHandle stream, const std::vector<Point2f>* predictions = nullptr,
                     const std::array<double, 9>* rotation_prior = nullptr);
    const std::vector<Track>& finish();

    const std::vector<Track>& tracks() const;       ///< live tracks after the last finished frame
    const std::vector<Track>& lost_tracks() const;  ///< tracks dropped in the last frame, with their status
    std::int64_t frame_count() const;               ///< frames finished so far
    bool redetected() const;                        ///< whether the last frame ran the detector
    /// The last finished frame's geometric check (model None when it did not run).
    const GeometricCheckResult& geometric_check() const;

    /// Forgets every track; the next frame starts like the first (ids keep increasing).
    void reset();

private:
    friend class MultiCameraTracker;
    friend class StereoTracker;
    friend struct detail::TrackerAccess;
    /// StereoTracker's access to the backend: the frame's pyramid, the right image built with it.
    detail::TrackerBackend& backend_internal() const;
    /// StereoTracker's tracker: the frames' pyramids get pyramid_levels (>= cfg.lk.pyramid.levels) levels, of
    /// which the tracking uses the first cfg.lk.pyramid.levels.
    FeatureTracker(int width, int height, const TrackerConfig& cfg, Backend backend, int pyramid_levels);
    /// finish() in two halves, so that MultiCameraTracker can wait for every camera's re-detection at once:
    /// the wait for the frame, the bookkeeping and the re-detection enqueued when due; then its collection,
    /// the new tracks and the template stores.
    void finish_begin();
    const std::vector<Track>& finish_end();

    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
