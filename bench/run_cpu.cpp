// kestrel_bench, CPU backend (the reference, identical results; what runs without a GPU): per frame,
// steady-clock times of the detector (FeatureDetector, Backend::Cpu, on every hardware thread and on one), the
// tracker's whole frame (FeatureTracker, Backend::Cpu), and the split, each stage timed alone on one thread:
// pyramid (build_pyramid_cpu), score maps (fast_score_maps_cpu), NMS + selection on those maps (grid_select_cpu,
// pyca_select_cpu), tracking pyramid, lk_track_cpu of the tracker's live points, re-detection (detect_cpu with the
// occupied cells masked) on frames that re-detect. No row is a difference of others: the detector's threads and
// reused memory make its total smaller than the sum of one-thread stages, so a difference would not be a stage's time.
#include <algorithm>

#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/grid_select.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/pyca_select.hpp"
#include "runner.hpp"
#if KESTREL_BENCH_TRACKER
#include "kestrel/feature_tracker.hpp"
#endif

namespace kestrel::bench {
namespace {

class CpuRunner : public KestrelRunner {
public:
    CpuRunner(const Options& o, int w, int h)
        : o_(o), det_cfg_(o.tracker.detector), grid_(grid_size(w, h, det_cfg_)), det_(det_cfg_, Backend::Cpu),
          det1_(one_thread(det_cfg_), Backend::Cpu) {
#if KESTREL_BENCH_TRACKER
        trk_ = std::make_unique<FeatureTracker>(w, h, o.tracker, Backend::Cpu);
#endif
        skip_.assign(static_cast<std::size_t>(grid_.width) * grid_.height, 0);
    }

    const std::vector<Pt>& tracked_points() const override { return points_; }

    void frame(const HostImage& img, int rec, Results& r) override {
        const HostView v = img.view();
        int detected = 0;
        const double det_us = time_us([&] { detected = static_cast<int>(det_.detect(v).size()); });
        const double det1_us = time_us([&] { (void)det1_.detect(v); });

        double frame_us = kNotMeasured;
        bool redetected = false;
        int live = 0, born = 0, lost = 0;
        points_.clear();
        std::fill(skip_.begin(), skip_.end(), std::uint8_t{0});
#if KESTREL_BENCH_TRACKER
        for (const Track& t : trk_->tracks()) points_.push_back({t.x, t.y});
        frame_us = time_us([&] { trk_->track(v); });
        redetected = trk_->redetected();
        for (const Track& t : trk_->tracks()) {
            ++live;
            if (t.age == 0) {
                ++born;
                continue;
            }
            const int cx = std::clamp(static_cast<int>(t.x) / det_cfg_.cell_width, 0, grid_.width - 1);
            const int cy = std::clamp(static_cast<int>(t.y) / det_cfg_.cell_height, 0, grid_.height - 1);
            skip_[static_cast<std::size_t>(cy) * grid_.width + cx] = 1;
        }
        lost = static_cast<int>(trk_->lost_tracks().size());
        if (rec >= 0)
            for (const Track& t : trk_->lost_tracks()) r.track_lengths.push_back(t.age);
#endif
        std::vector<HostImage> pyr;
        std::vector<ScoreMap> maps;
        const double pyramid = time_us([&] { pyr = build_pyramid_cpu(v, det_cfg_.pyramid); });
        const double score = time_us([&] { maps = fast_score_maps_cpu(pyr, det_cfg_.fast); });
        double nms = kNotMeasured;  // the per-level policies have no selection function of their own
        if (det_cfg_.selection == SelectionPolicy::Grid)
            nms = time_us([&] { (void)detail::grid_select_cpu(maps, det_cfg_); });
        else if (det_cfg_.selection == SelectionPolicy::PyCA)
            nms = time_us([&] { (void)detail::pyca_select_cpu(maps, det_cfg_); });
        std::vector<HostImage> lk_cur;
        const double lk_pyr = time_us([&] { lk_cur = build_pyramid_cpu(v, o_.tracker.lk.pyramid); });
        double track = kNotMeasured;
        if (!lk_prev_.empty() && !points_.empty()) {
            std::vector<Point2f> pts(points_.size());
            for (std::size_t i = 0; i < pts.size(); ++i) pts[i] = {points_[i].x, points_[i].y};
            track = time_us([&] { (void)lk_track_cpu(lk_prev_, lk_cur, pts, o_.tracker.lk); });
        }
        lk_prev_ = std::move(lk_cur);
        double redetect = kNotMeasured;
        if (redetected)
            redetect = time_us([&] { (void)detect_cpu(v, det_cfg_, DetectionMasks{skip_.data(), grid_, {}}); });

        if (rec < 0) return;
        r.set("detect_e2e", rec, det_us);
        r.set("detect_1thread", rec, det1_us);
        r.set("pyramid", rec, pyramid);
        r.set("score", rec, score);
        r.set("nms", rec, nms);
        r.set("lk_pyramid", rec, lk_pyr);
        r.set("tracking", rec, track);
        r.set("redetect", rec, redetect);
        r.set("n_detected", rec, detected);
        record_tracker_frame(r, rec, {frame_us, points_.size(), live, born, lost, redetected});
    }

    void end_warmup(Results&) override {}

    void paced(const Sequence& seq, double hz, int warmup, Results& r) override {
        // The CPU backend reads the frame where it lies: nothing to prepare, no floor.
        const auto none = [](int) {};
        paced_pass(r, paced_key(hz, "detect"), hz, seq.size(), warmup, none,
                   [&](int i, Pacer::Clock::time_point) { (void)det_.detect(seq.frame(i).view()); });
#if KESTREL_BENCH_TRACKER
        FeatureTracker trk(seq.width(), seq.height(), o_.tracker, Backend::Cpu);  // its own, from the start
        const PacedTrackerKeys keys(hz);
        paced_pass(r, keys.frame, hz, seq.size(), warmup, none, [&](int i, Pacer::Clock::time_point release) {
            return paced_tracker_frame(
                keys, release, [&] { trk.track_async(seq.frame(i).view(), nullptr); },
                [&] {
                    trk.finish();
                    return trk.redetected();
                });
        });
#endif
    }

    void finish(Results& r) override {
#if KESTREL_BENCH_TRACKER
        for (const Track& t : trk_->tracks()) r.live_ages_end.push_back(t.age);
#else
        (void)r;
#endif
    }

private:
    static DetectorConfig one_thread(DetectorConfig c) {
        c.threads = 1;
        return c;
    }

    Options o_;
    DetectorConfig det_cfg_;
    Size2 grid_;
    FeatureDetector det_;   // the configured threads (0: every hardware thread)
    FeatureDetector det1_;  // one thread: the footing of the stage rows
#if KESTREL_BENCH_TRACKER
    std::unique_ptr<FeatureTracker> trk_;
#endif
    std::vector<std::uint8_t> skip_;
    std::vector<HostImage> lk_prev_;
    std::vector<Pt> points_;
};

}  // namespace

std::unique_ptr<KestrelRunner> make_cpu_runner(const Options& o, int width, int height, Results&) {
    return std::make_unique<CpuRunner>(o, width, height);
}

}  // namespace kestrel::bench
