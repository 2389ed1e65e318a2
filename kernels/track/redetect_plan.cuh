// Internal launch interface of kernels/track/redetect_plan.cu (host-callable, no device code): FeatureTracker's
// plan of a frame's re-detection, made on the device from the frame's LK results (include/kestrel/detail/
// redetect_rules.hpp), so that the detection can follow the tracking in the same stream without a host round trip.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/redetect_rules.hpp"

namespace kestrel::kernels {

/// Everything the plan reads and writes, passed by value.
struct RedetectPlanLaunch {
    const LkResult* results;               // forward LK results of the frame's tracks
    const LkResult* back;                  // backward results (rule.verdict.forward_backward), else null
    const Point2f* origins;                // the tracks' previous positions
    const detail::AnchorResult* anchors;   // anchor fits (rule.verdict.anchor), else null
    detail::RedetectRule rule;
    int count;                             // tracks
    std::uint8_t* mask;                    // out, device: cols * rows bytes, 1 = a live track's cell (cell_skip)
    std::uint8_t* host_mask;               // out, mapped host memory: a copy of mask, or null
    int* out;                              // out, mapped host memory: [0] re-detects (0/1), [1] live tracks
    unsigned long long condition;          // a graph's conditional handle set to out[0] (CUDA >= 12.4) ...
    int set_condition;                     // ... when non-zero (the launch is a node of that graph)
};

/// The kernel and its launch shape, for a graph node of the plan.
struct RedetectPlanShape {
    const void* func;
    dim3 grid, block;
};
RedetectPlanShape redetect_plan_shape();

/// Writes mask, host_mask and out of the frame's `count` tracks: one block.
void launch_redetect_plan(const RedetectPlanLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
