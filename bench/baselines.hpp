// The baselines kestrel_bench runs on the same frames as Kestrel (see cv_baselines.hpp and
// cv_cuda_baselines.hpp): registers their series and comparisons, then times them frame by frame.
#pragma once
#include <memory>
#include <vector>

#include "cv_cuda_baselines.hpp"
#include "options.hpp"
#include "report.hpp"

namespace kestrel::bench {

/// True when this build carries the OpenCV CPU baselines (KESTREL_BENCH_OPENCV).
bool opencv_baselines_built();

class Baselines {
public:
    /// `gpu`: Kestrel runs on the CUDA backend (the cv::cuda baselines run only then).
    Baselines(const Options& o, bool gpu, Results& r);
    ~Baselines();
    /// Runs every enabled baseline on `img`; the trackers follow `points` (the points Kestrel's tracker
    /// started from in this frame) from the previous frame.
    void frame(const HostImage& img, const std::vector<Pt>& points, int rec, Results& r);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::bench
