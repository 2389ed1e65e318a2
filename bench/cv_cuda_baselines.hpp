// OpenCV CUDA baselines (cv::cuda::FastFeatureDetector, cv::cuda::SparsePyrLKOpticalFlow), built only
// when the OpenCV found at configure time has the cudafeatures2d and cudaoptflow modules
// (KESTREL_BENCH_CV_CUDA). Debian's OpenCV has none; the bench then says so in one line.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/feature_detector.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel::bench {

/// True when this build carries the cv::cuda baselines.
bool cv_cuda_available();

struct Pt {
    float x, y;
};

class CvCudaBaselines {
public:
    CvCudaBaselines(const DetectorConfig& det, const LkConfig& lk);
    ~CvCudaBaselines();
    /// Upload + cv::cuda FAST (threshold, TYPE_9_16, non-max on) + keypoint download + sync; returns the
    /// wall time in microseconds and the keypoint count in *count.
    double detect_us(const HostImage& img, int* count);
    /// Upload of the new frame + SparsePyrLKOpticalFlow of `prev_points` from the previous frame +
    /// download + sync; NaN when there is no previous frame or no point.
    double track_us(const HostImage& img, const std::vector<Pt>& prev_points);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::bench
