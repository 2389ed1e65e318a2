// Generated stereo scenes with known answers: a textured plane seen by the two cameras of a rig, rendered
// from the geometry (every pixel is the mean of 2x2 samples of a continuous texture at the point where the
// sample's ray meets the plane), so that sub-pixel disparities are real and the truth is analytic.
//
//   frontal_scene  rectified rig, a plane parallel to the images at depth Z: disparity f * b / Z everywhere
//   slanted_scene  rectified rig, a slanted plane: disparity linear in x and y (given at the centre and as
//                  its x and y slopes)
//   raw_scene      two pinhole cameras (optionally radial-tangential distortion, each its own), the right one
//                  rotated by a few degrees and translated: the truth is the right pixel of each left pixel
//                  (ray-plane intersection, then projection into the right camera, distortion included)
//   stereo_sequence  any of the above with the rig moving over a few frames (the plane stays in the world)
//
// The texture: value noise over the plane (lattice values from a hash of the seed, quintic interpolation,
// so C2), five octaves from 40 down to 2.5 texels, scaled so that one texel is about one pixel at the
// plane's centre: structure at several scales (FAST finds corners, LK converges from a few pixels away).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kestrel/camera_types.hpp"
#include "kestrel/image.hpp"
#include "kestrel/stereo_types.hpp"

namespace kestrel::test {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<double, 9>;  // row-major

/// Rotation of `degrees` about the axis (ax, ay, az) (normalized here): Rodrigues' formula.
Mat3 rotation_deg(double ax, double ay, double az, double degrees);

/// A plane in the left camera's frame: the points origin + s * u + t * v (u, v orthonormal; the texture
/// coordinates are (s, t) * texels_per_metre).
struct TexturedPlane {
    Vec3 origin{{0, 0, 1}};
    Vec3 u{{1, 0, 0}}, v{{0, 1, 0}};
    double texels_per_metre = 500.0;
    std::uint32_t seed = 1;
};

/// The texture's grey value (about 20..235) at texture coordinates (s, t) (texels).
double plane_texture(double s, double t, std::uint32_t seed);

/// One stereo frame with its truth.
struct StereoScene {
    HostImage left, right;
    StereoRig rig;  ///< what the tracker is given (rectified, or raw with the true cameras and extrinsics)
    // The geometry the images were rendered from (left camera frame = the rig's left camera).
    Camera left_cam{}, right_cam{};  ///< right_cam may differ from the rig's (e.g. a shifted cy: OffEpipolar)
    Mat3 R_rl{{1, 0, 0, 0, 1, 0, 0, 0, 1}};  ///< X_right = R_rl X_left + t_rl
    Vec3 t_rl{{0, 0, 0}};
    TexturedPlane plane;

    /// The right-image pixel of the scene point seen at left pixel (x, y); NaN when the ray misses the plane
    /// (or hits it behind a camera).
    Point2d right_of(double x, double y) const;
    /// x - right_of(x, y).x: the true disparity (rectified rigs).
    double disparity(double x, double y) const;
    /// Z, in the left camera's frame, of the plane point seen at left pixel (x, y) (NaN when none).
    double depth(double x, double y) const;
};

/// Renders the pair from the fields above (left_cam, right_cam, R_rl, t_rl, plane); `right_gain` and
/// `right_offset` change the right camera's exposure (I_right = gain * I + offset, then rounded and clamped).
void render(StereoScene& scene, double right_gain = 1.0, double right_offset = 0.0);

/// Rectified rig (focal f, principal point at the centre, baseline 0.1 m) looking at a plane parallel to the
/// images at the depth giving `disparity` px (f * b / Z = disparity). f defaults to 0.9 * width.
StereoScene frontal_scene(int width, int height, double disparity, std::uint32_t seed = 1, double focal = 0);
/// Rectified rig and a slanted plane: disparity(x, y) = d_centre + d_dx * (x - cx) + d_dy * (y - cy) exactly.
StereoScene slanted_scene(int width, int height, double d_centre, double d_dx, double d_dy, std::uint32_t seed = 2);
/// Raw rig: left and right pinhole cameras with different intrinsics (and, with `distorted`, different
/// radial-tangential distortions), the right camera rotated by `degrees` (about an axis mostly along y, with
/// some x and z) and about 0.11 m to the right; the plane about 2 m away, slightly slanted.
StereoScene raw_scene(int width, int height, double degrees, bool distorted, std::uint32_t seed = 3);

/// `frames` frames of `first` with the rig moving: frame k's left camera is translated by k * step (metres, in
/// the first frame's left camera frame) and rotated by k * yaw_deg about its y axis; the plane stays fixed in
/// the world. Frame 0 is `first` itself.
std::vector<StereoScene> stereo_sequence(const StereoScene& first, int frames, const Vec3& step, double yaw_deg);

}  // namespace kestrel::test
