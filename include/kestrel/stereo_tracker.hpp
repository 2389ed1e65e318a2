// StereoTracker: both cameras of a rig, one frame at a time. The left camera's tracks are tracked in time as
// FeatureTracker tracks them (same ids, statuses, anchoring, re-detection in the left image); then every live
// left track is matched into the right image of the same frame by LK, seeded at the track's previous
// disparity (a new track: at the median disparity of the matched tracks in its grid cell and the 8 around it,
// else at zero), checked on the way back (right to left), against the epipolar line and the disparity range.
// Per track: right x, y, disparity, depth (rectified: focal * baseline / disparity; raw: triangulated), a
// stereo status. Optionally the right image's own features are tracked in time too (VINS-Fusion's stereo
// front end). Model, policy, accuracy and figures: docs/stereo.md; the shared rules: detail/stereo_rules.hpp.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/feature_tracker.hpp"
#include "kestrel/stereo_types.hpp"

namespace kestrel {

struct StereoConfig {
    TrackerConfig tracker{};     ///< the left camera's temporal tracking (and the right one's, track_right)
    StereoMatchConfig match{};   ///< left-to-right matching
    /// Also track the right image's own features in time (a second FeatureTracker on the right frames, with
    /// tracker's settings and its own ids): right_tracks(). The left tracks' matching does not use them.
    bool track_right = false;
};

/// Throws InvalidArgument naming the field and its bound (tracker and match.lk through their validate();
/// match.lk.pyramid.scale must equal tracker.lk.pyramid.scale; match.lk.template_source must be PreviousFrame).
/// Each image's pyramid is built once per frame with the larger of the two level counts; the temporal tracking
/// uses its first tracker.lk.pyramid.levels levels, the matching its first match.lk.pyramid.levels.
void validate(const StereoConfig& cfg, const char* where = "StereoConfig");

/// One live left track and its match in the right image of the same frame.
struct StereoTrack {
    Track left{};  ///< the temporal track (FeatureTracker's Track: id, position, age, status ...)
    /// Right-image position of the match (level-0 pixels). Set for every status but NoMatch (for Inconsistent,
    /// OffEpipolar and OutOfRange too, for inspection); NaN for NoMatch.
    float right_x = 0.0f, right_y = 0.0f;
    /// px, NaN for NoMatch. Rectified: left.x - right_x. Raw: the disparity a rectified rig with the left camera's
    /// fx and the rig's baseline |t_rl| would show at the triangulated depth, fx * |t_rl| / depth (NaN when the
    /// rays do not meet; negative behind the camera): min_disparity / max_disparity mean the same depths on both.
    float disparity = 0.0f;
    /// Matched only (NaN otherwise): rectified, focal * baseline / disparity (baseline's unit; +inf at zero
    /// disparity); raw, the Z of the triangulated point in the left camera's frame (midpoint of the two rays).
    float depth = 0.0f;
    StereoStatus status = StereoStatus::NoMatch;
};

class StereoTracker {
public:
    /// Frames (left and right) must be width x height; a raw rig's cameras must have that size. Allocates
    /// everything here (CUDA backend: throws NoDeviceError without a device).
    StereoTracker(int width, int height, const StereoRig& rig, const StereoConfig& cfg, Backend backend = Backend::Cuda);
    StereoTracker(StereoTracker&&) noexcept;
    StereoTracker& operator=(StereoTracker&&) noexcept;
    ~StereoTracker();

    const StereoConfig& config() const;
    const StereoRig& rig() const;
    Backend backend() const;
    int width() const;
    int height() const;

    /// Synchronous: one stereo frame; returns the live left tracks with their matches (valid until the next
    /// call). predictions: as FeatureTracker::track's, for the left tracks. rotation_prior: as FeatureTracker::track's,
    /// the left camera's rotation for tracker.geometric_check (which checks the left tracks; a track_right tracker
    /// runs without the check).
    const std::vector<StereoTrack>& track(HostView left, HostView right,
                                          const std::vector<Point2f>* predictions = nullptr,
                                          const std::array<double, 9>* rotation_prior = nullptr);

    /// Stream-ordered form: enqueues both uploads (pinned memory for truly asynchronous copies), both pyramids
    /// (one launch) and the left tracking on `stream`, and returns; the frames must stay valid until finish().
    /// finish() does the left bookkeeping and re-detection, then the matching (one more round trip to the GPU:
    /// the tracks born this frame are matched too), and returns the tracks. CPU backend: the temporal work is
    /// done in track_async, the matching in finish.
    void track_async(HostView left, HostView right, StreamHandle stream,
                     const std::vector<Point2f>* predictions = nullptr,
                     const std::array<double, 9>* rotation_prior = nullptr);
    /// Same from frames already in device memory (CUDA backend only).
    void track_async(DeviceView left, DeviceView right, StreamHandle stream,
                     const std::vector<Point2f>* predictions = nullptr,
                     const std::array<double, 9>* rotation_prior = nullptr);
    const std::vector<StereoTrack>& finish();

    const std::vector<StereoTrack>& tracks() const;  ///< after the last finished frame
    const std::vector<Track>& lost_tracks() const;   ///< left tracks dropped in the last frame
    const std::vector<Track>& right_tracks() const;       ///< track_right: the right image's own tracks (else empty)
    const std::vector<Track>& right_lost_tracks() const;  ///< track_right: dropped in the last frame (else empty)
    std::int64_t frame_count() const;
    bool redetected() const;  ///< whether the last frame ran the left detector

    /// Forgets every track (both cameras); the next frame starts like the first (ids keep increasing).
    void reset();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
