// Internal: the CUDA backend of FeatureDetector. Owns, per image size, the pyramid, the score maps, the
// selection scratch and the result block (device + pinned); per frame it enqueues
//   upload -> pyramid -> scores -> grid NMS/select/compact (one launch) -> one D2H copy (count + slots)
// with no allocation and no synchronization after the first call at a size; optionally the part after
// the upload replays as one CUDA graph.
#pragma once
#include <memory>
#include <vector>

#include "kestrel/feature_detector.hpp"
#include "kestrel/orb.hpp"

namespace kestrel::kernels {
struct GridNmsParams;
}

namespace kestrel::detail {

class CudaDetector {
public:
    explicit CudaDetector(const DetectorConfig& cfg);
    ~CudaDetector();
    CudaDetector(const CudaDetector&) = delete;
    CudaDetector& operator=(const CudaDetector&) = delete;

    void enqueue(DeviceView image, StreamHandle stream, const DeviceDetectionMasks& masks);
    void enqueue(HostView pinned_image, StreamHandle stream, const DeviceDetectionMasks& masks);
    /// Synchronous, any host memory, host masks (on an internal stream).
    std::vector<Keypoint> detect(HostView image, const DetectionMasks& masks);

    const Keypoint* device_keypoints() const;
    const int* device_count() const;
    const Keypoint* host_keypoints() const;
    int host_count() const;
    int capacity() const;
    bool last_frame_used_graph() const { return last_graph_; }
    /// The ORB stage of the current size (DetectorConfig::orb_descriptors), else null.
    const DeviceOrb* orb() const;

private:
    struct Frame;  // everything that depends on the image size
    struct Sync;   // the synchronous call's stream and device copies of host masks

    Frame& frame_for(const char* where, int width, int height);
    void check_masks(const char* where, const Frame& f, const DeviceDetectionMasks& masks) const;
    /// The frame's work on `input` (level 0: the caller's device image, or the pyramid's own level 0
    /// after an upload). Graph replay only for the latter (a graph's arguments are fixed).
    void run(Frame& f, DeviceView input, StreamHandle stream, const DeviceDetectionMasks& masks);
    /// Turns p into the fused kernel's arguments for a frame whose level 0 is `input`.
    void set_fused(kernels::GridNmsParams& p, const Frame& f, DeviceView input) const;
    /// Corner-list path: allocates the list and plans its selection (once per size).
    void plan_listed(Frame& f, bool generic_compass) const;
    /// Corner-list path: the selection's per-frame arguments, and the scores (with the list) of `input`.
    void set_listed(kernels::GridNmsParams& p, const Frame& f) const;
    void enqueue_listed_scores(Frame& f, DeviceView input, StreamHandle s) const;

    DetectorConfig cfg_;
    std::unique_ptr<Frame> frame_;
    std::unique_ptr<Sync> sync_;
    bool last_graph_ = false;
};

}  // namespace kestrel::detail
