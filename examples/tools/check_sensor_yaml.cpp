// Test of the sensor.yaml reader (examples/common/sensor_yaml.hpp), ctest examples.sensor_yaml:
//   example_check_sensor_yaml <EuRoC cam0 sensor.yaml> <scratch dir>
// Reads the sample (EuRoC MAV cam0) and checks every value; parses the equidistant (Kalibr) and "none"
// variants; then malformed variants (a missing key, a bad number, wrong counts, an unclosed list, an
// unsupported model, an invalid focal length, a missing file) must each fail with a message naming the file and
// the right line. Prints every failed check; exit status 1 when any failed.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/sensor_yaml.hpp"
#include "kestrel/camera.hpp"

using kestrel_examples::parse_sensor_yaml;
using kestrel_examples::read_sensor_yaml;
using kestrel_examples::SensorYaml;
using kestrel_examples::SensorYamlError;

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAILED: %s\n", what.c_str());
        ++failures;
    }
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
    const auto at = s.find(from);
    if (at == std::string::npos) {
        check(false, "sample text lacks '" + from + "'");
        return s;
    }
    return s.replace(at, from.size(), to);
}

/// `text` must fail to parse with a message that starts with "name:line: " and contains `part`.
void expect_error(const std::string& text, const std::string& name, int line, const std::string& part) {
    try {
        parse_sensor_yaml(text, name);
        check(false, name + ": no error (expected line " + std::to_string(line) + ": " + part + ")");
    } catch (const SensorYamlError& e) {
        const std::string msg = e.what();
        const std::string prefix = name + ":" + std::to_string(line) + ": ";
        check(msg.rfind(prefix, 0) == 0, "message '" + msg + "' does not start with '" + prefix + "'");
        check(msg.find(part) != std::string::npos, "message '" + msg + "' lacks '" + part + "'");
        std::printf("ok: %s\n", msg.c_str());
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <euroc cam0 sensor.yaml> <scratch dir>\n", argv[0]);
        return 2;
    }
    const std::string sample_path = argv[1], scratch = argv[2];
    std::ifstream f(sample_path);
    std::stringstream ss;
    ss << f.rdbuf();
    const std::string sample = ss.str();
    check(!sample.empty(), "cannot read " + sample_path);

    // The sample, through the file reader.
    try {
        const SensorYaml y = read_sensor_yaml(sample_path);
        const kestrel::Camera& c = y.camera;
        check(c.model == kestrel::CameraModel::PinholeRadtan, "model radtan");
        check(c.width == 752 && c.height == 480, "resolution 752 x 480");
        check(c.fx == 458.654 && c.fy == 457.296 && c.cx == 367.215 && c.cy == 248.375, "intrinsics");
        check(c.d[0] == -0.28340811 && c.d[1] == 0.07395907 && c.d[2] == 0.00019359 && c.d[3] == 1.76187114e-05 &&
                  c.d[4] == 0.0,
              "distortion coefficients");
        check(y.T_BS[0] == 0.0148655429818 && y.T_BS[3] == -0.0216401454975 && y.T_BS[4] == 0.999557249008 &&
                  y.T_BS[8] == -0.0257744366974 && y.T_BS[11] == 0.00981073058949 && y.T_BS[15] == 1.0 &&
                  y.T_BS[12] == 0.0,
              "T_BS (row-major, over four lines)");
        // The rotation block is orthonormal (a sanity check of the order of the 16 numbers).
        double worst = 0.0;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double dot = 0.0;
                for (int k = 0; k < 3; ++k) dot += y.T_BS[4 * i + k] * y.T_BS[4 * j + k];
                worst = std::fmax(worst, std::fabs(dot - (i == j ? 1.0 : 0.0)));
            }
        check(worst < 1e-6, "T_BS rotation orthonormal");
        // The camera works: the principal point is the optical axis.
        const kestrel::Unprojection u = kestrel::unproject(c, {c.cx, c.cy});
        check(u.status == kestrel::UnprojectStatus::Ok && u.normalized.x == 0.0, "unproject the principal point");
        std::printf("ok: %s: EuRoC cam0 read (%s %dx%d)\n", sample_path.c_str(), kestrel::to_string(c.model), c.width,
                    c.height);
    } catch (const std::exception& e) {
        check(false, std::string("the sample failed: ") + e.what());
    }

    // Kalibr's equidistant model, a 5-coefficient radtan, and no distortion.
    try {
        const std::string fish =
            replace(replace(sample, "radial-tangential", "equidistant"),
                    "[-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05]",
                    "[0.0034823894, 0.00071503, -0.0020532361, 0.00020293673]");
        const SensorYaml y = parse_sensor_yaml(fish, "fisheye.yaml");
        check(y.camera.model == kestrel::CameraModel::Fisheye && y.camera.d[3] == 0.00020293673, "equidistant");
        const SensorYaml r5 = parse_sensor_yaml(replace(sample, "1.76187114e-05]", "1.76187114e-05, 0.001]"), "k3.yaml");
        check(r5.camera.d[4] == 0.001, "radtan with k3");
        const SensorYaml none = parse_sensor_yaml(
            replace(replace(sample, "radial-tangential", "none"), "[-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05]",
                    "[]"),
            "none.yaml");
        check(none.camera.model == kestrel::CameraModel::Pinhole, "distortion_model none");
    } catch (const std::exception& e) {
        check(false, std::string("a valid variant failed: ") + e.what());
    }

    // Malformed files: each message names the file and the line. The sample's lines: T_BS 6, cols 7, rows 8,
    // data 9-12, resolution 16, camera_model 17, intrinsics 18, distortion_model 19, coefficients 20 (the last).
    expect_error(replace(sample, "intrinsics: [458.654, 457.296, 367.215, 248.375] #fu, fv, cu, cv\n", ""),
                 "missing.yaml", 19, "missing key 'intrinsics'");
    expect_error(replace(sample, "457.296", "457.29x6"), "bad_number.yaml", 18, "'457.29x6' is not a finite number");
    expect_error(replace(sample, "0.025715529948", "nan"), "nan.yaml", 9, "'nan' is not a finite number");
    expect_error(replace(sample, ", 248.375]", "]"), "count.yaml", 18, "'intrinsics' must have 4 numbers, it has 3");
    expect_error(replace(sample, "0.0, 0.0, 0.0, 1.0]", "0.0, 0.0, 1.0]"), "tbs_count.yaml", 9,
                 "'T_BS data' must have 16 numbers, it has 15");
    expect_error(replace(sample, "1.76187114e-05]", "1.76187114e-05, 0.1, 0.2]"), "dist_count.yaml", 20,
                 "must have 4 numbers (k1, k2, p1, p2) or 5");
    expect_error(replace(sample, "[752, 480]", "[752.5, 480]"), "resolution.yaml", 16, "must hold positive integers");
    expect_error(replace(sample, "0.0, 0.0, 0.0, 1.0]", "0.0, 0.0, 0.0, 1.0"), "unclosed.yaml", 9,
                 "list without its closing ']'");
    expect_error(replace(sample, "camera_model: pinhole", "camera_model: omni"), "omni.yaml", 17,
                 "camera_model 'omni' is not supported");
    expect_error(replace(sample, "radial-tangential", "fov"), "fov.yaml", 19, "distortion_model 'fov' is not supported");
    expect_error(replace(sample, "  rows: 4", "  rows: 3"), "rows.yaml", 8, "T_BS rows must be 4");
    expect_error(replace(sample, "[458.654,", "[-458.654,"), "focal.yaml", 18, "parameter 'fx'");
    expect_error(replace(sample, "rate_hz: 20", "rate_hz: 20\nresolution: [1, 1]"), "twice.yaml", 17,
                 "key 'resolution' given twice (first on line 16)");

    // Through the file reader: the message names the path.
    const std::string bad_path = scratch + "/bad_sensor.yaml";
    {
        std::ofstream o(bad_path);
        o << replace(sample, "457.296", "oops");
    }
    try {
        read_sensor_yaml(bad_path);
        check(false, "no error for " + bad_path);
    } catch (const SensorYamlError& e) {
        check(std::string(e.what()).rfind(bad_path + ":18: ", 0) == 0, std::string("file message: ") + e.what());
        std::printf("ok: %s\n", e.what());
    }
    try {
        read_sensor_yaml(scratch + "/no_such_sensor.yaml");
        check(false, "no error for a missing file");
    } catch (const SensorYamlError& e) {
        check(std::string(e.what()).find("no_such_sensor.yaml: cannot open") != std::string::npos, e.what());
    }

    std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "passed", failures);
    return failures ? 1 : 0;
}
