// The per-frame measurement of Kestrel in kestrel_bench, one implementation per backend
// (run_cuda.cpp, run_cpu.cpp). Each frame: the detector alone, the tracker's whole frame, and the
// per-stage split; the CUDA runner also measures the machine's floor on the same frame.
#pragma once
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "bench_gpu.hpp"
#include "cv_cuda_baselines.hpp"
#include "frames.hpp"
#include "kestrel/image.hpp"
#include "options.hpp"
#include "report.hpp"

namespace kestrel::bench {

class KestrelRunner {
public:
    virtual ~KestrelRunner() = default;
    /// Runs frame `img`; records into r at index `rec` (rec < 0: warm-up, nothing recorded).
    virtual void frame(const HostImage& img, int rec, Results& r) = 0;
    /// Points the tracker started from in the last frame (its live tracks before it), level-0 pixels:
    /// the baselines track the same points.
    virtual const std::vector<Pt>& tracked_points() const = 0;
    /// Called once between warm-up and the measured frames.
    virtual void end_warmup(Results& r) = 0;
    /// Called after the last frame.
    virtual void finish(Results& r) = 0;
    /// Paced passes at `hz` (after the back-to-back run): the frames of `seq` released on a fixed schedule
    /// (Pacer), one pass per row (the floor where the backend has one, detection, the tracker frame with a
    /// tracker of its own), each call timed from its frame's release to its results on the host; the first
    /// `warmup` frames of a pass are paced but not recorded. Records the series add_paced_series() added.
    virtual void paced(const Sequence& seq, double hz, int warmup, Results& r) = 0;
};

/// Key of a paced series: paced_key(20, "frame") = "paced_20hz_frame"; rows: floor, detect, frame, and the
/// tracker frame's split: frame_track (frames without re-detection), frame_redetect (frames with it),
/// frame_enqueue (release to track_async's return: the host's staging and launches).
std::string paced_key(double hz, const char* row);
/// Adds the paced series of one rate (flags: which exist in this build / backend).
void add_paced_series(Results& r, double hz, bool cuda);

/// Releases frames on a fixed schedule, as a camera does: frame i at start + i / hz, the first one period
/// after construction. wait(i) returns at frame i's release (a coarse sleep to about 1 ms before it, then a
/// spin: the release is met to within a microsecond or so) or, when the release has passed, at once: the
/// previous frame overran the period, or the sleep woke after the release (late() counts both; the latency
/// is still measured from the release, so such a frame includes the wait).
class Pacer {
public:
    using Clock = std::chrono::steady_clock;
    explicit Pacer(double hz)
        : period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / hz))),
          start_(Clock::now() + period_) {}
    Clock::time_point wait(int i) {
        const Clock::time_point release = start_ + period_ * i;
        Clock::time_point now = Clock::now();
        if (now <= release && release - now > std::chrono::milliseconds(2)) {
            std::this_thread::sleep_until(release - std::chrono::milliseconds(1));
            now = Clock::now();
        }
        late_now_ = now > release;
        if (late_now_) {
            ++late_;
            return release;
        }
        while (Clock::now() < release) {
        }
        return release;
    }
    /// Whether the last wait() found its release already past.
    bool was_late() const { return late_now_; }
    int late() const { return late_; }
    static double since_us(Clock::time_point t) {
        return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
    }

private:
    Clock::duration period_;
    Clock::time_point start_;
    int late_ = 0;
    bool late_now_ = false;
};

/// What a paced call reports besides its latency (paced_pass records it after the latency is taken, so that
/// no bookkeeping falls inside the timed call): the split series the frame's latency also goes to, and a
/// time of the call's own for another series. Null keys: nothing. The keys are made before the pass.
struct PacedExtra {
    const std::string* also = nullptr;       ///< e.g. the tracker frame's row with or without re-detection
    const std::string* part_key = nullptr;   ///< e.g. release -> track_async's return
    double part_us = 0;
};

/// One paced pass over `total` frames: prepare(i) (untimed: the frame into the buffer the call reads, as a
/// camera driver fills it), wait for frame i's release, work(i, release), and record the time from the release
/// to work's return into series `key` at i - warmup (frames before `warmup` are not recorded). When work
/// returns a PacedExtra, its series are recorded too.
template <typename Prepare, typename Work>
void paced_pass(Results& r, const std::string& key, double hz, int total, int warmup, Prepare&& prepare, Work&& work) {
    Series* series = r.find(key);
    if (!series) throw std::logic_error("bench: unknown series '" + key + "'");
    Pacer pacer(hz);
    for (int i = 0; i < total; ++i) {
        prepare(i);
        const Pacer::Clock::time_point release = pacer.wait(i);
        PacedExtra extra;
        if constexpr (std::is_void_v<std::invoke_result_t<Work&, int, Pacer::Clock::time_point>>)
            work(i, release);
        else
            extra = work(i, release);
        const double us = Pacer::since_us(release);
        const int rec = i - warmup;
        if (rec < 0) continue;
        r.set(key, rec, us);
        if (pacer.was_late()) ++series->late;
        if (extra.also) {
            r.set(*extra.also, rec, us);
            if (pacer.was_late()) ++r.find(*extra.also)->late;
        }
        if (extra.part_key) r.set(*extra.part_key, rec, extra.part_us);
    }
}

/// The keys of the tracker frame's paced series at one rate (made once, before the pass).
struct PacedTrackerKeys {
    explicit PacedTrackerKeys(double hz);
    std::string frame, track, redetect, enqueue;
};
/// The tracker frame of a paced pass: enqueue() (track_async), then finish() (returns whether the frame
/// re-detected). Returns, for paced_pass, the split row of the frame (with or without re-detection) and the
/// time from the release to enqueue()'s return.
template <typename Enqueue, typename Finish>
PacedExtra paced_tracker_frame(const PacedTrackerKeys& keys, Pacer::Clock::time_point release, Enqueue&& enqueue,
                               Finish&& finish) {
    enqueue();
    PacedExtra e;
    e.part_us = Pacer::since_us(release);
    e.part_key = &keys.enqueue;
    e.also = finish() ? &keys.redetect : &keys.track;
    return e;
}

/// Adds the series every runner records (flags: which parts exist in this build / backend).
void add_kestrel_series(Results& r, const Options& o, bool cuda, int width, int height);

/// What the tracker did in one frame; every runner records it through record_tracker_frame().
struct TrackerFrame {
    double frame_us = 0;     ///< the tracker's whole frame, wall clock
    std::size_t points = 0;  ///< points it followed (its live tracks before the frame)
    int live = 0, born = 0, lost = 0;
    bool redetected = false;
};
/// Records f into r at frame index rec (the tracker series; nothing when built without them).
void record_tracker_frame(Results& r, int rec, const TrackerFrame& f);

std::unique_ptr<KestrelRunner> make_cuda_runner(const Options& o, const GpuInfo& gpu, int width, int height,
                                                Results& r);
std::unique_ptr<KestrelRunner> make_cpu_runner(const Options& o, int width, int height, Results& r);

/// Microseconds taken by f() on the steady clock.
template <typename F>
double time_us(F&& f);

}  // namespace kestrel::bench

#include <chrono>
template <typename F>
double kestrel::bench::time_us(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}
