// A reader for the camera `sensor.yaml` of the EuRoC MAV datasets and Kalibr (the ASL dataset format):
//   camera_model: pinhole
//   intrinsics: [fu, fv, cu, cv]
//   distortion_model: radial-tangential | radtan | equidistant | none
//   distortion_coefficients: [k1, k2, p1, p2(, k3)] | [k1, k2, k3, k4] | []
//   resolution: [width, height]
//   T_BS:                      (the sensor's pose in the body frame, 4x4, row-major)
//     cols: 4
//     rows: 4
//     data: [16 numbers, possibly over several lines]
// No YAML library: a line parser for exactly this layout (top-level "key: value" lines, "# comments", lists in
// brackets that may span lines, T_BS's three indented keys); other top-level keys (sensor_type, comment,
// rate_hz, ...) are skipped. Every error names the file and the line ("sensor.yaml:7: ..."). Not part of the
// library: the examples' support code.
#pragma once
#include <stdexcept>
#include <string>

#include "kestrel/camera_types.hpp"

namespace kestrel_examples {

/// A malformed or unsupported sensor.yaml; what() starts with "<file>:<line>: ".
struct SensorYamlError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct SensorYaml {
    kestrel::Camera camera;  ///< validated (kestrel::validate)
    double T_BS[16] = {};    ///< row-major 4x4: a point in the sensor frame -> the body frame (not checked: a
                             ///< mono camera does not use it; rigid_transform_problem() checks it)
    int T_BS_line = 0;       ///< the line of T_BS's data
};

/// What makes the row-major 4x4 `T` no rigid transform ("" when it is one): its rotation block must be orthonormal
/// within 1e-6 per entry of R^T R - I with det +1 (the bound kestrel::validate(StereoRig) puts on R_rl), its last row
/// 0 0 0 1, every entry finite.
std::string rigid_transform_problem(const double* T);

/// Reads and parses `path` (SensorYamlError when it cannot be read, naming it).
SensorYaml read_sensor_yaml(const std::string& path);
/// Parses the text of a sensor.yaml; `name` is the file name the messages give.
SensorYaml parse_sensor_yaml(const std::string& text, const std::string& name);

}  // namespace kestrel_examples
