// CUDA-graph replay of the detector's frame; see frame_graph_cuda.hpp. Every failure while building the graph
// falls back to ordinary launches (the caller enqueues directly), so graphs never change results.
#include "frame_graph_cuda.hpp"

#include <vector>

#include "kernels/common/cuda_check.hpp"

namespace kestrel::detail {

FrameGraph::~FrameGraph() {
    if (exec_) (void)cudaGraphExecDestroy(exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
}

bool FrameGraph::capturable(cudaStream_t stream) {
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return false;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return status == cudaStreamCaptureStatusNone;  // inside a user's capture: launch directly into it
}

namespace {
void discard(cudaGraph_t g) {
    if (g) (void)cudaGraphDestroy(g);
    (void)cudaGetLastError();  // capture errors are not sticky; leave the runtime's last error clean
}
}  // namespace

bool FrameGraph::capture(cudaStream_t stream, const kernels::GridNmsParams& p,
                         const std::function<void(cudaStream_t)>& enqueue, bool patch_masks) {
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    cudaGraph_t g = nullptr;
    try {
        enqueue(stream);
    } catch (...) {  // never leave the stream capturing; the caller then enqueues directly (and reports)
        (void)cudaStreamEndCapture(stream, &g);
        discard(g);
        return false;
    }
    if (cudaStreamEndCapture(stream, &g) != cudaSuccess || g == nullptr) {
        discard(g);
        return false;
    }
    // Find the grid-NMS kernel node (the only node whose arguments change between frames).
    const void* func = kernels::grid_nms_launch(p).func;
    std::size_t n = 0;
    if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess) {
        discard(g);
        return false;
    }
    std::vector<cudaGraphNode_t> nodes(n);
    if (n == 0 || cudaGraphGetNodes(g, nodes.data(), &n) != cudaSuccess) {
        discard(g);
        return false;
    }
    cudaGraphNode_t found = nullptr;
    int matches = 0;
    for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type;
        if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) continue;
        cudaKernelNodeParams kp{};
        if (cudaGraphKernelNodeGetParams(node, &kp) == cudaSuccess && kp.func == func) {
            found = node;
            ++matches;
        }
    }
    if (!patch_masks) {  // nothing to patch: the graph replays p's masks only (accepts())
        found = nullptr;
        matches = 1;
    }
    cudaGraphExec_t e = nullptr;
    if (matches != 1 || cudaGraphInstantiateWithFlags(&e, g, 0) != cudaSuccess) {
        discard(g);
        return false;
    }
    graph_ = g;
    exec_ = e;
    nms_node_ = found;
    current_ = p;
    return true;
}

void FrameGraph::launch(cudaStream_t stream, const kernels::GridNmsParams& p) {
    if (!same_masks(p)) {
        if (nms_node_ == nullptr) throw StateError("kestrel: detector graph: a frame with other masks than captured");
        const kernels::GridNmsLaunch l = kernels::grid_nms_launch(p);
        kernels::GridNmsParams arg = p;
        void* args[] = {&arg};
        cudaKernelNodeParams kp{};
        kp.func = const_cast<void*>(l.func);
        kp.gridDim = l.grid;
        kp.blockDim = l.block;
        kp.sharedMemBytes = static_cast<unsigned int>(l.smem);
        kp.kernelParams = args;
        kp.extra = nullptr;
        KESTREL_CUDA(cudaGraphExecKernelNodeSetParams(exec_, nms_node_, &kp), "detector graph update");
        current_ = p;
    }
    KESTREL_CUDA(cudaGraphLaunch(exec_, stream), "detector graph launch");
}

}  // namespace kestrel::detail
