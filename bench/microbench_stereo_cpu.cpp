// kestrel_microbench, stereo rows on the CPU: the StereoTracker frame on the CPU backend beside OpenCV's
// equivalent (pyramids of both images, temporal calcOpticalFlowPyrLK of 200 points, left-to-right
// calcOpticalFlowPyrLK of the same points); and the stereo pairs every stereo row (CPU and GPU) uses.
#include <chrono>

#include "microbench.hpp"
#if KESTREL_BENCH_OPENCV
#include <opencv2/core/utility.hpp>
#include <opencv2/video/tracking.hpp>

#include "cv_baselines.hpp"
#endif

namespace kestrel::bench::micro {

const StereoFrames& stereo_frames() {
    static const StereoFrames frames = [] {
        StereoFrames f;
        for (const HostImage& img : g_seq752) {
            HostImage right(img.width(), img.height());
            for (int y = 0; y < img.height(); ++y)
                for (int x = 0; x < img.width(); ++x)
                    right.at(x, y) = img.at(std::min(x + kStereoDisparity, img.width() - 1), y);
            f.left.push_back(HostImage::copy_of(img.view()));
            f.right.push_back(std::move(right));
        }
        return f;
    }();
    return frames;
}

std::size_t stereo_index(std::size_t i) {
    const int n = static_cast<int>(g_seq752.size());
    const int period = std::max(1, 2 * n - 2);
    const int j = static_cast<int>(i % static_cast<std::size_t>(period));
    return static_cast<std::size_t>(j < n ? j : period - j);
}

StereoConfig stereo_bench_config(int threads) {
    StereoConfig c;  // StereoConfig's defaults (one pyramid of 5 levels: the tracking uses 3, the matching 5)
    c.tracker.detector = issue4_detector();
    c.tracker.target_features = 200;
    c.tracker.threads = threads;
    return c;
}

StereoRig stereo_bench_rig() { return rectified_rig(458.0, 375.5, 239.5, 0.11); }

void register_stereo_cpu() {
#if KESTREL_BENCH_TRACKER
    // The CPU backend's stereo frame, one thread: the left tracking (200 tracks) and the matching into the right
    // image. Beside it: cpu/cv-stereo-lk/200.
    add("cpu/kestrel-stereo-frame/200", 100, [](benchmark::State& st) {
        if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
        const StereoFrames& f = stereo_frames();
        StereoTracker trk(752, 480, stereo_bench_rig(), stereo_bench_config(1), Backend::Cpu);
        std::size_t i = 0;
        for (int w = 0; w < 5; ++w, ++i) trk.track(f.left[stereo_index(i)].view(), f.right[stereo_index(i)].view());
        std::vector<double> us;
        long long live = 0, matched = 0;
        for (auto _ : st) {
            const std::size_t k = stereo_index(i++);
            const auto t0 = std::chrono::steady_clock::now();
            const auto& tracks = trk.track(f.left[k].view(), f.right[k].view());
            const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            us.push_back(t);
            st.SetIterationTime(t * 1e-6);
            live += static_cast<long long>(tracks.size());
            for (const auto& s : tracks) matched += s.status == StereoStatus::Matched;
        }
        set_stats(st, us);
        st.SetLabel("1 thread");
        st.counters["live_mean"] = us.empty() ? 0.0 : static_cast<double>(live) / us.size();
        st.counters["matched_mean"] = us.empty() ? 0.0 : static_cast<double>(matched) / us.size();
    });
#endif
#if KESTREL_BENCH_OPENCV
    // OpenCV's stereo frame, one thread: both images' pyramids (cv::buildOpticalFlowPyramid, 16x16 window, 5
    // levels as the StereoTracker's), calcOpticalFlowPyrLK of 200 points from the previous left pyramid, then
    // calcOpticalFlowPyrLK of the same points from the left pyramid into the right one. Points lost in time
    // are re-seeded from the FAST corners of frame 0 (as a tracker re-detects), so that 200 are always followed.
    add("cpu/cv-stereo-lk/200", 100, [](benchmark::State& st) {
        if (g_seq752.empty()) return st.SkipWithError("no 752x480 sequence");
        const StereoFrames& f = stereo_frames();
        cv::setNumThreads(1);
        const cv::Size win(16, 16);
        const int max_level = 4;
        const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01);
        std::vector<cv::Point2f> seed;
        for (const auto& p : feature_points(200)) seed.emplace_back(p.x, p.y);
        std::vector<cv::Mat> prev, cur, right;
        std::size_t i = 0;
        cv::buildOpticalFlowPyramid(as_mat(f.left[stereo_index(i++)]), prev, win, max_level);
        std::vector<cv::Point2f> pts = seed, next, in_right;
        std::vector<unsigned char> status, status_r;
        std::vector<float> err;
        std::vector<double> us;
        long long matched = 0;
        for (auto _ : st) {
            const std::size_t k = stereo_index(i++);
            const auto t0 = std::chrono::steady_clock::now();
            cv::buildOpticalFlowPyramid(as_mat(f.left[k]), cur, win, max_level);
            cv::buildOpticalFlowPyramid(as_mat(f.right[k]), right, win, max_level);
            cv::calcOpticalFlowPyrLK(prev, cur, pts, next, status, err, win, max_level, crit);
            cv::calcOpticalFlowPyrLK(cur, right, next, in_right, status_r, err, win, max_level, crit);
            const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            us.push_back(t);
            st.SetIterationTime(t * 1e-6);
            std::swap(prev, cur);
            for (std::size_t j = 0; j < pts.size(); ++j) {
                matched += status[j] && status_r[j];
                pts[j] = status[j] ? next[j] : seed[j];
            }
        }
        set_stats(st, us);
        st.SetLabel("1 thread");
        st.counters["matched_mean"] = us.empty() ? 0.0 : static_cast<double>(matched) / us.size();
    });
#endif
}

}  // namespace kestrel::bench::micro
