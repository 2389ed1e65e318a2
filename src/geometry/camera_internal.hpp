// Internal pieces of the camera models shared by the CPU reference and the GPU host code: resolving a
// Camera and an UndistortConfig into the rules' CameraSetup, and the batch argument checks.
#pragma once
#include "kestrel/camera.hpp"
#include "kestrel/detail/camera_rules.hpp"

namespace kestrel::detail {

/// Validates cam and cfg (InvalidArgument naming the field, prefixed by `where`) and resolves them: the
/// derived coefficients and, with `region` (what the undistortion needs; projection does not), the valid
/// region (the first fold of the distortion map, docs/geometry.md: a search of 4096 steps).
CameraSetup make_camera_setup(const Camera& cam, const UndistortConfig& cfg, const char* where, bool region = true);

/// The argument checks of a batch unprojection (count in [0, capacity], pointers non-null when count > 0).
void check_unproject_args(const char* where, const float* xy, int count, int capacity, const Point2d* normalized,
                          const UnprojectStatus* status);

}  // namespace kestrel::detail
