// Internal: the CPU detector with reused memory and the rows of every stage spread over a thread pool
// (src/core/thread_pool.hpp): pyramid -> FAST score maps (with the list of their corners) -> grid selection
// (or the PyCA reference, src/detect/pyca_cpu.cpp, on the same maps).
// detect_cpu() runs it with one thread; FeatureDetector (Backend::Cpu) and the CPU tracker keep one with
// their own pool. The results never depend on the thread count (every task writes its own rows and lists).
#pragma once
#include <memory>
#include <vector>

#include "detector_geometry.hpp"
#include "fast_cpu.hpp"
#include "src/core/thread_pool.hpp"
#include "src/pyramid/pyramid_cpu.hpp"

namespace kestrel::detail {

class CpuDetector {
public:
    /// cfg validated by the caller; pool may be null (one thread) and must outlive this object.
    CpuDetector(const DetectorConfig& cfg, ThreadPool* pool);

    /// Checks the image and masks (naming `where`), then detects into `out`.
    void detect(const char* where, HostView image, const DetectionMasks& masks, std::vector<Keypoint>& out);
    /// cells * per_cell (or max_features when smaller) of the last image size; 0 before the first call.
    int capacity() const { return geometry_.capacity; }
    /// The last image's pyramid (build_pyramid_cpu of it; empty before the first call).
    const std::vector<HostImage>& pyramid() const { return pyramid_; }

private:
    void prepare(const char* where, int width, int height);

    DetectorConfig cfg_;
    FastConfig fast_;  // the score maps' configuration (score_config: the per-level policies score at their thresholds)
    ThreadPool* pool_;
    std::vector<std::uint32_t> lut_;
    GridGeometry geometry_{};
    std::vector<HostImage> pyramid_;
    PyramidScratch pyramid_scratch_;
    std::vector<ScoreMap> maps_;
    CornerLists corners_;
    std::vector<FastRowScratch> rows_;  // one per worker
    GridScratch grid_;
};

}  // namespace kestrel::detail
