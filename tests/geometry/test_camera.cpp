// The camera models on the CPU against independent answers: the model equations written out in plain
// double code, project o unproject round trips over the whole image of several realistic calibrations
// (EuRoC radtan, TUM-VI-like fisheye, a wide radtan with k3, pinhole, odd sizes), normalized round trips,
// the radtan Jacobian against numeric derivatives, the flags of points without a valid preimage (fold,
// behind the camera, non-finite, not converged), the batch against the single-point form, and every
// invalid field named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "camera_test_util.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/detail/camera_rules.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"

namespace kestrel {
namespace {

using test::NamedCamera;

// ---- the model equations, written out independently of the rules -------------------------------
Point2d distort_ref(const Camera& c, double x, double y) {
    if (c.model == CameraModel::PinholeRadtan) {
        const double k1 = c.d[0], k2 = c.d[1], p1 = c.d[2], p2 = c.d[3], k3 = c.d[4];
        const double r2 = x * x + y * y;
        const double radial = 1.0 + k1 * r2 + k2 * r2 * r2 + k3 * r2 * r2 * r2;
        return {x * radial + 2.0 * p1 * x * y + p2 * (r2 + 2.0 * x * x),
                y * radial + p1 * (r2 + 2.0 * y * y) + 2.0 * p2 * x * y};
    }
    if (c.model == CameraModel::Fisheye) {
        const double r = std::hypot(x, y);
        if (r == 0.0) return {x, y};
        const double t = std::atan2(r, 1.0);
        const double td = t * (1.0 + c.d[0] * std::pow(t, 2) + c.d[1] * std::pow(t, 4) + c.d[2] * std::pow(t, 6) +
                               c.d[3] * std::pow(t, 8));
        return {x * td / r, y * td / r};
    }
    return {x, y};
}

Point2d project_ref(const Camera& c, double x, double y) {
    const Point2d d = distort_ref(c, x, y);
    return {c.fx * d.x + c.cx, c.fy * d.y + c.cy};
}

/// Fisheye: theta_d at theta = pi/2, the largest distorted radius a ray in front of the camera reaches
/// (the test calibrations are monotone up to there).
double fisheye_theta_d_at_right_angle(const Camera& c) {
    const double t = std::acos(0.0);
    return t * (1.0 + c.d[0] * t * t + c.d[1] * std::pow(t, 4) + c.d[2] * std::pow(t, 6) + c.d[3] * std::pow(t, 8));
}

/// The status a pixel must get on the test calibrations: Ok, except fisheye pixels beyond 90 degrees
/// (decided with a margin; pixels within it of the boundary are not judged).
bool expected_ok(const Camera& c, double u, double v, bool* judged) {
    *judged = true;
    if (c.model != CameraModel::Fisheye) return true;
    const double rd = std::hypot((u - c.cx) / c.fx, (v - c.cy) / c.fy);
    const double limit = fisheye_theta_d_at_right_angle(c);
    if (std::fabs(rd - limit) < 1e-3) *judged = false;
    return rd < limit;
}

TEST(CameraModel, ProjectMatchesTheModelEquations) {
    for (const NamedCamera& nc : test::test_cameras()) {
        SCOPED_TRACE(nc.name);
        double worst = 0.0;
        for (int j = -10; j <= 10; ++j)
            for (int i = -10; i <= 10; ++i) {
                const double x = 0.12 * i, y = 0.09 * j;  // up to 50 degrees off the axis
                const Point2d p = project(nc.cam, {x, y});
                const Point2d r = project_ref(nc.cam, x, y);
                worst = std::max({worst, std::fabs(p.x - r.x), std::fabs(p.y - r.y)});
            }
        EXPECT_LE(worst, 1e-9) << "pixels";
    }
}

TEST(CameraModel, KnownAnswers) {
    // Pinhole: exact inverse.
    Camera pin;
    pin.width = 640;
    pin.height = 480;
    pin.fx = 500.0;
    pin.fy = 400.0;
    pin.cx = 320.0;
    pin.cy = 240.0;
    const Unprojection u = unproject(pin, {320.0 + 500.0 * 0.25, 240.0 - 400.0 * 0.5});
    EXPECT_EQ(u.status, UnprojectStatus::Ok);
    EXPECT_EQ(u.normalized.x, 0.25);
    EXPECT_EQ(u.normalized.y, -0.5);
    // The principal point is the axis for every model.
    for (const NamedCamera& nc : test::test_cameras()) {
        const Unprojection c = unproject(nc.cam, {nc.cam.cx, nc.cam.cy});
        EXPECT_EQ(c.status, UnprojectStatus::Ok) << nc.name;
        EXPECT_EQ(c.normalized.x, 0.0) << nc.name;
        EXPECT_EQ(c.normalized.y, 0.0) << nc.name;
    }
    // Fisheye: the ray at 45 degrees on the x axis lands at theta_d = theta (1 + k1 theta^2 + ...), theta = pi/4.
    const Camera f = test::tumvi_cam0();
    const double t = std::atan(1.0);
    const double td = t * (1 + f.d[0] * t * t + f.d[1] * std::pow(t, 4) + f.d[2] * std::pow(t, 6) + f.d[3] * std::pow(t, 8));
    const Point2d p = project(f, {1.0, 0.0});
    EXPECT_NEAR(p.x, f.fx * td + f.cx, 1e-10);
    EXPECT_EQ(p.y, f.cy);
    const Unprojection back = unproject(f, p);
    ASSERT_EQ(back.status, UnprojectStatus::Ok);
    EXPECT_NEAR(back.normalized.x, 1.0, 1e-12);
    EXPECT_NEAR(back.normalized.y, 0.0, 1e-15);
}

// Every pixel of a grid over the whole image (outer edges of the border pixels included): unprojected, Ok
// where a preimage exists, and projected back onto itself.
TEST(CameraModel, RoundTripOverTheWholeImage) {
    for (const NamedCamera& nc : test::test_cameras()) {
        SCOPED_TRACE(nc.name);
        const std::vector<float> xy = test::image_grid(nc.cam);
        const int n = static_cast<int>(xy.size() / 2);
        std::vector<Point2d> out(n);
        std::vector<UnprojectStatus> st(n);
        unproject_cpu(nc.cam, xy.data(), n, out.data(), st.data());
        double worst = 0.0;
        int ok = 0, outside = 0, wrong = 0;
        for (int i = 0; i < n; ++i) {
            const double u = xy[2 * i], v = xy[2 * i + 1];
            bool judged = true;
            const bool want_ok = expected_ok(nc.cam, u, v, &judged);
            if (st[i] == UnprojectStatus::Ok) {
                ++ok;
                const Point2d p = project(nc.cam, out[i]);
                worst = std::max({worst, std::fabs(p.x - u), std::fabs(p.y - v)});
            } else {
                outside += st[i] == UnprojectStatus::OutsideModel;
                EXPECT_TRUE(std::isnan(out[i].x) && std::isnan(out[i].y)) << "invalid points carry NaN";
            }
            if (judged && want_ok != (st[i] == UnprojectStatus::Ok) && ++wrong <= 5)
                ADD_FAILURE() << "pixel (" << u << ", " << v << "): status " << to_string(st[i]) << ", expected "
                              << (want_ok ? "Ok" : "OutsideModel");
        }
        std::printf("[ geometry ] %-20s %6d pixels: %6d Ok, %5d OutsideModel, max reprojection error %.3g px\n",
                    nc.name.c_str(), n, ok, outside, worst);
        EXPECT_GT(ok, 0);
        EXPECT_LE(worst, 1e-7) << "pixels";
    }
}

// The stop rule is met within a few Newton steps (quadratic convergence): with max_iterations = 6 every pixel of
// a 161 x 161 grid gets the status it gets with the default 20.
TEST(CameraModel, ConvergesInFewNewtonSteps) {
    UndistortConfig six;
    six.max_iterations = 6;
    for (const NamedCamera& nc : test::test_cameras()) {
        SCOPED_TRACE(nc.name);
        const std::vector<float> xy = test::image_grid(nc.cam, 161);
        const int n = static_cast<int>(xy.size() / 2);
        std::vector<Point2d> a(n), b(n);
        std::vector<UnprojectStatus> sa(n), sb(n);
        unproject_cpu(nc.cam, xy.data(), n, a.data(), sa.data());
        unproject_cpu(nc.cam, xy.data(), n, b.data(), sb.data(), six);
        int differ = 0;
        for (int i = 0; i < n; ++i) differ += sa[i] != sb[i];
        EXPECT_EQ(differ, 0);
    }
}

// Normalized points inside the field of view: projected, then unprojected back to themselves.
TEST(CameraModel, NormalizedRoundTrip) {
    for (const NamedCamera& nc : test::test_cameras()) {
        SCOPED_TRACE(nc.name);
        double worst = 0.0;
        for (int j = -12; j <= 12; ++j)
            for (int i = -12; i <= 12; ++i) {
                const double x = 0.05 * i, y = 0.04 * j;
                const Point2d p = project(nc.cam, {x, y});
                const Unprojection u = unproject(nc.cam, p);
                ASSERT_EQ(u.status, UnprojectStatus::Ok) << "(" << x << ", " << y << ")";
                worst = std::max({worst, std::fabs(u.normalized.x - x), std::fabs(u.normalized.y - y)});
            }
        EXPECT_LE(worst, 1e-10) << "normalized units";
    }
}

TEST(CameraRules, RadtanJacobianMatchesNumericDerivative) {
    const Camera c = test::euroc_cam0();
    detail::CameraSetup s{};
    s.model = static_cast<std::int32_t>(c.model);
    for (int i = 0; i < 5; ++i) s.k[i] = c.d[i];
    s.dk[0] = c.d[0];
    s.dk[1] = 2 * c.d[1];
    s.dk[2] = 3 * c.d[4];
    s.p2x[0] = 2 * c.d[2];
    s.p2x[1] = 2 * c.d[3];
    s.p2x[2] = 6 * c.d[2];
    s.p2x[3] = 6 * c.d[3];
    const double h = 1e-6;
    for (double x : {-0.9, -0.3, 0.0, 0.4, 1.1})
        for (double y : {-0.6, 0.0, 0.2, 0.7}) {
            const detail::RadtanEval e = detail::radtan_eval(s, x, y, true);
            const detail::RadtanEval xp = detail::radtan_eval(s, x + h, y, false), xm = detail::radtan_eval(s, x - h, y, false);
            const detail::RadtanEval yp = detail::radtan_eval(s, x, y + h, false), ym = detail::radtan_eval(s, x, y - h, false);
            EXPECT_NEAR(e.a, (xp.xd - xm.xd) / (2 * h), 1e-8);
            EXPECT_NEAR(e.b, (yp.xd - ym.xd) / (2 * h), 1e-8);
            EXPECT_NEAR(e.b, (xp.yd - xm.yd) / (2 * h), 1e-8);
            EXPECT_NEAR(e.d, (yp.yd - ym.yd) / (2 * h), 1e-8);
            const Point2d r = distort_ref(c, x, y);
            EXPECT_NEAR(e.xd, r.x, 1e-14);
            EXPECT_NEAR(e.yd, r.y, 1e-14);
        }
}

TEST(CameraModel, FlagsPointsWithoutValidPreimage) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    const Camera e = test::euroc_cam0();
    for (Point2d bad : {Point2d{nan, 10.0}, Point2d{10.0, inf}, Point2d{-inf, nan}}) {
        const Unprojection u = unproject(e, bad);
        EXPECT_EQ(u.status, UnprojectStatus::NonFinite);
        EXPECT_TRUE(std::isnan(u.normalized.x) && std::isnan(u.normalized.y));
    }
    // Radial k1 = -0.5: r (1 - 0.5 r^2) folds at r^2 = 2/3, where the distorted radius peaks at
    // sqrt(2/3) * 2/3 = 0.5443. Below it: the preimage inside the fold; beyond it: none.
    const Camera fold = test::radtan(640, 480, 100.0, 100.0, 320.0, 240.0, -0.5, 0.0, 0.0, 0.0);
    const Unprojection in = unproject(fold, {320.0 + 54.0, 240.0});
    ASSERT_EQ(in.status, UnprojectStatus::Ok);
    EXPECT_LT(in.normalized.x * in.normalized.x, 2.0 / 3.0);
    EXPECT_NEAR(in.normalized.x * (1 - 0.5 * in.normalized.x * in.normalized.x), 0.54, 1e-12);
    for (Point2d p : {Point2d{320.0 + 55.0, 240.0}, Point2d{320.0, 240.0 - 80.0}, Point2d{0.0, 0.0}}) {
        const Unprojection u = unproject(fold, p);
        EXPECT_EQ(u.status, UnprojectStatus::OutsideModel) << p.x << ", " << p.y;
        EXPECT_TRUE(std::isnan(u.normalized.x));
    }
    // Fisheye: a pixel whose ray would be beyond 90 degrees.
    const Camera f = test::tumvi_cam0();
    const double rd = fisheye_theta_d_at_right_angle(f) + 0.01;
    EXPECT_EQ(unproject(f, {f.cx + f.fx * rd, f.cy}).status, UnprojectStatus::OutsideModel);
    EXPECT_EQ(unproject(f, {f.cx + f.fx * (rd - 0.02), f.cy}).status, UnprojectStatus::Ok);
    // Not converged: one Newton step cannot reach 1e-15 at EuRoC's corner.
    UndistortConfig one;
    one.max_iterations = 1;
    one.tolerance = 1e-15;
    const Unprojection nc = unproject(e, {0.0, 0.0}, one);
    EXPECT_EQ(nc.status, UnprojectStatus::NotConverged);
    EXPECT_TRUE(std::isnan(nc.normalized.x));
    EXPECT_EQ(unproject(e, {0.0, 0.0}).status, UnprojectStatus::Ok);
}

TEST(CameraBatch, EqualsTheSinglePointFormAndChecksArguments) {
    const Camera c = test::euroc_cam0();
    std::vector<float> xy = test::image_grid(c, 31);
    xy.push_back(std::numeric_limits<float>::quiet_NaN());
    xy.push_back(1.0f);
    const int n = static_cast<int>(xy.size() / 2);
    std::vector<Point2d> out(n);
    std::vector<UnprojectStatus> st(n);
    unproject_cpu(c, xy.data(), n, out.data(), st.data());
    for (int i = 0; i < n; ++i) {
        const Unprojection u = unproject(c, {xy[2 * i], xy[2 * i + 1]});
        ASSERT_EQ(u.status, st[i]);
        if (u.status == UnprojectStatus::Ok) {
            EXPECT_EQ(u.normalized.x, out[i].x);
            EXPECT_EQ(u.normalized.y, out[i].y);
        }
    }
    EXPECT_EQ(st.back(), UnprojectStatus::NonFinite);
    unproject_cpu(c, nullptr, 0, nullptr, nullptr);  // count 0: nothing to do, nothing checked
    const auto expect_param = [](const std::function<void()>& f, const std::string& param, const std::string& text) {
        try {
            f();
            ADD_FAILURE() << "no exception for " << param;
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.parameter(), param);
            EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
        }
    };
    expect_param([&] { unproject_cpu(c, xy.data(), -1, out.data(), st.data()); }, "count", "outside [0, 16777216]");
    expect_param([&] { unproject_cpu(c, nullptr, 1, out.data(), st.data()); }, "xy", "must not be null");
    expect_param([&] { unproject_cpu(c, xy.data(), 1, nullptr, st.data()); }, "normalized", "must not be null");
    expect_param([&] { unproject_cpu(c, xy.data(), 1, out.data(), nullptr); }, "status", "must not be null");
}

struct BadField {
    std::string param;
    std::string text;
    std::function<void(Camera&)> spoil;
};

TEST(CameraValidate, EachInvalidFieldIsNamed) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<BadField> rows = {
        {"model", "is not one of", [](Camera& c) { c.model = static_cast<CameraModel>(7); }},
        {"width", "outside [1, 16383]", [](Camera& c) { c.width = 0; }},
        {"height", "outside [1, 16383]", [](Camera& c) { c.height = 16384; }},
        {"fx", "outside [0.001, 1e+07]", [](Camera& c) { c.fx = -458.0; }},
        {"fy", "must be finite", [nan](Camera& c) { c.fy = nan; }},
        {"cx", "outside [-376.5, 1127.5]", [](Camera& c) { c.cx = 2e7; }},
        {"cy", "must be finite", [](Camera& c) { c.cy = std::numeric_limits<double>::infinity(); }},
        {"k1", "outside [-1000, 1000]", [](Camera& c) { c.d[0] = -1e4; }},
        {"k2", "must be finite", [nan](Camera& c) { c.d[1] = nan; }},
        {"p1", "outside [-1000, 1000]", [](Camera& c) { c.d[2] = 2e3; }},
        {"p2", "must be finite", [nan](Camera& c) { c.d[3] = nan; }},
        {"k3", "outside [-1000, 1000]", [](Camera& c) { c.d[4] = 1e5; }},
    };
    for (const BadField& r : rows) {
        SCOPED_TRACE(r.param);
        Camera c = test::euroc_cam0();
        r.spoil(c);
        try {
            validate(c);
            ADD_FAILURE() << "no exception";
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.parameter(), r.param);
            EXPECT_NE(std::string(e.what()).find(r.text), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find("Camera"), std::string::npos) << e.what();
        }
        // Every entry point validates.
        EXPECT_THROW(project(c, {0.0, 0.0}), InvalidArgument);
        EXPECT_THROW(unproject(c, {0.0, 0.0}), InvalidArgument);
        float xy[2] = {1.0f, 1.0f};
        Point2d out;
        UnprojectStatus st;
        EXPECT_THROW(unproject_cpu(c, xy, 1, &out, &st), InvalidArgument);
        EXPECT_THROW(DeviceUnprojector(c, 16), InvalidArgument);
    }
    // Coefficients a model does not have must be zero; the fisheye names k1..k4.
    Camera f = test::tumvi_cam0();
    f.d[3] = nan;
    try {
        validate(f);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "k4");
    }
    f = test::tumvi_cam0();
    f.d[4] = 0.1;
    try {
        validate(f);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "d[4]");
        EXPECT_NE(std::string(e.what()).find("must be 0 for the Fisheye model"), std::string::npos) << e.what();
    }
    Camera p = test::test_cameras().back().cam;  // pinhole
    p.d[2] = 0.01;
    try {
        validate(p);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "d[2]");
    }
    for (const NamedCamera& nc : test::test_cameras()) EXPECT_NO_THROW(validate(nc.cam)) << nc.name;
}

TEST(CameraValidate, UndistortConfigBounds) {
    const Camera c = test::euroc_cam0();
    UndistortConfig cfg;
    EXPECT_NO_THROW(validate(cfg));
    cfg.max_iterations = 0;
    try {
        unproject(c, {1.0, 1.0}, cfg);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "max_iterations");
        EXPECT_NE(std::string(e.what()).find("outside [1, 100]"), std::string::npos) << e.what();
    }
    cfg = UndistortConfig{};
    cfg.tolerance = 0.0;
    try {
        unproject(c, {1.0, 1.0}, cfg);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "tolerance");
        EXPECT_NE(std::string(e.what()).find("outside [1e-15, 0.001]"), std::string::npos) << e.what();
    }
}

// Without a usable device (a build without CUDA, or no GPU) the device class validates first, then says why it
// cannot run; an empty object answers with StateError.
TEST(DeviceUnprojectorHost, ValidatesThenNeedsADevice) {
    const Camera c = test::euroc_cam0();
    EXPECT_THROW(DeviceUnprojector(c, 0), InvalidArgument);
    EXPECT_THROW(DeviceUnprojector(c, kMaxUnprojectPoints + 1), InvalidArgument);
    if (!cuda_available()) {
        EXPECT_THROW(DeviceUnprojector(c, 16), NoDeviceError);
    }
    DeviceUnprojector empty;
    EXPECT_THROW(empty.capacity(), StateError);
    EXPECT_THROW(empty.unproject(nullptr, 0, nullptr, nullptr), StateError);
}

}  // namespace
}  // namespace kestrel
