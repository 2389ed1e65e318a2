// StereoTracker's CPU matching: the LK host engine (src/track/lk_cpu.cpp, the warp emulated lane by lane) run
// from the left pyramid into the right one and back, each track in its own task of the matcher's pool (each
// writes only its own results: the thread count does not change them).
#include <limits>

#include "kestrel/detail/stereo_rules.hpp"
#include "src/core/thread_pool.hpp"
#include "src/track/lk_internal.hpp"
#include "stereo_matcher.hpp"

namespace kestrel::detail {

LkConfig refine_lk_config(const StereoConfig& cfg) {
    LkConfig c = cfg.match.lk;
    if (cfg.match.refine_levels > 0) c.pyramid.levels = cfg.match.refine_levels;
    return c;
}

void StereoMatcher::match(const std::vector<HostImage>&, const std::vector<HostImage>&, int) {
    throw StateError("kestrel: StereoTracker: internal: host pyramids given to a CUDA matcher");
}
void StereoMatcher::match(const DevicePyramid&, const DevicePyramid&, int, StreamHandle) {
    throw StateError("kestrel: StereoTracker: internal: device pyramids given to a CPU matcher");
}
void StereoMatcher::enqueue_staged(const DevicePyramid&, const DevicePyramid&, const TrackerFrame&, int, StreamHandle) {
    throw StateError("kestrel: StereoTracker: internal: the CPU matcher matches at finish only");
}

namespace {

class CpuStereoMatcher final : public StereoMatcher {
public:
    CpuStereoMatcher(const StereoConfig& cfg, int capacity, int threads)
        : cfg_(cfg), setup_(make_lk_setup(cfg.match.lk)), refine_setup_(make_lk_setup(refine_lk_config(cfg))),
          pool_(threads) {
        const auto cap = static_cast<std::size_t>(capacity);
        points_.resize(cap);
        seeds_.resize(cap);
        refine_.resize(cap);
        forward_.resize(cap);
        backward_.resize(cap);
    }

    Point2f* points() override { return points_.data(); }
    LkGuess* seeds() override { return seeds_.data(); }
    std::int32_t* refine() override { return refine_.data(); }
    const LkResult* forward() const override { return forward_.data(); }
    const LkResult* backward() const override { return backward_.data(); }

    void match(const std::vector<HostImage>& left, const std::vector<HostImage>& right, int count) override {
        LkImage l[kMaxLevels], r[kMaxLevels];
        LkConfig shape = cfg_.match.lk;  // the pyramids may have more levels than the matching uses
        shape.pyramid.levels = static_cast<int>(left.size());
        lk_levels(left, shape, "StereoTracker", "left pyramid", l);
        lk_levels(right, shape, "StereoTracker", "right pyramid", r);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const int tasks = count < pool_.size() * 8 ? count : pool_.size() * 8;
        pool_.run(tasks, [&](int task, int) {
            for (int i = split_begin(count, tasks, task), e = split_begin(count, tasks, task + 1); i < e; ++i) {
                const LkSetup& su = match_refines(refine_[i]) ? refine_setup_ : setup_;
                CpuLkEngine fwd(su, l);
                forward_[i] = lk_track_one(fwd, su, r, points_[i].x, points_[i].y, seeds_[i]);
                const LkResult& f = forward_[i];
                if (!round_trip_needed(refine_[i], f.status, f.x, f.y, seeds_[i].x, seeds_[i].y,
                                       cfg_.match.trust_distance)) {
                    backward_[i] = skipped_round_trip(points_[i].x, points_[i].y);
                    continue;
                }
                const bool ok = f.status == TrackStatus::Tracked || f.status == TrackStatus::NotConverged;
                // Back from the forward result (NaN ends it at once, as the kernels' backward inputs do).
                CpuLkEngine back(su, r);
                backward_[i] = lk_track_one(back, su, l, ok ? f.x : nan, ok ? f.y : nan,
                                            LkGuess{points_[i].x, points_[i].y, 1.0f, 0.0f});
            }
        });
    }

private:
    StereoConfig cfg_;
    LkSetup setup_, refine_setup_;
    ThreadPool pool_;
    std::vector<Point2f> points_;
    std::vector<LkGuess> seeds_;
    std::vector<std::int32_t> refine_;
    std::vector<LkResult> forward_, backward_;
};

}  // namespace

std::unique_ptr<StereoMatcher> make_cpu_stereo_matcher(const StereoConfig& cfg, int capacity, int threads) {
    return std::make_unique<CpuStereoMatcher>(cfg, capacity, threads);
}

}  // namespace kestrel::detail
