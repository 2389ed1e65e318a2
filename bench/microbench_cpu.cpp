// kestrel_microbench, CPU rows: Kestrel's CPU reference detector and the OpenCV CPU baselines
// (cv::FAST + grid selection, goodFeaturesToTrack, cv::FAST without NMS on 2 levels, calcOpticalFlowPyrLK).
#include <chrono>
#include <cstring>

#include "kestrel/feature_tracker.hpp"
#include "microbench.hpp"
#if KESTREL_BENCH_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include "cv_baselines.hpp"
#endif

namespace kestrel::bench::micro {

namespace {

/// The CPU backend's thread counts of the rows: 1 and all (0 = the hardware threads), then the scaling rows.
std::string threads_name(int threads) {
    return threads == 0 ? "all-threads" : threads == 1 ? "1thread" : "threads:" + std::to_string(threads);
}
constexpr int kThreadRows[] = {1, 0, 2, 4, 8, 16};

/// k-th frame of a ping-pong walk through the 752x480 sequence (continuous motion, any length).
const HostImage& seq_frame(std::size_t i) {
    const int n = static_cast<int>(g_seq752.size());
    const int period = std::max(1, 2 * n - 2);
    const int j = static_cast<int>(i % static_cast<std::size_t>(period));
    return g_seq752[static_cast<std::size_t>(j < n ? j : period - j)];
}

}  // namespace

void register_cpu() {
    // The CPU backend's detector object (FeatureDetector, Backend::Cpu: its own pool of `threads`), the same
    // config as cv-fast+grid below. Issue target: 1thread and all-threads <= cv-fast+grid/752x480/1thread.
    for (int threads : kThreadRows) {
        add("cpu/kestrel-detector/752x480/" + threads_name(threads), 200, [threads](benchmark::State& st) {
            DetectorConfig c = issue4_detector();
            c.threads = threads;
            FeatureDetector det(c, Backend::Cpu);
            const HostImage& img = g_frame0.at("752x480");
            wall_loop(st, [&] { benchmark::DoNotOptimize(det.detect(img.view())); });
            st.counters["keypoints"] = static_cast<double>(det.host_count());
        });
    }
#if KESTREL_BENCH_TRACKER
    // The CPU backend's tracker frame (FeatureTracker, Backend::Cpu): 200 tracks, 3 levels, the default
    // mode and anchoring, frames of the sequence in a ping-pong walk. Issue target: <= the
    // cv-pyramid+calcOpticalFlowPyrLK/200/3lv row with the same thread count.
    // With "/check-on": TrackerConfig::geometric_check on (a 752x480 pinhole camera, f = 458 px), one thread row; with
    // "/interval:2": the anchor fit where needed (AnchorConfig::interval 2; the default fits every track every frame).
    for (int threads : kThreadRows) {
      for (const int variant : {0, 1, 2}) {
        const bool check = variant == 1;
        if (variant != 0 && threads != kThreadRows[0]) continue;
        static const char* const kCpuSuffix[3] = {"", "/check-on", "/interval:2"};
        add("cpu/kestrel-tracker-frame/200/3lv/" + threads_name(threads) + kCpuSuffix[variant], 100,
            [threads, check, variant](benchmark::State& st) {
            if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
            TrackerConfig c;
            c.lk.pyramid = {3, 2.0f};
            c.detector = issue4_detector();
            c.target_features = 200;
            c.threads = threads;
            if (variant == 2) c.anchor.interval = 2;
            if (check) {
                c.geometric_check.enabled = true;
                Camera& cam = c.geometric_check.camera;
                cam.width = 752;
                cam.height = 480;
                cam.fx = cam.fy = 458.0;
                cam.cx = 375.5;
                cam.cy = 239.5;
            }
            FeatureTracker trk(752, 480, c, Backend::Cpu);
            std::size_t i = 0;
            for (int w = 0; w < 5; ++w) trk.track(seq_frame(i++).view());  // tracks exist before timing
            std::vector<double> us;
            long long live = 0;
            int frames = 0, redetections = 0;
            for (auto _ : st) {
                const HostImage& f = seq_frame(i++);
                const auto t0 = std::chrono::steady_clock::now();
                const auto& tracks = trk.track(f.view());
                const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                us.push_back(t);
                st.SetIterationTime(t * 1e-6);
                live += static_cast<long long>(tracks.size());
                redetections += trk.redetected();
                ++frames;
            }
            set_stats(st, us);
            st.counters["live_mean"] = frames ? static_cast<double>(live) / frames : 0.0;
            st.counters["redetect_frac"] = frames ? static_cast<double>(redetections) / frames : 0.0;
        });
      }
    }
#endif
    // Kestrel's CPU reference (the backend that runs without a GPU).
    add("cpu/kestrel-detect_cpu/752x480", 20, [](benchmark::State& st) {
        const DetectorConfig c = issue4_detector();
        const HostImage& img = g_frame0.at("752x480");
        wall_loop(st, [&] { benchmark::DoNotOptimize(detect_cpu(img.view(), c)); });
    });
    // The camera models' CPU reference: a frame's keypoints unprojected (docs/geometry.md).
    for (bool fisheye : {false, true}) {
        for (int n : {200, 2000}) {
            add(std::string("cpu/kestrel-unproject_cpu/") + (fisheye ? "fisheye/" : "radtan/") + std::to_string(n), 200,
                [fisheye, n](benchmark::State& st) {
                    const Camera c = bench_camera(fisheye);
                    const std::vector<float> xy = bench_pixels(c, n);
                    std::vector<Point2d> out(n);
                    std::vector<UnprojectStatus> status(n);
                    wall_loop(st, [&] {
                        unproject_cpu(c, xy.data(), n, out.data(), status.data());
                        benchmark::DoNotOptimize(out.data());
                    });
                });
        }
    }
#if KESTREL_BENCH_OPENCV
    for (const char* sz : kSizes) {
        for (int threads : {1, 0}) {
            const std::string th = threads == 1 ? "/1thread" : "/all-threads";
            add(std::string("cpu/cv-fast+grid/") + sz + th, 200, [sz, threads](benchmark::State& st) {
                cv::setNumThreads(threads == 1 ? 1 : cv::getNumberOfCPUs());
                CvFastGrid f(issue4_detector());
                const cv::Mat m = as_mat(g_frame0.at(sz));
                wall_loop(st, [&] { benchmark::DoNotOptimize(f.run(m)); });
                st.counters["keypoints"] = static_cast<double>(f.keypoints().size());
            });
            add(std::string("cpu/cv-goodFeaturesToTrack-200/") + sz + th, 30, [sz, threads](benchmark::State& st) {
                cv::setNumThreads(threads == 1 ? 1 : cv::getNumberOfCPUs());
                CvGftt g(200, 0.01, 8.0);
                const cv::Mat m = as_mat(g_frame0.at(sz));
                wall_loop(st, [&] { benchmark::DoNotOptimize(g.run(m)); });
            });
        }
    }
    // cv::FAST without NMS on the same 2 levels: the CPU counterpart of the score-map stage (the score-map stage).
    for (const char* sz : {"752x480", "1920x1080"}) {
        add(std::string("cpu/cv-fast-nonmax-off/") + sz + "/2lv", 200, [sz](benchmark::State& st) {
            cv::setNumThreads(1);
            const cv::Mat l0 = as_mat(g_frame0.at(sz));
            cv::Mat l1;
            cv::resize(l0, l1, cv::Size(l0.cols / 2, l0.rows / 2), 0, 0, cv::INTER_AREA);
            std::vector<cv::KeyPoint> k0, k1;
            wall_loop(st, [&] {
                cv::FAST(l0, k0, 10, false, cv::FastFeatureDetector::TYPE_9_16);
                cv::FAST(l1, k1, 10, false, cv::FastFeatureDetector::TYPE_9_16);
            });
        });
    }
    // The tracker frame's baseline: the new frame's pyramid (cv::buildOpticalFlowPyramid, 3 levels, 16x16
    // window) and calcOpticalFlowPyrLK of 200 points from the previous frame's pyramid, frame after frame
    // through the same sequence as cpu/kestrel-tracker-frame; the points are re-seeded from the FAST corners
    // of frame 0 (as a tracker re-detects), so that 200 are always followed.
    for (int threads : {1, 0}) {
        add("cpu/cv-pyramid+calcOpticalFlowPyrLK/200/3lv/" + threads_name(threads), 100, [threads](benchmark::State& st) {
            if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
            cv::setNumThreads(threads == 1 ? 1 : cv::getNumberOfCPUs());
            const cv::Size win(16, 16);
            const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
            std::vector<cv::Point2f> seed;
            for (const auto& p : feature_points(200)) seed.emplace_back(p.x, p.y);
            std::vector<cv::Mat> prev, cur;
            std::size_t i = 0;
            cv::buildOpticalFlowPyramid(as_mat(seq_frame(i++)), prev, win, 2);
            std::vector<cv::Point2f> pts = seed, next;
            std::vector<unsigned char> status;
            std::vector<float> err;
            std::vector<double> us;
            for (auto _ : st) {
                const HostImage& f = seq_frame(i++);
                const auto t0 = std::chrono::steady_clock::now();
                cv::buildOpticalFlowPyramid(as_mat(f), cur, win, 2);
                cv::calcOpticalFlowPyrLK(prev, cur, pts, next, status, err, win, 2, crit);
                const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                us.push_back(t);
                st.SetIterationTime(t * 1e-6);
                std::swap(prev, cur);
                for (std::size_t k = 0; k < pts.size(); ++k) pts[k] = status[k] ? next[k] : seed[k];
            }
            set_stats(st, us);
            st.counters["features"] = static_cast<double>(pts.size());
        });
    }
    cv::setNumThreads(1);
    // calcOpticalFlowPyrLK of the same N points, pyramids built beforehand (as Kestrel's device row).
    for (int n : {100, 200, 500}) {
        add("cpu/cv-calcOpticalFlowPyrLK/" + std::to_string(n) + "/1thread", 200, [n](benchmark::State& st) {
            cv::setNumThreads(1);
            const cv::Size win(16, 16);
            std::vector<cv::Mat> pa, pb;
            cv::buildOpticalFlowPyramid(as_mat(g_frame0.at("752x480")), pa, win, 2);
            cv::buildOpticalFlowPyramid(as_mat(g_frame1.at("752x480")), pb, win, 2);
            std::vector<cv::Point2f> pts, next;
            for (const auto& p : feature_points(n)) pts.emplace_back(p.x, p.y);
            std::vector<unsigned char> status;
            std::vector<float> err;
            const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
            wall_loop(st, [&] { cv::calcOpticalFlowPyrLK(pa, pb, pts, next, status, err, win, 2, crit); });
            st.counters["features"] = static_cast<double>(pts.size());
        });
    }
#endif
}

}  // namespace kestrel::bench::micro
