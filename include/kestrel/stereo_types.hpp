// Plain data of the stereo tracker (include/kestrel/stereo_tracker.hpp): the rig (rectified or raw), the
// configuration, the per-track stereo status and result. No class; the rules header detail/stereo_rules.hpp
// includes this header, never stereo_tracker.hpp. Model, conventions and figures: docs/stereo.md.
#pragma once
#include <array>
#include <cstdint>

#include "kestrel/camera_types.hpp"
#include "kestrel/lk_types.hpp"

namespace kestrel {

/// How the two images of a pair relate.
enum class RigType : std::int32_t {
    Rectified = 0,  ///< row-aligned images of one pinhole camera (focal, cx, cy), the right one `baseline` to the
                    ///< right of the left one: a point at depth Z has right x = left x - focal * baseline / Z
    Raw = 1,        ///< the cameras' own images (any Camera model) and the extrinsics between them
};

/// A stereo rig. Rectified: focal, cx, cy, baseline. Raw: left, right, R_rl, t_rl (validate() checks it).
struct StereoRig {
    RigType type = RigType::Rectified;
    // Rectified.
    double focal = 0;     ///< pixels, finite and > 0
    double cx = 0, cy = 0;  ///< principal point, pixels, finite
    double baseline = 0;  ///< metres (or the unit depth is wanted in), finite and > 0
    // Raw.
    Camera left{}, right{};  ///< each camera's model (their size must be the frames' size)
    /// Extrinsics, right camera from left camera: X_right = R_rl * X_left + t_rl (R row-major, a rotation;
    /// t in metres, non-zero). Kalibr's T_cn_cnm1 of cam1; from EuRoC's sensor.yaml: T_rl = inv(T_BS1) * T_BS0
    /// (rig_from_body_poses).
    std::array<double, 9> R_rl{{1, 0, 0, 0, 1, 0, 0, 0, 1}};
    std::array<double, 3> t_rl{{0, 0, 0}};
};

/// A rectified rig (focal and principal point in pixels, baseline in metres); validated (InvalidArgument).
StereoRig rectified_rig(double focal, double cx, double cy, double baseline);
/// A raw rig from each camera's pose in a common body frame (row-major 4x4, X_body = T_BS * X_camera, as EuRoC's
/// sensor.yaml gives T_BS): R_rl, t_rl = inv(T_BS_right) * T_BS_left.
StereoRig rig_from_body_poses(const Camera& left, const std::array<double, 16>& T_BS_left, const Camera& right,
                              const std::array<double, 16>& T_BS_right);

/// Throws InvalidArgument naming the field and its bound (rectified: focal, cx, cy, baseline; raw: both cameras
/// through validate(Camera), R_rl orthonormal with det +1 within 1e-6, t_rl finite and |t_rl| > 0).
void validate(const StereoRig& rig, const char* where = "StereoRig");

/// What became of a track's left-to-right match in the current frame.
enum class StereoStatus : std::int32_t {
    Matched = 0,       ///< converged both ways, on the epipolar line, round trip and disparity within bounds
    NoMatch = 1,       ///< the left-to-right or the right-to-left LK lost the feature (out of bounds, residual,
                       ///< singular; a NotConverged result counts as a match attempt and goes on)
    Inconsistent = 2,  ///< the right-to-left round trip missed the left position by more than max_round_trip
    OffEpipolar = 3,   ///< the right point is farther than epipolar_tolerance from the left point's epipolar line
    OutOfRange = 4,    ///< disparity outside [min_disparity, max_disparity] (raw rigs: the disparity of the
                       ///< triangulated depth, so also no depth or a depth that is not positive)
};
const char* to_string(StereoStatus s);
const char* to_string(RigType t);

/// The matching LK's defaults: LkConfig's, on 5 pyramid levels of 2. From a seed at zero, LK finds a disparity
/// up to a few times the coarsest level's scale (3 levels: about 20 px; 5 levels: about 50 px, what a VIO rig
/// sees down to about 1 m). The temporal tracking keeps its own levels on the same pyramid.
/// Every level keeps the 16 px patch (coarse_from_level past the last level): a coarse level's small patch
/// loses the feature on the way down, and the GPU's fixed-size kernel serves only all-16 px layouts. The coarse
/// levels keep all of max_iterations: from a seed at zero they travel several pixels each.
inline LkConfig stereo_match_lk_config() {
    LkConfig c;
    c.pyramid.levels = 5;
    c.coarse_from_level = kMaxLevels;
    c.coarse_max_iterations = c.max_iterations;
    return c;
}

/// Settings of the left-to-right matching (the temporal tracking is StereoConfig::tracker).
struct StereoMatchConfig {
    /// The matching LK (left image -> right image, and back). Its pyramid's scale must be the tracker's
    /// (tracker.lk.pyramid: both images' pyramids are built once, with the larger level count, and shared);
    /// template_source must be PreviousFrame (the template is the left image of the same frame). Default: LK's
    /// defaults (gain and offset estimated: the cameras' exposures differ) on 5 levels.
    LkConfig lk = stereo_match_lk_config();
    /// A track matched in the previous frame is refined from that match's offset on the finest refine_levels
    /// levels only (its disparity changes little from frame to frame: the coarse levels would only cost time);
    /// any other track (new, never matched, or unmatched in the previous frame: from its last offset) searches
    /// on every level. [0, lk.pyramid.levels]; 0 = every level for every track.
    int refine_levels = 2;
    /// A track matched in the previous frame whose left-to-right LK converges within trust_distance px of its seed
    /// (its position plus that match's offset) is not matched back: its disparity agrees with the checked one of
    /// the frame before, and the round trip would only cost time. Every other track is checked both ways.
    /// [0, 100]; 0 = every track is checked both ways.
    float trust_distance = 0.5f;
    float epipolar_tolerance = 1.0f;  ///< px, (0, 100]: rectified |right y - left y|; raw: distance to the line
    float max_round_trip = 0.5f;      ///< px, (0, 100]: |back-matched left - left|
    float min_disparity = 0.0f;       ///< px, [-16383, max_disparity]
    float max_disparity = 256.0f;     ///< px, (min_disparity, 16383]
};

struct StereoConfig;  // stereo_tracker.hpp (it holds a TrackerConfig)

}  // namespace kestrel
