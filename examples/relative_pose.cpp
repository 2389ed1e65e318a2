// relative_pose: the relative pose of two views from pixel correspondences.
//
//   relative_pose matches.csv --fx 500 --fy 500 --cx 320 --cy 240 [--mask inliers.csv] [options]
//
// Reads a CSV of correspondences "x1,y1,x2,y2" in pixels (a header line is skipped), turns them into
// normalized coordinates with the pinhole intrinsics (points already undistorted), runs
// kestrel::RelativePoseEstimator and prints R, t (X2 = R X1 + t, |t| = 1), the number of inliers and the
// hypotheses used; writes the inlier mask as CSV "index,inlier". --make-scene writes a generated scene
// with a known pose instead (used by the example's test).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/options.hpp"
#include "kestrel/relative_pose.hpp"

using namespace kestrel_examples;

namespace {

const char* kUsage =
    "usage: relative_pose MATCHES.csv --fx F --fy F --cx C --cy C [options]\n"
    "       relative_pose --make-scene OUT.csv [--points N] [--outliers R]\n"
    "  MATCHES.csv            x1,y1,x2,y2 per line, pixels (a non-numeric first line is a header)\n"
    "  --fx --fy --cx --cy    pinhole intrinsics in pixels (both views); points must be undistorted\n"
    "  --sensor-yaml FILE     (reserved: camera from a sensor.yaml, once the reader exists)\n"
    "  --threshold PX         inlier threshold on the Sampson error (default 1.0)\n"
    "  --confidence P         adaptive stop (default 0.999)\n"
    "  --max-hypotheses N     (default 4096)\n"
    "  --seed S               sampler seed (default 0)\n"
    "  --method five-point|two-point  two-point needs --rotation r00,r01,...,r22 (the gyro prior)\n"
    "  --no-refine            skip the refinement on the inliers\n"
    "  --mask FILE            write the inlier mask as CSV index,inlier\n"
    "  --pose FILE            write status, R, t, E, inliers, hypotheses (every digit: backends compare exactly)\n";

struct Intrinsics {
    double fx = 0, fy = 0, cx = 0, cy = 0;
};

/// The hook for the sensor.yaml reader (being written): until it lands, the intrinsics come from the
/// command line. Replace the body with the reader's call; everything else stays.
Intrinsics intrinsics_from_sensor_yaml(const std::string& path) {
    throw UsageError("--sensor-yaml '" + path + "': the sensor.yaml reader is not part of this build yet; pass "
                     "--fx --fy --cx --cy");
}

std::vector<double> read_csv(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read '" + path + "'");
    std::vector<double> v;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (line.empty()) continue;
        for (char& c : line)
            if (c == ',' || c == ';' || c == '\t') c = ' ';
        std::istringstream ls(line);
        double a[4];
        if (!(ls >> a[0] >> a[1] >> a[2] >> a[3])) {
            if (lineno == 1) continue;  // header
            throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected x1,y1,x2,y2");
        }
        for (double x : a) v.push_back(x);
    }
    return v;
}

std::vector<double> parse_matrix(const std::string& s) {
    std::vector<double> v;
    std::string t = s;
    for (char& c : t)
        if (c == ',') c = ' ';
    std::istringstream ls(t);
    double x;
    while (ls >> x) v.push_back(x);
    if (v.size() != 9) throw UsageError("--rotation needs 9 comma-separated numbers (row-major)");
    return v;
}

/// A known scene: rotation 10 degrees about y, t = (1, 0, 0.2) normalized, points 2..8 m in front,
/// fx = fy = 500, cx = 320, cy = 240, exact projections; a fraction of outliers (random second points).
int make_scene(const std::string& path, int n, double outliers) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double a = 10.0 * M_PI / 180.0;
    const double R[9] = {std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)};
    const double tn = std::sqrt(1.0 + 0.04);
    const double t[3] = {1.0 / tn, 0.0, 0.2 / tn};
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
        const double outl = args.get_float("outliers", 0.3f);
        args.reject_unknown();
        return make_scene(path, n, outl);
    }
    const bool explicit_backend = args.has("backend");
    const kestrel::Backend backend = parse_backend(args);
    Intrinsics K;
    if (args.has("sensor-yaml")) {
        K = intrinsics_from_sensor_yaml(args.get("sensor-yaml", ""));
    } else {
        if (!args.has("fx") || !args.has("fy") || !args.has("cx") || !args.has("cy"))
            throw UsageError("the camera is needed: --fx --fy --cx --cy (pixels)");
        K.fx = std::atof(args.get("fx", "0").c_str());
        K.fy = std::atof(args.get("fy", "0").c_str());
        K.cx = std::atof(args.get("cx", "0").c_str());
        K.cy = std::atof(args.get("cy", "0").c_str());
        if (!(K.fx > 0) || !(K.fy > 0)) throw UsageError("--fx and --fy must be positive");
    }
    kestrel::RelativePoseConfig cfg;
    cfg.focal_px = 0.5 * (K.fx + K.fy);
    cfg.threshold_px = std::atof(args.get("threshold", "1.0").c_str());
    cfg.confidence = std::atof(args.get("confidence", "0.999").c_str());
    cfg.max_hypotheses = args.get_int("max-hypotheses", cfg.max_hypotheses);
    cfg.seed = static_cast<std::uint64_t>(std::strtoull(args.get("seed", "0").c_str(), nullptr, 10));
    cfg.refine = !args.flag("no-refine");
    const std::string method = args.get("method", "five-point");
    std::vector<double> prior;
    if (method == "two-point") {
        cfg.method = kestrel::PoseMethod::TwoPointWithRotation;
        if (!args.has("rotation")) throw UsageError("--method two-point needs --rotation r00,...,r22");
        prior = parse_matrix(args.get("rotation", ""));
    } else if (method != "five-point") {
        throw UsageError("--method must be five-point or two-point");
    }
    const std::string mask_path = args.get("mask", "");
    const std::string pose_path = args.get("pose", "");
    args.reject_unknown();
    if (args.positional().size() != 1) throw UsageError("expected exactly one MATCHES.csv");
    const std::vector<double> px = read_csv(args.positional()[0]);
    const int n = static_cast<int>(px.size() / 4);
    std::vector<double> x1(2 * static_cast<std::size_t>(n)), x2(2 * static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
        x1[2 * i] = (px[4 * i] - K.cx) / K.fx;
        x1[2 * i + 1] = (px[4 * i + 1] - K.cy) / K.fy;
        x2[2 * i] = (px[4 * i + 2] - K.cx) / K.fx;
        x2[2 * i + 1] = (px[4 * i + 3] - K.cy) / K.fy;
    }
    std::printf("%s\n", backend_line(backend, explicit_backend).c_str());
    std::printf("%d correspondences, method %s, threshold %.3g px, confidence %.6g\n", n, kestrel::to_string(cfg.method),
                cfg.threshold_px, cfg.confidence);
    kestrel::RelativePoseEstimator est(n > 0 ? n : 1, cfg, backend);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
    const kestrel::RelativePoseResult r =
        est.estimate(x1.data(), x2.data(), n, mask.data(), prior.empty() ? nullptr : prior.data());
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
