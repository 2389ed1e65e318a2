// relative_pose: the relative pose of two views from pixel correspondences.
//
//   relative_pose matches.csv --fx 500 --fy 500 --cx 320 --cy 240 [--mask inliers.csv] [options]
//   relative_pose matches.csv --sensor cam0/sensor.yaml [--mask inliers.csv] [options]
//
// Reads a CSV of correspondences "x1,y1,x2,y2" in pixels (a header line is skipped) and turns them into
// normalized coordinates: with --sensor, the camera of a EuRoC/Kalibr sensor.yaml (intrinsics and
// distortion, examples/common/sensor_yaml.hpp) unprojects the raw pixels (kestrel::unproject_cpu: the
// distortion is removed by the camera model; pixels without a valid preimage are left out); a distorted camera
// (radial-tangential, equidistant) takes the bearing entry instead (kestrel::unproject_bearing, the threshold
// converted per pair by kestrel::pixels_per_radian: a fisheye's points beyond 90 degrees are used too); with
// --fx --fy --cx --cy, the pinhole intrinsics (points already undistorted). Then it runs
// kestrel::RelativePoseEstimator (focal_px = the camera's mean focal length) and prints R, t (X2 = R X1 + t,
// |t| = 1), the number of inliers and the hypotheses used; writes the inlier mask as CSV "index,inlier"
// (one row per input line). --make-scene writes a generated scene with a known pose instead (used by the
// example's tests; with --sensor, projected through that camera, distortion included).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/options.hpp"
#include "common/sensor_yaml.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/relative_pose.hpp"

using namespace kestrel_examples;

namespace {

const char* kUsage =
    "usage: relative_pose MATCHES.csv (--sensor SENSOR.yaml | --fx F --fy F --cx C --cy C --size WxH) [options]\n"
    "       relative_pose --make-scene OUT.csv [--points N] [--outliers R] [--sensor SENSOR.yaml]\n"
    "  MATCHES.csv            x1,y1,x2,y2 per line, pixels as decimal numbers (a first line without a number\n"
    "                         is a header)\n"
    "  --sensor FILE          the camera of both views from a EuRoC/Kalibr sensor.yaml (intrinsics and\n"
    "                         distortion): raw pixels are undistorted with the camera model\n"
    "  --fx --fy --cx --cy    or pinhole intrinsics in pixels (both views); points must be undistorted\n"
    "  --size WxH             the image size of --fx ...: the principal point must lie within the image\n"
    "                         extended by half its size on each side\n"
    "  --threshold PX         inlier threshold on the Sampson error (default 1.0)\n"
    "  --confidence P         adaptive stop (default 0.999)\n"
    "  --max-hypotheses N     (default 4096)\n"
    "  --seed S               sampler seed (default 0)\n"
    "  --min-inliers N        the fewest inliers a pose is accepted with, [2, 1048576] (default 8)\n"
    "  --method five-point|two-point  two-point needs --rotation r00,r01,...,r22 (the gyro prior)\n"
    "  --no-refine            skip the refinement on the inliers\n"
    "  --mask FILE            write the inlier mask as CSV index,inlier\n"
    "  --pose FILE            write status, R, t, E, inliers, hypotheses (every digit: backends compare exactly)\n"
    "  --make-scene: --points N in [1, 1000000] (default 300), --outliers R the fraction of them made outliers,\n"
    "  in [0, 1] (default 0.3)\n";

const char* model_name(kestrel::CameraModel m) {
    switch (m) {
        case kestrel::CameraModel::Pinhole: return "pinhole";
        case kestrel::CameraModel::PinholeRadtan: return "radial-tangential";
        case kestrel::CameraModel::Fisheye: return "equidistant";
    }
    return "?";
}

/// The bound on a pixel coordinate of the CSV (far beyond any image: kestrel::kMaxImageSide is 16383).
constexpr double kMaxCoordinate = 1e6;

/// The fields of `line` split at commas, semicolons and tabs, blanks trimmed.
std::vector<std::string> split_fields(const std::string& line) {
    std::vector<std::string> fields;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = line.find_first_of(",;\t", start);
        std::string f = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
        const std::size_t a = f.find_first_not_of(" \r"), b = f.find_last_not_of(" \r");
        fields.push_back(a == std::string::npos ? std::string() : f.substr(a, b - a + 1));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return fields;
}

/// Splits `line` at commas, semicolons and tabs; each field must be one number (strtod reads all of it).
bool parse_numbers(const std::string& line, std::vector<double>& out) {
    out.clear();
    const std::string& rest = line;
    std::size_t start = 0;
    for (;;) {
        const std::size_t end = rest.find_first_of(",;\t", start);
        std::string f = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
        const std::size_t a = f.find_first_not_of(" \r"), b = f.find_last_not_of(" \r");
        f = a == std::string::npos ? std::string() : f.substr(a, b - a + 1);
        char* e = nullptr;
        const double v = f.empty() ? 0.0 : std::strtod(f.c_str(), &e);
        if (f.empty() || *e != '\0') return false;
        out.push_back(v);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return true;
}

std::vector<double> read_csv(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw std::runtime_error("'" + path + "' is a directory, not a CSV file of correspondences x1,y1,x2,y2");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read '" + path + "'");
    std::vector<double> v, row;
    std::string line;
    int lineno = 0;
    const char* const columns[4] = {"x1", "y1", "x2", "y2"};
    while (std::getline(in, line)) {
        ++lineno;
        if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(lineno) + ": ";
        const std::vector<std::string> fields = split_fields(line);
        const bool any_number = std::any_of(fields.begin(), fields.end(), is_decimal);
        if (lineno == 1 && !any_number) continue;  // header: a first line without a number
        for (std::size_t c = 0; c < fields.size() && c < 4; ++c)
            if (!is_decimal(fields[c]))
                throw std::runtime_error(where + "column " + columns[c] + ": '" + fields[c] +
                                         "' is not a decimal number (digits, an optional sign, point and exponent)");
        if (!parse_numbers(line, row))
            throw std::runtime_error(where + "expected four numbers x1,y1,x2,y2, got '" + line + "'");
        if (row.size() != 4)
            throw std::runtime_error(where + "expected 4 columns x1,y1,x2,y2, got " + std::to_string(row.size()));
        for (double x : row)
            if (!std::isfinite(x) || std::fabs(x) > kMaxCoordinate)
                throw std::runtime_error(where + "coordinate " + std::to_string(x) + " is outside [-1e+06, 1e+06] px");
        for (double x : row) v.push_back(x);
    }
    return v;
}

std::vector<double> parse_matrix(const std::string& s) {
    std::vector<double> v;
    if (!parse_numbers(s, v) || v.size() != 9)
        throw UsageError("--rotation needs 9 comma-separated numbers (row-major), not '" + s + "'");
    for (double x : v)
        if (!std::isfinite(x)) throw UsageError("--rotation: every entry must be finite");
    // A rotation: R^T R = I within 1e-6 per entry, det R = +1 (not a reflection).
    double worst = 0.0;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            double d = 0.0;
            for (int c = 0; c < 3; ++c) d += v[3 * c + a] * v[3 * c + b];
            worst = std::max(worst, std::fabs(d - (a == b ? 1.0 : 0.0)));
        }
    const double det = v[0] * (v[4] * v[8] - v[5] * v[7]) - v[1] * (v[3] * v[8] - v[5] * v[6]) +
                       v[2] * (v[3] * v[7] - v[4] * v[6]);
    if (!(worst <= 1e-6))
        throw UsageError("--rotation is not a rotation: |R^T R - I| = " + std::to_string(worst) +
                         " exceeds 1e-06 (per entry)");
    if (!(det > 0.0))
        throw UsageError("--rotation is a reflection: det R = " + std::to_string(det) + ", must be +1");
    return v;
}

/// The Sampson distance in pixels of the pair (x1, y1) <-> (x2, y2) (normalized) under E (row-major).
double sampson_px(const double* E, double x1, double y1, double x2, double y2, double focal) {
    const double a[3] = {E[0] * x1 + E[1] * y1 + E[2], E[3] * x1 + E[4] * y1 + E[5], E[6] * x1 + E[7] * y1 + E[8]};
    const double b[2] = {E[0] * x2 + E[3] * y2 + E[6], E[1] * x2 + E[4] * y2 + E[7]};
    const double r = x2 * a[0] + y2 * a[1] + a[2];
    return focal * std::fabs(r) / std::sqrt(a[0] * a[0] + a[1] * a[1] + b[0] * b[0] + b[1] * b[1]);
}

bool inside(const kestrel::Camera& c, kestrel::Point2d p) {
    return p.x >= -0.5 && p.x <= c.width - 0.5 && p.y >= -0.5 && p.y <= c.height - 0.5;
}

/// A known scene: rotation 10 degrees about y, t = (1, 0, 0.2) normalized, points 2..8 m in front, exact
/// projections; a fraction of outliers (random second points). Without a camera: fx = fy = 500, cx = 320,
/// cy = 240, no distortion. With one (`cam`, from --sensor): both views projected by kestrel::project
/// through its model, distortion included, and only points seen inside both images kept; outliers uniform
/// over the image and at least 3 px off the true epipolar line, so that exactly the scene points are inliers.
int make_scene(const std::string& path, int n, double outliers, const kestrel::Camera* cam) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double a = 10.0 * M_PI / 180.0;
    const double R[9] = {std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)};
    const double tn = std::sqrt(1.0 + 0.04);
    const double t[3] = {1.0 / tn, 0.0, 0.2 / tn};
    const double E[9] = {t[1] * R[6] - t[2] * R[3], t[1] * R[7] - t[2] * R[4], t[1] * R[8] - t[2] * R[5],  // [t]x R
                         t[2] * R[0] - t[0] * R[6], t[2] * R[1] - t[0] * R[7], t[2] * R[2] - t[0] * R[8],
                         t[0] * R[3] - t[1] * R[0], t[0] * R[4] - t[1] * R[1], t[0] * R[5] - t[1] * R[2]};
    std::ofstream out(path);
    if (!out) throw std::runtime_error("cannot write '" + path + "'");
    out << "x1,y1,x2,y2\n";
    out.precision(17);
    const int n_out = static_cast<int>(std::lround(outliers * n));
    for (int i = 0; i < n; ++i) {
        for (;;) {
            const double x = 0.5 * u(rng), y = 0.4 * u(rng), z = 5.0 + 3.0 * u(rng);
            const double X[3] = {x * z, y * z, z};
            const double Y[3] = {R[0] * X[0] + R[1] * X[1] + R[2] * X[2] + t[0],
                                 R[3] * X[0] + R[4] * X[1] + R[5] * X[2] + t[1],
                                 R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + t[2]};
            if (Y[2] < 0.5) continue;
            if (cam) {
                const kestrel::Point2d p1 = kestrel::project(*cam, {x, y});
                kestrel::Point2d p2 = kestrel::project(*cam, {Y[0] / Y[2], Y[1] / Y[2]});
                if (!inside(*cam, p1) || !inside(*cam, p2)) continue;
                if (i < n_out) {  // an outlier: a random pixel at least 3 px (Sampson) off the true epipolar line
                    p2.x = 0.5 * (cam->width - 1) + 0.5 * (cam->width - 1) * u(rng);
                    p2.y = 0.5 * (cam->height - 1) + 0.5 * (cam->height - 1) * u(rng);
                    const kestrel::Unprojection q = kestrel::unproject(*cam, p2);
                    if (q.status != kestrel::UnprojectStatus::Ok ||
                        sampson_px(E, x, y, q.normalized.x, q.normalized.y, 0.5 * (cam->fx + cam->fy)) < 3.0)
                        continue;
                }
                out << p1.x << "," << p1.y << "," << p2.x << "," << p2.y << "\n";
                break;
            }
            double u2 = 500.0 * Y[0] / Y[2] + 320.0, v2 = 500.0 * Y[1] / Y[2] + 240.0;
            if (i < n_out) {
                u2 = 320.0 + 300.0 * u(rng);
                v2 = 240.0 + 220.0 * u(rng);
            }
            out << 500.0 * x + 320.0 << "," << 500.0 * y + 240.0 << "," << u2 << "," << v2 << "\n";
            break;
        }
    }
    std::printf("wrote %d correspondences (%d outliers) to %s: R = rotation of 10 deg about y, t = (%.4f, 0, %.4f)\n",
                n, n_out, path.c_str(), t[0], t[2]);
    if (cam)
        std::printf("pixels of the %s camera %dx%d (fx %.3f, fy %.3f, cx %.3f, cy %.3f), distortion included\n",
                    model_name(cam->model), cam->width, cam->height, cam->fx, cam->fy, cam->cx, cam->cy);
    return 0;
}

int run(int argc, char** argv) {
    Args args(argc, argv, {"help", "no-refine"});
    if (args.flag("help")) {
        std::printf("%s%s", kUsage, backend_help());
        return 0;
    }
    if (args.has("make-scene")) {
        const std::string path = args.get("make-scene", "");
        const int n = args.get_int("points", 300);
        const double outl = args.get_double("outliers", 0.3);
        const std::string sensor = args.get("sensor", "");
        args.reject_unknown();
        if (n < 1 || n > 1000000)
            throw UsageError("--points " + std::to_string(n) + " is outside [1, 1000000] (the correspondences written)");
        if (!(outl >= 0.0 && outl <= 1.0))
            throw UsageError("--outliers " + args.get("outliers", "") +
                             " is outside [0, 1] (the fraction of the points made outliers)");
        if (sensor.empty()) return make_scene(path, n, outl, nullptr);
        const kestrel::Camera cam = read_sensor_yaml(sensor).camera;
        return make_scene(path, n, outl, &cam);
    }
    const bool explicit_backend = args.has("backend");
    const kestrel::Backend backend = parse_backend(args);
    // The camera: a sensor.yaml (intrinsics and distortion), or pinhole intrinsics of undistorted points.
    const bool any_k = args.has("fx") || args.has("fy") || args.has("cx") || args.has("cy");
    const std::string sensor = args.get("sensor", "");
    kestrel::Camera cam;
    if (!sensor.empty()) {
        if (any_k) throw UsageError("--sensor gives the intrinsics: pass it or --fx --fy --cx --cy, not both");
        cam = read_sensor_yaml(sensor).camera;
    } else {
        if (!args.has("fx") || !args.has("fy") || !args.has("cx") || !args.has("cy"))
            throw UsageError("the camera is needed: --sensor SENSOR.yaml, or --fx --fy --cx --cy (pixels) and --size WxH");
        if (!args.has("size"))
            throw UsageError("--fx --fy --cx --cy need the image size: --size WxH (pixels; the principal point is "
                             "checked against it)");
        cam.model = kestrel::CameraModel::Pinhole;
        cam.fx = args.get_double("fx", 0.0);
        cam.fy = args.get_double("fy", 0.0);
        cam.cx = args.get_double("cx", 0.0);
        cam.cy = args.get_double("cy", 0.0);
        const std::string size = args.get("size", "");
        char tail = 0;
        if (std::sscanf(size.c_str(), "%dx%d%c", &cam.width, &cam.height, &tail) != 2)
            throw UsageError("--size expects WxH (e.g. 752x480), not '" + size + "'");
        if (!(cam.fx > 0) || !(cam.fy > 0)) throw UsageError("--fx and --fy must be positive");
        kestrel::validate(cam, "--fx --fy --cx --cy --size");  // the principal point against the image, the sizes
    }
    kestrel::RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (cam.fx + cam.fy);  // pixels per normalized unit: the threshold is in pixels
    cfg.threshold_px = args.get_double("threshold", cfg.threshold_px);
    cfg.confidence = args.get_double("confidence", cfg.confidence);
    cfg.max_hypotheses = args.get_int("max-hypotheses", cfg.max_hypotheses);
    cfg.seed = static_cast<std::uint64_t>(args.get_uint64("seed", 0));
    cfg.refine = !args.flag("no-refine");
    cfg.min_inliers = args.get_int("min-inliers", cfg.min_inliers);
    const std::string method = args.get("method", "five-point");
    std::vector<double> prior;
    if (method == "two-point") {
        cfg.method = kestrel::PoseMethod::TwoPointWithRotation;
        if (!args.has("rotation")) throw UsageError("--method two-point needs --rotation r00,...,r22");
        prior = parse_matrix(args.get("rotation", ""));
    } else if (method != "five-point") {
        throw UsageError("--method must be five-point or two-point");
    } else if (args.has("rotation")) {
        throw UsageError("--rotation is the rotation prior of --method two-point: add --method two-point (the "
                         "five-point method estimates the rotation itself)");
    }
    kestrel::validate(cfg, "command line");  // --threshold, --confidence, --max-hypotheses, --min-inliers
    const std::string mask_path = args.get("mask", "");
    const std::string pose_path = args.get("pose", "");
    args.reject_unknown();
    if (args.positional().size() != 1) throw UsageError("expected exactly one MATCHES.csv");
    const std::vector<double> px = read_csv(args.positional()[0]);
    const int n = static_cast<int>(px.size() / 4);
    const int need = cfg.method == kestrel::PoseMethod::FivePoint ? 5 : 2;
    if (n < need)
        throw std::runtime_error(args.positional()[0] + ": " + std::to_string(n) + " correspondence" + (n == 1 ? "" : "s") +
                                 ", the " + (need == 5 ? "five-point" : "two-point") + " method needs at least " +
                                 std::to_string(need) + " (rows x1,y1,x2,y2)");
    if (n < cfg.min_inliers)
        throw std::runtime_error(args.positional()[0] + ": " + std::to_string(n) + " correspondences, fewer than --min-inliers " +
                                 std::to_string(cfg.min_inliers) + " (the fewest inliers a pose is accepted with): no "
                                 "pose can be accepted; give more rows, or a smaller --min-inliers (at least 2)");
    // Normalized coordinates (or, for a distorted camera, unit bearings and each point's pixels per radian) of both
    // views; `used[k]` is the input line of estimator point k.
    std::vector<double> x1, x2, ppr;
    std::vector<int> used;
    // A distorted camera (radial-tangential, equidistant fisheye) takes the bearing path: unit bearings (a fisheye's
    // beyond 90 degrees too) and the threshold converted per point by the camera's pixels per radian there, where
    // the plane's Sampson error at one focal length is off in the distorted corners and undefined beyond 90 degrees.
    const bool bearings = !sensor.empty() && cam.model != kestrel::CameraModel::Pinhole;
    x1.reserve(2 * static_cast<std::size_t>(n));
    x2.reserve(2 * static_cast<std::size_t>(n));
    used.reserve(static_cast<std::size_t>(n));
    std::printf("%s\n", backend_line(backend, explicit_backend).c_str());
    if (bearings) {
        for (int i = 0; i < n; ++i) {
            const kestrel::BearingUnprojection a = kestrel::unproject_bearing(cam, {px[4 * i], px[4 * i + 1]});
            const kestrel::BearingUnprojection b = kestrel::unproject_bearing(cam, {px[4 * i + 2], px[4 * i + 3]});
            if (a.status != kestrel::UnprojectStatus::Ok || b.status != kestrel::UnprojectStatus::Ok) continue;
            // Each pair's scale: the mean of its two points' pixels per radian (the error is split between them).
            const double s = 0.5 * (kestrel::pixels_per_radian(cam, a.bearing) + kestrel::pixels_per_radian(cam, b.bearing));
            if (!(s > 0.0) || !(s <= 1e7)) continue;
            x1.insert(x1.end(), a.bearing, a.bearing + 3);
            x2.insert(x2.end(), b.bearing, b.bearing + 3);
            ppr.push_back(s);
            used.push_back(i);
        }
        std::printf("camera: %s, %s %dx%d, fx %.3f fy %.3f cx %.3f cy %.3f; %d of %d pairs unprojected to bearings (%d "
                    "without a ray left out); threshold converted per point (pixels per radian)\n",
                    sensor.c_str(), model_name(cam.model), cam.width, cam.height, cam.fx, cam.fy, cam.cx, cam.cy,
                    static_cast<int>(used.size()), n, n - static_cast<int>(used.size()));
    } else if (!sensor.empty()) {
        // Raw pixels -> normalized points by the camera model (Newton undistortion, the CPU reference; the
        // GPU batch form is kestrel::DeviceUnprojector). A pixel without a valid preimage drops its pair.
        std::vector<float> p1(2 * static_cast<std::size_t>(n)), p2(2 * static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            p1[2 * i] = static_cast<float>(px[4 * i]);
            p1[2 * i + 1] = static_cast<float>(px[4 * i + 1]);
            p2[2 * i] = static_cast<float>(px[4 * i + 2]);
            p2[2 * i + 1] = static_cast<float>(px[4 * i + 3]);
        }
        std::vector<kestrel::Point2d> n1(static_cast<std::size_t>(n)), n2(static_cast<std::size_t>(n));
        std::vector<kestrel::UnprojectStatus> s1(static_cast<std::size_t>(n)), s2(static_cast<std::size_t>(n));
        kestrel::unproject_cpu(cam, p1.data(), n, n1.data(), s1.data());
        kestrel::unproject_cpu(cam, p2.data(), n, n2.data(), s2.data());
        for (int i = 0; i < n; ++i) {
            if (s1[i] != kestrel::UnprojectStatus::Ok || s2[i] != kestrel::UnprojectStatus::Ok) continue;
            x1.push_back(n1[i].x);
            x1.push_back(n1[i].y);
            x2.push_back(n2[i].x);
            x2.push_back(n2[i].y);
            used.push_back(i);
        }
        std::printf("camera: %s, %s %dx%d, fx %.3f fy %.3f cx %.3f cy %.3f; %d of %d pairs unprojected (%d without a "
                    "valid preimage left out)\n",
                    sensor.c_str(), model_name(cam.model), cam.width, cam.height, cam.fx, cam.fy, cam.cx, cam.cy,
                    static_cast<int>(used.size()), n, n - static_cast<int>(used.size()));
    } else {
        for (int i = 0; i < n; ++i) {
            x1.push_back((px[4 * i] - cam.cx) / cam.fx);
            x1.push_back((px[4 * i + 1] - cam.cy) / cam.fy);
            x2.push_back((px[4 * i + 2] - cam.cx) / cam.fx);
            x2.push_back((px[4 * i + 3] - cam.cy) / cam.fy);
            used.push_back(i);
        }
    }
    const int m = static_cast<int>(used.size());
    std::printf("%d correspondences, method %s, threshold %.3g px, confidence %.6g, min inliers %d\n", m,
                kestrel::to_string(cfg.method), cfg.threshold_px, cfg.confidence, cfg.min_inliers);
    kestrel::RelativePoseEstimator est(m > 0 ? m : 1, cfg, backend);
    std::vector<std::uint8_t> used_mask(static_cast<std::size_t>(m));
    const double* R_prior = prior.empty() ? nullptr : prior.data();
    const kestrel::RelativePoseResult r =
        bearings ? est.estimate_bearings(x1.data(), x2.data(), m, used_mask.data(), R_prior, ppr.data())
                 : est.estimate(x1.data(), x2.data(), m, used_mask.data(), R_prior);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n), 0);  // per input line; a left-out pair is 0
    for (int k = 0; k < m; ++k) mask[static_cast<std::size_t>(used[k])] = used_mask[static_cast<std::size_t>(k)];
    std::printf("status: %s\n", kestrel::to_string(r.status));
    if (r.status == kestrel::PoseStatus::Ok) {
        for (int i = 0; i < 3; ++i) std::printf("R row %d: %.6f %.6f %.6f\n", i, r.R[3 * i], r.R[3 * i + 1], r.R[3 * i + 2]);
        std::printf("t: %.6f %.6f %.6f\n", r.t[0], r.t[1], r.t[2]);
    }
    std::printf("inliers: %d of %d (%d in front of both cameras)\n", r.inliers, n, r.cheirality_inliers);
    std::printf("hypotheses: %d (best %d)\n", r.hypotheses, r.best_hypothesis);
    if (!mask_path.empty()) {
        std::ofstream out(mask_path);
        if (!out) throw std::runtime_error("cannot write '" + mask_path + "'");
        out << "index,inlier\n";
        for (int i = 0; i < n; ++i) out << i << "," << static_cast<int>(mask[static_cast<std::size_t>(i)]) << "\n";
    }
    if (!pose_path.empty()) {
        std::FILE* f = std::fopen(pose_path.c_str(), "w");
        if (!f) throw std::runtime_error("cannot write '" + pose_path + "'");
        std::fprintf(f, "status,%s\nR", kestrel::to_string(r.status));
        for (double v : r.R) std::fprintf(f, ",%.17g", v);
        std::fprintf(f, "\nt");
        for (double v : r.t) std::fprintf(f, ",%.17g", v);
        std::fprintf(f, "\nE");
        for (double v : r.E) std::fprintf(f, ",%.17g", v);
        std::fprintf(f, "\ninliers,%d\nhypotheses,%d\nbest_hypothesis,%d\n", r.inliers, r.hypotheses, r.best_hypothesis);
        std::fclose(f);
    }
    return r.status == kestrel::PoseStatus::Ok ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) { return run_example("relative_pose", kUsage, run, argc, argv); }
