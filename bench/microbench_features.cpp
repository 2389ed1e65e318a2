// kestrel_microbench, ORB rows (752x480, 1000 features over 8 levels of factor 1.2, as ORB-SLAM):
//   orb/end-to-end/752x480/8x1.2/1000            FeatureDetector with orb_descriptors on Backend::Cuda:
//                                                pinned frame in, keypoints + angles + descriptors on the host
//                                                (upload, graph, downloads, one sync): wall clock
//   orb/detector-only/end-to-end/752x480/8x1.2/1000  the same detector without descriptors, same pyramid
//   orb/device/752x480/8x1.2/1000                the ORB detector from a device image: device time (events)
//   orb-slam/end-to-end/752x480/8x1.2/1000       SelectionPolicy::OrbSlam (ORB-SLAM's extractor) with descriptors,
//   level-harris/end-to-end/752x480/8x1.2/1000   or LevelHarris (cv::ORB's ranking): as orb/end-to-end
//   orb-slam/device/..., level-harris/device/... the same from a device image: device time (events)
//   cpu/cv-orb/752x480/8x1.2/1000                cv::ORB::detectAndCompute (1000 features, 8 levels, 1.2) on
//                                                the CPU, when OpenCV is found
//   cpu/kestrel-orb/752x480/8x1.2/1000           the same detector on Backend::Cpu (the reference)
//   cpu/kestrel-orb-slam/..., cpu/kestrel-level-harris/...  the per-level policies on Backend::Cpu
//   matcher/device/1000x1000/ratio[/cross-check] HammingMatcher::match_async, descriptors in device memory:
//                                                device time (events)
// GPU rows skip with a message on a machine without a CUDA device.
#include <random>
#include <vector>

#include "kestrel/matcher.hpp"
#include "kestrel/orb.hpp"
#include "microbench.hpp"
#if KESTREL_BENCH_CUDA
#include "kernels/common/cuda_check.hpp"
#endif
#if KESTREL_BENCH_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/features2d.hpp>
#endif

namespace kestrel::bench::micro {

namespace {

constexpr int kOrbFeatures = 1000;

/// The detector of the ORB rows: 8 levels of 1.2, FAST maxima over 9x9 (OpenCV's FAST response), up to 6
/// per 32x32 cell, the best 1000, 31 px from the border (the configuration of the graf1 -> graf3 test).
DetectorConfig orb_detector(bool descriptors) {
    DetectorConfig c;
    c.pyramid = {8, 1.2f};
    c.fast = {20, 9, 16, ScoreType::MaxThreshold};
    c.nms_radius = 4;
    c.per_cell = 6;
    c.max_features = kOrbFeatures;
    c.border = 31;
    c.orb_descriptors = descriptors;
    return c;
}

/// The per-level policies with descriptors: 1000 features on 8 levels of 1.2, their defaults otherwise.
DetectorConfig per_level_detector(SelectionPolicy s) {
    DetectorConfig c;
    c.pyramid = {8, 1.2f};
    c.selection = s;
    c.max_features = kOrbFeatures;
    c.orb_descriptors = true;
    return c;
}

#if KESTREL_BENCH_CUDA
std::vector<OrbDescriptor> random_descriptors(int n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<OrbDescriptor> v(static_cast<std::size_t>(n));
    for (auto& d : v)
        for (auto& b : d.bytes) b = static_cast<std::uint8_t>(rng() & 0xFF);
    return v;
}
#endif

}  // namespace

void register_features() {
    const std::string tag = "752x480/8x1.2/1000";
#if KESTREL_BENCH_CUDA
    for (const bool orb : {true, false}) {
        add(std::string(orb ? "orb/end-to-end/" : "orb/detector-only/end-to-end/") + tag, 1000, [orb](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            FeatureDetector det(orb_detector(orb), Backend::Cuda);
            const PinnedImage p = pinned_copy(g_frame0.at("752x480"));
            Stream s;
            if (orb)
                st.SetLabel("target: <= 2 x orb/detector-only/end-to-end, >= 30 x faster than cpu/cv-orb");
            gpu_wall_loop(st, [&] {
                det.detect_async(p.view(), s.get());
                s.sync("orb");
            });
            st.counters["keypoints"] = det.host_count();
        });
    }
    add("orb/device/" + tag, 1000, [](benchmark::State& st) {
        if (!g_gpu) return st.SkipWithError(kNoGpu);
        FeatureDetector det(orb_detector(true), Backend::Cuda);
        const DeviceImage d = upload(g_frame0.at("752x480").view());
        device_loop(st, [&](cudaStream_t s) { det.detect_async(d.view(), s); });
        st.counters["keypoints"] = det.host_count();
    });
    for (const SelectionPolicy pol : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris}) {
        const std::string name = to_string(pol);
        add(name + "/end-to-end/" + tag, 1000, [pol](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            FeatureDetector det(per_level_detector(pol), Backend::Cuda);
            const PinnedImage p = pinned_copy(g_frame0.at("752x480"));
            Stream s;
            st.SetLabel("target: <= 1.3 x orb/end-to-end");
            gpu_wall_loop(st, [&] {
                det.detect_async(p.view(), s.get());
                s.sync("orb");
            });
            st.counters["keypoints"] = det.host_count();
        });
        add(name + "/device/" + tag, 1000, [pol](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            FeatureDetector det(per_level_detector(pol), Backend::Cuda);
            const DeviceImage d = upload(g_frame0.at("752x480").view());
            device_loop(st, [&](cudaStream_t s) { det.detect_async(d.view(), s); });
            st.counters["keypoints"] = det.host_count();
        });
    }
    for (const bool cross : {false, true}) {
        add(std::string("matcher/device/1000x1000/ratio") + (cross ? "/cross-check" : ""), 1000,
            [cross](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                const auto q = random_descriptors(1000, 1), t = random_descriptors(1000, 2);
                DeviceBuffer dq(q.size() * sizeof(OrbDescriptor)), dt(t.size() * sizeof(OrbDescriptor));
                KESTREL_CUDA(cudaMemcpy(dq.get(), q.data(), q.size() * sizeof(OrbDescriptor), cudaMemcpyHostToDevice), "bench");
                KESTREL_CUDA(cudaMemcpy(dt.get(), t.data(), t.size() * sizeof(OrbDescriptor), cudaMemcpyHostToDevice), "bench");
                MatcherConfig cfg;
                cfg.cross_check = cross;
                HammingMatcher m(cfg, 1000, Backend::Cuda);
                if (!cross) st.SetLabel("target: <= 20 us device");
                device_loop(st, [&](cudaStream_t s) {
                    m.match_async(static_cast<const OrbDescriptor*>(dq.get()), 1000,
                                  static_cast<const OrbDescriptor*>(dt.get()), 1000, s);
                });
            });
    }
#endif
    add("cpu/kestrel-orb/" + tag, 100, [](benchmark::State& st) {
        DetectorConfig c = orb_detector(true);
        c.threads = 1;  // the issue target: one thread, against cv-orb on one thread
        FeatureDetector det(c, Backend::Cpu);
        st.SetLabel("target: <= cpu/cv-orb (both one thread)");
        const HostImage& img = g_frame0.at("752x480");
        wall_loop(st, [&] { benchmark::DoNotOptimize(det.detect(img.view())); });
        st.counters["keypoints"] = det.host_count();
    });
    for (const SelectionPolicy pol : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris}) {
        add(std::string("cpu/kestrel-") + to_string(pol) + "/" + tag, 20, [pol](benchmark::State& st) {
            FeatureDetector det(per_level_detector(pol), Backend::Cpu);
            const HostImage& img = g_frame0.at("752x480");
            wall_loop(st, [&] { benchmark::DoNotOptimize(det.detect(img.view())); });
            st.counters["keypoints"] = det.host_count();
        });
    }
#if KESTREL_BENCH_OPENCV
    add("cpu/cv-orb/" + tag, 100, [](benchmark::State& st) {
        const HostImage& img = g_frame0.at("752x480");
        const cv::Mat m(img.height(), img.width(), CV_8UC1, const_cast<std::uint8_t*>(img.data()));
        cv::setNumThreads(1);  // one thread, as cpu/kestrel-orb
        auto orb = cv::ORB::create(kOrbFeatures, 1.2f, 8);
        std::vector<cv::KeyPoint> kps;
        cv::Mat desc;
        wall_loop(st, [&] { orb->detectAndCompute(m, cv::noArray(), kps, desc); });
        st.counters["keypoints"] = static_cast<double>(kps.size());
        st.counters["threads"] = cv::getNumThreads();
    });
#endif
}

}  // namespace kestrel::bench::micro
