// OpenCV CUDA baselines (see cv_cuda_baselines.hpp). Without KESTREL_BENCH_CV_CUDA this file only
// says that they are absent.
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "cv_cuda_baselines.hpp"
#include "stats.hpp"

#if KESTREL_BENCH_CV_CUDA
#include <opencv2/core/cuda.hpp>
#include <opencv2/cudafeatures2d.hpp>
#include <opencv2/cudaoptflow.hpp>
#endif

namespace kestrel::bench {

#if KESTREL_BENCH_CV_CUDA

bool cv_cuda_available() { return cv::cuda::getCudaEnabledDeviceCount() > 0; }

struct CvCudaBaselines::Impl {
    cv::Ptr<cv::cuda::FastFeatureDetector> fast;
    cv::Ptr<cv::cuda::SparsePyrLKOpticalFlow> lk;
    cv::cuda::Stream stream;
    cv::cuda::GpuMat det_img, det_kps, prev, cur, pts, next, status;
    std::vector<cv::KeyPoint> kps;
    cv::Mat host_pts, host_next, host_status;
};

CvCudaBaselines::CvCudaBaselines(const DetectorConfig& det, const LkConfig& lk) : impl_(std::make_unique<Impl>()) {
    impl_->fast = cv::cuda::FastFeatureDetector::create(det.fast.threshold, true, cv::FastFeatureDetector::TYPE_9_16,
                                                        1 << 20);
    impl_->lk = cv::cuda::SparsePyrLKOpticalFlow::create(cv::Size(lk.patch_size, lk.patch_size), lk.pyramid.levels - 1,
                                                         lk.max_iterations);
}
CvCudaBaselines::~CvCudaBaselines() = default;

double CvCudaBaselines::detect_us(const HostImage& img, int* count) {
    Impl& m = *impl_;
    const cv::Mat h(img.height(), img.width(), CV_8UC1, const_cast<std::uint8_t*>(img.data()), img.pitch());
    const auto t0 = std::chrono::steady_clock::now();
    m.det_img.upload(h, m.stream);
    m.fast->detectAsync(m.det_img, m.det_kps, cv::noArray(), m.stream);
    m.stream.waitForCompletion();
    m.fast->convert(m.det_kps, m.kps);
    const auto t1 = std::chrono::steady_clock::now();
    *count = static_cast<int>(m.kps.size());
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

double CvCudaBaselines::track_us(const HostImage& img, const std::vector<Pt>& prev_points) {
    Impl& m = *impl_;
    const cv::Mat h(img.height(), img.width(), CV_8UC1, const_cast<std::uint8_t*>(img.data()), img.pitch());
    m.host_pts.create(1, static_cast<int>(prev_points.size()), CV_32FC2);
    for (std::size_t i = 0; i < prev_points.size(); ++i)
        m.host_pts.at<cv::Vec2f>(0, static_cast<int>(i)) = cv::Vec2f(prev_points[i].x, prev_points[i].y);
    const bool have_prev = !m.prev.empty();
    const auto t0 = std::chrono::steady_clock::now();
    m.cur.upload(h, m.stream);
    if (have_prev && !prev_points.empty()) {
        m.pts.upload(m.host_pts, m.stream);
        m.lk->calc(m.prev, m.cur, m.pts, m.next, m.status, cv::noArray(), m.stream);
        m.next.download(m.host_next, m.stream);
        m.status.download(m.host_status, m.stream);
    }
    m.stream.waitForCompletion();
    const auto t1 = std::chrono::steady_clock::now();
    m.prev.swap(m.cur);
    if (!have_prev || prev_points.empty()) return kNotMeasured;
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

#else

bool cv_cuda_available() { return false; }

struct CvCudaBaselines::Impl {};
CvCudaBaselines::CvCudaBaselines(const DetectorConfig&, const LkConfig&) {
    throw std::runtime_error("this kestrel_bench was built without OpenCV's CUDA modules");
}
CvCudaBaselines::~CvCudaBaselines() = default;
double CvCudaBaselines::detect_us(const HostImage&, int*) { return kNotMeasured; }
double CvCudaBaselines::track_us(const HostImage&, const std::vector<Pt>&) { return kNotMeasured; }

#endif

}  // namespace kestrel::bench
