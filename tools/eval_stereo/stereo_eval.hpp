// The stereo accuracy evaluation shared by kestrel_eval_stereo and the OpenCV comparison test
// (tests/stereo/test_stereo_opencv.cpp): OpenCV's two references at given left-image points, and the scoring
// of any method's disparities against a truth. Method and figures: docs/stereo.md.
#pragma once
#include <string>
#include <vector>

#include <opencv2/core.hpp>

namespace kestrel_eval {

/// One method's disparities at the points (NaN = unmatched) scored against the truth (NaN = unknown there).
struct StereoScore {
    std::string method;
    std::size_t points = 0;     ///< points with a known truth
    std::size_t matched = 0;    ///< of those, matched by the method
    double median_error = 0;    ///< median |d - truth| over the matched ones (px)
    double over_1px = 0;        ///< fraction of the matched ones with |d - truth| > 1 px
    double unmatched = 0;       ///< fraction of the points the method did not match
};

StereoScore score(const std::string& method, const std::vector<double>& disparity, const std::vector<double>& truth);
/// The same for 2-D right-image positions (raw rigs): the error is the distance to the true right pixel.
StereoScore score_points(const std::string& method, const std::vector<cv::Point2d>& right,
                         const std::vector<cv::Point2d>& truth);

/// cv::calcOpticalFlowPyrLK from the left image into the right one (as opencv_lk_disparities), the right
/// positions themselves (NaN when status is 0; no epipolar test: for raw rigs).
std::vector<cv::Point2d> opencv_lk_points(const cv::Mat& left, const cv::Mat& right, const std::vector<cv::Point2f>& pts,
                                          int window = 21, int max_level = 3);

/// cv::calcOpticalFlowPyrLK from the left image into the right one, started at each point itself (zero
/// disparity): window x window, max_level (OpenCV's count: levels = max_level + 1), criteria 30 iterations or
/// 0.01 px. A point is unmatched when status is 0 or |right y - left y| > epipolar_tolerance. Returns
/// left x - right x per point.
std::vector<double> opencv_lk_disparities(const cv::Mat& left, const cv::Mat& right, const std::vector<cv::Point2f>& pts,
                                          int window = 21, int max_level = 3, double epipolar_tolerance = 1.0);

/// Settings of the semi-global matcher (cv::StereoSGBM, MODE_HH: the full 8-path SGM of Hirschmueller 2008).
struct SgbmSettings {
    int min_disparity = 0;
    int num_disparities = 256;  ///< a multiple of 16 covering the disparities sought
    int block_size = 5;         ///< P1 = 8 * block^2, P2 = 32 * block^2 (OpenCV's sample's choice)
    int uniqueness = 10;
    int speckle_window = 100;
    int speckle_range = 2;
    int disp12_max_diff = 1;    ///< the left-right consistency check
};

/// The SGBM disparity map (CV_16S, fixed point: value / 16 px; below min_disparity * 16: invalid).
cv::Mat sgbm_map(const cv::Mat& left, const cv::Mat& right, const SgbmSettings& s = {});
/// The map sampled at the points, bilinearly (when the four neighbours are valid; else the point is unmatched).
std::vector<double> sample_disparities(const cv::Mat& sgbm16, const std::vector<cv::Point2f>& pts, int min_disparity = 0);

/// A ground-truth disparity image sampled at the points (nearest pixel; value * scale; 0 = unknown -> NaN).
std::vector<double> ground_truth_at(const cv::Mat& gt8, const std::vector<cv::Point2f>& pts, double scale = 1.0);

/// One line of the table: "method  points  matched  median  >1px  unmatched".
std::string table_header();
std::string table_row(const StereoScore& s);

}  // namespace kestrel_eval
