// Internal launch interface of the anchor stage (host-callable, no device code): the fit runs inside the LK
// kernels (AnchorFuse), the template store is kernels/track/anchor.cu.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"

namespace kestrel::kernels {

/// The anchor fit as the LK kernels run it after each track's frame-to-frame estimate (kernels/track/
/// lk_track.cu, LkLaunch::anchor; the fit itself: anchor_engine.cuh). Fixed buffers, set once.
struct AnchorFuse {
    detail::AnchorSetup setup;
    const detail::AnchorState* states;    // the tracks' anchor states (x, y unused: taken from the LK result)
    const std::int32_t* slots;            // template slots
    const float* store;                   // capacity slots of 3 n^2 floats: T, gx, gy (level 0)
    const std::int32_t* store_valid;      // capacity flags
    const detail::AnchorPrep* prep;       // capacity preparations (detail::anchor_prepare of each template)
    detail::AnchorResult* results;        // per track
    int capacity;
};

/// One anchor template store, by value: the reference patches of new (or re-anchored) tracks.
struct AnchorStoreLaunch {
    detail::AnchorSetup setup;
    detail::LkImage ref;                  // level 0 of the frame the patches are taken from
    float scale0;                         // the LK setup's level-0 scale (detail::to_level of the points)
    const Point2f* points;                // level-0 positions
    const std::int32_t* slots;            // their template slots
    float* store;                         // capacity slots of 3 n^2 floats: T, gx, gy
    std::int32_t* store_valid;            // capacity flags
    detail::AnchorPrep* prep;             // capacity preparations
    int capacity;
    int count;
};

/// For each i < count with a slot in [0, capacity): the template at points[i] (detail::extract_template,
/// level 0), its valid flag, and its preparation detail::anchor_prepare -- what the CPU backend's
/// store_templates computes.
void launch_anchor_store(const AnchorStoreLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
