// StereoTracker's CUDA matching: the track area's LK kernels, launched from the left frame's pyramid into the
// right one (templates from the left image at the staged points, tracked from the seeds), then the backward
// inputs (the forward results, NaN where lost; guesses at the left points) and the LK back into the left pyramid.
// Inputs and results live in pinned memory read and written by the kernels through unified addressing: three
// launches and one wait, no copy to enqueue. Same rules as the CPU matcher (stereo_matcher_cpu.cpp), so the same
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
          cap_(static_cast<std::size_t>(capacity)),
          points_(cap_, kStage), seeds_(cap_, kStage), forward_(cap_, kStage), backward_(cap_, kStage),
          back_points_(cap_, kStage), back_guesses_(cap_, kStage) {}

    Point2f* points() override { return points_.get(); }
    LkGuess* seeds() override { return seeds_.get(); }
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
            f.results = forward_.get();
            f.capacity = static_cast<int>(cap_);
            f.count = count;
            kernels::launch_lk_track_live(f, stream);
            kernels::launch_lk_backward_inputs(forward_.get(), points_.get(), back_points_.get(), back_guesses_.get(),
                                               count, stream);
            kernels::LkLaunch b = f;
            device_lk_levels(right, setup_.levels, b.ref);
            device_lk_levels(left, setup_.levels, b.cur);
            b.points = back_points_.get();
            b.guesses = back_guesses_.get();
            b.results = backward_.get();
            kernels::launch_lk_track_live(b, stream);
        }
        synchronize(stream, "StereoTracker::finish (matching)");
    }

private:
    static constexpr const char* kStage = "StereoTracker allocation";
    LkSetup setup_;
    std::size_t cap_;
    PinnedBuffer<Point2f> points_;
    PinnedBuffer<LkGuess> seeds_;
    PinnedBuffer<LkResult> forward_, backward_;
    DeviceBuffer<Point2f> back_points_;
    DeviceBuffer<LkGuess> back_guesses_;
};

}  // namespace

std::unique_ptr<StereoMatcher> make_cuda_stereo_matcher(const StereoConfig& cfg, int capacity) {
    return std::make_unique<CudaStereoMatcher>(cfg, capacity);
}

}  // namespace kestrel::detail
