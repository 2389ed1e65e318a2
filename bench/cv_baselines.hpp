// OpenCV CPU baselines, run on the same frames as Kestrel (compiled only when OpenCV core, imgproc,
// features2d and video are found; never imgcodecs/videoio):
//   FastGrid:  pyramid (cv::resize, INTER_AREA for factor 2 = Kestrel's 2x2 average, else bilinear)
//              + cv::FAST (TYPE_9_16, non-max suppression on) per level + the best K per grid cell
//              over all levels, coordinates on level 0 - the same job as Kestrel's FeatureDetector.
//   Gftt:      cv::goodFeaturesToTrack (Shi-Tomasi), the usual OpenCV frontend detector.
//   PyrLk:     cv::buildOpticalFlowPyramid of the new frame (the previous frame's is kept) +
//              cv::calcOpticalFlowPyrLK of the same points Kestrel tracks, same window, levels,
//              iterations and epsilon.
#pragma once
#include <opencv2/core.hpp>
#include <vector>

#include "kestrel/feature_detector.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel::bench {

/// Wraps a host image (no copy).
cv::Mat as_mat(const HostImage& img);

class CvFastGrid {
public:
    explicit CvFastGrid(const DetectorConfig& cfg) : cfg_(cfg) {}
    /// Detects on `img`; returns the number of keypoints kept.
    int run(const cv::Mat& img);
    const std::vector<cv::KeyPoint>& keypoints() const { return out_; }

private:
    DetectorConfig cfg_;
    std::vector<cv::Mat> pyr_;
    std::vector<cv::KeyPoint> level_kps_, out_;
    std::vector<cv::KeyPoint> cells_;  // cols * rows * K slots, response < 0 = empty
};

class CvGftt {
public:
    CvGftt(int max_corners, double quality, double min_distance)
        : max_corners_(max_corners), quality_(quality), min_distance_(min_distance) {}
    int run(const cv::Mat& img);

private:
    int max_corners_;
    double quality_, min_distance_;
    std::vector<cv::Point2f> corners_;
};

class CvPyrLk {
public:
    explicit CvPyrLk(const LkConfig& cfg) : cfg_(cfg) {}
    /// Builds the pyramid of `cur` and, when a previous frame exists and points are given, tracks
    /// `prev_points` from the previous frame into `cur`. Returns the number tracked (status 1), or -1
    /// when nothing was tracked (first frame or no point).
    int run(const cv::Mat& cur, const std::vector<cv::Point2f>& prev_points);

private:
    LkConfig cfg_;
    std::vector<cv::Mat> prev_pyr_, cur_pyr_;
    std::vector<cv::Point2f> next_;
    std::vector<unsigned char> status_;
    std::vector<float> err_;
};

}  // namespace kestrel::bench
