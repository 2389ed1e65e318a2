// Internal launch interface of kernels/track/anchor.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"

namespace kestrel::kernels {

/// One anchor launch, by value (no __constant__ or global state).
struct AnchorLaunch {
    detail::AnchorSetup setup;
    detail::LkImage cur;                  // level 0 of the current frame
    const LkResult* forward;              // frame-to-frame LK results (their positions start the fit)
    const detail::AnchorState* states;    // the tracks' anchor states (x, y unused: taken from forward)
    const std::int32_t* slots;            // template slots
    const float* store;                   // capacity slots of 3 n^2 floats: T, gx, gy (level 0)
    const std::int32_t* store_valid;      // capacity flags
    detail::AnchorResult* results;
    int capacity;
    int count;
};

/// results[i] = anchor_refine_one from (forward[i].x, forward[i].y, states[i]) when forward[i] is Tracked or
/// NotConverged and its slot holds a valid template; otherwise status LostAnchor and no fit.
void launch_anchor(const AnchorLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
