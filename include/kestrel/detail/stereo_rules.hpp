// The stereo rules: what a left-to-right match is worth, shared by both backends (the CPU reference and the CUDA
// backend run the same LK kernels' rules for the matching itself, then these decisions on the host, in this
// header, on the same numbers). Summary:
//   1. the match: LK of the left patch into the right image from a seed, then LK of the right patch back into
//      the left image from the left position (the round trip). A track matched in the previous frame (a trusted
//      seed, kSeedTrusted) is refined on the finest match.refine_levels levels (match_refines), every other one
//      searches every level; a trusted seed whose forward result converged within match.trust_distance of it
//      skips the way back (round_trip_needed); its backward result is skipped_round_trip(), a round trip of zero.
//      Both backends, the kernel included, decide from the same numbers;
//   2. the verdict, in this order: NoMatch (either LK lost it), Inconsistent (round trip > max_round_trip),
//      OffEpipolar (distance to the epipolar line > epipolar_tolerance), OutOfRange (disparity outside
//      [min_disparity, max_disparity]; raw rigs: the rectified-equivalent disparity of the triangulated depth, so
//      no depth or a depth that is not positive is out of range too);
//   3. depth: rectified, focal * baseline / disparity; raw, the left-frame Z of the midpoint of the two rays.
// Conventions: pixels are level-0 pixels with centres at integers; disparity = left x - right x (rectified) or
// left fx * |t_rl| / depth (raw, equivalent_disparity); raw rigs map
// X_right = R_rl X_left + t_rl; normalized points are (X/Z, Y/Z). Double precision for the geometry (it runs on
// the host for both backends).
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/detail/lk_rules.hpp"
#include "kestrel/stereo_types.hpp"

namespace kestrel::detail {

// The seed classes and the round trip's rules (MatchSeed, match_refines, match_seed, round_trip_needed,
// skipped_round_trip) are in lk_rules.hpp: the round-trip kernel (kernels/track/lk_track.cu) that runs them is the
// tracking area's.

/// Whether an LK result carries a position the stereo match can use (Tracked, or NotConverged: the tracker's
/// own rule for keeping a track).
inline bool lk_usable(TrackStatus s) { return s == TrackStatus::Tracked || s == TrackStatus::NotConverged; }

/// Rectified rig: the distance of right point (xr, yr) to left point (xl, yl)'s epipolar line, the row y = yl.
inline double epipolar_distance_rectified(double yl, double yr) { return std::fabs(yr - yl); }

/// E = [t]x R (row-major) of a raw rig: x_r^T E x_l = 0 for normalized homogeneous points of one 3-D point.
inline void essential_from_rig(const double R[9], const double t[3], double E[9]) {
    const double tx[9] = {0, -t[2], t[1], t[2], 0, -t[0], -t[1], t[0], 0};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) E[3 * i + j] = tx[3 * i] * R[j] + tx[3 * i + 1] * R[3 + j] + tx[3 * i + 2] * R[6 + j];
}

/// Raw rig: the distance of normalized right point nr to the epipolar line E nl in the right camera's normalized
/// plane, scaled to pixels by the right camera's focal length `fr` (the line's distance in the undistorted image).
inline double epipolar_distance_raw(const double E[9], double nlx, double nly, double nrx, double nry, double fr) {
    const double a = E[0] * nlx + E[1] * nly + E[2];
    const double b = E[3] * nlx + E[4] * nly + E[5];
    const double c = E[6] * nlx + E[7] * nly + E[8];
    const double n = std::sqrt(a * a + b * b);
    if (!(n > 0.0)) return HUGE_VAL;
    return fr * std::fabs(a * nrx + b * nry + c) / n;
}

/// Raw rig: the left-frame depth Z of the point seen at normalized nl (left) and nr (right): the midpoint of the
/// closest points of the two rays, X_l = zl * (nl, 1) and X_r = zr * (nr, 1) with X_r = R X_l + t, solved in
/// least squares for (zl, zr). Returns NaN when the rays are parallel (no depth) and the (possibly negative)
/// zl of the midpoint otherwise.
inline double triangulate_depth(const double R[9], const double t[3], double nlx, double nly, double nrx, double nry) {
    // In the right frame: zl * (R dl) - zr * dr = -t, with dl = (nl, 1), dr = (nr, 1).
    const double a[3] = {R[0] * nlx + R[1] * nly + R[2], R[3] * nlx + R[4] * nly + R[5], R[6] * nlx + R[7] * nly + R[8]};
    const double dr[3] = {nrx, nry, 1.0};
    const double aa = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
    const double ab = a[0] * dr[0] + a[1] * dr[1] + a[2] * dr[2];
    const double bb = dr[0] * dr[0] + dr[1] * dr[1] + dr[2] * dr[2];
    const double at = a[0] * t[0] + a[1] * t[1] + a[2] * t[2];
    const double bt = dr[0] * t[0] + dr[1] * t[1] + dr[2] * t[2];
    // Normal equations of min |zl a - zr dr + t|^2: [aa -ab; -ab bb] [zl; zr] = [-at; bt].
    const double det = aa * bb - ab * ab;
    if (!(std::fabs(det) > 1e-12 * aa * bb)) return NAN;
    const double zl = (-at * bb + ab * bt) / det;
    const double zr = (aa * bt - ab * at) / det;
    // The midpoint's left-frame Z: average of X_l = zl dl and R^T (zr dr - t), third coordinate.
    const double xr[3] = {zr * dr[0] - t[0], zr * dr[1] - t[1], zr * dr[2] - t[2]};
    const double zr_in_l = R[2] * xr[0] + R[5] * xr[1] + R[8] * xr[2];
    return 0.5 * (zl + zr_in_l);
}

/// Raw rig: the disparity a rectified rig with the left camera's focal length and the rig's baseline would show for a
/// point at `depth` (NaN for no depth; negative behind the camera): what min_disparity / max_disparity bound, so that
/// the range means the same depths on both rig types.
inline double equivalent_disparity(double focal, double baseline, double depth) { return focal * baseline / depth; }

/// The inputs of one track's verdict.
struct StereoEvidence {
    TrackStatus forward = TrackStatus::LostOutOfBounds;   ///< left -> right LK
    TrackStatus backward = TrackStatus::LostOutOfBounds;  ///< right -> left LK (from the forward result)
    double round_trip = HUGE_VAL;  ///< |backward position - left position|, px
    double epipolar = HUGE_VAL;    ///< distance to the epipolar line, px
    double disparity = 0.0;        ///< rectified: left x - right x; raw: equivalent_disparity (px; NaN: no depth)
    double depth = 0.0;            ///< rectified: focal * baseline / disparity; raw: triangulated (NaN: none)
};

/// The verdict (the order above; the bounds are StereoMatchConfig's).
inline StereoStatus stereo_verdict(const StereoEvidence& e, const StereoMatchConfig& c, RigType rig) {
    if (!lk_usable(e.forward) || !lk_usable(e.backward)) return StereoStatus::NoMatch;
    if (!(e.round_trip <= static_cast<double>(c.max_round_trip))) return StereoStatus::Inconsistent;
    if (!(e.epipolar <= static_cast<double>(c.epipolar_tolerance))) return StereoStatus::OffEpipolar;
    if (!(e.disparity >= static_cast<double>(c.min_disparity) && e.disparity <= static_cast<double>(c.max_disparity)))
        return StereoStatus::OutOfRange;
    if (rig == RigType::Raw && !(e.depth > 0.0)) return StereoStatus::OutOfRange;
    return StereoStatus::Matched;
}

}  // namespace kestrel::detail
