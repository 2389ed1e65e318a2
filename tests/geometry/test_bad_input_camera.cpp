// Bad input at the camera-model entry points (docs/bad-input.md, "Camera models"): each row is one bad call,
// the exception it must raise (InvalidArgument naming the field and its bound, or StateError), then a good
// call that must work: unproject_cpu on EuRoC cam0, checked against the single-point unproject (the device
// rows: a DeviceUnprojector built and run, checked against unproject_cpu, on a GPU only).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bad_input_util.hpp"
#include "camera_test_util.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/device_image.hpp"

namespace kestrel {
namespace {

using test::Case;
using test::invalid;
using test::Row;
using test::state;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// The good call: unproject_cpu on EuRoC cam0 over a small grid equals the single-point form.
void expect_unprojects() {
    const Camera c = test::euroc_cam0();
    const std::vector<float> xy = test::image_grid(c, 9);
    const int n = static_cast<int>(xy.size() / 2);
    std::vector<Point2d> out(n);
    std::vector<UnprojectStatus> st(n);
    unproject_cpu(c, xy.data(), n, out.data(), st.data());
    for (int i = 0; i < n; ++i) {
        const Unprojection u = unproject(c, {xy[2 * i], xy[2 * i + 1]});
        ASSERT_EQ(st[i], UnprojectStatus::Ok);
        ASSERT_EQ(u.status, UnprojectStatus::Ok);
        EXPECT_EQ(out[i].x, u.normalized.x);
        EXPECT_EQ(out[i].y, u.normalized.y);
    }
}

/// The good call of the device rows: a DeviceUnprojector on EuRoC cam0 agrees with unproject_cpu.
void expect_device_unprojects() {
    const Camera c = test::euroc_cam0();
    const std::vector<float> xy = test::image_grid(c, 9);
    const int n = static_cast<int>(xy.size() / 2);
    DeviceUnprojector dev(c, n);
    std::vector<Point2d> gpu(n), cpu(n);
    std::vector<UnprojectStatus> gs(n), cs(n);
    dev.unproject(xy.data(), n, gpu.data(), gs.data());
    unproject_cpu(c, xy.data(), n, cpu.data(), cs.data());
    for (int i = 0; i < n; ++i) {
        ASSERT_EQ(gs[i], cs[i]);
        EXPECT_NEAR(gpu[i].x, cpu[i].x, 1e-6);  // EuRoC's normalized coordinates are below 2: absolute 1e-6
        EXPECT_NEAR(gpu[i].y, cpu[i].y, 1e-6);
    }
}

/// A row whose bad call unprojects one pixel with the camera `spoil` made invalid.
Row camera_row(std::string id, std::string param, std::string text, std::function<void(Camera&)> spoil) {
    return invalid(std::move(id), std::move(param), std::move(text), [spoil] {
        return Case{[spoil] {
                        Camera c = test::euroc_cam0();
                        spoil(c);
                        float xy[2] = {10.0f, 10.0f};
                        Point2d out;
                        UnprojectStatus st;
                        unproject_cpu(c, xy, 1, &out, &st);
                    },
                    expect_unprojects};
    });
}

/// A free-function row: bad and good calls share nothing.
Row fn(std::string id, std::string param, std::string text, std::function<void()> bad,
       std::function<void()> good = expect_unprojects, bool good_needs_gpu = false) {
    return invalid(std::move(id), std::move(param), std::move(text), [bad, good] { return Case{bad, good}; },
                   good_needs_gpu);
}

std::vector<Row> camera_rows() {
    std::vector<Row> rows;
    rows.push_back(camera_row("camera_model_unknown", "model", "is not one of",
                              [](Camera& c) { c.model = static_cast<CameraModel>(3); }));
    rows.push_back(camera_row("camera_width_zero", "width", "[1, 16383]", [](Camera& c) { c.width = 0; }));
    rows.push_back(camera_row("camera_height_too_large", "height", "[1, 16383]", [](Camera& c) { c.height = 16384; }));
    rows.push_back(camera_row("camera_fx_negative", "fx", "[0.001, 1e+07]", [](Camera& c) { c.fx = -458.654; }));
    rows.push_back(camera_row("camera_fy_nan", "fy", "must be finite", [](Camera& c) { c.fy = kNaN; }));
    rows.push_back(camera_row("camera_cx_infinite", "cx", "must be finite", [](Camera& c) { c.cx = kInf; }));
    rows.push_back(camera_row("camera_cy_too_large", "cy", "[-240.5, 719.5]", [](Camera& c) { c.cy = 1e8; }));
    // The principal point: within the 752x480 image extended by half its size on each side.
    rows.push_back(camera_row("camera_cx_far_outside_the_image", "cx", "[-376.5, 1127.5]: the principal point must lie "
                              "within the image (width 752 px)", [](Camera& c) { c.cx = 5000.0; }));
    rows.push_back(camera_row("camera_cy_far_outside_the_image", "cy", "[-240.5, 719.5]: the principal point must lie "
                              "within the image (height 480 px)", [](Camera& c) { c.cy = -3000.0; }));
    rows.push_back(camera_row("camera_cx_just_past_the_margin", "cx", "[-376.5, 1127.5]",
                              [](Camera& c) { c.cx = 1127.51; }));
    rows.push_back(camera_row("camera_cy_just_past_the_margin", "cy", "[-240.5, 719.5]",
                              [](Camera& c) { c.cy = -240.51; }));
    rows.push_back(camera_row("radtan_k1_too_large", "k1", "[-1000, 1000]", [](Camera& c) { c.d[0] = -2000.0; }));
    rows.push_back(camera_row("radtan_k2_nan", "k2", "must be finite", [](Camera& c) { c.d[1] = kNaN; }));
    rows.push_back(camera_row("radtan_p1_infinite", "p1", "must be finite", [](Camera& c) { c.d[2] = kInf; }));
    rows.push_back(camera_row("radtan_p2_too_large", "p2", "[-1000, 1000]", [](Camera& c) { c.d[3] = 1e4; }));
    rows.push_back(camera_row("radtan_k3_too_large", "k3", "[-1000, 1000]", [](Camera& c) { c.d[4] = 1e6; }));
    rows.push_back(camera_row("fisheye_k4_nan", "k4", "must be finite", [](Camera& c) {
        c = test::tumvi_cam0();
        c.d[3] = kNaN;
    }));
    rows.push_back(camera_row("fisheye_fifth_coefficient_nonzero", "d[4]", "must be 0 for the Fisheye model",
                              [](Camera& c) {
                                  c = test::tumvi_cam0();
                                  c.d[4] = 0.01;
                              }));
    rows.push_back(camera_row("pinhole_coefficient_nonzero", "d[0]", "must be 0 for the Pinhole model", [](Camera& c) {
        c.model = CameraModel::Pinhole;
        for (double& d : c.d) d = 0.0;
        c.d[0] = 0.1;
    }));
    const auto cfg_call = [](UndistortConfig cfg) {
        return [cfg] {
            float xy[2] = {10.0f, 10.0f};
            Point2d out;
            UnprojectStatus st;
            unproject_cpu(test::euroc_cam0(), xy, 1, &out, &st, cfg);
        };
    };
    UndistortConfig it0;
    it0.max_iterations = 0;
    UndistortConfig it101;
    it101.max_iterations = 101;
    UndistortConfig tol0;
    tol0.tolerance = 0.0;
    UndistortConfig tol_big;
    tol_big.tolerance = 0.01;
    UndistortConfig tol_nan;
    tol_nan.tolerance = kNaN;
    rows.push_back(fn("undistort_max_iterations_zero", "max_iterations", "[1, 100]", cfg_call(it0)));
    rows.push_back(fn("undistort_max_iterations_101", "max_iterations", "[1, 100]", cfg_call(it101)));
    rows.push_back(fn("undistort_tolerance_zero", "tolerance", "[1e-15, 0.001]", cfg_call(tol0)));
    rows.push_back(fn("undistort_tolerance_too_large", "tolerance", "[1e-15, 0.001]", cfg_call(tol_big)));
    rows.push_back(fn("undistort_tolerance_nan", "tolerance", "must be finite", cfg_call(tol_nan)));
    const auto batch = [](const float* xy, int n, Point2d* out, UnprojectStatus* st) {
        return [=] { unproject_cpu(test::euroc_cam0(), xy, n, out, st); };
    };
    static float xy[2] = {1.0f, 2.0f};
    static Point2d out;
    static UnprojectStatus st;
    rows.push_back(fn("unproject_cpu_count_negative", "count", "[0, 16777216]", batch(xy, -1, &out, &st)));
    rows.push_back(fn("unproject_cpu_count_too_large", "count", "[0, 16777216]", batch(xy, (1 << 24) + 1, &out, &st)));
    rows.push_back(fn("unproject_cpu_xy_null", "xy", "must not be null", batch(nullptr, 1, &out, &st)));
    rows.push_back(fn("unproject_cpu_normalized_null", "normalized", "must not be null", batch(xy, 1, nullptr, &st)));
    rows.push_back(fn("unproject_cpu_status_null", "status", "must not be null", batch(xy, 1, &out, nullptr)));
    rows.push_back(fn("project_fx_zero", "fx", "[0.001, 1e+07]", [] {
        Camera c = test::euroc_cam0();
        c.fx = 0.0;
        project(c, {0.1, 0.1});
    }));
    rows.push_back(fn("unproject_tolerance_negative", "tolerance", "[1e-15, 0.001]", [] {
        UndistortConfig cfg;
        cfg.tolerance = -1e-12;
        unproject(test::euroc_cam0(), {1.0, 1.0}, cfg);
    }));
    // Device object: validated before any CUDA call (the bad half runs everywhere, the good half on a GPU).
    rows.push_back(fn("device_unprojector_capacity_zero", "capacity", "[1, 16777216]",
                      [] { DeviceUnprojector(test::euroc_cam0(), 0); }, expect_device_unprojects, true));
    rows.push_back(fn("device_unprojector_capacity_too_large", "capacity", "[1, 16777216]",
                      [] { DeviceUnprojector(test::euroc_cam0(), (1 << 24) + 1); }, expect_device_unprojects, true));
    rows.push_back(fn("device_unprojector_camera_invalid", "fy", "[0.001, 1e+07]", [] {
        Camera c = test::euroc_cam0();
        c.fy = -1.0;
        DeviceUnprojector(c, 16);
    }, expect_device_unprojects, true));
    rows.push_back(state("device_unprojector_empty", "DeviceUnprojector::unproject_async", [] {
        return Case{[] {
                        DeviceUnprojector empty;
                        empty.unproject_async(nullptr, 0, nullptr, nullptr, nullptr);
                    },
                    expect_unprojects};
    }));
    return rows;
}

class BadInputCamera : public ::testing::TestWithParam<Row> {};

TEST_P(BadInputCamera, ThrowsNamingParameterAndBoundThenWorks) { test::run_row(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Rows, BadInputCamera, ::testing::ValuesIn(camera_rows()), test::row_name);

// Not an error: a principal point off the image, up to half the image's size past each edge (a calibration
// off-centre, a crop), is accepted at the bound itself, for every model, and projects as the model says.
TEST(CameraPrincipalPoint, AcceptedUpToTheMarginPastTheImage) {
    EXPECT_EQ(principal_point_range(752).lo, -376.5);
    EXPECT_EQ(principal_point_range(752).hi, 1127.5);
    EXPECT_EQ(principal_point_range(1).lo, -1.0);
    EXPECT_EQ(principal_point_range(1).hi, 1.0);
    for (Camera c : {test::euroc_cam0(), test::tumvi_cam0()}) {
        for (const double cx : {principal_point_range(c.width).lo, principal_point_range(c.width).hi})
            for (const double cy : {principal_point_range(c.height).lo, principal_point_range(c.height).hi}) {
                c.cx = cx;
                c.cy = cy;
                EXPECT_NO_THROW(validate(c)) << "cx " << cx << " cy " << cy;
                const Point2d p = project(c, {0.0, 0.0});  // the axis projects onto the principal point
                EXPECT_EQ(p.x, cx);
                EXPECT_EQ(p.y, cy);
            }
    }
}

}  // namespace
}  // namespace kestrel
