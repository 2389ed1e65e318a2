// kestrel_microbench internals shared by its files: the frames, the timing loops, the registration
// helper. See microbench.cpp for what the rows measure.
#pragma once
#include <benchmark/benchmark.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench_gpu.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel::bench::micro {

extern bool g_gpu;
extern int g_div;                 // --quick: iterations / 10
constexpr double kSpinUs = 100;   // spin ahead of each event-timed iteration
constexpr const char* kNoGpu = "no CUDA device on this machine: GPU benchmark skipped (run it on the GPU machine)";

extern std::map<std::string, HostImage> g_frame0, g_frame1;  // per size: two consecutive vtest frames
extern std::vector<HostImage> g_seq752;                       // the whole sequence at 752x480 (tracker frames)
constexpr const char* kSizes[] = {"752x480", "1280x720", "1920x1080"};

int iters(int n);
/// Counters median_us, p10_us, p90_us, max_us of the iterations.
void set_stats(benchmark::State& st, const std::vector<double>& us);
/// GPU work timed with events behind a spin kernel (this and gpu_wall_loop: microbench_gpu.cpp, CUDA builds); two untimed calls first (allocation, graph capture).
void device_loop(benchmark::State& st, const std::function<void(StreamHandle)>& enqueue);
/// Host-side call (including its own synchronisation) timed with the steady clock.
void wall_loop(benchmark::State& st, const std::function<void()>& call);
/// wall_loop, skipped with a message without a GPU.
void gpu_wall_loop(benchmark::State& st, const std::function<void()>& call);

/// 2 levels, 32x32 cells, t = 10, SAD-B (the detector rows' configuration).
DetectorConfig issue4_detector();
PinnedImage pinned_copy(const HostImage& img);
/// N features of frame 0 at 752x480: the best N FAST corners, up to 4 per 32x32 cell.
std::vector<Point2f> feature_points(int n);
const char* mode_name(LkMode m);
/// The camera rows' calibrations: EuRoC cam0 (radtan, 752x480) or a TUM-VI-like fisheye (512x512).
Camera bench_camera(bool fisheye);
/// n pixels spread over the camera's image (interleaved x, y; a 2-D low-discrepancy pattern).
std::vector<float> bench_pixels(const Camera& c, int n);
constexpr LkMode kModes[] = {LkMode::Translation, LkMode::TranslationOffset, LkMode::TranslationGain,
                             LkMode::TranslationGainOffset};

template <typename F>
void add(const std::string& name, int iterations, F&& f) {
    benchmark::RegisterBenchmark(name.c_str(), std::forward<F>(f))
        ->UseManualTime()
        ->Iterations(iters(iterations))
        ->Unit(benchmark::kMicrosecond);
}

/// --sm-count N (`value`, as typed): all GPU rows on a green context of N SMs (SmLimit, made current on the
/// calling thread, which runs the benchmarks). Returns it (keep it until the benchmarks are done) and the
/// context line: SMs obtained and the self-check's distinct SMs. Throws kestrel::Error with the reason
/// (not an integer >= 1, no GPU, a build without green contexts, N above the device's SMs).
std::unique_ptr<SmLimit> limit_sms(const std::string& value, std::string& context_line);
/// The self-check of an SM limit (distinct_sms on a created and on the default stream, and whether the green
/// context is still current), as one line; it ends in a WARNING when the limit is not in effect.
std::string sm_self_check(const SmLimit& limit);

void register_gpu();
/// The stereo rows (microbench_stereo_cpu.cpp; the GPU ones in microbench_stereo_gpu.cpp, CUDA builds).
void register_stereo_cpu();
void register_stereo_gpu();
/// The stereo rows' pairs: each 752x480 sequence frame (left) and the same frame shifted left by
/// kStereoDisparity px (right, its last columns repeating the edge): a rectified pair with a known disparity.
constexpr int kStereoDisparity = 12;
struct StereoFrames {
    std::vector<HostImage> left, right;
};
const StereoFrames& stereo_frames();
/// The stereo frame rows' configuration: StereoConfig's defaults (one pyramid of 5 levels: the tracking uses 3,
/// the matching 5), 200 tracks, the detector rows' detector; `threads` for the CPU backend. The rig: rectified, EuRoC-like.
StereoConfig stereo_bench_config(int threads);
StereoRig stereo_bench_rig();
/// Index of the i-th pair of a ping-pong walk through the sequence (continuous motion, any length).
std::size_t stereo_index(std::size_t i);
void register_pyca();  ///< PyCA beside the grid policy, and its culling kernels (microbench_pyca.cpp, CUDA builds)
void register_cpu();
void register_geometry();
void register_features();  ///< ORB and the matcher (microbench_features.cpp): CPU rows, and the GPU rows with CUDA  ///< relative pose: CPU rows (Kestrel CPU, OpenCV) and, with CUDA, the GPU rows

/// A generated two-view scene for the relative-pose rows (microbench_geometry.cpp): n correspondences in
/// normalized coordinates (interleaved x, y), a fraction of outliers, 0.5 px noise at focal 500 px; R is the
/// true rotation (the two-point rows' prior). Fixed seed: every run times the same data.
struct PoseScene {
    std::vector<double> x1, x2;
    double R[9];
};
PoseScene pose_scene(int n, double outliers);
/// floor/pose-transfer/1000 (microbench_gpu.cpp, CUDA builds).
void register_pose_floor();
/// pose/bearings-device/1000/50pct (the tracker's device entry), pose/solve/five-point/256 (the latency of one
/// batch of 256 solves) and pose/solve/five-point/4096 (their throughput) (microbench_gpu.cpp, CUDA builds).
void register_pose_gpu();

}  // namespace kestrel::bench::micro
