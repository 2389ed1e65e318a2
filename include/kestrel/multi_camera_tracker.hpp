// MultiCameraTracker: the FeatureTrackers of several cameras (a stereo pair, a multi-camera rig) driven as one
// submission. One call enqueues every camera's frame: upload, pyramid, tracking and re-detection run for all
// cameras concurrently on the GPU (each camera on its own stream, forked from the caller's stream and joined
// back into it); finish() waits once for all of them and does every camera's bookkeeping, with the
// re-detections of the cameras that need one enqueued together and collected after one wait. Cameras may
// have different sizes and configurations. Each camera's tracks are exactly those of a FeatureTracker fed
// the same frames. Policy and figures: docs/tracker.md ("Several cameras").
#pragma once
#include <memory>
#include <vector>

#include "kestrel/feature_tracker.hpp"

namespace kestrel {

/// One camera of a MultiCameraTracker: its frame size and its tracker settings.
struct CameraConfig {
    int width = 0;
    int height = 0;
    TrackerConfig tracker{};
};

class MultiCameraTracker {
public:
    /// One FeatureTracker per camera (at least 1, at most kMaxCameras), all on `backend`; allocates
    /// everything here. Errors name the camera: "cameras[2].width".
    explicit MultiCameraTracker(const std::vector<CameraConfig>& cameras, Backend backend = Backend::Cuda);
    MultiCameraTracker(MultiCameraTracker&&) noexcept;
    MultiCameraTracker& operator=(MultiCameraTracker&&) noexcept;
    ~MultiCameraTracker();

    static constexpr int kMaxCameras = 32;

    int size() const;          ///< number of cameras
    Backend backend() const;
    /// Camera i's tracker (its tracks(), lost_tracks(), redetected(), config()); i in [0, size()).
    const FeatureTracker& camera(int i) const;

    /// Synchronous: one frame per camera (frames[i] is camera i's, of its size), processed together.
    /// rotation_priors: optional, one per camera (its own frame: R_c = R_cb R_body R_cb^T), for each camera's
    /// TrackerConfig::geometric_check (see FeatureTracker::track).
    void track(const std::vector<HostView>& frames,
               const std::vector<std::array<double, 9>>* rotation_priors = nullptr);
    /// Stream-ordered: enqueues every camera's frame (pinned memory for truly asynchronous uploads) and returns;
    /// `stream`'s later work waits for all cameras' tracking. The frames must stay valid until finish(). CPU
    /// backend: the work is done here, camera after camera (stream unused).
    void track_async(const std::vector<HostView>& frames, StreamHandle stream,
                     const std::vector<std::array<double, 9>>* rotation_priors = nullptr);
    /// Same from frames already in device memory (CUDA backend only).
    void track_async(const std::vector<DeviceView>& frames, StreamHandle stream,
                     const std::vector<std::array<double, 9>>* rotation_priors = nullptr);
    /// Waits for every camera and does their bookkeeping and re-detection (see the header comment).
    void finish();

    const std::vector<Track>& tracks(int camera) const;       ///< camera's live tracks after the last finish()
    const std::vector<Track>& lost_tracks(int camera) const;  ///< camera's tracks dropped in the last frame

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
