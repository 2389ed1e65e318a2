#include "stereo_eval.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include <opencv2/calib3d.hpp>
#include <opencv2/video/tracking.hpp>

namespace kestrel_eval {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

StereoScore score(const std::string& method, const std::vector<double>& disparity, const std::vector<double>& truth) {
    StereoScore s;
    s.method = method;
    std::vector<double> err;
    for (std::size_t i = 0; i < truth.size() && i < disparity.size(); ++i) {
        if (!std::isfinite(truth[i])) continue;
        ++s.points;
        if (!std::isfinite(disparity[i])) continue;
        ++s.matched;
        err.push_back(std::abs(disparity[i] - truth[i]));
    }
    if (!err.empty()) {
        std::nth_element(err.begin(), err.begin() + err.size() / 2, err.end());
        s.median_error = err[err.size() / 2];
        s.over_1px = static_cast<double>(std::count_if(err.begin(), err.end(), [](double e) { return e > 1.0; })) / err.size();
    } else {
        s.median_error = kNaN;
    }
    s.unmatched = s.points ? 1.0 - static_cast<double>(s.matched) / s.points : 0.0;
    return s;
}

StereoScore score_points(const std::string& method, const std::vector<cv::Point2d>& right,
                         const std::vector<cv::Point2d>& truth) {
    std::vector<double> zero(truth.size(), kNaN), err(truth.size(), kNaN);
    for (std::size_t i = 0; i < truth.size() && i < right.size(); ++i) {
        if (!std::isfinite(truth[i].x)) continue;
        zero[i] = 0.0;
        if (std::isfinite(right[i].x)) err[i] = std::hypot(right[i].x - truth[i].x, right[i].y - truth[i].y);
    }
    return score(method, err, zero);  // |err - 0|
}

std::vector<cv::Point2d> opencv_lk_points(const cv::Mat& left, const cv::Mat& right, const std::vector<cv::Point2f>& pts,
                                          int window, int max_level) {
    std::vector<cv::Point2d> r(pts.size(), cv::Point2d(kNaN, kNaN));
    if (pts.empty()) return r;
    std::vector<cv::Point2f> out = pts;
    std::vector<unsigned char> status;
    std::vector<float> err;
    cv::calcOpticalFlowPyrLK(left, right, pts, out, status, err, cv::Size(window, window), max_level,
                             cv::TermCriteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01));
    for (std::size_t i = 0; i < pts.size(); ++i)
        if (status[i]) r[i] = out[i];
    return r;
}

std::vector<double> opencv_lk_disparities(const cv::Mat& left, const cv::Mat& right, const std::vector<cv::Point2f>& pts,
                                          int window, int max_level, double epipolar_tolerance) {
    std::vector<double> d(pts.size(), kNaN);
    if (pts.empty()) return d;
    std::vector<cv::Point2f> out = pts;
    std::vector<unsigned char> status;
    std::vector<float> err;
    cv::calcOpticalFlowPyrLK(left, right, pts, out, status, err, cv::Size(window, window), max_level,
                             cv::TermCriteria(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, 30, 0.01));
    for (std::size_t i = 0; i < pts.size(); ++i)
        if (status[i] && std::abs(out[i].y - pts[i].y) <= epipolar_tolerance) d[i] = pts[i].x - out[i].x;
    return d;
}

cv::Mat sgbm_map(const cv::Mat& left, const cv::Mat& right, const SgbmSettings& s) {
    const int p1 = 8 * s.block_size * s.block_size, p2 = 32 * s.block_size * s.block_size;
    auto sgbm = cv::StereoSGBM::create(s.min_disparity, s.num_disparities, s.block_size, p1, p2, s.disp12_max_diff, 0,
                                       s.uniqueness, s.speckle_window, s.speckle_range, cv::StereoSGBM::MODE_HH);
    cv::Mat disp;
    sgbm->compute(left, right, disp);
    return disp;
}

std::vector<double> sample_disparities(const cv::Mat& sgbm16, const std::vector<cv::Point2f>& pts, int min_disparity) {
    std::vector<double> d(pts.size(), kNaN);
    const short invalid_below = static_cast<short>(min_disparity * 16);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const int x0 = static_cast<int>(std::floor(pts[i].x)), y0 = static_cast<int>(std::floor(pts[i].y));
        if (x0 < 0 || y0 < 0 || x0 + 1 >= sgbm16.cols || y0 + 1 >= sgbm16.rows) continue;
        const double fx = pts[i].x - x0, fy = pts[i].y - y0;
        const short a = sgbm16.at<short>(y0, x0), b = sgbm16.at<short>(y0, x0 + 1), c = sgbm16.at<short>(y0 + 1, x0),
                    e = sgbm16.at<short>(y0 + 1, x0 + 1);
        if (a < invalid_below || b < invalid_below || c < invalid_below || e < invalid_below) continue;
        d[i] = ((1 - fy) * ((1 - fx) * a + fx * b) + fy * ((1 - fx) * c + fx * e)) / 16.0;
    }
    return d;
}

std::vector<double> ground_truth_at(const cv::Mat& gt8, const std::vector<cv::Point2f>& pts, double scale) {
    std::vector<double> d(pts.size(), kNaN);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const int x = static_cast<int>(std::lround(pts[i].x)), y = static_cast<int>(std::lround(pts[i].y));
        if (x < 0 || y < 0 || x >= gt8.cols || y >= gt8.rows) continue;
        const int v = gt8.at<unsigned char>(y, x);
        if (v > 0) d[i] = v * scale;
    }
    return d;
}

std::string table_header() {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-38s %7s %8s %11s %7s %10s", "method", "points", "matched", "median |e|", "> 1 px",
                  "unmatched");
    return buf;
}

std::string table_row(const StereoScore& s) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "%-38s %7zu %8zu %9.3f px %6.1f%% %9.1f%%", s.method.c_str(), s.points, s.matched,
                  s.median_error, 100.0 * s.over_1px, 100.0 * s.unmatched);
    return buf;
}

}  // namespace kestrel_eval
