// kestrel_soak: the long-run check of docs/reliability.md. Runs detect + track on the vtest.avi frames
// (looped) for N frames, samples device memory in use (cudaMemGetInfo: total - free, device-wide) and
// the process's resident set (/proc/self/statm) every K frames, prints a table and a verdict:
//   FLAT      when, over the samples taken after the warm-up, max - min stays below the thresholds
//             for both device memory and host RSS;
//   GROWING   otherwise (exit status 2);
//   TOO SHORT when fewer than two samples fall after the warm-up (no verdict; exit status 0).
// Per frame (CUDA): detector.detect_async(pinned frame, stream); tracker.track_async(same, stream);
// tracker.finish() (waits for the stream). CPU: detector.detect(frame); tracker.track(frame).
//
// Usage: kestrel_soak [--backend cpu|cuda] [--frames N] [--sample-every K] [--warmup W]
//                     [--device-threshold-mib D] [--host-threshold-mib H] [--data DIR]
// Defaults: backend cuda when a device is usable, else cpu; N 100000; K 1000; W 5000; D 1; H 4;
// DIR $KESTREL_TEST_DATA, else the build tree's testdata/ (build target kestrel_testdata).
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#if KESTREL_SOAK_CUDA
#include <cuda_runtime.h>
#endif
#include <stb_image.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"

#ifndef KESTREL_SOAK_DATA_DIR
#define KESTREL_SOAK_DATA_DIR "testdata"
#endif

namespace {

using namespace kestrel;

struct Options {
    Backend backend = default_backend();
    long long frames = 100000;
    long long sample_every = 1000;
    long long warmup = 5000;
    double device_threshold_mib = 1.0;
    double host_threshold_mib = 4.0;
    std::string data;
};

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "kestrel_soak: %s\nusage: kestrel_soak [--backend cpu|cuda] [--frames N] [--sample-every K] "
                 "[--warmup W] [--device-threshold-mib D] [--host-threshold-mib H] [--data DIR]\n",
                 why);
    std::exit(1);
}

Options parse(int argc, char** argv) {
    Options o;
    if (const char* env = std::getenv("KESTREL_TEST_DATA"); env && *env) o.data = env;
    else o.data = KESTREL_SOAK_DATA_DIR;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + a).c_str());
        const std::string v = argv[++i];
        try {
            if (a == "--backend") {
                if (v == "cpu") o.backend = Backend::Cpu;
                else if (v == "cuda") o.backend = Backend::Cuda;
                else usage("--backend must be cpu or cuda");
                if (v == "cuda" && !kestrel::cuda_available()) usage("--backend cuda: no usable CUDA device on this machine (use --backend cpu)");
            } else if (a == "--frames") o.frames = std::stoll(v);
            else if (a == "--sample-every") o.sample_every = std::stoll(v);
            else if (a == "--warmup") o.warmup = std::stoll(v);
            else if (a == "--device-threshold-mib") o.device_threshold_mib = std::stod(v);
            else if (a == "--host-threshold-mib") o.host_threshold_mib = std::stod(v);
            else if (a == "--data") o.data = v;
            else usage(("unknown option " + a).c_str());
        } catch (const std::logic_error&) {
            usage(("bad value for " + a + ": " + v).c_str());
        }
    }
    if (o.frames < 1 || o.sample_every < 1 || o.warmup < 0) usage("frames and sample-every must be >= 1, warmup >= 0");
    return o;
}

HostImage load_grey(const std::string& path) {
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1);
    if (!px) throw std::runtime_error("cannot read '" + path + "': " + stbi_failure_reason());
    HostImage img(w, h);
    std::memcpy(img.data(), px, static_cast<std::size_t>(w) * h);
    stbi_image_free(px);
    return img;
}

std::vector<HostImage> load_sequence(const std::string& dir) {
    std::vector<std::string> names;
    if (std::filesystem::is_directory(dir))
        for (const auto& e : std::filesystem::directory_iterator(dir)) {
            const std::string n = e.path().filename().string();
            if (n.rfind("vtest_", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".png") names.push_back(n);
        }
    if (names.empty())
        throw std::runtime_error("no vtest_*.png frames in '" + dir +
                                 "' (build the kestrel_testdata target, or pass --data / set KESTREL_TEST_DATA)");
    std::sort(names.begin(), names.end());
    std::vector<HostImage> frames;
    for (const std::string& n : names) frames.push_back(load_grey(dir + "/" + n));
    return frames;
}

double host_rss_mib() {
    std::ifstream statm("/proc/self/statm");
    long long size = 0, resident = 0;
    if (!(statm >> size >> resident)) return -1.0;
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

/// Device memory in use on the current device (all processes), MiB; -1 without CUDA.
double device_used_mib(Backend b) {
    if (b != Backend::Cuda) return -1.0;
#if !KESTREL_SOAK_CUDA
    return -1.0;  // a build without CUDA never runs the CUDA backend
#else
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return -1.0;
    }
    return static_cast<double>(total - free) / (1024.0 * 1024.0);
#endif
}

struct Sample {
    long long frame;
    double device_mib, host_mib, ms_per_frame;
    std::size_t tracks;
};

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);
    try {
        const std::vector<HostImage> seq = load_sequence(opt.data);
        const int w = seq[0].width(), h = seq[0].height();
        DetectorConfig dcfg;  // defaults: 2 levels, t = 10, 32x32 cells, 1 per cell
        TrackerConfig tcfg;   // defaults: 200 tracks, previous-frame templates
        FeatureDetector detector(dcfg, opt.backend);
        FeatureTracker tracker(w, h, tcfg, opt.backend);
        std::printf("kestrel_soak: backend %s, %lld frames of %dx%d (%zu frames looped from %s), sample every %lld, "
                    "warm-up %lld\n",
                    to_string(opt.backend), opt.frames, w, h, seq.size(), opt.data.c_str(), opt.sample_every,
                    opt.warmup);

        std::vector<PinnedImage> pinned;
        std::optional<CudaStream> own_stream;
        if (opt.backend == Backend::Cuda) {
            for (const HostImage& f : seq) {
                pinned.emplace_back(w, h);
                std::memcpy(pinned.back().data(), f.data(), static_cast<std::size_t>(w) * h);
            }
            own_stream.emplace();
        }
        const StreamHandle stream = own_stream ? own_stream->get() : nullptr;

        std::printf("%10s %14s %14s %8s %10s\n", "frame", "device MiB", "host RSS MiB", "tracks", "ms/frame");
        std::vector<Sample> samples;
        std::size_t keypoints = 0;
        auto t0 = std::chrono::steady_clock::now();
        for (long long f = 1; f <= opt.frames; ++f) {
            const std::size_t i = static_cast<std::size_t>((f - 1) % static_cast<long long>(seq.size()));
            std::size_t live = 0;
            if (opt.backend == Backend::Cuda) {
                detector.detect_async(pinned[i].view(), stream);
                tracker.track_async(pinned[i].view(), stream);
                live = tracker.finish().size();  // waits for the stream: the detection is complete too
                keypoints += static_cast<std::size_t>(detector.host_count());
            } else {
                keypoints += detector.detect(seq[i].view()).size();
                live = tracker.track(seq[i].view()).size();
            }
            if (f % opt.sample_every == 0 || f == opt.frames) {
                const auto t1 = std::chrono::steady_clock::now();
                const long long n = f % opt.sample_every == 0 ? opt.sample_every : f % opt.sample_every;
                const double ms = std::chrono::duration<double, std::milli>(t1 - t0).count() / static_cast<double>(n);
                t0 = t1;
                const Sample s{f, device_used_mib(opt.backend), host_rss_mib(), ms, live};
                samples.push_back(s);
                char device[32] = "n/a";
                if (s.device_mib >= 0.0) std::snprintf(device, sizeof device, "%.2f", s.device_mib);
                std::printf("%10lld %14s %14.2f %8zu %10.3f\n", s.frame, device, s.host_mib, s.tracks, s.ms_per_frame);
                std::fflush(stdout);
            }
        }

        double dmin = 1e300, dmax = -1e300, hmin = 1e300, hmax = -1e300;
        int after = 0;
        for (const Sample& s : samples) {
            if (s.frame <= opt.warmup) continue;
            ++after;
            dmin = std::min(dmin, s.device_mib);
            dmax = std::max(dmax, s.device_mib);
            hmin = std::min(hmin, s.host_mib);
            hmax = std::max(hmax, s.host_mib);
        }
        std::printf("keypoints detected in total: %zu\n", keypoints);
        if (after < 2) {
            std::printf("verdict: TOO SHORT (%d sample(s) after frame %lld; need 2)\n", after, opt.warmup);
            return 0;
        }
        const bool cuda = opt.backend == Backend::Cuda;
        const double drange = cuda ? dmax - dmin : 0.0, hrange = hmax - hmin;
        const bool flat = drange < opt.device_threshold_mib && hrange < opt.host_threshold_mib;
        std::printf("after frame %lld (%d samples): device memory max-min %s MiB (threshold %.2f), host RSS max-min "
                    "%.2f MiB (threshold %.2f)\n",
                    opt.warmup, after, cuda ? std::to_string(drange).c_str() : "n/a", opt.device_threshold_mib,
                    hrange, opt.host_threshold_mib);
        std::printf("verdict: %s\n", flat ? "FLAT" : "GROWING");
        return flat ? 0 : 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "kestrel_soak: %s\n", e.what());
        return 1;
    }
}
