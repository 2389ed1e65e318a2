// FeatureTracker's CUDA backend: two DevicePyramids used in turn (previous / current), the LK kernels
// (with each track's anchor fit in the same launch) reading their inputs from pinned staging buffers and
// writing their results to pinned memory (unified addressing: no copies to enqueue), and the
// FeatureDetector on the current level 0. Where the frame is certain to re-detect, a one-block kernel plans the
// re-detection after the tracking (kernels/track/redetect_plan.cu: the cell mask) and the detection follows in the
// same stream; the frame's one synchronization then serves both. With KESTREL_REDETECT_PLAN=likely, frames that may
// re-detect are planned too, the detection the body of a conditional graph node (CUDA 12.4 and later) that runs
// when the plan says so.
// Everything is allocated in the constructor (the detector on its first call, the plan's graphs on their first
// use).
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "anchor_internal.hpp"
#include "kernels/track/lk_track.cuh"
#include "kernels/track/redetect_plan.cuh"
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
          origins_(cap_), guesses_(cap_), skips_(cap_), slots_(cap_), new_points_(cap_), new_slots_(cap_), results_(cap_),
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
          mask_(cells_), d_mask_(cells_), plan_mask_(cells_), plan_out_(2) {
        const Size2 grid = grid_size(width, height, cfg.detector);
        grid_ = grid;
        rule_.verdict = verdict_rule(cfg);
        rule_.reanchor_test = cfg.anchor.enabled && cfg.anchor.reanchor ? 1 : 0;
        rule_.template_side = cfg.lk.patch_size;
        rule_.width = width;
        rule_.height = height;
        rule_.cell_width = cfg.detector.cell_width;
        rule_.cell_height = cfg.detector.cell_height;
        rule_.cols = grid.width;
        rule_.rows = grid.height;
        rule_.fraction = cfg.redetect_fraction;
        rule_.target = cfg.target_features;
        plan_out_.get()[0] = plan_out_.get()[1] = 0;
        // KESTREL_REDETECT_PLAN = off | certain | likely (docs/tracker.md): no plan; the frames certain to re-detect
        // (unset or empty); also the frames that may, through the conditional graph.
        const char* plan_env = std::getenv("KESTREL_REDETECT_PLAN");
        const std::string plan_mode = plan_env ? plan_env : "";
        if (plan_mode != "" && plan_mode != "off" && plan_mode != "certain" && plan_mode != "likely")
            throw InvalidArgument("KESTREL_REDETECT_PLAN", "kestrel: environment variable KESTREL_REDETECT_PLAN = '" +
                                                               plan_mode + "' must be off, certain or likely (or unset)");
        plan_mode_ = plan_mode == "off" ? 0 : (plan_mode == "likely" ? 2 : 1);
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
        release_plan_graphs();
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
    std::uint8_t* coarse_skips() override { return skips_.get(); }
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
        plan_redetection(count);
        join_companion();
    }

    void start(DeviceView frame, int count, StreamHandle stream) override {
        stream_ = stream;
        copy_async(frame, pyr_[cur_].level0(), stream);
        build(stream);
        order_after_store();
        track(count);
        plan_redetection(count);
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
        detector_used_ = true;
        collected_ = false;
        ++counts_.enqueued_after;
    }
    void detect_wait(std::vector<Keypoint>& out) override {
        if (!collected_) synchronize(stream_, "FeatureTracker re-detection");  // else wait() already did
        collected_ = false;
        out.assign(det_.host_keypoints(), det_.host_keypoints() + det_.host_count());
#if CUDART_VERSION >= 12040
        // The detector has run at this size: the plan's graphs can be built now, on a frame that re-detected
        // anyway, rather than on a later frame that may not.
        if (plan_mode_ == 2) {
            (void)plan_graph(0);
            (void)plan_graph(1);
        }
#endif
    }

    void set_redetect_hint(RedetectHint hint) override { hint_ = hint; }
    bool detection_ran(const std::uint8_t* cell_skip) override {
        const bool ran = planned_ == Planned::Direct || (planned_ == Planned::Graph && plan_out_.get()[0] != 0);
        planned_ = Planned::None;
        if (!ran || std::memcmp(plan_mask_.get(), cell_skip, cells_) != 0) return false;
        collected_ = true;
        ++counts_.used;
        return true;
    }
    RedetectCounts redetect_counts() const override { return counts_; }

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
    enum class Planned { None, Direct, Graph };

    /// The plan's launch for `count` tracks (kernels/track/redetect_plan.cuh).
    kernels::RedetectPlanLaunch plan_launch(int count) const {
        kernels::RedetectPlanLaunch p{};
        p.results = results_.get();
        p.back = cfg_.forward_backward ? back_.get() : nullptr;
        p.origins = origins_.get();
        p.anchors = cfg_.anchor.enabled ? anchor_results_.get() : nullptr;
        p.rule = rule_;
        p.count = count;
        p.mask = d_mask_.get();
        p.host_mask = plan_mask_.get();
        p.out = plan_out_.get();
        return p;
    }

    DeviceDetectionMasks plan_masks() const {
        DeviceDetectionMasks masks;
        masks.cell_skip = d_mask_.get();
        masks.cell_grid = grid_;
        return masks;
    }

    /// After the tracking launches: the re-detection plan and, as the tracker's hint says, the detection.
    void plan_redetection(int count) {
        RedetectHint hint = hint_;
        hint_ = RedetectHint::None;
        if (plan_mode_ == 0 || (plan_mode_ == 1 && hint == RedetectHint::Likely)) hint = RedetectHint::None;
        planned_ = Planned::None;
        collected_ = false;
        if (hint == RedetectHint::Certain) {
            kernels::launch_redetect_plan(plan_launch(count), stream_);
            det_.detect_async(pyr_[cur_].level(0), stream_, plan_masks());
            detector_used_ = true;
            planned_ = Planned::Direct;
            ++counts_.planned;
            return;
        }
#if CUDART_VERSION >= 12040
        if (hint == RedetectHint::Likely && plan_graph(cur_)) {
            PlanGraph& g = graphs_[cur_];
            kernels::RedetectPlanLaunch p = plan_launch(count);
            void* args[] = {&p};
            const cudaKernelNodeParams kp = plan_node_params(p, g.handle, args);
            KESTREL_CUDA(cudaGraphExecKernelNodeSetParams(g.exec, g.plan, &kp), "FeatureTracker re-detection plan");
            KESTREL_CUDA(cudaGraphLaunch(g.exec, stream_), "FeatureTracker re-detection plan");
            planned_ = Planned::Graph;
            ++counts_.planned;
            ++counts_.conditional;
        }
#endif
    }

#if CUDART_VERSION >= 12040
    /// The plan kernel as a graph node: `p` sets `handle` (the detection's condition); `args` must hold `&p` and
    /// outlive the call that takes the result.
    static cudaKernelNodeParams plan_node_params(kernels::RedetectPlanLaunch& p, cudaGraphConditionalHandle handle,
                                                 void** args) {
        p.condition = static_cast<unsigned long long>(handle);
        p.set_condition = 1;
        const kernels::RedetectPlanShape shape = kernels::redetect_plan_shape();
        cudaKernelNodeParams kp{};
        kp.func = const_cast<void*>(shape.func);
        kp.gridDim = shape.grid;
        kp.blockDim = shape.block;
        kp.sharedMemBytes = 0;
        kp.kernelParams = args;
        kp.extra = nullptr;
        return kp;
    }

    /// The plan and its conditional detection as one graph per pyramid (the detection reads the frame's level 0):
    /// built on first use, once the detector has run at this size (its first call allocates). False when it
    /// cannot be built (an older driver, a detection that cannot be captured): Likely frames then re-detect
    /// after the wait, as without a plan.
    bool plan_graph(int k) {
        PlanGraph& g = graphs_[k];
        if (g.exec) return true;
        if (g.tried || !detector_used_) return false;
        g.tried = true;
        int driver = 0;
        if (cudaDriverGetVersion(&driver) != cudaSuccess || driver < 12040) {
            (void)cudaGetLastError();
            counts_.graph_failure = "driver older than CUDA 12.4";
            return false;
        }
        if (!capture_stream_ && cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking) != cudaSuccess) {
            (void)cudaGetLastError();
            capture_stream_ = nullptr;
            return false;
        }
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        const char* step = "cudaGraphCreate";
        const auto fail = [&] {
            if (exec) (void)cudaGraphExecDestroy(exec);
            if (graph) (void)cudaGraphDestroy(graph);
            (void)cudaGetLastError();
            counts_.graph_failure = step;
            return false;
        };
        if (cudaGraphCreate(&graph, 0) != cudaSuccess) return fail();
        cudaGraphConditionalHandle handle{};
        step = "cudaGraphConditionalHandleCreate";
        if (cudaGraphConditionalHandleCreate(&handle, graph, 0, cudaGraphCondAssignDefault) != cudaSuccess) return fail();
        kernels::RedetectPlanLaunch p = plan_launch(0);
        void* args[] = {&p};
        const cudaKernelNodeParams kp = plan_node_params(p, handle, args);
        cudaGraphNode_t plan = nullptr, cond = nullptr;
        step = "cudaGraphAddKernelNode";
        if (cudaGraphAddKernelNode(&plan, graph, nullptr, 0, &kp) != cudaSuccess) return fail();
        cudaGraphNodeParams cp{};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = handle;
        cp.conditional.type = cudaGraphCondTypeIf;
        cp.conditional.size = 1;
        step = "cudaGraphAddNode (conditional)";
#if CUDART_VERSION >= 13000
        if (cudaGraphAddNode(&cond, graph, &plan, nullptr, 1, &cp) != cudaSuccess) return fail();
#else
        if (cudaGraphAddNode(&cond, graph, &plan, 1, &cp) != cudaSuccess) return fail();
#endif
        cudaGraph_t body = cp.conditional.phGraph_out[0];
        step = "cudaStreamBeginCaptureToGraph";
        if (cudaStreamBeginCaptureToGraph(capture_stream_, body, nullptr, nullptr, 0,
                                          cudaStreamCaptureModeThreadLocal) != cudaSuccess)
            return fail();
        bool captured = true;
        try {
            det_.detect_async(pyr_[k].level(0), capture_stream_, plan_masks());
        } catch (...) {
            captured = false;
        }
        cudaGraph_t out = nullptr;
        step = "the detection's capture";
        if (cudaStreamEndCapture(capture_stream_, &out) != cudaSuccess || !captured) return fail();
        step = "cudaGraphInstantiateWithFlags";
        if (cudaGraphInstantiateWithFlags(&exec, graph, 0) != cudaSuccess) return fail();
        g.graph = graph;
        g.exec = exec;
        g.plan = plan;
        g.handle = handle;
        return true;
    }
#endif

    void release_plan_graphs() {
        bool any = false;
        for (PlanGraph& g : graphs_) any = any || g.exec != nullptr;
        if (any) (void)cudaDeviceSynchronize();  // a launched plan may still run
        for (PlanGraph& g : graphs_) {
            if (g.exec) (void)cudaGraphExecDestroy(g.exec);
            if (g.graph) (void)cudaGraphDestroy(g.graph);
            g = PlanGraph{};
        }
        if (capture_stream_) (void)cudaStreamDestroy(capture_stream_);
        capture_stream_ = nullptr;
    }

    // The frame's pyramid (level 0 in place). A companion (the stereo right image) is uploaded and built on
    // companion_stream_, forked from the frame's stream after this frame's upload (companion_fork_): its copy and
    // pyramid run while this frame's pyramid and tracking do. The host enqueues them after the tracking launch
    // (join_companion), so that their calls do not delay it; then the frame's stream joins them, before whatever
    // the caller enqueues next reads the companion.
    void build(StreamHandle stream) {
        frame_ = cur_;
        if (has_companion_) {
            has_companion_ = false;
            companion_pending_ = true;
            KESTREL_CUDA(cudaEventRecord(companion_fork_, stream), "FeatureTracker companion");
        }
        pyr_[cur_].build(stream);
    }

    void join_companion() {
        if (!companion_pending_) return;
        companion_pending_ = false;
        KESTREL_CUDA(cudaStreamWaitEvent(companion_stream_, companion_fork_, 0), "FeatureTracker companion");
        if (companion_.on_device)
            copy_async(companion_.device, companion_.pyramid->level0(), companion_stream_);
        else
            copy_async(companion_.host, companion_.pyramid->level0(), companion_stream_);
        companion_.pyramid->build(companion_stream_);
        KESTREL_CUDA(cudaEventRecord(companion_ready_, companion_stream_), "FeatureTracker companion");
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
        p.skips = skips_.get();
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
    Pinned<std::uint8_t> skips_;
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
    DeviceBuf<std::uint8_t> d_mask_;  // the detection's cell mask: uploaded from mask_, or written by the plan
    // The re-detection plan (plan_redetection): its rules, the mask it wrote (a mapped copy) and [re-detects, live].
    Size2 grid_{};
    RedetectRule rule_{};
    Pinned<std::uint8_t> plan_mask_;
    Pinned<int> plan_out_;
    RedetectHint hint_ = RedetectHint::None;
    int plan_mode_ = 1;                // KESTREL_REDETECT_PLAN: 0 off, 1 certain frames (default), 2 likely ones too
    Planned planned_ = Planned::None;  // what the last start() enqueued
    bool collected_ = false;           // the planned detection is used: wait() synchronized it
    bool detector_used_ = false;       // the detector ran at this size (its first call allocates)
    RedetectCounts counts_{};
    struct PlanGraph {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        cudaGraphNode_t plan = nullptr;
#if CUDART_VERSION >= 12040
        cudaGraphConditionalHandle handle{};
#endif
        bool tried = false;
    };
    PlanGraph graphs_[2];  // per pyramid (cur_)
    cudaStream_t capture_stream_ = nullptr;
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
