// The per-frame measurement of Kestrel in kestrel_bench, one implementation per backend
// (run_cuda.cpp, run_cpu.cpp). Each frame: the detector alone, the tracker's whole frame, and the
// per-stage split; the CUDA runner also measures the machine's floor on the same frame.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "bench_gpu.hpp"
#include "cv_cuda_baselines.hpp"
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
};

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
