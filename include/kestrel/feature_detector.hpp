// FeatureDetector: image in, a well-distributed set of keypoints out (pyramid -> FAST scores ->
// grid NMS with a budget of K per cell across all levels -> optional global cap).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/image.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

struct DetectorConfig {
    PyramidConfig pyramid{2, 2.0f};  ///< levels and factor
    FastConfig fast{};               ///< threshold, arc bounds, score
    int nms_radius = 1;              ///< n in [1, 4]: a maximum of its (2n+1)^2 neighbourhood
    int cell_width = 32;             ///< level-0 pixels, a multiple of 32 in [32, 1024]
    int cell_height = 32;            ///< level-0 pixels, in [8, 1024]
    int per_cell = 1;                ///< K in [1, 8]: best K per cell over all levels
    int max_features = 0;            ///< 0 = no cap; else keep the best max_features by score
    int border = 0;                  ///< extra level-0 margin in [0, 64] where nothing is detected
};

void validate(const DetectorConfig& cfg, const char* where = "DetectorConfig");

/// Grid of cells over a level-0 image of width x height: cols = ceil(w / cell_width), rows likewise.
Size2 grid_size(int width, int height, const DetectorConfig& cfg);

/// Per-frame masks (host memory), optional. cell_skip: grid cols*rows bytes, row-major, non-zero =
/// skip the cell (e.g. it already holds a live track). pixel_mask: level-0 sized, non-zero = detect.
struct DetectionMasks {
    const std::uint8_t* cell_skip = nullptr;
    HostView pixel_mask{};
};

/// The same masks in device memory, for the asynchronous call.
struct DeviceDetectionMasks {
    const std::uint8_t* cell_skip = nullptr;
    DeviceView pixel_mask{};
};

/// CPU reference of the whole detector: the definition the CUDA backend matches exactly.
std::vector<Keypoint> detect_cpu(HostView image, const DetectorConfig& cfg, const DetectionMasks& masks = {});

class FeatureDetector {
public:
    explicit FeatureDetector(const DetectorConfig& cfg, Backend backend = Backend::Cuda);
    FeatureDetector(FeatureDetector&&) noexcept;
    FeatureDetector& operator=(FeatureDetector&&) noexcept;
    ~FeatureDetector();

    const DetectorConfig& config() const;
    Backend backend() const;

    /// Synchronous: host image -> keypoints in cell order (cell index row-major, then rank in cell).
    std::vector<Keypoint> detect(HostView image, const DetectionMasks& masks = {});

    /// Stream-ordered: enqueue the whole detection of a device image. No allocation and no
    /// synchronization after the first call at a given image size. Results are valid once `stream`
    /// has completed: device_keypoints() (device), host_keypoints()/host_count() (pinned host).
    void detect_async(DeviceView image, StreamHandle stream, const DeviceDetectionMasks& masks = {});
    /// Same from a pinned host image, uploaded on `stream`.
    void detect_async(HostView pinned_image, StreamHandle stream, const DeviceDetectionMasks& masks = {});

    const Keypoint* device_keypoints() const;  ///< capacity() slots; the first host_count() valid
    const Keypoint* host_keypoints() const;    ///< pinned; valid after the stream completes
    int host_count() const;                    ///< pinned; valid after the stream completes
    int capacity() const;                      ///< cells * per_cell (or max_features when smaller)

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
