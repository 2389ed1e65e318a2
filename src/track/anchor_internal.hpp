// Internal: the anchor stage (detail/anchor_rules.hpp) on the host: its setup from a TrackerConfig and
// the CPU engine (the warp emulated lane by lane) that anchor_refine_one drives.
#pragma once
#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/feature_tracker.hpp"
#include "lk_internal.hpp"

namespace kestrel::detail {

/// The anchor setup of a validated TrackerConfig (its level-0 patch side, mode, eigenvalue bound).
AnchorSetup make_anchor_setup(const TrackerConfig& cfg);

/// FeatureTracker's LK setup: make_lk_setup(cfg.lk), and with anchoring (which stores every track's reference
/// patch on every level when it is born or re-anchored) the coarse levels tracked from those stored patches.
LkSetup make_tracker_lk_setup(const TrackerConfig& cfg);

/// The host engine of anchor_refine_one over one stored template (T, gx, gy of n*n pixels each, the
/// level-0 part of a first-frame template slot).
class CpuAnchorEngine {
public:
    CpuAnchorEngine(const AnchorSetup& s, const float* tmpl);
    float template_sum();
    void hessian_sums(float mu, float* out);
    void error_sums(const LkImage& cur, const AnchorState& w, float alpha, float beta_c, float mu, float* out);

private:
    const AnchorSetup& s_;
    const float* t_;
    // The template lane-major (slot j, lane l; lk_internal.hpp's lane_major_sums); the pixel offsets: lanes_.u, v.
    const LaneLayout& lanes_;
    float lt_[kLkMaxPerLane][kLkLanes], lgx_[kLkMaxPerLane][kLkLanes], lgy_[kLkMaxPerLane][kLkLanes];
};

}  // namespace kestrel::detail
