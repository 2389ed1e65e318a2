// FeatureTracker's CPU reference backend: the LK driver with the host engine (the warp emulated lane
// by lane, src/track/lk_cpu.cpp) and the CPU detector. Same operations, same order, same results as the CUDA
// backend. The tracker's own pool (TrackerConfig::threads) spreads the pyramid's rows, the tracks (each writes
// its own results) and the detection's rows: the results do not depend on the thread count.
#include <limits>

#include "anchor_internal.hpp"
#include "feature_tracker_backend.hpp"
#include "lk_internal.hpp"
#include "src/core/thread_pool.hpp"
#include "src/detect/detector_cpu.hpp"
#include "src/pyramid/pyramid_cpu.hpp"

namespace kestrel::detail {
namespace {

class CpuTrackerBackend final : public TrackerBackend {
public:
    CpuTrackerBackend(const TrackerConfig& cfg, int pyramid_levels)
        : cfg_(cfg),
          pyramid_{pyramid_levels, cfg.lk.pyramid.scale},
          setup_(make_tracker_lk_setup(cfg)),
          anchor_setup_(make_anchor_setup(cfg)),
          pool_(cfg.threads),
          detector_(cfg.detector, &pool_) {
        const auto cap = static_cast<std::size_t>(cfg.target_features);
        origins_.resize(cap);
        guesses_.resize(cap);
        skips_.resize(cap);
        slots_.resize(cap);
        new_points_.resize(cap);
        new_slots_.resize(cap);
        results_.resize(cap);
        back_.resize(cap);
        anchor_states_.resize(cap);
        anchor_results_.resize(cap);
        if (cfg.anchor.enabled) anchor_prep_.resize(cap);
        if (cfg.lk.template_source == TemplateSource::FirstFrame || cfg.anchor.enabled) {
            store_.assign(cap * static_cast<std::size_t>(store_floats_per_slot(setup_)), 0.0f);
            valid_.assign(cap * static_cast<std::size_t>(setup_.levels), 0);
        }
        if (stored_levels()) lk_prep_.resize(cap * static_cast<std::size_t>(setup_.levels));
    }

    Point2f* origins() override { return origins_.data(); }
    LkGuess* guesses() override { return guesses_.data(); }
    std::uint8_t* coarse_skips() override { return skips_.data(); }
    std::int32_t* slots() override { return slots_.data(); }
    Point2f* new_points() override { return new_points_.data(); }
    std::int32_t* new_slots() override { return new_slots_.data(); }
    AnchorState* anchor_states() override { return anchor_states_.data(); }
    const AnchorResult* anchor_results() const override { return anchor_results_.data(); }

    void start(HostView frame, int count, StreamHandle) override {
        build_pyramid_into(frame, pyramid_, cur_, pyramid_scratch_, &pool_);
        frame_ = &cur_;
        LkImage cur[kMaxLevels], prev[kMaxLevels];
        levels(cur_, cur);
        if (count > 0) levels(prev_, prev);
        const bool stored = cfg_.lk.template_source == TemplateSource::FirstFrame;
        const bool fb = cfg_.forward_backward, anchor = cfg_.anchor.enabled;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        // One task per group of tracks: forward LK, then (each on its own forward result) the backward pass and
        // the anchor fit. Every track writes only its own entries.
        const int tasks = count < pool_.size() * 8 ? count : pool_.size() * 8;
        pool_.run(tasks, [&](int task, int) {
            for (int i = split_begin(count, tasks, task), e = split_begin(count, tasks, task + 1); i < e; ++i) {
                if (i + 1 < e && !store_.empty() && slots_[i + 1] >= 0) prefetch_slot(slots_[i + 1]);
                // The first level whose template comes from the track's stored patch (setup_.levels: none).
                const int from = !stored && stored_levels() ? stored_patch_from(anchor_setup_, anchor_states_[i],
                                                                                setup_.stored_from_level, setup_.levels)
                                                            : setup_.levels;
                // The coarsest level searched (a track with a predicted start may skip the pyramid's coarsest).
                const int top = lk_top_level(setup_, skips_[i]);
                if (stored) {
                    CpuLkEngine eng(setup_, store_.data() + slot_offset(slots_[i]),
                                    valid_.data() + slots_[i] * setup_.levels);
                    results_[i] = lk_track_one(eng, setup_, cur, 0.0f, 0.0f, guesses_[i], top);
                } else if (from < setup_.levels) {
                    CpuLkEngine eng(setup_, prev, store_.data() + slot_offset(slots_[i]),
                                    valid_.data() + slots_[i] * setup_.levels,
                                    lk_prep_.data() + static_cast<std::size_t>(slots_[i]) * setup_.levels, from);
                    results_[i] = lk_track_one(eng, setup_, cur, origins_[i].x, origins_[i].y, guesses_[i], top);
                } else {
                    CpuLkEngine eng(setup_, prev);
                    results_[i] = lk_track_one(eng, setup_, cur, origins_[i].x, origins_[i].y, guesses_[i], top);
                }
                const LkResult& f = results_[i];
                const bool ok = f.status == TrackStatus::Tracked || f.status == TrackStatus::NotConverged;
                if (fb) {
                    CpuLkEngine eng(setup_, cur);
                    back_[i] = lk_track_one(eng, setup_, prev, ok ? f.x : nan, ok ? f.y : nan,
                                            LkGuess{origins_[i].x, origins_[i].y, 1.0f, 0.0f});
                }
                if (anchor) {
                    AnchorResult& a = anchor_results_[i];
                    a = AnchorResult{};
                    a.status = TrackStatus::LostAnchor;
                    if (!ok || valid_[static_cast<std::size_t>(slots_[i]) * setup_.levels] == 0) continue;
                    AnchorState st = anchor_states_[i];
                    if (!anchor_fit_wanted(anchor_setup_, st, f)) {  // not this frame (AnchorConfig::interval)
                        a = anchor_skipped(st, f);
                        continue;
                    }
                    st.x = f.x;
                    st.y = f.y;
                    CpuAnchorEngine eng(anchor_setup_,
                                        store_.data() + slot_offset(slots_[i]) + store_level_offset(setup_, 0));
                    a = anchor_refine_one(eng, anchor_setup_, cur[0], st, anchor_prep_[static_cast<std::size_t>(slots_[i])]);
                }
            }
        });
    }

    void start(DeviceView, int, StreamHandle) override {
        throw StateError("kestrel: FeatureTracker::track_async: a device frame needs Backend::Cuda");
    }

    void wait() override {}
    const LkResult* results() const override { return results_.data(); }
    const LkResult* back_results() const override { return back_.data(); }

    void detect_async(const std::uint8_t* cell_skip, Size2 grid) override {
        DetectionMasks masks;
        masks.cell_skip = cell_skip;
        masks.cell_grid = grid;
        detector_.detect("FeatureTracker", cur_[0].view(), masks, detected_);
    }
    void detect_wait(std::vector<Keypoint>& out) override { out.assign(detected_.begin(), detected_.end()); }

    void store_templates(int count) override {
        LkImage cur[kMaxLevels];
        levels(cur_, cur);
        const int tasks = count < pool_.size() * 4 ? count : pool_.size() * 4;
        pool_.run(tasks, [&](int task, int) {
            for (int i = split_begin(count, tasks, task), e = split_begin(count, tasks, task + 1); i < e; ++i) {
                const std::int32_t slot = new_slots_[i];
                float* base = store_.data() + slot_offset(slot);
                for (int k = 0; k < setup_.levels; ++k) {
                    const float sk = setup_.scale[k];
                    valid_[static_cast<std::size_t>(slot) * setup_.levels + k] =
                        extract_template_cpu(cur[k], to_level(new_points_[i].x, sk), to_level(new_points_[i].y, sk),
                                             setup_.patch[k], base + store_level_offset(setup_, k))
                            ? 1
                            : 0;
                }
                if (stored_levels()) {  // the stored levels' preparations, once (detail::lk_prepare_level)
                    CpuLkEngine eng(setup_, base, valid_.data() + static_cast<std::size_t>(slot) * setup_.levels);
                    LkLevelPrep* prep = lk_prep_.data() + static_cast<std::size_t>(slot) * setup_.levels;
                    for (int k = setup_.stored_from_level; k < setup_.levels; ++k) {
                        prep[k] = LkLevelPrep{};
                        if (eng.load_template(k, 0.0f, 0.0f, cur[k], 0.0f, 0.0f)) lk_prepare_level(eng, setup_, k, prep[k]);
                    }
                }
                if (cfg_.anchor.enabled) {  // what the template alone determines, once (detail::anchor_prepare)
                    AnchorPrep& prep = anchor_prep_[static_cast<std::size_t>(slot)];
                    prep = AnchorPrep{};
                    prep.ok = 0;
                    if (valid_[static_cast<std::size_t>(slot) * setup_.levels] != 0) {
                        CpuAnchorEngine eng(anchor_setup_, base + store_level_offset(setup_, 0));
                        prep = anchor_prepare(eng, anchor_setup_);
                    }
                }
            }
        });
    }

    void swap() override {
        std::swap(prev_, cur_);
        frame_ = &prev_;  // the vectors' contents were exchanged: the last frame's levels are in prev_ now
    }
    const std::vector<HostImage>* host_frame_pyramid() const override { return frame_; }

private:
    /// Levels tracked from the stored reference patches (LkSetup::stored_from_level), for the tracks
    /// detail::stored_patch_from allows.
    bool stored_levels() const { return setup_.stored_from_level < setup_.levels; }
    static void levels(const std::vector<HostImage>& pyr, LkImage* out) {
        for (std::size_t k = 0; k < pyr.size(); ++k)
            out[k] = {pyr[k].data(), pyr[k].width(), pyr[k].height(), pyr[k].pitch()};
    }
    /// Asks the cache for the next track's stored templates while this one is tracked (the store is too large to
    /// stay cached between frames).
    void prefetch_slot(std::int32_t slot) const {
#if defined(__GNUC__)
        const std::size_t n = static_cast<std::size_t>(store_floats_per_slot(setup_));
        const float* p = store_.data() + slot_offset(slot);
        for (std::size_t q = 0; q < n; q += 16) __builtin_prefetch(p + q);
#else
        (void)slot;
#endif
    }
    std::size_t slot_offset(std::int32_t slot) const {
        return static_cast<std::size_t>(slot) * static_cast<std::size_t>(store_floats_per_slot(setup_));
    }

    TrackerConfig cfg_;
    PyramidConfig pyramid_;  // cfg_.lk.pyramid, or more levels (the first setup_.levels are tracked on)
    LkSetup setup_;
    AnchorSetup anchor_setup_;
    std::vector<AnchorState> anchor_states_;
    std::vector<AnchorResult> anchor_results_;
    std::vector<AnchorPrep> anchor_prep_;  // per template slot (anchoring)
    std::vector<LkLevelPrep> lk_prep_;     // per template slot and level (stored_levels())
    std::vector<Keypoint> detected_;       // the last detection (detect_async -> detect_wait)
    std::vector<Point2f> origins_, new_points_;
    std::vector<LkGuess> guesses_;
    std::vector<std::uint8_t> skips_;
    std::vector<std::int32_t> slots_, new_slots_;
    std::vector<LkResult> results_, back_;
    std::vector<HostImage> prev_, cur_;
    const std::vector<HostImage>* frame_ = nullptr;  // the last started frame's pyramid
    PyramidScratch pyramid_scratch_;
    ThreadPool pool_;
    CpuDetector detector_;
    std::vector<float> store_;
    std::vector<std::int32_t> valid_;
};

}  // namespace

std::unique_ptr<TrackerBackend> make_cpu_tracker_backend(int, int, const TrackerConfig& cfg, int pyramid_levels) {
    return std::make_unique<CpuTrackerBackend>(cfg, pyramid_levels);
}

}  // namespace kestrel::detail
