// kestrel_microbench: one stage at a time, Google Benchmark, manual timing.
//   device rows: CUDA events around the stage, the stream held by a spin kernel while the host
//                enqueues (events then bracket GPU work only), iteration time = event time;
//   wall rows:   steady clock around the call and its synchronisation (end to end, the floor);
//   CPU rows:    steady clock (OpenCV baselines, Kestrel's CPU reference).
// Each row also reports median_us, p10_us, p90_us and max_us over its iterations (the documented
// figures are medians). GPU rows skip with a message on a machine without a CUDA device.
// Images: the vtest.avi frames of the test data (--data DIR, $KESTREL_TEST_DATA, or the build tree's
// testdata/), centre-cropped to 752x480, or cropped to 16:9 (768x432) and resized to 1280x720/1920x1080.
// Extra flags (before Google Benchmark's own): --data DIR, --quick (iterations / 10), --sm-count N (all GPU
// rows on a green context of N SMs, CUDA 12.4+: see docs/jetson.md).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>

#include "bench_gpu.hpp"
#include "frames.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "microbench.hpp"

namespace kb = kestrel::bench;
using namespace kb::micro;
using kestrel::HostImage;

namespace {

// Context lines: in the JSON/console context with Google Benchmark 1.6+, printed first otherwise.
void context(const std::string& key, const std::string& value) {
#if KESTREL_BENCH_GB16
    benchmark::AddCustomContext(key, value);
#else
    std::cout << key << ": " << value << "\n";
#endif
}

}  // namespace

int main(int argc, char** argv) {
    std::string data_flag, sm_flag;
    bool sm_given = false;
    std::vector<char*> rest{argv[0]};
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--data" && i + 1 < argc) data_flag = argv[++i];
        else if (a.rfind("--data=", 0) == 0) data_flag = a.substr(7);
        else if (a == "--quick") g_div = 10;
        else if (a == "--sm-count") sm_given = true, sm_flag = i + 1 < argc ? argv[++i] : "";
        else if (a.rfind("--sm-count=", 0) == 0) sm_given = true, sm_flag = a.substr(11);
        else rest.push_back(argv[i]);
    }
    int n = static_cast<int>(rest.size());
    benchmark::Initialize(&n, rest.data());
    if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 2;

    const std::string dir = kb::find_test_data(data_flag);
    if (dir.empty()) {
        std::cerr << "kestrel_microbench: no test data: pass --data DIR (the build tree's testdata/, made by `ninja "
                     "kestrel_testdata`) or set KESTREL_TEST_DATA\n";
        return 2;
    }
    try {
        auto src = kb::open_vtest_sequence(dir);
        const HostImage f0 = src->read(0), f1 = src->read(1);
        const kb::FrameGeometry g752{752, 480, 0, 0, 0, 0};
        const kb::FrameGeometry g720{768, 432, 1280, 720, 0, 0};
        const kb::FrameGeometry g1080{768, 432, 1920, 1080, 0, 0};
        for (const auto& [name, g] : {std::pair<std::string, kb::FrameGeometry>{"752x480", g752},
                                      {"1280x720", g720}, {"1920x1080", g1080}}) {
            g_frame0[name] = kb::prepare(f0, g);
            g_frame1[name] = kb::prepare(f1, g);
        }
        for (int i = 0; i < src->size(); ++i) g_seq752.push_back(kb::prepare(src->read(i), g752));
    } catch (const std::exception& e) {
        std::cerr << "kestrel_microbench: " << e.what() << "\n";
        return 2;
    }

    g_gpu = kestrel::cuda_available();
    if (const char* req = std::getenv("KESTREL_REQUIRE_GPU"); !g_gpu && req && std::string(req) == "1") {
        std::cerr << "kestrel_microbench: KESTREL_REQUIRE_GPU=1 but no CUDA device is usable: failing instead of "
                     "skipping the GPU rows\n";
        return 1;
    }
    if (g_gpu) {
        const kb::GpuInfo gi = kb::query_gpu(0);
        context("gpu", gi.name + ", sm_" + std::to_string(gi.cc_major) + std::to_string(gi.cc_minor) +
                                               ", " + std::to_string(gi.sm_count) + " SMs");
        context("cuda", "runtime " + kb::cuda_version_text(gi.runtime_version) + ", driver " +
                                                kb::cuda_version_text(gi.driver_version));
    } else {
        std::cerr << "kestrel_microbench: no CUDA device on this machine: the GPU rows are skipped\n";
        context("gpu", "none (GPU rows skipped)");
    }
    context("data", dir);
    std::unique_ptr<kb::SmLimit> sm_limit;  // --sm-count: current on this thread until the benchmarks are done
    if (sm_given) {
        try {
            std::string line;
            sm_limit = limit_sms(sm_flag, line);
            context("sm_limit", line);
        } catch (const std::exception& e) {
            std::cerr << "kestrel_microbench: " << e.what() << "\n";
            return 2;
        }
    }
#if KESTREL_BENCH_CUDA
    register_gpu();  // a build without CUDA has the CPU rows only
    register_pyca();
    register_stereo_gpu();
#endif
    register_cpu();
    register_stereo_cpu();
    register_geometry();
    register_features();
    benchmark::RunSpecifiedBenchmarks();
    if (sm_limit) std::cerr << "kestrel_microbench: sm_limit after the benchmarks: " << sm_self_check(*sm_limit) << "\n";
#if KESTREL_BENCH_GB16
    benchmark::Shutdown();
#endif
    return 0;
}
