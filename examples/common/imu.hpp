// The gyro of a EuRoC folder for the tracker (track_sequence --gyro): mav0/imu0/data.csv (timestamp [ns], w_x, w_y,
// w_z [rad/s], a_x, a_y, a_z [m/s^2]; the accelerometer is read and not used), the IMU's pose in the body frame
// (mav0/imu0/sensor.yaml's T_BS; identity when the file is missing, as in EuRoC) and the camera's (cam0's T_BS),
// and the gyro integrated between two frame times into the frame's rotation prior and the tracks' predicted
// positions. Every error names the file and the line. Not part of the library: the examples' support code.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "kestrel/camera_types.hpp"
#include "kestrel/keypoint.hpp"

namespace kestrel_examples {

struct ImuSample {
    long long t_ns = 0;
    double w[3] = {0, 0, 0};  ///< rad/s, the IMU's frame
};

struct Gyro {
    std::vector<ImuSample> samples;  ///< by increasing time
    double R_ci[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};  ///< IMU frame -> camera frame (row-major): w_cam = R_ci w_imu
    std::string csv;                 ///< the file read
};

/// Reads <mav0>/imu0/data.csv and <mav0>/imu0/sensor.yaml (when present), with the camera's T_BS (row-major 4x4,
/// the camera's pose in the body frame). Throws std::runtime_error naming the file (and line) on a missing file,
/// a malformed line, a non-finite value or a timestamp that does not increase.
Gyro read_euroc_gyro(const std::string& mav0, const double* T_BS_camera);

/// Parses the text of a data.csv (EuRoC's imu0 columns); `name` is the file name the messages give.
std::vector<ImuSample> parse_imu_csv(const std::string& text, const std::string& name);

/// The rotation of the camera between frame times t0 < t1: X_t1 = R X_t0 (row-major), the gyro integrated over
/// [t0, t1] (each sample interval with the mean of its two samples, split at t0 and t1). False when the samples do
/// not cover [t0, t1] or leave a gap of more than 50 ms in it.
bool gyro_rotation(const Gyro& g, long long t0, long long t1, std::array<double, 9>& R);

/// The predicted position of a pixel after the camera turned by R (X_new = R X_old): its bearing turned and
/// projected through `cam`; the pixel itself where it has no bearing or the turned one has no image.
kestrel::Point2f predict_pixel(const kestrel::Camera& cam, const std::array<double, 9>& R, kestrel::Point2f px);

}  // namespace kestrel_examples
