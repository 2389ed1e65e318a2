// kestrel_microbench: frames, timing loops and helpers shared by the GPU and CPU rows (the GPU loops,
// device_loop and gpu_wall_loop, live with the GPU rows in microbench_gpu.cpp).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "microbench.hpp"
#include "stats.hpp"

namespace kestrel::bench::micro {

bool g_gpu = false;
int g_div = 1;

std::map<std::string, HostImage> g_frame0, g_frame1;
std::vector<HostImage> g_seq752;

int iters(int n) { return std::max(10, n / g_div); }

void set_stats(benchmark::State& st, const std::vector<double>& us) {
    const Summary s = summarize(us);
    st.counters["median_us"] = s.median;
    st.counters["p10_us"] = s.p10;
    st.counters["p90_us"] = s.p90;
    st.counters["max_us"] = s.max;
}

void wall_loop(benchmark::State& st, const std::function<void()>& call) {
    call();  // untimed first calls: allocation, then CUDA-graph capture
    call();
    std::vector<double> us;
    for (auto _ : st) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        us.push_back(t);
        st.SetIterationTime(t * 1e-6);
    }
    set_stats(st, us);
}

DetectorConfig issue4_detector() {
    DetectorConfig c;
    c.pyramid = {2, 2.0f};
    c.fast.threshold = 10;
    c.cell_width = c.cell_height = 32;
    return c;
}

PinnedImage pinned_copy(const HostImage& img) {
    PinnedImage p(img.width(), img.height());
    std::memcpy(p.data(), img.data(), static_cast<std::size_t>(img.width()) * img.height());
    return p;
}

std::vector<Point2f> feature_points(int n) {
    DetectorConfig c = issue4_detector();
    c.per_cell = 4;
    c.max_features = n;
    std::vector<Point2f> pts;
    for (const Keypoint& k : detect_cpu(g_frame0.at("752x480").view(), c)) pts.push_back({k.x, k.y});
    return pts;
}

const char* mode_name(LkMode m) {
    switch (m) {
        case LkMode::Translation: return "translation";
        case LkMode::TranslationOffset: return "offset";
        case LkMode::TranslationGain: return "gain";
        case LkMode::TranslationGainOffset: return "gain-offset";
    }
    return "?";
}

}  // namespace kestrel::bench::micro
