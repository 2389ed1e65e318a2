// Test helpers of the bearing-vector relative pose (tests/geometry/test_relative_pose*.cpp): a generated scene
// seen by a real camera model (a wide equidistant fisheye, or any Camera): points at 2-10 m up to a given
// angle off the axis in both views, pixel noise in both images, outliers, the pixels unprojected back with the
// library's camera model, as bearings and as normalized points (z = 1), and each point's pixels per radian.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kestrel/camera.hpp"
#include "pose_test_util.hpp"

namespace kestrel::test {

/// A T265-like equidistant fisheye, 848x800 (a field of view well beyond 160 degrees).
inline Camera wide_fisheye_848x800() {
    Camera c;
    c.model = CameraModel::Fisheye;
    c.width = 848;
    c.height = 800;
    c.fx = 286.18;
    c.fy = 286.39;
    c.cx = 423.5;
    c.cy = 399.5;
    c.d[0] = -0.0111;
    c.d[1] = 0.0497;
    c.d[2] = -0.0476;
    c.d[3] = 0.0094;
    return c;
}

struct BearingScene {
    Mat3 R{};
    Vec3 t{};
    int n = 0;
    std::vector<double> b1, b2;      // unit bearings, 3 per point (from the noisy pixels)
    std::vector<double> x1, x2;      // the same as normalized points (z = 1), 2 per point
    std::vector<double> px1, px2;    // noisy pixels, 2 per point
    std::vector<double> ppr;         // pixels per radian: the mean of both views' (kestrel::pixels_per_radian)
    std::vector<double> off_axis1;   // degrees off the axis in the first view
    std::vector<std::uint8_t> inlier;
};

struct BearingSceneOptions {
    int n = 500;
    double outlier_ratio = 0.3;
    double noise_px = 0.5;
    double max_off_axis_deg = 80.0;
    double max_angle = 0.3;  // rotation up to this (radians)
    bool pure_rotation = false;
    bool static_camera = false;  // R = I, t = 0
    double baseline = 1.0;       // |t| (m): points are 2-10 m away
};

inline double off_axis_deg(const Vec3& d) {
    const double s = std::sqrt(d[0] * d[0] + d[1] * d[1]);
    return std::atan2(s, d[2]) * 180.0 / M_PI;
}

/// Points sampled uniformly over the image of the first view, kept when their ray is within the angle, at
/// depth 2-10 m along the ray, and when the second view sees them within the angle and inside the image.
inline BearingScene make_bearing_scene(std::mt19937_64& rng, const Camera& cam, const BearingSceneOptions& o) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    BearingScene s;
    s.n = o.n;
    s.R = o.static_camera ? Mat3{1, 0, 0, 0, 1, 0, 0, 0, 1} : axis_angle({g(rng), g(rng), g(rng)}, o.max_angle * u(rng));
    Vec3 t{g(rng), g(rng), g(rng)};
    const double nt = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    for (double& v : t) v = (o.pure_rotation || o.static_camera) ? 0.0 : o.baseline * v / nt;
    s.t = t;
    const auto in_view = [&](const Vec3& d, Point2d& px) {
        if (!(d[2] > 0.0) || off_axis_deg(d) > o.max_off_axis_deg) return false;
        px = project(cam, {d[0] / d[2], d[1] / d[2]});
        return px.x >= 0.0 && px.y >= 0.0 && px.x <= cam.width - 1.0 && px.y <= cam.height - 1.0;
    };
    const auto random_pixel = [&](Point2d& px) {  // a pixel whose ray is within the angle
        for (;;) {
            px = {u(rng) * (cam.width - 1.0), u(rng) * (cam.height - 1.0)};
            const Unprojection up = unproject(cam, px);
            if (up.status != UnprojectStatus::Ok) continue;
            if (off_axis_deg({up.normalized.x, up.normalized.y, 1.0}) <= o.max_off_axis_deg) return up.normalized;
        }
    };
    const int n_out = static_cast<int>(std::lround(o.outlier_ratio * o.n));
    std::vector<int> order(o.n);
    for (int i = 0; i < o.n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    s.inlier.assign(o.n, 1);
    s.px1.assign(2 * o.n, 0.0);
    s.px2.assign(2 * o.n, 0.0);
    s.off_axis1.assign(o.n, 0.0);
    for (int j = 0; j < o.n; ++j) {
        const int i = order[j];
        for (;;) {
            Point2d p1;
            const Point2d nrm = random_pixel(p1);
            Vec3 d1{nrm.x, nrm.y, 1.0};
            const double len = std::sqrt(d1[0] * d1[0] + d1[1] * d1[1] + 1.0);
            const double depth = 2.0 + 8.0 * u(rng);  // along the ray
            const Vec3 X{d1[0] / len * depth, d1[1] / len * depth, d1[2] / len * depth};
            const Vec3 Y0 = mat_vec(s.R, X);
            const Vec3 Y{Y0[0] + t[0], Y0[1] + t[1], Y0[2] + t[2]};
            Point2d p2;
            if (!in_view(Y, p2)) continue;
            Point2d q1;
            if (!in_view(X, q1)) continue;
            s.off_axis1[i] = off_axis_deg(X);
            if (j < n_out) {
                s.inlier[i] = 0;
                random_pixel(p2);
            } else {
                p2.x += o.noise_px * g(rng);
                p2.y += o.noise_px * g(rng);
            }
            q1.x += o.noise_px * g(rng);
            q1.y += o.noise_px * g(rng);
            s.px1[2 * i] = q1.x;
            s.px1[2 * i + 1] = q1.y;
            s.px2[2 * i] = p2.x;
            s.px2[2 * i + 1] = p2.y;
            const Unprojection a = unproject(cam, q1), b = unproject(cam, p2);
            if (a.status != UnprojectStatus::Ok || b.status != UnprojectStatus::Ok) continue;
            break;
        }
    }
    s.b1.resize(3 * o.n);
    s.b2.resize(3 * o.n);
    s.x1.resize(2 * o.n);
    s.x2.resize(2 * o.n);
    s.ppr.resize(o.n);
    for (int i = 0; i < o.n; ++i) {
        const Unprojection a = unproject(cam, {s.px1[2 * i], s.px1[2 * i + 1]});
        const Unprojection b = unproject(cam, {s.px2[2 * i], s.px2[2 * i + 1]});
        s.x1[2 * i] = a.normalized.x;
        s.x1[2 * i + 1] = a.normalized.y;
        s.x2[2 * i] = b.normalized.x;
        s.x2[2 * i + 1] = b.normalized.y;
        const double la = std::sqrt(a.normalized.x * a.normalized.x + a.normalized.y * a.normalized.y + 1.0);
        const double lb = std::sqrt(b.normalized.x * b.normalized.x + b.normalized.y * b.normalized.y + 1.0);
        const double ba[3] = {a.normalized.x / la, a.normalized.y / la, 1.0 / la};
        const double bb[3] = {b.normalized.x / lb, b.normalized.y / lb, 1.0 / lb};
        for (int c = 0; c < 3; ++c) {
            s.b1[3 * i + c] = ba[c];
            s.b2[3 * i + c] = bb[c];
        }
        s.ppr[i] = 0.5 * (pixels_per_radian(cam, ba) + pixels_per_radian(cam, bb));
    }
    return s;
}

/// The pixel of a ray under an equidistant fisheye (any direction up to the lens' field of view), written out
/// from the model's equations (independent of the library's projection, which takes normalized points).
inline Point2d fisheye_pixel_of_ray(const Camera& cam, const Vec3& d) {
    const double s = std::sqrt(d[0] * d[0] + d[1] * d[1]);
    if (s == 0.0) return {cam.cx, cam.cy};
    const double th = std::atan2(s, d[2]), t2 = th * th;
    const double thd = th * (1 + t2 * (cam.d[0] + t2 * (cam.d[1] + t2 * (cam.d[2] + t2 * cam.d[3]))));
    return {cam.fx * thd * d[0] / s + cam.cx, cam.fy * thd * d[1] / s + cam.cy};
}

/// As make_bearing_scene for a fisheye, with rays instead of normalized points (unproject_bearing and the
/// model's forward equations): points up to o.max_off_axis_deg, which may exceed 90 degrees. x1, x2 stay empty.
inline BearingScene make_ray_scene(std::mt19937_64& rng, const Camera& cam, const BearingSceneOptions& o) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    BearingScene s;
    s.n = o.n;
    s.R = axis_angle({g(rng), g(rng), g(rng)}, o.max_angle * u(rng));
    Vec3 t{g(rng), g(rng), g(rng)};
    const double nt = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    for (double& v : t) v = o.baseline * v / nt;
    s.t = t;
    const auto inside = [&](const Point2d& p) {
        return p.x >= 0.0 && p.y >= 0.0 && p.x <= cam.width - 1.0 && p.y <= cam.height - 1.0;
    };
    const auto ray_of = [&](const Point2d& p, Vec3& d) {
        const BearingUnprojection b = unproject_bearing(cam, p);
        if (b.status != UnprojectStatus::Ok) return false;
        d = {b.bearing[0], b.bearing[1], b.bearing[2]};
        return off_axis_deg(d) <= o.max_off_axis_deg;
    };
    const int n_out = static_cast<int>(std::lround(o.outlier_ratio * o.n));
    std::vector<int> order(o.n);
    for (int i = 0; i < o.n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    s.inlier.assign(o.n, 1);
    s.px1.assign(2 * o.n, 0.0);
    s.px2.assign(2 * o.n, 0.0);
    s.off_axis1.assign(o.n, 0.0);
    s.b1.assign(3 * o.n, 0.0);
    s.b2.assign(3 * o.n, 0.0);
    s.ppr.assign(o.n, 0.0);
    for (int j = 0; j < o.n; ++j) {
        const int i = order[j];
        for (;;) {
            const Point2d p1{u(rng) * (cam.width - 1.0), u(rng) * (cam.height - 1.0)};
            Vec3 d1;
            if (!ray_of(p1, d1)) continue;
            const double depth = 2.0 + 8.0 * u(rng);
            const Vec3 Y0 = mat_vec(s.R, {d1[0] * depth, d1[1] * depth, d1[2] * depth});
            const Vec3 Y{Y0[0] + t[0], Y0[1] + t[1], Y0[2] + t[2]};
            if (off_axis_deg(Y) > o.max_off_axis_deg) continue;
            Point2d p2 = fisheye_pixel_of_ray(cam, Y);
            if (!inside(p2)) continue;
            if (j < n_out) {
                s.inlier[i] = 0;
                Vec3 dummy;
                do p2 = {u(rng) * (cam.width - 1.0), u(rng) * (cam.height - 1.0)};
                while (!ray_of(p2, dummy));
            } else {
                p2.x += o.noise_px * g(rng);
                p2.y += o.noise_px * g(rng);
            }
            const Point2d q1{p1.x + o.noise_px * g(rng), p1.y + o.noise_px * g(rng)};
            const BearingUnprojection a = unproject_bearing(cam, q1), b = unproject_bearing(cam, p2);
            if (a.status != UnprojectStatus::Ok || b.status != UnprojectStatus::Ok) continue;
            s.off_axis1[i] = off_axis_deg(d1);
            s.px1[2 * i] = q1.x;
            s.px1[2 * i + 1] = q1.y;
            s.px2[2 * i] = p2.x;
            s.px2[2 * i + 1] = p2.y;
            for (int c = 0; c < 3; ++c) {
                s.b1[3 * i + c] = a.bearing[c];
                s.b2[3 * i + c] = b.bearing[c];
            }
            s.ppr[i] = 0.5 * (pixels_per_radian(cam, a.bearing) + pixels_per_radian(cam, b.bearing));
            break;
        }
    }
    return s;
}

/// Precision and recall of a mask against the scene's labels.
inline void mask_quality(const std::vector<std::uint8_t>& inlier, const std::uint8_t* mask, bool ok, double& precision,
                         double& recall) {
    int tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < inlier.size(); ++i) {
        const bool m = ok && mask[i];
        tp += m && inlier[i];
        fp += m && !inlier[i];
        fn += !m && inlier[i];
    }
    precision = tp + fp ? static_cast<double>(tp) / (tp + fp) : 0.0;
    recall = tp + fn ? static_cast<double>(tp) / (tp + fn) : 0.0;
}

}  // namespace kestrel::test
