// The detector's selection stage alone (NMS, best K per cell over all levels, global cap, compaction):
// the CPU reference and the CUDA stage, for tests, tools and per-stage benchmarks. FeatureDetector is
// the interface for applications. Rules: include/kestrel/detail/grid_rules.hpp.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"

namespace kestrel::detail {

/// maps[k] must have the size pyramid_sizes(maps[0].width, maps[0].height, cfg.pyramid)[k] and
/// maps.size() == cfg.pyramid.levels; scores must be finite and >= 0.
std::vector<Keypoint> grid_select_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                      const DetectionMasks& masks = {});

/// The same through the CUDA kernel (uploads the maps and masks, runs, downloads; synchronous).
std::vector<Keypoint> grid_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks = {});

/// The GPU selection stage for one level-0 size: one kernel launch per run(), stream-ordered, no
/// allocation and no synchronization after construction. Results in a device block
/// [int count | 12 bytes padding | capacity() Keypoint slots] (one copy brings all of it to the host).
class DeviceGridSelect {
public:
    DeviceGridSelect();
    DeviceGridSelect(int width, int height, const DetectorConfig& cfg);  ///< validates, allocates
    DeviceGridSelect(DeviceGridSelect&&) noexcept;
    DeviceGridSelect& operator=(DeviceGridSelect&&) noexcept;
    ~DeviceGridSelect();

    /// Selects from `scores` (made for this size and cfg.pyramid); masks in device memory.
    void run(const DeviceScoreMaps& scores, StreamHandle stream, const DeviceDetectionMasks& masks = {});

    int capacity() const;
    const Keypoint* device_keypoints() const;  ///< the first *device_count() are valid after run()
    const int* device_count() const;
    const void* device_result() const;         ///< the whole result block
    std::size_t result_bytes() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
    friend struct GridSelectAccess;  // src/detect/grid_select_cuda.hpp: the detector's graph path
};

}  // namespace kestrel::detail
