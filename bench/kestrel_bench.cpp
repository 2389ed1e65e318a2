// kestrel_bench: is Kestrel worth linking? Runs Kestrel's detector and tracker on a sequence (by default a
// camera moving over a real photo, the demo's; or an EuRoC folder, image folder, video, the vtest frames),
// measures every stage per frame
// with CUDA events and the whole frame with a steady clock, measures the machine's floor in the same
// run, runs OpenCV baselines on the same frames, and prints a table (--json / --csv for more).
// Options: kestrel_bench --help. Plots: bench/plot_bench.py. Reading the results: docs/jetson.md.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>
#include <unistd.h>

#include "baselines.hpp"
#include "bench_gpu.hpp"
#if KESTREL_BENCH_CUDA
#include "kernels/common/cuda_check.hpp"
#endif
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyramid.hpp"
#include "runner.hpp"

#ifndef KESTREL_BENCH_COMMIT
#define KESTREL_BENCH_COMMIT "unknown"
#endif
#ifndef KESTREL_BENCH_VERSION
#define KESTREL_BENCH_VERSION "unknown"
#endif

namespace kestrel::bench {

void record_tracker_frame(Results& r, int rec, const TrackerFrame& f) {
#if KESTREL_BENCH_TRACKER
    r.set("frame_e2e", rec, f.frame_us);
    r.set(f.redetected ? "frame_redetect" : "frame_track", rec, f.frame_us);
    r.set("n_points", rec, static_cast<double>(f.points));
    r.set("n_tracked", rec, f.live - f.born);
    r.set("n_born", rec, f.born);
    r.set("n_live", rec, f.live);
    r.set("n_lost", rec, f.lost);
    r.set("redetected", rec, f.redetected ? 1 : 0);
#else
    (void)r, (void)rec, (void)f;
#endif
}

void add_kestrel_series(Results& r, const Options& o, bool cuda, int width, int height) {
    const DetectorConfig& d = o.tracker.detector;
    const std::string levels = std::to_string(d.pyramid.levels) + " levels";
    const std::string size = std::to_string(width) + "x" + std::to_string(height);
    if (cuda) {
        r.add("floor", "upload " + size + " + trivial kernel + 8 KB download + sync", "floor", "wall");
        r.add("launch_sync", "one trivial kernel launch + sync", "floor", "wall");
        r.floor_key = "floor";
        r.add("detect_e2e", "detection end to end: pinned frame -> keypoints on host", "kestrel", "wall");
    } else {
        const int threads = d.threads > 0 ? d.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        r.add("detect_e2e", "detection (CPU backend, " + std::to_string(threads) + " threads): frame -> keypoints",
              "kestrel", "wall");
    }
    r.add("frame_e2e", "tracker frame end to end, all frames", "kestrel", "wall");
    r.add("frame_track", "tracker frame end to end, frames without re-detection", "kestrel", "wall");
    r.add("frame_redetect", "tracker frame end to end, frames with re-detection", "kestrel", "wall");
    if (!cuda) r.add("detect_1thread", "detection on one thread (the footing of the stage rows)", "kestrel", "wall");
    const std::string k = cuda ? "device" : "wall";
    if (cuda) r.add("upload", "stage: upload (pinned frame -> device)", "kestrel", "device");
    r.add("pyramid", cuda ? "stage: pyramid, " + levels + " (DevicePyramid alone)" : "stage: pyramid, " + levels,
          "kestrel", k);
    r.add("score", cuda ? "stage: FAST score maps, all levels (DeviceScoreMaps alone)" : "stage: FAST score maps, all levels",
          "kestrel", k);
    // The CUDA detector computes scores, NMS and selection in one fused kernel (kernels/detect/cell_detect.cu) where
    // its plan fits: there is no NMS stage to derive, only the detector's whole device time.
    if (!cuda) r.add("nms", "stage: NMS + selection on the score maps", "kestrel", "wall");
    if (cuda) {
        r.add("download", "stage: keypoint buffer download", "kestrel", "device");
        r.add("detect_device", "detection from a device image (all stages: one fused kernel where it applies)",
              "kestrel", "device");
    }
    r.add("lk_pyramid", "stage: tracking pyramid, " + std::to_string(o.tracker.lk.pyramid.levels) + " levels", "kestrel", k);
    r.add("tracking", "stage: LK of the tracker's live points", "kestrel", k);
    r.add("redetect", "stage: re-detection, occupied cells masked", "kestrel", k);
    r.add("n_detected", "keypoints detected (detector alone)", "count", "count");
    r.add("n_points", "tracks entering the frame (points LK follows)", "count", "count");
    r.add("n_tracked", "tracks surviving the frame", "count", "count");
    r.add("n_lost", "tracks lost in the frame", "count", "count");
    r.add("n_born", "tracks born by re-detection", "count", "count");
    r.add("n_live", "live tracks after the frame", "count", "count");
    r.add("redetected", "re-detection ran (1) or not (0)", "count", "count");
}

std::string paced_key(double hz, const char* row) { return "paced_" + rate_text(hz) + "hz_" + row; }

void add_paced_series(Results& r, double hz, bool cuda) {
    const std::string at = " at " + rate_text(hz) + " Hz";
    const std::string floor = cuda ? paced_key(hz, "floor") : std::string();
    if (cuda) r.add(paced_key(hz, "floor"), "floor" + at, "paced", "latency");
    r.add(paced_key(hz, "detect"), "detection end to end" + at, "paced", "latency", floor);
#if KESTREL_BENCH_TRACKER
    r.add(paced_key(hz, "frame"), "tracker frame end to end" + at + ", all frames", "paced", "latency", floor);
    r.add(paced_key(hz, "frame_track"), "tracker frame" + at + ", frames without re-detection", "paced", "latency",
          floor);
    r.add(paced_key(hz, "frame_redetect"), "tracker frame" + at + ", frames with re-detection", "paced", "latency",
          floor);
    // Where a slow frame's time went: release to track_async's return (the host's staging, upload and launches;
    // on the CPU backend the whole tracking), the rest being the wait and finish()'s bookkeeping.
    r.add(paced_key(hz, "frame_enqueue"), "tracker frame" + at + ": release to track_async's return", "paced",
          "latency");
#endif
}

PacedTrackerKeys::PacedTrackerKeys(double hz)
    : frame(paced_key(hz, "frame")),
      track(paced_key(hz, "frame_track")),
      redetect(paced_key(hz, "frame_redetect")),
      enqueue(paced_key(hz, "frame_enqueue")) {}

namespace {

std::string now_utc() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char b[64];
    std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return b;
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);) {
        if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0 || line.rfind("Hardware", 0) == 0) {
            const auto c = line.find(':');
            if (c != std::string::npos) return line.substr(line.find_first_not_of(" \t", c + 1));
        }
    }
    return "unknown CPU";
}

class Progress {
public:
    Progress(const char* what, int total) : what_(what), total_(total), on_(isatty(fileno(stdout)) && total >= 20) {}
    void update(int done) {
        if (!on_ || (done != total_ && done % 5 != 0)) return;
        const int width = 40, fill = total_ > 0 ? done * width / total_ : width;
        std::printf("\r  %s [%s%s] %d/%d", what_, std::string(static_cast<std::size_t>(fill), '#').c_str(),
                    std::string(static_cast<std::size_t>(width - fill), '.').c_str(), done, total_);
        std::fflush(stdout);
    }
    void done() {
        if (!on_) return;
        std::printf("\r%*s\r", 100, "");
        std::fflush(stdout);
    }

private:
    const char* what_;
    int total_;
    bool on_;
};

// The SM limit's self-check: a grid of 4 blocks per SM of the device, each spinning 20 us, on a stream made as
// the library makes its own and on the legacy default stream; the distinct SMs they ran on, and whether the
// green context is still current. Adds a WARNING to `notes` when the limit is not in effect.
std::string sm_self_check(const SmLimit& limit, std::vector<std::string>& notes) {
    const int blocks = 4 * limit.device_sms();
    Stream check;
    const int on_stream = distinct_sms(blocks, 20.0, check.get());
    const int on_default = distinct_sms(blocks, 20.0, nullptr);
    const bool current = limit.current();
    // The driver may add 2 SMs on sm_90 when a module uses dynamic parallelism (cuDevSmResourceSplitByCount).
    if (!current || std::max(on_stream, on_default) > limit.obtained() + 2)
        notes.push_back("WARNING: --sm-count: the limit is not in effect (" +
                        std::string(current ? "the self-check ran on more SMs than the green context holds"
                                            : "the green context is no longer current on the bench's thread") + ")");
    return std::to_string(blocks) + " blocks ran on " + std::to_string(on_stream) + " distinct SMs on a created stream, " +
           std::to_string(on_default) + " on the default stream" + (current ? "" : ", green context not current");
}

std::unique_ptr<FrameSource> open_source(const Options& o) {
    if (!o.euroc.empty()) return open_euroc(o.euroc);
    if (!o.images.empty()) return open_image_folder(o.images);
    if (!o.video.empty()) return open_video(o.video);
    const std::string dir = find_test_data(o.data);
    if (o.vtest) {
        if (dir.empty())
            throw std::runtime_error("input vtest: no test data found: pass --data DIR (the build tree's testdata/, made "
                                     "by `ninja kestrel_testdata`), or set KESTREL_TEST_DATA");
        return open_vtest_sequence(dir);
    }
    return open_moving_camera(o.camera, dir);
}

/// The frames must fit the detector (every pyramid level at least 7x7, sides at least 2 * border + 7) and the
/// tracker's LK pyramid: else a message naming the input, the frame size and the smallest size that fits, before
/// any object is made (whose own message would name only the parameter).
void check_frame_size(const Sequence& seq, const Options& o) {
    const auto fits = [&o](int w, int h) {
        try {
            validate_image_size(w, h, o.tracker.detector, "check");
            (void)pyramid_sizes(w, h, o.tracker.lk.pyramid);
            return true;
        } catch (const InvalidArgument&) {
            return false;
        }
    };
    if (fits(seq.width(), seq.height())) return;
    int lo = 7, hi = kMaxImageSide;  // the smallest square side that fits (fits() is monotonic in the side)
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(mid, mid)) hi = mid;
        else lo = mid + 1;
    }
    const DetectorConfig& d = o.tracker.detector;
    const bool prepared = seq.width() != seq.source_width() || seq.height() != seq.source_height();
    throw std::runtime_error(
        "input " + seq.description() + ": its frames are " + std::to_string(seq.source_width()) + "x" +
        std::to_string(seq.source_height()) + " pixels" +
        (prepared ? " (" + std::to_string(seq.width()) + "x" + std::to_string(seq.height()) + " after " +
                        o.geometry.describe() + ")"
                  : std::string()) +
        ": too small for this configuration, which needs at least " + std::to_string(lo) + "x" + std::to_string(lo) +
        " (each of the " + std::to_string(d.pyramid.levels) + " detector levels of --levels at --scale " +
        rate_text(d.pyramid.scale) + " at least 7x7, each side at least 2 * --border + 7 = " +
        std::to_string(2 * d.border + 7) + ", each of the " + std::to_string(o.tracker.lk.pyramid.levels) +
        " levels of --lk-levels at least 7x7)");
}

int run(Options& o) {
    validate(o.tracker.detector, "detector settings");
    validate(o.tracker.lk, "tracker settings");
#if KESTREL_BENCH_TRACKER
    validate(o.tracker, "tracker settings");
#endif
    const bool gpu_usable = cuda_available();
    if (const char* req = std::getenv("KESTREL_REQUIRE_GPU"); req && std::string(req) == "1" && !gpu_usable &&
                                                               o.backend != "cpu")
        throw NoDeviceError("KESTREL_REQUIRE_GPU=1 but no CUDA device is usable (pass --backend cpu to run on the CPU)");
    if (o.backend == "cuda" && !gpu_usable)
        throw NoDeviceError("--backend cuda: no usable CUDA device on this machine (run with --backend cpu)");
    const bool cuda = o.backend == "cuda" || (o.backend == "auto" && gpu_usable);

    if (o.sm_count > 0 && !cuda)
        throw InvalidArgument("--sm-count", "--sm-count limits the GPU: it needs the CUDA backend (this run uses the CPU "
                                            "backend: no CUDA device, or a build without CUDA)");
    GpuInfo gpu;
    // --sm-count: the green context is made current here, before any other CUDA object exists, and lives
    // until the end of run() (declared before the runner and the baselines, so destroyed after them).
    std::unique_ptr<SmLimit> sm_limit;
    std::string sm_line;
    std::vector<std::string> sm_notes;
    if (cuda) {
#if KESTREL_BENCH_CUDA
        KESTREL_CUDA(cudaSetDevice(o.device), "bench: cudaSetDevice (--device)");
#endif
        gpu = query_gpu(o.device);
        if (o.sm_count > 0) {
            sm_limit = std::make_unique<SmLimit>(o.device, o.sm_count);
            sm_line = "green context of " + std::to_string(sm_limit->obtained()) + " SMs (--sm-count " +
                      std::to_string(o.sm_count) + ", of " + std::to_string(sm_limit->device_sms()) +
                      "); self-check before the run: " + sm_self_check(*sm_limit, sm_notes);
            if (sm_limit->obtained() != o.sm_count)
                sm_notes.push_back("--sm-count " + std::to_string(o.sm_count) + " was rounded up to " +
                                   std::to_string(sm_limit->obtained()) + " SMs, the split's granularity on this GPU");
        }
    }

    const int total = o.warmup + o.frames;
    Progress loading("loading", total);
    Sequence seq(open_source(o), o.geometry, total, [&](int d, int) { loading.update(d); });
    loading.done();
    check_frame_size(seq, o);

    Results r;
    r.frames = o.frames;
    for (int i = 0; i < o.frames; ++i) r.source_index.push_back(seq.source_index(o.warmup + i));
    r.meta_line("kestrel_bench", std::string("Kestrel ") + KESTREL_BENCH_VERSION + ", commit " + KESTREL_BENCH_COMMIT +
                                     " (at configure time)");
    r.meta_line("date", now_utc());
    r.meta_line("command", o.command_line);
    r.meta_line("host", cpu_model() + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads");
    if (cuda) {
        char b[256];
        std::snprintf(b, sizeof b, "%s, sm_%d%d, %d SMs, %s, %.1f GiB", gpu.name.c_str(), gpu.cc_major, gpu.cc_minor,
                      gpu.sm_count, gpu.integrated ? "integrated (shares host DRAM)" : "discrete", gpu.total_mem_gib);
        r.meta_line("backend", "CUDA");
        r.meta_line("GPU", b);
        r.meta_line("CUDA", "runtime " + cuda_version_text(gpu.runtime_version) + ", driver " +
                                cuda_version_text(gpu.driver_version));
        if (!gpu.devfreq.empty()) r.meta_line("Jetson GPU devfreq (before the run)", gpu.devfreq);
        if (!sm_limit) {  // the self-check without a limit: the grid spreads over all SMs (what it tells apart)
            Stream check;
            sm_line = "none: all " + std::to_string(gpu.sm_count) + " SMs (self-check: " +
                      std::to_string(4 * gpu.sm_count) + " blocks ran on " +
                      std::to_string(distinct_sms(4 * gpu.sm_count, 20.0, check.get())) + " distinct SMs)";
        }
        r.meta_line("SM limit", sm_line);
        r.notes.insert(r.notes.end(), sm_notes.begin(), sm_notes.end());
    } else {
        r.meta_line("backend", std::string("CPU (the reference backend") +
                                   (gpu_usable ? "" : "; no CUDA device on this machine") +
                                   "): no floor, no device stages; stage times are steady-clock");
    }
    r.meta_line("input", seq.description());
    r.meta_line("frames", std::to_string(seq.source_width()) + "x" + std::to_string(seq.source_height()) + " -> " +
                              std::to_string(seq.width()) + "x" + std::to_string(seq.height()) + " (" +
                              o.geometry.describe() + ")");
    r.meta_line("measured", std::to_string(o.frames) + " frames after " + std::to_string(o.warmup) + " warm-up, " +
                                std::to_string(seq.distinct()) + " distinct" +
                                (!seq.looped()        ? ""
                                 : seq.periodic() ? " (one period of the motion, repeated to reach the count)"
                                                  : " (source played forwards and backwards to reach the count)"));
    r.meta_line("detector", describe_detector(o.tracker.detector));
    r.meta_line("tracker", describe_tracker(o.tracker));
    if (o.frames < 300)
        r.notes.push_back("statistics over " + std::to_string(o.frames) + " frames: the documented figures use >= 300");
#if !KESTREL_BENCH_TRACKER
    r.notes.push_back("this build has no FeatureTracker (KESTREL_BENCH_TRACKER=OFF): tracker rows not measured");
#endif

    add_kestrel_series(r, o, cuda, seq.width(), seq.height());
    for (double hz : o.rates) add_paced_series(r, hz, cuda);
    if (cuda)
        r.meta_line("timing", "per frame, one untimed floor round trip (the GPU idled through the baselines), then "
                              "the floor, detection and the tracker frame back to back, their order rotated every "
                              "frame: the x floor ratios compare rows timed the same way");
    if (!o.rates.empty())
        r.meta_line("paced", "after the back-to-back run, one pass per row and rate over the same " +
                                 std::to_string(total) + " frames (" + std::to_string(o.warmup) +
                                 " not recorded), frames released every 1/rate s on a fixed schedule; "
                                 "latency = release to results on the host; paced x floor = against the paced "
                                 "floor of the same rate");
    Baselines baselines(o, cuda, r);
#if KESTREL_BENCH_CUDA
    std::unique_ptr<KestrelRunner> runner =
        cuda ? make_cuda_runner(o, gpu, seq.width(), seq.height(), r) : make_cpu_runner(o, seq.width(), seq.height(), r);
#else
    std::unique_ptr<KestrelRunner> runner = make_cpu_runner(o, seq.width(), seq.height(), r);  // cuda is false here
#endif

    Progress bar("running", total);
    for (int i = 0; i < total; ++i) {
        if (i == o.warmup) {
            runner->end_warmup(r);
            if (cuda) {
                Stream s;
                gpu.measured_sm_mhz = measure_sm_clock(s.get(), 50.0);
            }
        }
        const int rec = i - o.warmup;
        runner->frame(seq.frame(i), rec, r);
        baselines.frame(seq.frame(i), runner->tracked_points(), rec, r);
        bar.update(i + 1);
    }
    bar.done();
    const bool tty = isatty(fileno(stdout));
    for (double hz : o.rates) {
        if (tty) {
            std::printf("\r  paced passes at %s Hz (about %.0f s) ...", rate_text(hz).c_str(), (cuda ? 3 : 2) * total / hz);
            std::fflush(stdout);
        }
        runner->paced(seq, hz, o.warmup, r);
    }
    if (tty && !o.rates.empty()) {
        std::printf("\r%*s\r", 100, "");
        std::fflush(stdout);
    }
    for (double hz : o.rates)
        for (const char* row : {"floor", "detect", "frame", "frame_track", "frame_redetect"})
            if (const Series* s = r.find(paced_key(hz, row)); s && s->late > 0)
                r.notes.push_back(s->label + ": " + std::to_string(s->late) + " frames began after their release "
                                  "(the previous frame overran the period, or the host woke after the release): "
                                  "their latency includes the wait");
    if (sm_limit) {  // the limit held through the run: the same self-check again
        for (auto& [key, value] : r.meta)
            if (key == "SM limit") value += "; after the run: " + sm_self_check(*sm_limit, r.notes);
    }
    runner->finish(r);
    if (cuda) {
        char b[256];
        std::snprintf(b, sizeof b, "SM peak %.0f MHz, measured under load %.0f MHz (clock64 over %%globaltimer, after "
                      "warm-up); memory peak %.0f MHz", gpu.peak_sm_mhz, gpu.measured_sm_mhz, gpu.peak_mem_mhz);
        r.meta_line("clocks", b);
        const std::string warn = throttle_warning(gpu);
        if (!warn.empty()) r.notes.push_back("WARNING: " + warn);
    }
    r.notes.push_back(cuda ? "the pyramid and score rows time those stage APIs alone (the detector fuses its scores, NMS "
                             "and selection into one kernel where it applies: no NMS row); device rows are GPU "
                             "time behind a spin kernel, wall rows include launch and synchronisation"
                           : "the stage rows time each stage's function alone on one thread, with fresh memory "
                             "and passes over whole maps: they show where the time goes, and their sum exceeds the "
                             "one-thread detection row (the detector reuses its memory and visits only the corners it "
                             "found); the detection and tracker rows run on every hardware thread");

    print_report(r, std::cout);
    if (!o.json.empty()) {
        write_json(r, o.json);
        std::cout << "\nwrote " << o.json << "\n";
    }
    if (!o.csv.empty()) {
        write_csv(r, o.csv);
        std::cout << (o.json.empty() ? "\n" : "") << "wrote " << o.csv << "\n";
    }
    return 0;
}

}  // namespace
}  // namespace kestrel::bench

int main(int argc, char** argv) {
    kestrel::bench::Options o;
    const int rc = kestrel::bench::parse_options(argc, argv, o);
    if (rc == 1) return 0;
    if (rc != 0) return 2;
    try {
        return kestrel::bench::run(o);
    } catch (const kestrel::InvalidArgument& e) {
        std::fprintf(stderr, "kestrel_bench: invalid setting: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_bench: error: %s\n", e.what());
        return 1;
    }
}
