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
          cap_(static_cast<std::size_t>(capacity)),
          points_(cap_, kStage), seeds_(cap_, kStage), refine_(cap_, kStage), forward_(cap_, kStage), backward_(cap_, kStage) {}

    Point2f* points() override { return points_.get(); }
    LkGuess* seeds() override { return seeds_.get(); }
    std::int32_t* refine() override { return refine_.get(); }
    const LkResult* forward() const override { return forward_.get(); }
    const LkResult* backward() const override { return backward_.get(); }

    void match(const DevicePyramid& left, const DevicePyramid& right, int count, StreamHandle stream) override {
        if (count > 0) {
            kernels::LkLaunch f{};
            f.setup = setup_;
            device_lk_levels(left, setup_.levels, f.ref);
            device_lk_levels(right, setup_.levels, f.cur);
            f.points = points_.get();
            f.guesses = seeds_.get();
            f.refine_setup = refine_setup_;
            f.refine = refine_.get();
            f.results = forward_.get();
            f.back_results = backward_.get();
            f.capacity = static_cast<int>(cap_);
            f.count = count;
            kernels::launch_lk_track_round_trip(f, stream);
        }
        synchronize(stream, "StereoTracker::finish (matching)");
    }

private:
    static constexpr const char* kStage = "StereoTracker allocation";
    LkSetup setup_, refine_setup_;
    std::size_t cap_;
    PinnedBuffer<Point2f> points_;
    PinnedBuffer<LkGuess> seeds_;
    PinnedBuffer<std::int32_t> refine_;
    PinnedBuffer<LkResult> forward_, backward_;
};

}  // namespace

std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig& cfg, int capacity) {
    return std::make_unique<CudaStereoMatcher>(cfg, capacity);
}

}  // namespace kestrel::detail
