// Rules of FeatureTracker's re-detection (docs/tracker.md, policy step 3), used by the host bookkeeping
// (src/track/feature_tracker.cpp, both backends) and by the CUDA backend's plan of a frame
// (kernels/track/redetect_plan.cu), which decides on the device, from the frame's LK results, whether the
// detection that follows the tracking in the same stream runs, and with which cells masked:
//   - a track stays live when its verdict (detail::track_verdict) is Tracked and, where anchoring re-anchors it,
//     the re-anchoring is allowed (redetect_reanchor_ok: a converged estimate whose level-0 template lies inside
//     the frame at the previous and the new position); the host may end more tracks after that (the geometric
//     check), never fewer;
//   - a frame re-detects when no track is live, or fewer than redetect_fraction * target_features, and fewer than
//     target_features (redetect_wanted: fewer live tracks never turn a re-detection off);
//   - the detection masks every grid cell that holds a live track, by its new position (redetect_cell).
#pragma once
#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/detail/lk_rules.hpp"

namespace kestrel::detail {

/// Whether a frame with `live` live tracks re-detects.
KESTREL_HD bool redetect_wanted(int live, float fraction, int target) {
    if (live >= target) return false;
    return live == 0 || static_cast<float>(live) < fmul(fraction, static_cast<float>(target));
}

/// The grid cell (row-major index) of a live track at (x, y): the cell of its integer pixel, clamped to the grid.
KESTREL_HD int redetect_cell(float x, float y, int cell_width, int cell_height, int cols, int rows) {
    int cx = static_cast<int>(x) / cell_width, cy = static_cast<int>(y) / cell_height;
    cx = cx < 0 ? 0 : (cx > cols - 1 ? cols - 1 : cx);
    cy = cy < 0 ? 0 : (cy > rows - 1 ? rows - 1 : cy);
    return cy * cols + cx;
}

/// True when the level-0 template of side `side` centred at (x, y) (the patch and its one-tap gradient margin)
/// lies inside a width x height frame: none of its taps is a clamped edge pixel.
KESTREL_HD bool template_in_frame(float x, float y, int side, int width, int height) {
    const float h = patch_half(side);
    const float vx = fsub(x, h), vy = fsub(y, h);
    return vx >= 1.0f && vx < static_cast<float>(width - side - 1) && vy >= 1.0f &&
           vy < static_cast<float>(height - side - 1);
}

/// Re-anchoring (TrackVerdict::reanchor) is allowed where the frame-to-frame estimate converged (forward status
/// not NotConverged) and the level-0 template lies inside the frame at the previous (ox, oy) and the new position.
KESTREL_HD bool redetect_reanchor_ok(TrackStatus forward, float ox, float oy, float x, float y, int side, int width,
                                     int height) {
    return forward != TrackStatus::NotConverged && template_in_frame(ox, oy, side, width, height) &&
           template_in_frame(x, y, side, width, height);
}

/// What the plan of a frame needs of the configuration.
struct RedetectRule {
    TrackVerdictRule verdict;
    int reanchor_test;  // anchoring with re-anchoring: redetect_reanchor_ok applies to re-anchored tracks
    int template_side;  // the level-0 patch side
    int width, height;  // the frame
    int cell_width, cell_height, cols, rows;  // the detector's grid
    float fraction;     // redetect_fraction
    int target;         // target_features
};

/// Whether track i (forward result f, backward `back` or null, previous position (ox, oy), anchor fit `a` or null)
/// stays live before the host's own checks; its new position in *x, *y.
KESTREL_HD bool redetect_track_live(const LkResult& f, const LkResult* back, float ox, float oy, const AnchorResult* a,
                                    const RedetectRule& r, float* x, float* y) {
    const TrackVerdict v = track_verdict(f, back, ox, oy, a, r.verdict);
    *x = v.x;
    *y = v.y;
    if (v.status != TrackStatus::Tracked) return false;
    if (r.reanchor_test && v.reanchor != 0 &&
        !redetect_reanchor_ok(f.status, ox, oy, v.x, v.y, r.template_side, r.width, r.height))
        return false;
    return true;
}

}  // namespace kestrel::detail
