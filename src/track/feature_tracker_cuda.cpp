// FeatureTracker's CUDA backend: two DevicePyramids used in turn (previous / current), the LK kernels
// (with each track's anchor fit in the same launch) reading their inputs from pinned staging buffers and
// writing their results to pinned memory (unified addressing: no copies to enqueue), and the
// FeatureDetector on the current level 0.
// Everything is allocated in the constructor (the detector on its first call).
#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "anchor_internal.hpp"
#include "kernels/track/lk_track.cuh"
#include "kernels/common/cuda_check.hpp"
#include "src/core/buffers_cuda.hpp"
#include "feature_tracker_backend.hpp"
#include "lk_internal.hpp"

namespace kestrel::detail {
namespace {

/// The tracker's buffers: pinned (the kernels read and write them through unified addressing) and device ones.
template <typename T>
class Pinned : public PinnedBuffer<T> {
public:
    explicit Pinned(std::size_t n) : PinnedBuffer<T>(n, "FeatureTracker allocation") {}
};
template <typename T>
class DeviceBuf : public DeviceBuffer<T> {
public:
    explicit DeviceBuf(std::size_t n) : DeviceBuffer<T>(n, "FeatureTracker allocation") {}
};

class CudaTrackerBackend final : public TrackerBackend {
public:
    CudaTrackerBackend(int width, int height, const TrackerConfig& cfg, const PyramidConfig& pyramid)
        : cfg_(cfg),
          setup_(make_tracker_lk_setup(cfg)),
          pyr_{DevicePyramid(width, height, pyramid), DevicePyramid(width, height, pyramid)},
          det_(cfg.detector, Backend::Cuda),
          cap_(static_cast<std::size_t>(cfg.target_features)),
          origins_(cap_), guesses_(cap_), slots_(cap_), new_points_(cap_), new_slots_(cap_), results_(cap_),
          back_(cap_), back_points_(cap_), back_guesses_(cap_),
          lk_store_(lk_stored() ? cap_ * static_cast<std::size_t>(store_floats_per_slot(setup_)) : 0),
          lk_valid_(lk_stored() ? cap_ * static_cast<std::size_t>(setup_.levels) : 0),
          lk_prep_(stored_levels() ? cap_ * static_cast<std::size_t>(setup_.levels) : 0),
          anchor_states_(cap_), anchor_results_(cap_),
          anchor_store_(cfg.anchor.enabled ? cap_ * 3 * static_cast<std::size_t>(cfg.lk.patch_size * cfg.lk.patch_size) : 0),
          anchor_valid_(cfg.anchor.enabled ? cap_ : 0),
          anchor_prep_(cfg.anchor.enabled ? cap_ : 0),
          cells_(static_cast<std::size_t>(grid_size(width, height, cfg.detector).width) *
                 static_cast<std::size_t>(grid_size(width, height, cfg.detector).height)),
          mask_(cells_), d_mask_(cells_) {
        KESTREL_CUDA(cudaEventCreateWithFlags(&stored_, cudaEventDisableTiming), "FeatureTracker allocation");
        KESTREL_CUDA(cudaEventCreateWithFlags(&frame_done_, cudaEventDisableTiming), "FeatureTracker allocation");
        KESTREL_CUDA(cudaStreamCreateWithFlags(&store_stream_, cudaStreamNonBlocking), "FeatureTracker allocation");
        KESTREL_CUDA(cudaEventCreateWithFlags(&companion_fork_, cudaEventDisableTiming), "FeatureTracker allocation");
        KESTREL_CUDA(cudaEventCreateWithFlags(&companion_ready_, cudaEventDisableTiming), "FeatureTracker allocation");
        KESTREL_CUDA(cudaStreamCreateWithFlags(&companion_stream_, cudaStreamNonBlocking), "FeatureTracker allocation");
        if (lk_stored())
            KESTREL_CUDA(cudaMemset(lk_valid_.get(), 0, cap_ * setup_.levels * sizeof(std::int32_t)),
                         "FeatureTracker allocation");
        if (cfg.anchor.enabled) {
            KESTREL_CUDA(cudaMemset(anchor_valid_.get(), 0, cap_ * sizeof(std::int32_t)), "FeatureTracker allocation");
            anchor_.setup = make_anchor_setup(cfg);
            anchor_.states = anchor_states_.get();
            anchor_.slots = slots_.get();
            anchor_.store = anchor_store_.get();
            anchor_.store_valid = anchor_valid_.get();
            anchor_.prep = anchor_prep_.get();
            anchor_.results = anchor_results_.get();
            anchor_.capacity = static_cast<int>(cap_);
        }
    }
    ~CudaTrackerBackend() override {
        if (store_stream_) (void)cudaStreamSynchronize(store_stream_);
        if (companion_stream_) (void)cudaStreamSynchronize(companion_stream_);
        (void)cudaStreamDestroy(store_stream_);
        (void)cudaStreamDestroy(companion_stream_);
        (void)cudaEventDestroy(companion_fork_);
        (void)cudaEventDestroy(companion_ready_);
        (void)cudaEventDestroy(frame_done_);
        (void)cudaEventDestroy(stored_);
    }
    CudaTrackerBackend(const CudaTrackerBackend&) = delete;
    CudaTrackerBackend& operator=(const CudaTrackerBackend&) = delete;

    Point2f* origins() override { return origins_.get(); }
    LkGuess* guesses() override { return guesses_.get(); }
    std::int32_t* slots() override { return slots_.get(); }
    Point2f* new_points() override { return new_points_.get(); }
    std::int32_t* new_slots() override { return new_slots_.get(); }
    AnchorState* anchor_states() override { return anchor_states_.get(); }
    const AnchorResult* anchor_results() const override { return anchor_results_.get(); }

    void start(HostView frame, int count, StreamHandle stream) override {
        stream_ = stream;
        copy_async(frame, pyr_[cur_].level0(), stream);
        build(stream);
        order_after_store();
        track(count);
        join_companion();
    }

    void start(DeviceView frame, int count, StreamHandle stream) override {
        stream_ = stream;
        copy_async(frame, pyr_[cur_].level0(), stream);
        build(stream);
        order_after_store();
        track(count);
        join_companion();
    }

    const DevicePyramid* device_frame_pyramid() const override { return &pyr_[frame_]; }
    void set_companion(const PyramidCompanion* c) override {
        has_companion_ = c != nullptr;
        if (c) companion_ = *c;
    }

    void wait() override { synchronize(stream_, "FeatureTracker::finish"); }
    const LkResult* results() const override { return results_.get(); }
    const LkResult* back_results() const override { return back_.get(); }

    void detect_async(const std::uint8_t* cell_skip, Size2 grid) override {
        std::copy(cell_skip, cell_skip + cells_, mask_.get());
        KESTREL_CUDA(cudaMemcpyAsync(d_mask_.get(), mask_.get(), cells_, cudaMemcpyHostToDevice, stream_),
                     "FeatureTracker re-detection mask");
        DeviceDetectionMasks masks;
        masks.cell_skip = d_mask_.get();
        masks.cell_grid = grid;
        det_.detect_async(pyr_[cur_].level(0), stream_, masks);
    }
    void detect_wait(std::vector<Keypoint>& out) override {
        synchronize(stream_, "FeatureTracker re-detection");
        out.assign(det_.host_keypoints(), det_.host_keypoints() + det_.host_count());
    }

    /// The stores run on the backend's own stream, after this frame's work: the next frame's upload and
    /// pyramid overlap them, and only its tracking launch waits for them (order_after_store).
    void store_templates(int count) override {
        KESTREL_CUDA(cudaEventRecord(frame_done_, stream_), "FeatureTracker template store");
        KESTREL_CUDA(cudaStreamWaitEvent(store_stream_, frame_done_, 0), "FeatureTracker template store");
        kernels::AnchorStoreLaunch a{};
        if (cfg_.anchor.enabled && count > 0) {
            a.setup = anchor_.setup;
            const DeviceView v = pyr_[cur_].level(0);
            a.ref = {v.data, v.width, v.height, v.pitch};
            a.scale0 = setup_.scale[0];
            a.points = new_points_.get();
            a.slots = new_slots_.get();
            a.store = anchor_store_.get();
            a.store_valid = anchor_valid_.get();
            a.prep = anchor_prep_.get();
            a.capacity = static_cast<int>(cap_);
            a.count = count;
        }
        if (lk_stored() && count > 0) {  // with anchoring, the anchor store in the same launch
            kernels::LkLaunch p{};
            p.setup = setup_;
            device_lk_levels(pyr_[cur_], setup_.levels, p.ref);
            p.points = new_points_.get();
            p.slots = new_slots_.get();
            p.store = lk_store_.get();
            p.store_valid = lk_valid_.get();
            p.prep = stored_levels() ? lk_prep_.get() : nullptr;
            p.capacity = static_cast<int>(cap_);
            p.count = count;
            kernels::launch_lk_store(p, store_stream_, cfg_.anchor.enabled ? &a : nullptr);
        } else if (cfg_.anchor.enabled && count > 0) {
            kernels::launch_anchor_store(a, store_stream_);
        }
        KESTREL_CUDA(cudaEventRecord(stored_, store_stream_), "FeatureTracker template store");
        store_pending_ = true;
    }

    void swap() override { cur_ = 1 - cur_; }

private:
    // The frame's pyramid (level 0 in place). A companion (the stereo right image) is uploaded and built on
    // companion_stream_, forked from the frame's stream after this frame's upload: its copy and pyramid run
    // while this frame's pyramid and tracking do, and the frame's stream joins it after the tracking launch
    // (join_companion), before whatever the caller enqueues next reads it.
    void build(StreamHandle stream) {
        frame_ = cur_;
        if (has_companion_) {
            has_companion_ = false;
            companion_pending_ = true;
            KESTREL_CUDA(cudaEventRecord(companion_fork_, stream), "FeatureTracker companion");
            KESTREL_CUDA(cudaStreamWaitEvent(companion_stream_, companion_fork_, 0), "FeatureTracker companion");
            if (companion_.on_device)
                copy_async(companion_.device, companion_.pyramid->level0(), companion_stream_);
            else
                copy_async(companion_.host, companion_.pyramid->level0(), companion_stream_);
            companion_.pyramid->build(companion_stream_);
            KESTREL_CUDA(cudaEventRecord(companion_ready_, companion_stream_), "FeatureTracker companion");
        }
        pyr_[cur_].build(stream);
    }

    void join_companion() {
        if (!companion_pending_) return;
        companion_pending_ = false;
        KESTREL_CUDA(cudaStreamWaitEvent(stream_, companion_ready_, 0), "FeatureTracker companion");
    }

    // finish() leaves the stores of new and re-anchored tracks in flight on store_stream_; the next frame's
    // tracking (on whatever stream it comes) reads them, so it waits for them. (The stores read the pyramid
    // of their frame, which the next frame does not write: it uploads into the other one.)
    void order_after_store() {
        if (!store_pending_) return;
        KESTREL_CUDA(cudaStreamWaitEvent(stream_, stored_, 0), "FeatureTracker template store");
        store_pending_ = false;
    }

    /// The tracking launches of one frame: LK of every live track with, when anchoring, each track's fit in
    /// the same launch (kernels/track/lk_track.cu); then, with forward-backward, the backward pass.
    void track(int count) {
        if (count == 0) return;
        const DevicePyramid& prev = pyr_[1 - cur_];
        const DevicePyramid& cur = pyr_[cur_];
        kernels::LkLaunch p{};
        p.setup = setup_;
        device_lk_levels(cur, setup_.levels, p.cur);
        p.guesses = guesses_.get();
        p.results = results_.get();
        p.capacity = static_cast<int>(cap_);
        p.count = count;
        p.with_anchor = cfg_.anchor.enabled ? 1 : 0;
        p.anchor = anchor_;
        if (first_frame()) {
            p.slots = slots_.get();
            p.store = lk_store_.get();
            p.store_valid = lk_valid_.get();
            kernels::launch_lk_track_stored(p, stream_);
        } else {
            device_lk_levels(prev, setup_.levels, p.ref);
            p.points = origins_.get();
            if (lk_stored()) {  // the stored templates, for the tracks detail::stored_patch_from allows
                p.slots = slots_.get();
                p.store = lk_store_.get();
                p.store_valid = lk_valid_.get();
                p.prep = lk_prep_.get();
            }
            kernels::launch_lk_track_live(p, stream_);
        }
        if (cfg_.forward_backward) {
            kernels::launch_lk_backward_inputs(results_.get(), origins_.get(), back_points_.get(), back_guesses_.get(),
                                               count, stream_);
            kernels::LkLaunch b{};
            b.setup = setup_;
            device_lk_levels(cur, setup_.levels, b.ref);
            device_lk_levels(prev, setup_.levels, b.cur);
            b.points = back_points_.get();
            b.guesses = back_guesses_.get();
            b.results = back_.get();
            b.capacity = static_cast<int>(cap_);
            b.count = count;
            kernels::launch_lk_track_live(b, stream_);
        }
    }

    bool first_frame() const { return cfg_.lk.template_source == TemplateSource::FirstFrame; }
    /// Templates stored per track: first-frame templates, or the levels from setup_.stored_from_level on.
    bool lk_stored() const { return first_frame() || stored_levels(); }
    bool stored_levels() const { return setup_.stored_from_level < setup_.levels; }

    TrackerConfig cfg_;
    LkSetup setup_;
    DevicePyramid pyr_[2];
    int cur_ = 0;
    int frame_ = 0;  // the last started frame's pyramid
    PyramidCompanion companion_{};
    bool has_companion_ = false;
    FeatureDetector det_;
    std::size_t cap_;
    Pinned<Point2f> origins_;
    Pinned<LkGuess> guesses_;
    Pinned<std::int32_t> slots_;
    Pinned<Point2f> new_points_;
    Pinned<std::int32_t> new_slots_;
    Pinned<LkResult> results_, back_;
    DeviceBuf<Point2f> back_points_;
    DeviceBuf<LkGuess> back_guesses_;
    DeviceBuf<float> lk_store_;               // first-frame templates (detail::store_level_offset layout)
    DeviceBuf<std::int32_t> lk_valid_;        // their per-level flags
    DeviceBuf<LkLevelPrep> lk_prep_;          // per slot and level: lk_prepare_level of the stored templates
    Pinned<AnchorState> anchor_states_;
    Pinned<AnchorResult> anchor_results_;
    DeviceBuf<float> anchor_store_;           // level-0 reference patches of the anchor fit
    DeviceBuf<std::int32_t> anchor_valid_;
    DeviceBuf<AnchorPrep> anchor_prep_;       // per slot: detail::anchor_prepare of its template
    kernels::AnchorFuse anchor_{};            // the fit's fixed inputs, run inside the LK launch
    std::size_t cells_;
    Pinned<std::uint8_t> mask_;
    DeviceBuf<std::uint8_t> d_mask_;
    StreamHandle stream_ = nullptr;
    cudaEvent_t companion_fork_ = nullptr;   // the frame's upload is enqueued (recorded on stream_)
    cudaEvent_t companion_ready_ = nullptr;  // the companion's level 0 and pyramid are done (companion_stream_)
    cudaStream_t companion_stream_ = nullptr;
    bool companion_pending_ = false;
    cudaEvent_t stored_ = nullptr;      // the last stores are done (recorded on store_stream_)
    cudaEvent_t frame_done_ = nullptr;  // the frame the stores read is done (recorded on stream_)
    cudaStream_t store_stream_ = nullptr;
    bool store_pending_ = false;
};

class CudaStreamFan final : public StreamFan {
public:
    explicit CudaStreamFan(int n) : streams_(static_cast<std::size_t>(n), nullptr), done_(static_cast<std::size_t>(n), nullptr) {
        try {
            KESTREL_CUDA(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "MultiCameraTracker allocation");
            for (std::size_t i = 0; i < streams_.size(); ++i) {
                KESTREL_CUDA(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking), "MultiCameraTracker allocation");
                KESTREL_CUDA(cudaEventCreateWithFlags(&done_[i], cudaEventDisableTiming), "MultiCameraTracker allocation");
            }
        } catch (...) {
            release();
            throw;
        }
    }
    ~CudaStreamFan() override { release(); }
    CudaStreamFan(const CudaStreamFan&) = delete;
    CudaStreamFan& operator=(const CudaStreamFan&) = delete;

    StreamHandle stream(int camera) const override { return streams_[static_cast<std::size_t>(camera)]; }
    void fork(StreamHandle from) override {
        KESTREL_CUDA(cudaEventRecord(forked_, from), "MultiCameraTracker::track_async");
        for (cudaStream_t s : streams_) KESTREL_CUDA(cudaStreamWaitEvent(s, forked_, 0), "MultiCameraTracker::track_async");
    }
    void join(StreamHandle into) override {
        for (std::size_t i = 0; i < streams_.size(); ++i) {
            KESTREL_CUDA(cudaEventRecord(done_[i], streams_[i]), "MultiCameraTracker::track_async");
            KESTREL_CUDA(cudaStreamWaitEvent(into, done_[i], 0), "MultiCameraTracker::track_async");
        }
    }

private:
    void release() {
        for (cudaEvent_t e : done_)
            if (e) (void)cudaEventDestroy(e);
        for (cudaStream_t s : streams_)
            if (s) (void)cudaStreamDestroy(s);
        if (forked_) (void)cudaEventDestroy(forked_);
    }
    std::vector<cudaStream_t> streams_;
    std::vector<cudaEvent_t> done_;
    cudaEvent_t forked_ = nullptr;
};

}  // namespace

std::unique_ptr<StreamFan> make_stream_fan(int cameras) { return std::make_unique<CudaStreamFan>(cameras); }

std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int width, int height, const TrackerConfig& cfg,
                                                          int pyramid_levels) {
    return std::make_unique<CudaTrackerBackend>(width, height, cfg, PyramidConfig{pyramid_levels, cfg.lk.pyramid.scale});
}

}  // namespace kestrel::detail
