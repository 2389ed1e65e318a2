// OpenCV CPU baselines (see cv_baselines.hpp).
#include <opencv2/features2d.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include "cv_baselines.hpp"

namespace kestrel::bench {

cv::Mat as_mat(const HostImage& img) {
    return cv::Mat(img.height(), img.width(), CV_8UC1, const_cast<std::uint8_t*>(img.data()), img.pitch());
}

int CvFastGrid::run(const cv::Mat& img) {
    const auto sizes = pyramid_sizes(img.cols, img.rows, cfg_.pyramid);
    pyr_.resize(sizes.size());
    pyr_[0] = img;
    for (std::size_t k = 1; k < sizes.size(); ++k)
        cv::resize(pyr_[k - 1], pyr_[k], cv::Size(sizes[k].width, sizes[k].height), 0, 0,
                   cfg_.pyramid.scale == 2.0f ? cv::INTER_AREA : cv::INTER_LINEAR);
    const int cols = (img.cols + cfg_.cell_width - 1) / cfg_.cell_width;
    const int rows = (img.rows + cfg_.cell_height - 1) / cfg_.cell_height;
    const int K = cfg_.per_cell;
    cells_.assign(static_cast<std::size_t>(cols) * rows * K, cv::KeyPoint(0, 0, 0, -1, -1.0f));
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        level_kps_.clear();
        cv::FAST(pyr_[k], level_kps_, cfg_.fast.threshold, true, cv::FastFeatureDetector::TYPE_9_16);
        const float s = level_scale(cfg_.pyramid, static_cast<int>(k));
        for (const cv::KeyPoint& kp : level_kps_) {
            const float x = kp.pt.x * s, y = kp.pt.y * s;
            if (x < cfg_.border || y < cfg_.border || x >= img.cols - cfg_.border || y >= img.rows - cfg_.border)
                continue;
            const int c = static_cast<int>(x) / cfg_.cell_width + (static_cast<int>(y) / cfg_.cell_height) * cols;
            if (c < 0 || c >= cols * rows) continue;
            cv::KeyPoint* slot = &cells_[static_cast<std::size_t>(c) * K];
            if (kp.response <= slot[K - 1].response) continue;
            int j = K - 1;  // insertion into the cell's best-first list
            while (j > 0 && slot[j - 1].response < kp.response) {
                slot[j] = slot[j - 1];
                --j;
            }
            slot[j] = cv::KeyPoint(x, y, kp.size, -1, kp.response, static_cast<int>(k));
        }
    }
    out_.clear();
    for (const cv::KeyPoint& kp : cells_)
        if (kp.response >= 0) out_.push_back(kp);
    if (cfg_.max_features > 0 && static_cast<int>(out_.size()) > cfg_.max_features) {
        std::nth_element(out_.begin(), out_.begin() + cfg_.max_features, out_.end(),
                         [](const cv::KeyPoint& a, const cv::KeyPoint& b) { return a.response > b.response; });
        out_.resize(static_cast<std::size_t>(cfg_.max_features));
    }
    return static_cast<int>(out_.size());
}

int CvGftt::run(const cv::Mat& img) {
    cv::goodFeaturesToTrack(img, corners_, max_corners_, quality_, min_distance_);
    return static_cast<int>(corners_.size());
}

int CvPyrLk::run(const cv::Mat& cur, const std::vector<cv::Point2f>& prev_points) {
    const cv::Size win(cfg_.patch_size, cfg_.patch_size);
    const int max_level = cfg_.pyramid.levels - 1;
    cv::buildOpticalFlowPyramid(cur, cur_pyr_, win, max_level);
    int tracked = -1;
    if (!prev_pyr_.empty() && !prev_points.empty()) {
        tracked = 0;
        const cv::TermCriteria crit(cv::TermCriteria::COUNT | cv::TermCriteria::EPS, cfg_.max_iterations,
                                    static_cast<double>(cfg_.min_update));
        cv::calcOpticalFlowPyrLK(prev_pyr_, cur_pyr_, prev_points, next_, status_, err_, win, max_level, crit);
        for (unsigned char s : status_) tracked += s != 0;
    }
    std::swap(prev_pyr_, cur_pyr_);
    return tracked;
}

}  // namespace kestrel::bench
