// kestrel_microbench, CPU rows: Kestrel's CPU reference detector and the OpenCV CPU baselines
// (cv::FAST + grid selection, goodFeaturesToTrack, cv::FAST without NMS on 2 levels, calcOpticalFlowPyrLK).
#include "microbench.hpp"
#if KESTREL_BENCH_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include "cv_baselines.hpp"
#endif

namespace kestrel::bench::micro {

void register_cpu() {
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
    // cv::FAST without NMS on the same 2 levels: the CPU counterpart of the score-map stage (issue 3).
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
