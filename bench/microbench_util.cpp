// kestrel_microbench: frames, timing loops and helpers shared by the GPU and CPU rows (the GPU loops,
// device_loop and gpu_wall_loop, live with the GPU rows in microbench_gpu.cpp).
#include <algorithm>
#include <chrono>
#include <cstring>

#include "microbench.hpp"
#include "kestrel/error.hpp"
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

std::string sm_self_check(const SmLimit& limit) {
    const int blocks = 4 * limit.device_sms();
    Stream check;
    const int on_stream = distinct_sms(blocks, 20.0, check.get()), on_default = distinct_sms(blocks, 20.0, nullptr);
    std::string s = std::to_string(blocks) + " blocks ran on " + std::to_string(on_stream) +
                    " distinct SMs on a created stream, " + std::to_string(on_default) + " on the default stream";
    if (!limit.current()) s += " -- WARNING: the green context is no longer current: the limit is not in effect";
    else if (std::max(on_stream, on_default) > limit.obtained() + 2) s += " -- WARNING: the limit is not in effect";
    return s;
}

std::unique_ptr<SmLimit> limit_sms(const std::string& value, std::string& line) {
    int n = 0;
    std::size_t used = 0;
    try {
        n = std::stoi(value, &used);
    } catch (...) {
        used = 0;
    }
    if (used != value.size() || value.empty() || n < 1)
        throw InvalidArgument("--sm-count", "--sm-count expects an integer >= 1 (the SMs of the green context), got '" +
                                                value + "'");
    if (!g_gpu) throw NoDeviceError("--sm-count " + value + ": no CUDA device on this machine");
    auto limit = std::make_unique<SmLimit>(0, n);
    line = "green context of " + std::to_string(limit->obtained()) + " SMs (--sm-count " + value + ", of " +
           std::to_string(limit->device_sms()) + "); self-check: " + sm_self_check(*limit);
    return limit;
}

DetectorConfig issue4_detector() {
    DetectorConfig c;
    c.pyramid = {2, 2.0f};
    c.fast.threshold = 10;
    c.fast.score = ScoreType::SadCircle;  // the score these rows have always timed (the detector's default is MT)
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

Camera bench_camera(bool fisheye) {
    Camera c;
    if (fisheye) {
        c.model = CameraModel::Fisheye;
        c.width = 512;
        c.height = 512;
        c.fx = 190.97;
        c.fy = 190.98;
        c.cx = 254.93;
        c.cy = 256.90;
        const double d[4] = {0.0034823894, 0.00071503, -0.0020532361, 0.00020293673};
        for (int i = 0; i < 4; ++i) c.d[i] = d[i];
    } else {
        c.model = CameraModel::PinholeRadtan;
        c.width = 752;
        c.height = 480;
        c.fx = 458.654;
        c.fy = 457.296;
        c.cx = 367.215;
        c.cy = 248.375;
        const double d[4] = {-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05};
        for (int i = 0; i < 4; ++i) c.d[i] = d[i];
    }
    return c;
}

std::vector<float> bench_pixels(const Camera& c, int n) {
    std::vector<float> xy;
    xy.reserve(static_cast<std::size_t>(2 * n));
    for (int i = 0; i < n; ++i) {  // the R2 sequence (golden-ratio generalisation): even cover, no clusters
        const double a = 0.5 + 0.7548776662466927 * i, b = 0.5 + 0.5698402909980532 * i;
        xy.push_back(static_cast<float>((a - static_cast<long long>(a)) * c.width - 0.5));
        xy.push_back(static_cast<float>((b - static_cast<long long>(b)) * c.height - 0.5));
    }
    return xy;
}

}  // namespace kestrel::bench::micro
