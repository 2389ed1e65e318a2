#include "stereo_scenes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "kestrel/camera.hpp"

namespace kestrel::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Vec3 sub(const Vec3& a, const Vec3& b) { return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}}; }
Vec3 add(const Vec3& a, const Vec3& b) { return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}}; }
Vec3 scale(const Vec3& a, double s) { return {{a[0] * s, a[1] * s, a[2] * s}}; }
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
Vec3 normalized(const Vec3& a) { return scale(a, 1.0 / std::sqrt(dot(a, a))); }
Vec3 mul(const Mat3& R, const Vec3& x) {
    return {{R[0] * x[0] + R[1] * x[1] + R[2] * x[2], R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
             R[6] * x[0] + R[7] * x[1] + R[8] * x[2]}};
}
Vec3 mul_t(const Mat3& R, const Vec3& x) {  // R^T x
    return {{R[0] * x[0] + R[3] * x[1] + R[6] * x[2], R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
             R[2] * x[0] + R[5] * x[1] + R[8] * x[2]}};
}
std::uint32_t hash3(std::int64_t i, std::int64_t j, std::uint32_t k) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 0x8da6b343u ^ static_cast<std::uint32_t>(j) * 0xd8163841u ^
                      k * 0xcb1ab31fu;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

double quintic(double t) { return t * t * t * (t * (t * 6.0 - 15.0) + 10.0); }

/// Value noise in [0, 1) at (x, y) lattice units.
double value_noise(double x, double y, std::uint32_t key) {
    const double fx = std::floor(x), fy = std::floor(y);
    const auto i = static_cast<std::int64_t>(fx), j = static_cast<std::int64_t>(fy);
    const double tx = quintic(x - fx), ty = quintic(y - fy);
    const auto v = [&](std::int64_t a, std::int64_t b) { return (hash3(a, b, key) >> 8) * (1.0 / 16777216.0); };
    const double top = v(i, j) + (v(i + 1, j) - v(i, j)) * tx;
    const double bottom = v(i, j + 1) + (v(i + 1, j + 1) - v(i, j + 1)) * tx;
    return top + (bottom - top) * ty;
}

/// A camera pixel's ray (normalized coordinates, z = 1) in that camera's frame; NaN when it has none.
Point2d ray_of(const Camera& cam, double x, double y) {
    if (cam.model == CameraModel::Pinhole) return {(x - cam.cx) / cam.fx, (y - cam.cy) / cam.fy};
    const Unprojection u = unproject(cam, {x, y});
    if (u.status != UnprojectStatus::Ok) return {kNaN, kNaN};
    return u.normalized;
}

/// Where the ray from `centre` along `dir` (left camera frame) meets the plane; NaN when behind or parallel.
Vec3 hit(const TexturedPlane& p, const Vec3& centre, const Vec3& dir) {
    const Vec3 n = cross(p.u, p.v);
    const double den = dot(n, dir);
    if (std::abs(den) < 1e-12) return {{kNaN, kNaN, kNaN}};
    const double lambda = dot(n, sub(p.origin, centre)) / den;
    if (!(lambda > 0)) return {{kNaN, kNaN, kNaN}};
    return add(centre, scale(dir, lambda));
}

/// Renders one camera's view: each pixel the mean of 2x2 samples at (+-0.25, +-0.25).
HostImage render_camera(const Camera& cam, const Mat3& R_cl, const Vec3& centre, const TexturedPlane& plane,
                        double gain, double offset) {
    const int w = cam.width, h = cam.height;
    // Every sample's ray first (one batch unprojection for distorted cameras).
    std::vector<float> xy(static_cast<std::size_t>(w) * h * 8);
    std::size_t k = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int s = 0; s < 4; ++s) {
                xy[k++] = static_cast<float>(x + ((s & 1) ? 0.25 : -0.25));
                xy[k++] = static_cast<float>(y + ((s & 2) ? 0.25 : -0.25));
            }
    const std::size_t count = xy.size() / 2;
    std::vector<Point2d> rays(count);
    if (cam.model == CameraModel::Pinhole) {
        for (std::size_t i = 0; i < count; ++i) rays[i] = {(xy[2 * i] - cam.cx) / cam.fx, (xy[2 * i + 1] - cam.cy) / cam.fy};
    } else {
        std::vector<UnprojectStatus> status(count);
        unproject_cpu(cam, xy.data(), static_cast<int>(count), rays.data(), status.data());
    }
    HostImage img(w, h);
    k = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double sum = 0.0;
            for (int s = 0; s < 4; ++s, ++k) {
                const Vec3 dir = mul_t(R_cl, {{rays[k].x, rays[k].y, 1.0}});
                const Vec3 X = hit(plane, centre, dir);
                if (!std::isfinite(X[0])) {
                    sum += 128.0;  // no plane there (or an unprojectable sample): flat grey
                    continue;
                }
                const Vec3 d = sub(X, plane.origin);
                sum += plane_texture(dot(d, plane.u) * plane.texels_per_metre, dot(d, plane.v) * plane.texels_per_metre,
                                     plane.seed);
            }
            const double v = gain * (sum * 0.25) + offset;
            img.at(x, y) = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
    return img;
}

/// An orthonormal pair spanning the plane with normal n.
void plane_basis(const Vec3& n, Vec3& u, Vec3& v) {
    const Vec3 nn = normalized(n);
    const Vec3 a = std::abs(nn[1]) < 0.9 ? Vec3{{0, 1, 0}} : Vec3{{1, 0, 0}};
    v = normalized(sub(a, scale(nn, dot(a, nn))));  // "down" in the plane, as close to the image's y as can be
    u = cross(v, nn);
}

Camera pinhole(int w, int h, double f, double cx, double cy) {
    Camera c;
    c.model = CameraModel::Pinhole;
    c.width = w;
    c.height = h;
    c.fx = c.fy = f;
    c.cx = cx;
    c.cy = cy;
    return c;
}

StereoScene rectified(int w, int h, double focal, double baseline) {
    StereoScene s;
    const double cx = (w - 1) * 0.5, cy = (h - 1) * 0.5;
    s.rig = rectified_rig(focal, cx, cy, baseline);
    s.left_cam = s.right_cam = pinhole(w, h, focal, cx, cy);
    s.t_rl = {{-baseline, 0, 0}};  // the right camera is `baseline` to the right: X_right = X_left - (b, 0, 0)
    return s;
}

}  // namespace

Mat3 rotation_deg(double ax, double ay, double az, double degrees) {
    const Vec3 a = normalized({{ax, ay, az}});
    const double th = degrees * 3.14159265358979323846 / 180.0, c = std::cos(th), s = std::sin(th), C = 1 - c;
    return {{c + a[0] * a[0] * C, a[0] * a[1] * C - a[2] * s, a[0] * a[2] * C + a[1] * s,
             a[1] * a[0] * C + a[2] * s, c + a[1] * a[1] * C, a[1] * a[2] * C - a[0] * s,
             a[2] * a[0] * C - a[1] * s, a[2] * a[1] * C + a[0] * s, c + a[2] * a[2] * C}};
}

double plane_texture(double s, double t, std::uint32_t seed) {
    // Octaves: period (texels) and weight. The coarse ones give LK a basin of several pixels, the fine ones
    // corners for FAST and gradients for sub-pixel accuracy.
    static constexpr double kPeriod[5] = {40.0, 16.0, 8.0, 4.5, 2.5};
    static constexpr double kWeight[5] = {0.8, 1.0, 1.0, 0.8, 0.45};
    double v = 0.0;
    for (int o = 0; o < 5; ++o)
        v += kWeight[o] * (value_noise(s / kPeriod[o], t / kPeriod[o], seed * 7919u + static_cast<std::uint32_t>(o)) - 0.5);
    return std::clamp(128.0 + 120.0 * v, 12.0, 243.0);
}

Point2d StereoScene::right_of(double x, double y) const {
    const Point2d r = ray_of(left_cam, x, y);
    if (!std::isfinite(r.x)) return {kNaN, kNaN};
    const Vec3 X = hit(plane, {{0, 0, 0}}, {{r.x, r.y, 1.0}});
    if (!std::isfinite(X[0])) return {kNaN, kNaN};
    const Vec3 Xr = add(mul(R_rl, X), t_rl);
    if (!(Xr[2] > 0)) return {kNaN, kNaN};
    return project(right_cam, {Xr[0] / Xr[2], Xr[1] / Xr[2]});
}

double StereoScene::disparity(double x, double y) const { return x - right_of(x, y).x; }

double StereoScene::depth(double x, double y) const {
    const Point2d r = ray_of(left_cam, x, y);
    if (!std::isfinite(r.x)) return kNaN;
    return hit(plane, {{0, 0, 0}}, {{r.x, r.y, 1.0}})[2];
}

void render(StereoScene& s, double right_gain, double right_offset) {
    const Mat3 I{{1, 0, 0, 0, 1, 0, 0, 0, 1}};
    s.left = render_camera(s.left_cam, I, {{0, 0, 0}}, s.plane, 1.0, 0.0);
    const Vec3 centre_r = scale(mul_t(s.R_rl, s.t_rl), -1.0);  // the right camera's centre in the left frame
    s.right = render_camera(s.right_cam, s.R_rl, centre_r, s.plane, right_gain, right_offset);
}

StereoScene frontal_scene(int width, int height, double disparity, std::uint32_t seed, double focal) {
    const double f = focal > 0 ? focal : 0.9 * width;
    StereoScene s = rectified(width, height, f, 0.1);
    const double Z = f * 0.1 / disparity;
    s.plane.origin = {{0.013, -0.007, Z}};
    s.plane.u = {{1, 0, 0}};
    s.plane.v = {{0, 1, 0}};
    s.plane.texels_per_metre = f / Z;  // one texel per pixel
    s.plane.seed = seed;
    render(s);
    return s;
}

StereoScene slanted_scene(int width, int height, double d_centre, double d_dx, double d_dy, std::uint32_t seed) {
    const double f = 0.9 * width, b = 0.1;
    StereoScene s = rectified(width, height, f, b);
    // disparity = f b / Z and, on the plane n . X = 1, 1 / Z = n . ((x - cx) / f, (y - cy) / f, 1): so
    // n = (d_dx / b, d_dy / b, d_centre / (f b)) gives disparity = d_centre + d_dx (x - cx) + d_dy (y - cy).
    const Vec3 n{{d_dx / b, d_dy / b, d_centre / (f * b)}};
    s.plane.origin = scale(n, 1.0 / dot(n, n));
    plane_basis(n, s.plane.u, s.plane.v);
    s.plane.texels_per_metre = f * d_centre / (f * b);  // f / Z at the centre
    s.plane.seed = seed;
    render(s);
    return s;
}

StereoScene raw_scene(int width, int height, double degrees, bool distorted, std::uint32_t seed) {
    StereoScene s;
    s.left_cam = pinhole(width, height, 0.86 * width, 0.5 * width + 3.1, 0.5 * height - 2.7);
    s.left_cam.fy = 0.855 * width;
    s.right_cam = pinhole(width, height, 0.87 * width, 0.5 * width - 2.3, 0.5 * height + 1.9);
    s.right_cam.fy = 0.868 * width;
    if (distorted) {  // EuRoC-like (cam0: -0.28, 0.07, 2e-4, 2e-5), each camera its own
        s.left_cam.model = s.right_cam.model = CameraModel::PinholeRadtan;
        const double dl[5] = {-0.28, 0.074, 1.9e-4, 1.8e-5, 0};
        const double dr[5] = {-0.27, 0.068, -1.1e-4, 3.0e-5, 0};
        std::copy(dl, dl + 5, s.left_cam.d);
        std::copy(dr, dr + 5, s.right_cam.d);
    }
    // Mostly a yaw toward the left camera (it takes part of the disparity away), some pitch and roll: the
    // images are far from row-aligned.
    s.R_rl = rotation_deg(0.3, 1.0, 0.4, degrees);
    const Vec3 centre_r{{0.11, 0.003, -0.002}};  // the right camera's centre in the left camera's frame
    s.t_rl = scale(mul(s.R_rl, centre_r), -1.0);
    s.rig.type = RigType::Raw;
    s.rig.left = s.left_cam;
    s.rig.right = s.right_cam;
    s.rig.R_rl = s.R_rl;
    s.rig.t_rl = s.t_rl;
    const Mat3 Rp = rotation_deg(0.4, 1.0, 0.0, 18.0);
    s.plane.origin = {{0.05, 0.02, 1.6}};
    s.plane.u = mul(Rp, {{1, 0, 0}});
    s.plane.v = mul(Rp, {{0, 1, 0}});
    s.plane.texels_per_metre = s.left_cam.fx / 1.6;
    s.plane.seed = seed;
    render(s);
    return s;
}

std::vector<StereoScene> stereo_sequence(const StereoScene& first, int frames, const Vec3& step, double yaw_deg) {
    if (frames < 1) throw std::invalid_argument("stereo_sequence: frames must be >= 1");
    std::vector<StereoScene> out;
    out.push_back(first);
    for (int k = 1; k < frames; ++k) {
        StereoScene s = first;
        // Frame k's left camera in the world (= frame 0's left camera): X_world = R_k X_cam + c_k.
        const Mat3 R_k = rotation_deg(0, 1, 0, k * yaw_deg);
        const Vec3 c_k = scale(step, k);
        s.plane.origin = mul_t(R_k, sub(first.plane.origin, c_k));
        s.plane.u = mul_t(R_k, first.plane.u);
        s.plane.v = mul_t(R_k, first.plane.v);
        render(s);
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace kestrel::test
