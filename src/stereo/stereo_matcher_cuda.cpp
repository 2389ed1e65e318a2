// StereoTracker's CUDA matching: the track area's LK round-trip kernel, one warp per track: from the left frame's
// pyramid into the right one (template from the left image at the staged point, tracked from the seed), then back
// into the left one (template from the right image at the forward result, tracked from the left point). Inputs
// and results live in pinned memory read and written by the kernel through unified addressing: one launch and
// one wait, no copy to enqueue. Same rules as the CPU matcher (stereo_matcher_cpu.cpp), so the same
// numbers.
#include "kernels/track/lk_track.cuh"
#include "src/core/buffers_cuda.hpp"
#include "src/track/lk_internal.hpp"
#include "stereo_matcher.hpp"

namespace kestrel::detail {
namespace {

class CudaStereoMatcher final : public StereoMatcher {
public:
    CudaStereoMatcher(const StereoConfig& cfg, int capacity)
        : setup_(make_lk_setup(cfg.match.lk)),
          refine_setup_(make_lk_setup(refine_lk_config(cfg))),
          trust_distance_(cfg.match.trust_distance),
          cap_(static_cast<std::size_t>(capacity)),
          points_(cap_, kStage), seeds_(cap_, kStage), refine_(cap_, kStage), forward_(cap_, kStage), backward_(cap_, kStage),
          stage_offsets_(cap_, kStage), stage_refine_(cap_, kStage), staged_points_(cap_, kStage),
          staged_forward_(cap_, kStage), staged_backward_(cap_, kStage) {}

    Point2f* points() override { return points_.get(); }
    LkGuess* seeds() override { return seeds_.get(); }
    std::int32_t* refine() override { return refine_.get(); }
    const LkResult* forward() const override { return forward_.get(); }
    const LkResult* backward() const override { return backward_.get(); }

    bool can_stage() const override { return true; }
    Point2f* stage_offsets() override { return stage_offsets_.get(); }
    std::int32_t* stage_refine() override { return stage_refine_.get(); }
    const Point2f* staged_points() const override { return staged_points_.get(); }
    const LkResult* staged_forward() const override { return staged_forward_.get(); }
    const LkResult* staged_backward() const override { return staged_backward_.get(); }

    void enqueue_staged(const DevicePyramid& left, const DevicePyramid& right, const TrackerFrame& frame, int count,
                        StreamHandle stream) override {
        if (count <= 0) return;
        kernels::LkLaunch f = launch(left, right, count);
        f.refine = stage_refine_.get();
        f.results = staged_forward_.get();
        f.back_results = staged_backward_.get();
        f.stage.lk = frame.lk;
        f.stage.back = frame.back;
        f.stage.origins = frame.origins;
        f.stage.anchor = frame.anchor;
        f.stage.rule = frame.rule;
        f.stage.offsets = stage_offsets_.get();
        f.stage.points = staged_points_.get();
        kernels::launch_lk_track_round_trip(f, stream);
    }

    void match(const DevicePyramid& left, const DevicePyramid& right, int count, StreamHandle stream) override {
        if (count <= 0) return;  // nothing enqueued: nothing to wait for
        kernels::LkLaunch f = launch(left, right, count);
        f.points = points_.get();
        f.guesses = seeds_.get();
        f.refine = refine_.get();
        f.results = forward_.get();
        f.back_results = backward_.get();
        kernels::launch_lk_track_round_trip(f, stream);
        synchronize(stream, "StereoTracker::finish (matching)");
    }

private:
    kernels::LkLaunch launch(const DevicePyramid& left, const DevicePyramid& right, int count) const {
        kernels::LkLaunch f{};
        f.setup = setup_;
        f.refine_setup = refine_setup_;
        f.trust_distance = trust_distance_;
        device_lk_levels(left, setup_.levels, f.ref);
        device_lk_levels(right, setup_.levels, f.cur);
        f.capacity = static_cast<int>(cap_);
        f.count = count;
        return f;
    }

    static constexpr const char* kStage = "StereoTracker allocation";
    LkSetup setup_, refine_setup_;
    float trust_distance_;
    std::size_t cap_;
    PinnedBuffer<Point2f> points_;
    PinnedBuffer<LkGuess> seeds_;
    PinnedBuffer<std::int32_t> refine_;
    PinnedBuffer<LkResult> forward_, backward_;
    // The matching of the tracker's frame in flight (enqueue_staged).
    PinnedBuffer<Point2f> stage_offsets_;
    PinnedBuffer<std::int32_t> stage_refine_;
    PinnedBuffer<Point2f> staged_points_;
    PinnedBuffer<LkResult> staged_forward_, staged_backward_;
};

}  // namespace

std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig& cfg, int capacity) {
    return std::make_unique<CudaStereoMatcher>(cfg, capacity);
}

}  // namespace kestrel::detail
