// Internal: the detector's per-frame work (pyramid, scores, grid NMS, download) captured once into a CUDA
// graph and replayed with one cudaGraphLaunch. The only per-frame arguments that may change (the mask
// pointers of the grid-NMS kernel) are patched into the executable graph when they differ.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include "kernels/detect/grid_nms.cuh"

namespace kestrel::detail {

class FrameGraph {
public:
    FrameGraph() = default;
    ~FrameGraph();
    FrameGraph(const FrameGraph&) = delete;
    FrameGraph& operator=(const FrameGraph&) = delete;

    /// Can `stream` be captured now (not the legacy or per-thread default stream, not capturing)?
    static bool capturable(cudaStream_t stream);

    /// Captures enqueue(stream), which must launch the grid-NMS kernel of `p` exactly once, and
    /// instantiates it. On any failure returns false with the stream usable and nothing enqueued.
    /// With patch_masks false (PyCA's kernels) no node is patched: the graph replays the masks of `p` only.
    bool capture(cudaStream_t stream, const kernels::GridNmsParams& p, const std::function<void(cudaStream_t)>& enqueue,
                 bool patch_masks = true);

    bool ready() const { return exec_ != nullptr; }
    /// Can launch() run a frame with p's masks (always, unless captured without patch_masks and the mask
    /// pointers differ from the captured ones: enqueue that frame directly then)?
    bool accepts(const kernels::GridNmsParams& p) const { return nms_node_ != nullptr || same_masks(p); }

    /// Replays the frame on `stream` with the grid-NMS arguments `p` (same sizes as captured).
    void launch(cudaStream_t stream, const kernels::GridNmsParams& p);

private:
    bool same_masks(const kernels::GridNmsParams& p) const {
        return p.cell_skip == current_.cell_skip && p.pixel_mask == current_.pixel_mask && p.mask_pitch == current_.mask_pitch;
    }
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    cudaGraphNode_t nms_node_ = nullptr;
    kernels::GridNmsParams current_{};
};

}  // namespace kestrel::detail
