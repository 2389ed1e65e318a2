// Test helpers of the geometry suites: realistic calibrations (EuRoC, TUM-VI-like, wide-angle, odd sizes)
// and the pixels generated over a whole image.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "kestrel/camera_types.hpp"

namespace kestrel::test {

struct NamedCamera {
    std::string name;
    Camera cam;
};

inline Camera radtan(int w, int h, double fx, double fy, double cx, double cy, double k1, double k2, double p1,
                     double p2, double k3 = 0.0) {
    Camera c;
    c.model = CameraModel::PinholeRadtan;
    c.width = w;
    c.height = h;
    c.fx = fx;
    c.fy = fy;
    c.cx = cx;
    c.cy = cy;
    c.d[0] = k1;
    c.d[1] = k2;
    c.d[2] = p1;
    c.d[3] = p2;
    c.d[4] = k3;
    return c;
}

inline Camera fisheye(int w, int h, double fx, double fy, double cx, double cy, double k1, double k2, double k3,
                      double k4) {
    Camera c = radtan(w, h, fx, fy, cx, cy, k1, k2, k3, k4);
    c.model = CameraModel::Fisheye;
    return c;
}

/// EuRoC MAV cam0 (sensor.yaml of the machine-hall sequences): radial-tangential, 752 x 480.
inline Camera euroc_cam0() {
    return radtan(752, 480, 458.654, 457.296, 367.215, 248.375, -0.28340811, 0.07395907, 0.00019359, 1.76187114e-05);
}

/// TUM-VI-like equidistant fisheye, 512 x 512 (its corners lie beyond 90 degrees: OutsideModel there).
inline Camera tumvi_cam0() {
    return fisheye(512, 512, 190.97, 190.98, 254.93, 256.90, 0.0034823894, 0.00071503, -0.0020532361, 0.00020293673);
}

/// The calibrations every suite runs: realistic ones and odd sizes, every model.
inline std::vector<NamedCamera> test_cameras() {
    Camera pinhole;
    pinhole.model = CameraModel::Pinhole;
    pinhole.width = 640;
    pinhole.height = 480;
    pinhole.fx = 525.0;
    pinhole.fy = 525.0;
    pinhole.cx = 319.5;
    pinhole.cy = 239.5;
    return {
        {"euroc_cam0", euroc_cam0()},
        {"euroc_cam1", radtan(752, 480, 457.587, 456.134, 379.999, 255.238, -0.28368365, 0.07451284, -0.00010473,
                              -3.55590700e-05)},
        {"wide_radtan_k3", radtan(640, 480, 320.0, 321.5, 318.3, 242.1, -0.3, 0.12, 0.001, -0.0005, 0.01)},
        {"odd_radtan_33x17", radtan(33, 17, 21.1, 20.7, 16.2, 7.9, -0.21, 0.05, 0.002, -0.001, 0.003)},
        {"tumvi_fisheye", tumvi_cam0()},
        {"odd_fisheye_641x479", fisheye(641, 479, 280.3, 279.9, 322.6, 236.4, -0.013, 0.046, -0.071, 0.034)},
        {"pinhole_640x480", pinhole},
        {"pinhole_1x1", [] {
             Camera c;
             c.width = 1;
             c.height = 1;
             c.fx = 1.5;
             c.fy = 2.5;
             c.cx = 0.0;
             c.cy = 0.0;
             return c;
         }()},
    };
}

/// Pixels over the whole image, corners and edges included: n x n positions from -0.5 to size - 0.5
/// (the outer edges of the border pixels), n = min(size + 1, max_per_axis), interleaved (x, y).
inline std::vector<float> image_grid(const Camera& c, int max_per_axis = 97) {
    const int nu = std::min(c.width + 1, max_per_axis), nv = std::min(c.height + 1, max_per_axis);
    std::vector<float> xy;
    xy.reserve(static_cast<std::size_t>(2 * nu * nv));
    for (int j = 0; j < nv; ++j)
        for (int i = 0; i < nu; ++i) {
            const double u = nu == 1 ? 0.0 : -0.5 + static_cast<double>(c.width) * i / (nu - 1);
            const double v = nv == 1 ? 0.0 : -0.5 + static_cast<double>(c.height) * j / (nv - 1);
            xy.push_back(static_cast<float>(u));
            xy.push_back(static_cast<float>(v));
        }
    return xy;
}

}  // namespace kestrel::test
