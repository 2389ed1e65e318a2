// MultiCameraTracker: N FeatureTrackers, one submission. CUDA backend: camera i runs on stream i of a
// detail::StreamFan (forked from the caller's stream, joined back into it), so the GPU overlaps the cameras'
// uploads, pyramids and tracking; finish() runs every camera's first half of FeatureTracker::finish (wait,
// bookkeeping, re-detection enqueued when due), then every second half (re-detection collected, new tracks,
// template stores): the re-detections of all cameras run concurrently too.
#include "kestrel/multi_camera_tracker.hpp"

#include <cstdio>
#include <string>

#include "feature_tracker_backend.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

struct MultiCameraTracker::Impl {
    Backend backend = Backend::Cuda;
    std::vector<FeatureTracker> cams;
    std::unique_ptr<detail::StreamFan> fan;  // CUDA backend
    bool in_flight = false;

    template <class View>
    void check_frames(const char* where, const std::vector<View>& frames) const {
        detail::check(frames.size() == cams.size(), where, "frames", [&] {
            return "has " + detail::to_text(frames.size()) + " entries, must have one per camera (" +
                   detail::to_text(cams.size()) + ")";
        });
        for (std::size_t i = 0; i < frames.size(); ++i) {
            char name[32];  // "frames[i]", without a per-frame allocation
            std::snprintf(name, sizeof name, "frames[%zu]", i);
            validate_view(where, name, frames[i]);
            detail::check(frames[i].width == cams[i].width() && frames[i].height == cams[i].height(), where, name, [&] {
                return "is " + detail::to_text(frames[i].width) + "x" + detail::to_text(frames[i].height) + ", camera " +
                       detail::to_text(i) + " is " + detail::to_text(cams[i].width()) + "x" +
                       detail::to_text(cams[i].height());
            });
        }
    }

    template <class View>
    void enqueue(const char* where, const std::vector<View>& frames, StreamHandle stream,
                 const std::vector<std::array<double, 9>>* priors) {
        if (in_flight)
            throw StateError(std::string("kestrel: MultiCameraTracker::") + where +
                             ": the previous frames are still in flight; call finish() first");
        check_frames(where, frames);
        if (priors)
            detail::check(priors->size() == cams.size(), where, "rotation_priors", [&] {
                return "has " + detail::to_text(priors->size()) + " entries, must have one per camera (" +
                       detail::to_text(cams.size()) + ")";
            });
        if (fan) fan->fork(stream);
        for (std::size_t i = 0; i < cams.size(); ++i)
            cams[i].track_async(frames[i], fan ? fan->stream(static_cast<int>(i)) : stream, nullptr,
                                priors ? &(*priors)[i] : nullptr);
        if (fan) fan->join(stream);
        in_flight = true;
    }

    void check_camera(const char* where, int i) const { detail::check_range(where, "camera", i, 0, static_cast<int>(cams.size()) - 1); }
};

MultiCameraTracker::MultiCameraTracker(const std::vector<CameraConfig>& cameras, Backend backend) {
    const char* where = "MultiCameraTracker";
    detail::check_range(where, "cameras.size()", static_cast<int>(cameras.size()), 1, kMaxCameras);
    if (backend != Backend::Cuda && backend != Backend::Cpu)
        detail::fail(where, "backend", "must be Backend::Cuda or Backend::Cpu");
    auto m = std::make_unique<Impl>();
    m->backend = backend;
    m->cams.reserve(cameras.size());
    for (std::size_t i = 0; i < cameras.size(); ++i) {
        const std::string name = "MultiCameraTracker: cameras[" + detail::to_text(i) + "]";
        const CameraConfig& c = cameras[i];
        validate(c.tracker, (name + ".tracker").c_str());
        detail::check_range(name.c_str(), "width", c.width, kMinLevelSide, kMaxImageSide);
        detail::check_range(name.c_str(), "height", c.height, kMinLevelSide, kMaxImageSide);
        m->cams.emplace_back(c.width, c.height, c.tracker, backend);
    }
    if (backend == Backend::Cuda) m->fan = detail::make_stream_fan(static_cast<int>(cameras.size()));
    impl_ = std::move(m);
}

MultiCameraTracker::MultiCameraTracker(MultiCameraTracker&&) noexcept = default;
MultiCameraTracker& MultiCameraTracker::operator=(MultiCameraTracker&&) noexcept = default;
MultiCameraTracker::~MultiCameraTracker() = default;

MultiCameraTracker::Impl& MultiCameraTracker::impl(const char* where) const {
    if (!impl_) detail::empty_object("MultiCameraTracker", where);
    return *impl_;
}

int MultiCameraTracker::size() const { return static_cast<int>(impl("size").cams.size()); }
Backend MultiCameraTracker::backend() const { return impl("backend").backend; }

const FeatureTracker& MultiCameraTracker::camera(int i) const {
    const Impl& m = impl("camera");
    m.check_camera("MultiCameraTracker::camera", i);
    return m.cams[static_cast<std::size_t>(i)];
}

void MultiCameraTracker::track(const std::vector<HostView>& frames,
                               const std::vector<std::array<double, 9>>* rotation_priors) {
    track_async(frames, nullptr, rotation_priors);
    finish();
}

void MultiCameraTracker::track_async(const std::vector<HostView>& frames, StreamHandle stream,
                                     const std::vector<std::array<double, 9>>* rotation_priors) {
    impl("track_async").enqueue("track_async", frames, stream, rotation_priors);
}

void MultiCameraTracker::track_async(const std::vector<DeviceView>& frames, StreamHandle stream,
                                     const std::vector<std::array<double, 9>>* rotation_priors) {
    Impl& m = impl("track_async");
    if (m.backend != Backend::Cuda)
        throw StateError("kestrel: MultiCameraTracker::track_async: device frames need Backend::Cuda");
    m.enqueue("track_async", frames, stream, rotation_priors);
}

void MultiCameraTracker::finish() {
    Impl& m = impl("finish");
    if (!m.in_flight)
        throw StateError("kestrel: MultiCameraTracker::finish: no frames in flight (call track_async first)");
    m.in_flight = false;
    for (FeatureTracker& c : m.cams) c.finish_begin();
    for (FeatureTracker& c : m.cams) c.finish_end();
}

const std::vector<Track>& MultiCameraTracker::tracks(int camera) const {
    const Impl& m = impl("tracks");
    m.check_camera("MultiCameraTracker::tracks", camera);
    return m.cams[static_cast<std::size_t>(camera)].tracks();
}

const std::vector<Track>& MultiCameraTracker::lost_tracks(int camera) const {
    const Impl& m = impl("lost_tracks");
    m.check_camera("MultiCameraTracker::lost_tracks", camera);
    return m.cams[static_cast<std::size_t>(camera)].lost_tracks();
}

}  // namespace kestrel
