// Test helpers of the relative-pose suites (tests/geometry/test_five_point.cpp, test_relative_pose*.cpp):
// generated scenes with a known pose, points in front of both cameras, pixel noise and outliers.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kestrel::test {

using Mat3 = std::array<double, 9>;  // row-major
using Vec3 = std::array<double, 3>;

inline Mat3 matmul(const Mat3& a, const Mat3& b) {
    Mat3 c{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double s = 0.0;
            for (int k = 0; k < 3; ++k) s += a[3 * i + k] * b[3 * k + j];
            c[3 * i + j] = s;
        }
    return c;
}
inline Mat3 transpose(const Mat3& a) { return {a[0], a[3], a[6], a[1], a[4], a[7], a[2], a[5], a[8]}; }
inline Vec3 mat_vec(const Mat3& r, const Vec3& x) {
    return {r[0] * x[0] + r[1] * x[1] + r[2] * x[2], r[3] * x[0] + r[4] * x[1] + r[5] * x[2],
            r[6] * x[0] + r[7] * x[1] + r[8] * x[2]};
}
inline Mat3 skew(const Vec3& t) { return {0, -t[2], t[1], t[2], 0, -t[0], -t[1], t[0], 0}; }

/// Rotation of `angle` radians about the unit axis `a`.
inline Mat3 axis_angle(Vec3 a, double angle) {
    const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (double& v : a) v /= n;
    const double c = std::cos(angle), s = std::sin(angle), C = 1 - c;
    return {c + a[0] * a[0] * C,        a[0] * a[1] * C - a[2] * s, a[0] * a[2] * C + a[1] * s,
            a[1] * a[0] * C + a[2] * s, c + a[1] * a[1] * C,        a[1] * a[2] * C - a[0] * s,
            a[2] * a[0] * C - a[1] * s, a[2] * a[1] * C + a[0] * s, c + a[2] * a[2] * C};
}

/// Angle of the rotation a^T b in degrees.
inline double rotation_error_deg(const Mat3& a, const Mat3& b) {
    // atan2(sin, cos) of the relative rotation: acos of the trace cannot resolve angles below about 1e-6 degrees
    // (one unit in the last place of a cosine near 1 is already 8.5e-7 degrees).
    const Mat3 d = matmul(transpose(a), b);
    const double c = 0.5 * (d[0] + d[4] + d[8] - 1.0);
    const double sx = d[7] - d[5], sy = d[2] - d[6], sz = d[3] - d[1];
    const double s = 0.5 * std::sqrt(sx * sx + sy * sy + sz * sz);
    return std::atan2(s, c) * 180.0 / M_PI;
}
/// Angle between two directions in degrees.
inline double direction_error_deg(const Vec3& a, const Vec3& b) {
    // atan2(|a x b|, a . b): accurate for small angles too (see rotation_error_deg).
    const double cx = a[1] * b[2] - a[2] * b[1], cy = a[2] * b[0] - a[0] * b[2], cz = a[0] * b[1] - a[1] * b[0];
    const double cross = std::sqrt(cx * cx + cy * cy + cz * cz);
    const double dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    return std::atan2(cross, dot) * 180.0 / M_PI;
}

/// min over the sign of ||a/|a| -+ b/|b||| (essential matrices are defined up to scale and sign).
inline double essential_distance(const double* a, const double* b) {
    double na = 0, nb = 0;
    for (int k = 0; k < 9; ++k) {
        na += a[k] * a[k];
        nb += b[k] * b[k];
    }
    na = std::sqrt(na);
    nb = std::sqrt(nb);
    double dp = 0, dm = 0;
    for (int k = 0; k < 9; ++k) {
        const double u = a[k] / na, v = b[k] / nb;
        dp += (u - v) * (u - v);
        dm += (u + v) * (u + v);
    }
    return std::sqrt(dp < dm ? dp : dm);
}

/// A scene: X2 = R X1 + t, |t| = 1; x1, x2 normalized coordinates (interleaved x, y); inlier[i] true for the
/// correspondences of the scene (outliers are random pairs in the field of view).
struct PoseScene {
    Mat3 R{};
    Vec3 t{};
    Mat3 E{};  // [t]x R
    std::vector<double> x1, x2;
    std::vector<std::uint8_t> inlier;
};

struct SceneOptions {
    int n = 200;
    double outlier_ratio = 0.0;
    double noise_px = 0.0;
    double focal_px = 500.0;
    double half_fov = 0.6;       // |x|, |y| <= half_fov in normalized units (image side ~ 600 px)
    double max_angle = 0.5;      // rotation angle up to this (radians)
    double min_depth = 2.0, max_depth = 10.0;
    bool planar = false;         // points on one plane
    bool pure_rotation = false;  // t = 0 (E undefined; E is then left zero)
};

inline PoseScene make_scene(std::mt19937_64& rng, const SceneOptions& o) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    PoseScene s;
    s.R = axis_angle({g(rng), g(rng), g(rng)}, o.max_angle * std::fabs(u(rng)));
    Vec3 t{g(rng), g(rng), g(rng)};
    const double nt = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    for (double& v : t) v = o.pure_rotation ? 0.0 : v / nt;
    s.t = t;
    s.E = matmul(skew(t), s.R);
    // plane for planar scenes: n . X = d in the first camera
    const Vec3 pn{0.3 * u(rng), 0.3 * u(rng), 1.0};
    const double pd = o.min_depth + (o.max_depth - o.min_depth) * 0.5 * (u(rng) + 1.0);
    const int n_out = static_cast<int>(std::lround(o.outlier_ratio * o.n));
    std::vector<int> order(o.n);
    for (int i = 0; i < o.n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    s.x1.assign(2 * o.n, 0.0);
    s.x2.assign(2 * o.n, 0.0);
    s.inlier.assign(o.n, 1);
    for (int j = 0; j < o.n; ++j) {
        const int i = order[j];
        const bool out = j < n_out;
        for (int tries = 0;; ++tries) {
            const double a = o.half_fov * u(rng), b = o.half_fov * u(rng);
            double depth = o.min_depth + (o.max_depth - o.min_depth) * 0.5 * (u(rng) + 1.0);
            if (o.planar) depth = pd / (pn[0] * a + pn[1] * b + pn[2]);
            const Vec3 X{a * depth, b * depth, depth};
            const Vec3 Y0 = mat_vec(s.R, X);
            const Vec3 Y{Y0[0] + t[0], Y0[1] + t[1], Y0[2] + t[2]};
            if (Y[2] < 0.5 || depth < 0.5) continue;
            const double c = Y[0] / Y[2], d = Y[1] / Y[2];
            if ((std::fabs(c) > o.half_fov || std::fabs(d) > o.half_fov) && tries < 100) continue;
            s.x1[2 * i] = a;
            s.x1[2 * i + 1] = b;
            if (out) {
                s.x2[2 * i] = o.half_fov * u(rng);
                s.x2[2 * i + 1] = o.half_fov * u(rng);
                s.inlier[i] = 0;
            } else {
                s.x2[2 * i] = c + o.noise_px / o.focal_px * g(rng);
                s.x2[2 * i + 1] = d + o.noise_px / o.focal_px * g(rng);
                s.x1[2 * i] += o.noise_px / o.focal_px * g(rng);
                s.x1[2 * i + 1] += o.noise_px / o.focal_px * g(rng);
            }
            break;
        }
    }
    return s;
}

}  // namespace kestrel::test
