// FeatureDetector: image in, a well-distributed set of keypoints out (pyramid -> FAST scores ->
// grid NMS with a budget of K per cell across all levels, or PyCA's culling and aggregation ->
// optional global cap).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/image.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/orb_types.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// How keypoints are selected from the levels' FAST scores (docs/detector.md).
enum class SelectionPolicy : int {
    Grid = 0,  ///< NMS on every level, best per_cell per level-0 grid cell over all levels (vilib)
    PyCA = 1,  ///< pyramidal culling and aggregation (Jetson-SLAM): per-level cell culling, levels summed at
               ///< level 0, sparse q x q NMS, then the grid's per_cell budget and cap
    OrbSlam = 2,      ///< ORB-SLAM's extractor: a geometric per-level budget of max_features, FAST per cell with a
                      ///< fallback threshold, a quadtree per level keeping the strongest corner per node
    LevelHarris = 3,  ///< cv::ORB's ranking: the same per-level budget and cells, each level's corners ranked by
                      ///< their Harris response (no quadtree)
};
const char* to_string(SelectionPolicy p);

/// PyCA's parameters (used when DetectorConfig::selection == SelectionPolicy::PyCA).
struct PycaConfig {
    /// Culling cell side of level k in level-k pixels: a power of two in [8, 128] (levels past
    /// pyramid.levels are ignored).
    std::array<int, kMaxLevels> cell{{32, 32, 32, 32, 32, 32, 32, 32}};
    int q = 3;  ///< the aggregation's q x q NMS window (level-0 pixels): odd, in [1, 9]
};

/// The per-level policies' parameters (selection == OrbSlam or LevelHarris; docs/detector.md). Level pixels.
struct OrbSlamConfig {
    int threshold_initial = 20;  ///< FAST threshold of every cell, [1, 254] (ORB-SLAM's iniThFAST)
    int threshold_min = 7;       ///< threshold of a cell where the first found no corner, [1, 254] (minThFAST)
    int cell = 30;               ///< cell side on every level, [16, 256] (ORB-SLAM: 30)
    int border = 19;             ///< margin of every level where nothing is detected, [4, 64] (ORB-SLAM: 19)
};

struct DetectorConfig {
    PyramidConfig pyramid{2, 2.0f};  ///< levels and factor
    /// threshold, arc bounds, score. The detector's default score is MaxThreshold (FastConfig's own default
    /// is SadCircle): it selects more repeatable corners and tracks with a lower error (docs/detector.md).
    FastConfig fast{10, 9, 16, ScoreType::MaxThreshold};
    int nms_radius = 1;              ///< n in [1, 4]: a maximum of its (2n+1)^2 neighbourhood
    int cell_width = 32;             ///< level-0 pixels, a multiple of 32 in [32, 1024]
    int cell_height = 32;            ///< level-0 pixels, in [8, 1024]
    int per_cell = 1;                ///< K in [1, 8]: best K per cell over all levels
    int max_features = 0;            ///< 0 = no cap; else keep the best max_features by score
    int border = 0;                  ///< extra level-0 margin in [0, 64] where nothing is detected
    /// CUDA backend: after the first call on a created stream (not the legacy/per-thread default), replay the
    /// per-frame work (pyramid, scores, NMS, download) as one CUDA graph. Same results either way.
    bool cuda_graph = true;
    SelectionPolicy selection = SelectionPolicy::Grid;  ///< Grid (default), PyCA, OrbSlam or LevelHarris
    PycaConfig pyca{};                                  ///< PyCA's cells and q (selection == PyCA)
    /// OrbSlam / LevelHarris: thresholds, cells and border; max_features (in [1, 20000]) is the total budget,
    /// fast.arc_min the segment test's arc (fast.arc_max must be 16, fast.score MaxThreshold; fast.threshold is
    /// unused).
    OrbSlamConfig orbslam{};
    /// Also compute every keypoint's ORB angle and 256-bit descriptor on its level (docs/features.md;
    /// rules: detail/orb_rules.hpp): host_angles()/host_descriptors() and the device twins. CUDA backend:
    /// the detector then always works on its own pyramid (a device image is copied into its level 0).
    bool orb_descriptors = false;
    /// CPU backend: threads of this detector's own pool, [0, 256]; 0 = the hardware threads. Created with the
    /// detector (none per frame), shared with no other object. Same results with any count.
    int threads = 0;
};

void validate(const DetectorConfig& cfg, const char* where = "DetectorConfig");

/// Grid of cells over a level-0 image of width x height: cols = ceil(w / cell_width), rows likewise.
Size2 grid_size(int width, int height, const DetectorConfig& cfg);

/// Throws InvalidArgument unless cfg is valid and a width x height image can be detected on: width and
/// height >= 2 * border + 7 (naming 'width' / 'height') and every pyramid level >= 7x7 ('levels').
/// The detector runs this check itself on the first frame of a size (naming 'image.width' ...).
void validate_image_size(int width, int height, const DetectorConfig& cfg, const char* where = "FeatureDetector");

/// Per-frame masks (host memory), optional. cell_skip: cell_grid.width * cell_grid.height bytes,
/// row-major, non-zero = skip the cell (e.g. it already holds a live track); cell_grid must equal
/// grid_size() of the image (it is checked). pixel_mask: level-0 sized, non-zero = detect.
struct DetectionMasks {
    const std::uint8_t* cell_skip = nullptr;
    Size2 cell_grid{};
    HostView pixel_mask{};
};

/// The same masks in device memory, for the asynchronous call.
struct DeviceDetectionMasks {
    const std::uint8_t* cell_skip = nullptr;
    Size2 cell_grid{};
    DeviceView pixel_mask{};
};

/// CPU reference of the whole detector: the definition the CUDA backend matches exactly.
std::vector<Keypoint> detect_cpu(HostView image, const DetectorConfig& cfg, const DetectionMasks& masks = {});

/// The detector. Backend::Cuda throws NoDeviceError when no CUDA device is usable; Backend::Cpu runs
/// detect_cpu() (identical output). One frame in flight per object: the next detect_async on an object
/// must not be enqueued before the previous results were consumed (several objects on several
/// streams run concurrently; they share no state).
class FeatureDetector {
public:
    explicit FeatureDetector(const DetectorConfig& cfg, Backend backend = Backend::Cuda);
    FeatureDetector(FeatureDetector&&) noexcept;
    FeatureDetector& operator=(FeatureDetector&&) noexcept;
    ~FeatureDetector();

    const DetectorConfig& config() const;
    Backend backend() const;

    /// Synchronous: host image (any host memory) -> keypoints in cell order (cell index row-major,
    /// then rank in the cell, best first). Both backends.
    std::vector<Keypoint> detect(HostView image, const DetectionMasks& masks = {});

    /// Stream-ordered (Backend::Cuda only; StateError otherwise): enqueue the whole detection of a
    /// device image. No allocation and no synchronization after the first call at a given image size.
    /// Results are valid once `stream` has completed: device_keypoints()/device_count() (device),
    /// host_keypoints()/host_count() (pinned host, written by one copy at the end of the frame).
    void detect_async(DeviceView image, StreamHandle stream, const DeviceDetectionMasks& masks = {});
    /// Same from a pinned (page-locked) host image, uploaded on `stream`; pageable memory is rejected
    /// (InvalidArgument) since its copy would synchronize.
    void detect_async(HostView pinned_image, StreamHandle stream, const DeviceDetectionMasks& masks = {});

    /// Results of the last call (detect or detect_async). With Backend::Cpu the host pointers refer to
    /// ordinary memory and the device pointers are null.
    const Keypoint* device_keypoints() const;  ///< capacity() slots; the first *device_count() valid
    const int* device_count() const;           ///< device int: number of keypoints of the last frame
    const Keypoint* host_keypoints() const;    ///< pinned; valid after the stream completes
    int host_count() const;                    ///< pinned; valid after the stream completes
    int capacity() const;  ///< cells * per_cell (or max_features when smaller); 0 before the first call
    /// Diagnostics: did the last frame run as one CUDA graph launch (see DetectorConfig::cuda_graph)?
    bool uses_cuda_graph() const;

    /// With DetectorConfig::orb_descriptors: the angle (degrees, [0, 360]) and descriptor of keypoint i in
    /// slot i, for the last call; capacity() slots, host_count() valid. Host pointers: pinned memory (CUDA;
    /// valid after the stream completes) or ordinary memory (CPU); device pointers null on the CPU. All
    /// null without the option or before the first call.
    const float* host_angles() const;
    const OrbDescriptor* host_descriptors() const;
    const float* device_angles() const;
    const OrbDescriptor* device_descriptors() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
