// FeatureTracker's CUDA backend: two DevicePyramids used in turn (previous / current), the GPU LK
// tracker reading its inputs from pinned staging buffers and writing its results to pinned memory
// (unified addressing: no copies to enqueue), and the FeatureDetector on the current level 0.
// Everything is allocated in the constructor (the detector on its first call).
#include <cuda_runtime.h>

#include <utility>

#include "anchor_internal.hpp"
#include "kernels/track/anchor.cuh"
#include "kernels/track/lk_track.cuh"
#include "kernels/common/cuda_check.hpp"
#include "feature_tracker_backend.hpp"
#include "lk_internal.hpp"

namespace kestrel::detail {
namespace {

template <typename T>
class Pinned {
public:
    explicit Pinned(std::size_t n) {
        KESTREL_CUDA(cudaMallocHost(reinterpret_cast<void**>(&p_), n * sizeof(T) + 1), "FeatureTracker allocation");
    }
    ~Pinned() { (void)cudaFreeHost(p_); }
    Pinned(const Pinned&) = delete;
    Pinned& operator=(const Pinned&) = delete;
    T* get() const { return p_; }

private:
    T* p_ = nullptr;
};

template <typename T>
class DeviceBuf {
public:
    explicit DeviceBuf(std::size_t n) {
        KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T) + 1), "FeatureTracker allocation");
    }
    ~DeviceBuf() { (void)cudaFree(p_); }
    DeviceBuf(const DeviceBuf&) = delete;
    DeviceBuf& operator=(const DeviceBuf&) = delete;
    T* get() const { return p_; }

private:
    T* p_ = nullptr;
};

class CudaTrackerBackend final : public TrackerBackend {
public:
    CudaTrackerBackend(int width, int height, const TrackerConfig& cfg)
        : cfg_(cfg),
          pyr_{DevicePyramid(width, height, cfg.lk.pyramid), DevicePyramid(width, height, cfg.lk.pyramid)},
          lk_(cfg.lk, cfg.target_features),
          det_(cfg.detector, Backend::Cuda),
          cap_(static_cast<std::size_t>(cfg.target_features)),
          origins_(cap_), guesses_(cap_), slots_(cap_), new_points_(cap_), new_slots_(cap_), results_(cap_),
          back_(cap_), back_points_(cap_), back_guesses_(cap_),
          anchor_setup_(make_anchor_setup(cfg)), anchor_store_setup_(make_lk_setup(cfg.lk)),
          anchor_states_(cap_), anchor_results_(cap_),
          anchor_store_(cfg.anchor.enabled ? cap_ * 3 * static_cast<std::size_t>(cfg.lk.patch_size * cfg.lk.patch_size) : 0),
          anchor_valid_(cfg.anchor.enabled ? cap_ : 0),
          cells_(static_cast<std::size_t>(grid_size(width, height, cfg.detector).width) *
                 static_cast<std::size_t>(grid_size(width, height, cfg.detector).height)),
          mask_(cells_), d_mask_(cells_) {
        KESTREL_CUDA(cudaEventCreateWithFlags(&stored_, cudaEventDisableTiming), "FeatureTracker allocation");
        // The anchor store holds level 0 only: the LK store layout with one level.
        anchor_store_setup_.levels = 1;
        if (cfg.anchor.enabled)
            KESTREL_CUDA(cudaMemset(anchor_valid_.get(), 0, cap_ * sizeof(std::int32_t)), "FeatureTracker allocation");
    }
    ~CudaTrackerBackend() override { (void)cudaEventDestroy(stored_); }
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
        order_after_store(stream);
        stream_ = stream;
        copy_async(frame, pyr_[cur_].level0(), stream);
        pyr_[cur_].build(stream);
        track(count);
    }

    void start(DeviceView frame, int count, StreamHandle stream) override {
        order_after_store(stream);
        stream_ = stream;
        pyr_[cur_].build(frame, stream);
        track(count);
    }

    void wait() override { synchronize(stream_, "FeatureTracker::finish"); }
    const LkResult* results() const override { return results_.get(); }
    const LkResult* back_results() const override { return back_.get(); }

    void detect(const std::uint8_t* cell_skip, Size2 grid, std::vector<Keypoint>& out) override {
        std::copy(cell_skip, cell_skip + cells_, mask_.get());
        KESTREL_CUDA(cudaMemcpyAsync(d_mask_.get(), mask_.get(), cells_, cudaMemcpyHostToDevice, stream_),
                     "FeatureTracker re-detection mask");
        DeviceDetectionMasks masks;
        masks.cell_skip = d_mask_.get();
        masks.cell_grid = grid;
        det_.detect_async(pyr_[cur_].level(0), stream_, masks);
        synchronize(stream_, "FeatureTracker re-detection");
        out.assign(det_.host_keypoints(), det_.host_keypoints() + det_.host_count());
    }

    void store_templates(int count) override {
        if (cfg_.lk.template_source == TemplateSource::FirstFrame)
            lk_.store_templates_async(pyr_[cur_], new_points_.get(), new_slots_.get(), count, stream_);
        if (cfg_.anchor.enabled && count > 0) {
            kernels::LkLaunch p{};
            p.setup = anchor_store_setup_;
            const DeviceView v = pyr_[cur_].level(0);
            p.ref[0] = {v.data, v.width, v.height, v.pitch};
            p.points = new_points_.get();
            p.slots = new_slots_.get();
            p.store = anchor_store_.get();
            p.store_valid = anchor_valid_.get();
            p.capacity = static_cast<int>(cap_);
            p.count = count;
            kernels::launch_lk_store(p, stream_);
        }
        KESTREL_CUDA(cudaEventRecord(stored_, stream_), "FeatureTracker template store");
        store_pending_ = true;
    }

    void swap() override { cur_ = 1 - cur_; }

private:
    // finish() leaves the template store of new tracks in flight; a next frame on another stream
    // must not read the store before it is written.
    void order_after_store(StreamHandle stream) {
        if (!store_pending_) return;
        if (stream != stream_)
            KESTREL_CUDA(cudaStreamWaitEvent(stream, stored_, 0), "FeatureTracker template store");
        store_pending_ = false;
    }

    void track(int count) {
        if (count == 0) return;
        const DevicePyramid& prev = pyr_[1 - cur_];
        const DevicePyramid& cur = pyr_[cur_];
        if (cfg_.lk.template_source == TemplateSource::FirstFrame)
            lk_.track_stored_async(cur, slots_.get(), guesses_.get(), results_.get(), count, stream_);
        else
            lk_.track_async(prev, cur, origins_.get(), guesses_.get(), results_.get(), count, stream_);
        if (cfg_.forward_backward) {
            kernels::launch_lk_backward_inputs(results_.get(), origins_.get(), back_points_.get(), back_guesses_.get(),
                                               count, stream_);
            lk_.track_async(cur, prev, back_points_.get(), back_guesses_.get(), back_.get(), count, stream_);
        }
        if (cfg_.anchor.enabled) {
            kernels::AnchorLaunch a{};
            a.setup = anchor_setup_;
            const DeviceView v = cur.level(0);
            a.cur = {v.data, v.width, v.height, v.pitch};
            a.forward = results_.get();
            a.states = anchor_states_.get();
            a.slots = slots_.get();
            a.store = anchor_store_.get();
            a.store_valid = anchor_valid_.get();
            a.results = anchor_results_.get();
            a.capacity = static_cast<int>(cap_);
            a.count = count;
            kernels::launch_anchor(a, stream_);
        }
    }

    TrackerConfig cfg_;
    DevicePyramid pyr_[2];
    int cur_ = 0;
    DeviceLkTracker lk_;
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
    AnchorSetup anchor_setup_;
    LkSetup anchor_store_setup_;
    Pinned<AnchorState> anchor_states_;
    Pinned<AnchorResult> anchor_results_;
    DeviceBuf<float> anchor_store_;
    DeviceBuf<std::int32_t> anchor_valid_;
    std::size_t cells_;
    Pinned<std::uint8_t> mask_;
    DeviceBuf<std::uint8_t> d_mask_;
    StreamHandle stream_ = nullptr;
    cudaEvent_t stored_ = nullptr;
    bool store_pending_ = false;
};

}  // namespace

std::unique_ptr<TrackerBackend> make_cuda_tracker_backend(int width, int height, const TrackerConfig& cfg) {
    return std::make_unique<CudaTrackerBackend>(width, height, cfg);
}

}  // namespace kestrel::detail
