// Baseline runner of kestrel_bench (see baselines.hpp).
#include <thread>

#include "baselines.hpp"
#include "runner.hpp"
#if KESTREL_BENCH_OPENCV
#include <opencv2/core/utility.hpp>

#include "cv_baselines.hpp"
#endif

namespace kestrel::bench {

#if KESTREL_BENCH_OPENCV
bool opencv_baselines_built() { return true; }

struct Baselines::Impl {
    Options o;
    int mt_threads = 1;
    std::unique_ptr<CvFastGrid> fast;
    std::unique_ptr<CvGftt> gftt;
    std::unique_ptr<CvPyrLk> lk_1t, lk_mt;
    std::unique_ptr<CvCudaBaselines> cvcuda;
    std::vector<cv::Point2f> pts;
};

Baselines::Baselines(const Options& o, bool gpu, Results& r) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.o = o;
    const DetectorConfig& d = o.tracker.detector;
    m.fast = std::make_unique<CvFastGrid>(d);
    m.gftt = std::make_unique<CvGftt>(o.tracker.target_features, o.gftt_quality, o.gftt_min_distance);
    m.lk_1t = std::make_unique<CvPyrLk>(o.tracker.lk);
    m.lk_mt = std::make_unique<CvPyrLk>(o.tracker.lk);
    m.mt_threads = o.cv_threads > 0 ? o.cv_threads : std::max(1, cv::getNumberOfCPUs());
    const std::string fast_label = "cv::FAST + best " + std::to_string(d.per_cell) + " per " +
                                   std::to_string(d.cell_width) + "x" + std::to_string(d.cell_height) + " cell, " +
                                   std::to_string(d.pyramid.levels) + " levels";
    const std::string gftt_label = "cv::goodFeaturesToTrack, " + std::to_string(o.tracker.target_features) + " corners";
    const std::string lk_label = "cv::calcOpticalFlowPyrLK, same points + new pyramid";
    const std::string threads = std::to_string(m.mt_threads) + " threads";
    if (o.cv) {
        r.add("cv_fast_grid", fast_label, "opencv", "wall");
        r.add("cv_gftt", gftt_label, "opencv", "wall");
        r.add("cv_lk", lk_label, "opencv", "wall");
    }
    if (o.cv_mt) {
        r.add("cv_fast_grid_mt", fast_label + ", " + threads, "opencv-mt", "wall");
        r.add("cv_gftt_mt", gftt_label + ", " + threads, "opencv-mt", "wall");
        r.add("cv_lk_mt", lk_label + ", " + threads, "opencv-mt", "wall");
    }
    r.add("n_cv_fast_grid", "keypoints of cv::FAST + grid", "count", "count");
    r.add("n_cv_lk", "points cv LK tracked (status 1)", "count", "count");
    r.meta_line("OpenCV", std::string(CV_VERSION) + ", CPU baselines: " + (o.cv ? "1 thread" : "") +
                              (o.cv && o.cv_mt ? " and " : "") + (o.cv_mt ? threads : "") +
                              (!o.cv && !o.cv_mt ? "off (--baselines)" : ""));
    if (o.cv_cuda && gpu && cv_cuda_available()) {
        m.cvcuda = std::make_unique<CvCudaBaselines>(d, o.tracker.lk);
        r.add("cvcuda_fast", "cv::cuda::FastFeatureDetector (upload + detect + download)", "opencv-cuda", "wall");
        r.add("cvcuda_lk", "cv::cuda::SparsePyrLKOpticalFlow, same points", "opencv-cuda", "wall");
        r.meta_line("OpenCV CUDA", "cv::cuda::FastFeatureDetector and SparsePyrLKOpticalFlow measured");
    } else if (o.cv_cuda) {
        r.meta_line("OpenCV CUDA", !cv_cuda_available()
                                       ? "not measured: the OpenCV found at build time has no CUDA modules "
                                         "(cudafeatures2d, cudaoptflow) or sees no device"
                                       : "not measured: Kestrel runs on the CPU backend");
    }
    for (const char* k : {"cv_fast_grid", "cv_fast_grid_mt", "cv_gftt", "cv_gftt_mt", "cvcuda_fast"})
        r.comparisons.push_back({"detection", "detect_e2e", k});
    for (const char* k : {"cv_lk", "cv_lk_mt", "cvcuda_lk"})
        r.comparisons.push_back({"tracker frame, no re-detect", "frame_track", k});
}

Baselines::~Baselines() { cv::setNumThreads(-1); }

void Baselines::frame(const HostImage& img, const std::vector<Pt>& points, int rec, Results& r) {
    Impl& m = *impl_;
    const cv::Mat mat = as_mat(img);
    m.pts.resize(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) m.pts[i] = cv::Point2f(points[i].x, points[i].y);
    const auto run = [&](bool on, int threads, const char* suffix, CvPyrLk& lk) {
        if (!on) return;
        cv::setNumThreads(threads);
        int nf = 0, nl = 0;
        const double f = time_us([&] { nf = m.fast->run(mat); });
        const double g = time_us([&] { (void)m.gftt->run(mat); });
        const double l = time_us([&] { nl = lk.run(mat, m.pts); });
        if (rec < 0) return;
        const std::string s = suffix;
        r.set("cv_fast_grid" + s, rec, f);
        r.set("cv_gftt" + s, rec, g);
        if (nl >= 0) r.set("cv_lk" + s, rec, l);  // frames where it tracked (a previous frame, points)
        r.set("n_cv_fast_grid", rec, nf);
        if (nl >= 0) r.set("n_cv_lk", rec, nl);
    };
    run(m.o.cv, 1, "", *m.lk_1t);
    run(m.o.cv_mt, m.mt_threads, "_mt", *m.lk_mt);
    if (m.cvcuda) {
        int n = 0;
        const double f = m.cvcuda->detect_us(img, &n);
        const double l = m.cvcuda->track_us(img, points);
        if (rec >= 0) {
            r.set("cvcuda_fast", rec, f);
            r.set("cvcuda_lk", rec, l);
        }
    }
}

#else

bool opencv_baselines_built() { return false; }
struct Baselines::Impl {};
Baselines::Baselines(const Options& o, bool, Results& r) {
    if (o.cv || o.cv_mt || o.cv_cuda)
        r.meta_line("OpenCV", "baselines not built: OpenCV (core, imgproc, features2d, video) was not found at "
                              "configure time or KESTREL_BENCH_OPENCV=OFF");
}
Baselines::~Baselines() = default;
void Baselines::frame(const HostImage&, const std::vector<Pt>&, int, Results&) {}

#endif

}  // namespace kestrel::bench
