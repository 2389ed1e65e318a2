// The camera-model rules shared verbatim by the CPU reference (src/geometry/camera_cpu.cpp) and the CUDA
// kernel (kernels/geometry/unproject.cu): distortion, projection and the iterative undistortion.
// Equations and the convergence bound: docs/geometry.md.
//
// Precision: double on both sides. Every operation goes through dmul/dadd/dsub/ddiv/dfma/dsqrt below: the
// IEEE round-to-nearest operations on both sides (on the device __dmul_rn & co., which nvcc never
// contracts into FMA; where a formula fuses a * b + c it says so with dfma, rounded once on both sides:
// __fma_rn / std::fma). The radial-tangential and pinhole models use nothing else, so the CPU and GPU
// results are bit-identical. The fisheye model also needs atan (projection) and tan (the last step of the
// undistortion), which come from each side's math library (glibc: < 1 ulp; CUDA: <= 2 ulp): its results
// agree to a few ulp (relative ~1e-15), far inside the stated 1e-6 normalized units
// (relative beyond 1).
//
// Undistortion (both models): Newton's method on the distortion map, from the distorted point itself:
//   radtan:  solve D(x) = xd for x in R^2 (D: the radial-tangential map, J its exact 2x2 Jacobian,
//            x <- x - J^-1 (D(x) - xd)); Kalibr's RadialTangentialDistortion::undistort runs the same
//            Gauss-Newton iteration; OpenCV's undistortPoints a fixed-point one.
//   fisheye: solve theta * (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8) = theta_d for theta,
//            theta_d = |xd|, then x = xd * tan(theta) / theta_d (Kannala & Brandt 2006; the Newton
//            iteration of OpenCV's cv::fisheye::undistortPoints).
// Stop rule (the convergence bound): a point is Ok only when the residual |D(x) - xd| (radtan) or
// |theta_d(theta) - theta_d| (fisheye), evaluated at the returned iterate, is <= tolerance; after
// reprojection that is at most max(fx, fy) * tolerance pixels. Newton converges quadratically once the
// iterate is close (the map is smooth with an invertible Jacobian inside the valid region), so a tolerance
// of 1e-12 takes at most 5 Newton steps on the test calibrations; NotConverged after max_iterations.
// Valid region: the map must be invertible. Radtan: r^2 = |x|^2 < max_r2, the first fold of the radial
// map r -> r (1 + k1 r^2 + k2 r^4 + k3 r^6) (where its derivative reaches 0; +inf if it never does),
// with det J > 0 and the radial factor > 0 at the solution. Fisheye: 0 <= theta < max_theta =
// min(pi/2, the first fold of theta -> theta_d). An iterate that would leave the region is moved half way
// back towards the previous one (at most kCamMaxHalvings times). Points with no preimage in the region are
// OutsideModel; nothing invalid is returned as a number (the coordinates are NaN).
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/camera_types.hpp"
#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

constexpr int kCamMaxHalvings = 60;  // step halvings that pull an iterate back into the valid region

// ---- double operations: the exact ones (dmul, dadd, dsub, ddiv, dfma, dsqrt) are in detail/exact_float.hpp
/// The math libraries' atan and tan (not correctly rounded: the one source of CPU/GPU differences).
KESTREL_HD double datan(double a) {
#if defined(__CUDA_ARCH__)
    return ::atan(a);
#else
    return std::atan(a);
#endif
}
KESTREL_HD double dtan(double a) {
#if defined(__CUDA_ARCH__)
    return ::tan(a);
#else
    return std::tan(a);
#endif
}
KESTREL_HD double dsin(double a) {
#if defined(__CUDA_ARCH__)
    return ::sin(a);
#else
    return std::sin(a);
#endif
}
KESTREL_HD double dcos(double a) {
#if defined(__CUDA_ARCH__)
    return ::cos(a);
#else
    return std::cos(a);
#endif
}
KESTREL_HD double dnan() {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(0x7ff8000000000000LL);
#else
    return std::nan("");
#endif
}
KESTREL_HD bool dfinite(double v) { return (v == v) & (v - v == 0.0); }  // false for NaN and +-inf

// ---- setup --------------------------------------------------------------------------------------
/// Everything the rules need from a Camera and an UndistortConfig, resolved once on the host
/// (src/geometry/camera_config.cpp, make_camera_setup) and passed by value.
struct CameraSetup {
    std::int32_t model;  // CameraModel
    double fx, fy, cx, cy;
    double k[5];       // radtan: k1, k2, p1, p2, k3; fisheye: k1, k2, k3, k4, 0
    double dk[4];      // radtan: k1, 2 k2, 3 k3 (d radial / d r^2); fisheye: 3 k1, 5 k2, 7 k3, 9 k4 (d theta_d / d theta)
    double p2x[4];     // radtan: 2 p1, 2 p2, 6 p1, 6 p2
    double max_r2;     // radtan: the valid region r^2 < max_r2 (+inf: no fold)
    double max_theta;  // fisheye: the valid region 0 <= theta < max_theta
    double max_theta_ray;  // fisheye, bearings: 0 <= theta < the first fold up to pi (also behind the image plane)
    double max_rd2_ray;    // the squared distorted radius there
    double max_rd2;    // the squared distorted radius at the fold (+inf: none): beyond it no preimage exists
    std::int32_t max_iterations;
    double tolerance;
};

// ---- radial-tangential --------------------------------------------------------------------------
/// The radial factor 1 + k1 r2 + k2 r2^2 + k3 r2^3 (Horner, fused).
KESTREL_HD double radtan_radial(const CameraSetup& s, double r2) {
    return dfma(r2, dfma(r2, dfma(r2, s.k[4], s.k[1]), s.k[0]), 1.0);
}

/// d(r * radial(r^2)) / dr expressed in s = r^2: 1 + 3 k1 s + 5 k2 s^2 + 7 k3 s^3 (the fold search's function).
KESTREL_HD double radtan_fold_function(const CameraSetup& s, double r2) {
    return dfma(r2, dfma(r2, dfma(r2, dmul(7.0, s.k[4]), dmul(5.0, s.k[1])), dmul(3.0, s.k[0])), 1.0);
}

/// Radial-tangential distortion of normalized (x, y) (OpenCV's and Kalibr's model):
///   xd = x radial + 2 p1 x y + p2 (r^2 + 2 x^2),   yd = y radial + p1 (r^2 + 2 y^2) + 2 p2 x y.
/// With jac != nullptr also the Jacobian [[a, b], [b, d]] (symmetric) and the radial factor.
struct RadtanEval {
    double xd, yd;
    double a, b, d;  // J = [[dxd/dx, dxd/dy], [dyd/dx, dyd/dy]], dxd/dy = dyd/dx = b
    double radial;
};
KESTREL_HD RadtanEval radtan_eval(const CameraSetup& s, double x, double y, bool with_jacobian) {
    const double p1 = s.k[2], p2 = s.k[3];
    const double x2 = dmul(x, x), y2 = dmul(y, y), xy = dmul(x, y);
    const double r2 = dadd(x2, y2);
    RadtanEval e{};
    e.radial = radtan_radial(s, r2);
    const double tx = dfma(s.p2x[0], xy, dmul(p2, dfma(2.0, x2, r2)));  // 2 p1 xy + p2 (r2 + 2 x2)
    const double ty = dfma(s.p2x[1], xy, dmul(p1, dfma(2.0, y2, r2)));  // 2 p2 xy + p1 (r2 + 2 y2)
    e.xd = dfma(x, e.radial, tx);
    e.yd = dfma(y, e.radial, ty);
    if (with_jacobian) {
        // radial' = d radial / d r2 = k1 + 2 k2 r2 + 3 k3 r2^2; d r2 / dx = 2 x.
        const double two_dr = dmul(2.0, dfma(r2, dfma(r2, s.dk[2], s.dk[1]), s.dk[0]));
        e.a = dadd(dfma(two_dr, x2, e.radial), dfma(s.p2x[0], y, dmul(s.p2x[3], x)));  // + 2 p1 y + 6 p2 x
        e.b = dfma(two_dr, xy, dfma(s.p2x[0], x, dmul(s.p2x[1], y)));                  // 2 p1 x + 2 p2 y
        e.d = dadd(dfma(two_dr, y2, e.radial), dfma(s.p2x[2], y, dmul(s.p2x[1], x)));  // + 6 p1 y + 2 p2 x
    }
    return e;
}

// ---- equidistant fisheye ------------------------------------------------------------------------
/// theta_d = theta (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8).
KESTREL_HD double fisheye_theta_d(const CameraSetup& s, double theta) {
    const double t2 = dmul(theta, theta);
    return dmul(theta, dfma(t2, dfma(t2, dfma(t2, dfma(t2, s.k[3], s.k[2]), s.k[1]), s.k[0]), 1.0));
}
/// d theta_d / d theta = 1 + 3 k1 theta^2 + 5 k2 theta^4 + 7 k3 theta^6 + 9 k4 theta^8.
KESTREL_HD double fisheye_dtheta_d(const CameraSetup& s, double theta) {
    const double t2 = dmul(theta, theta);
    return dfma(t2, dfma(t2, dfma(t2, dfma(t2, s.dk[3], s.dk[2]), s.dk[1]), s.dk[0]), 1.0);
}

// ---- distortion and projection ------------------------------------------------------------------
/// Distorted normalized coordinates of normalized (x, y) under the setup's model.
KESTREL_HD Point2d distort(const CameraSetup& s, double x, double y) {
    if (s.model == static_cast<std::int32_t>(CameraModel::PinholeRadtan)) {
        const RadtanEval e = radtan_eval(s, x, y, false);
        return {e.xd, e.yd};
    }
    if (s.model == static_cast<std::int32_t>(CameraModel::Fisheye)) {
        const double r2 = dadd(dmul(x, x), dmul(y, y));
        if (r2 == 0.0) return {x, y};  // the limit theta_d / r -> 1 on the axis
        const double r = dsqrt(r2);
        const double scale = ddiv(fisheye_theta_d(s, datan(r)), r);
        return {dmul(x, scale), dmul(y, scale)};
    }
    return {x, y};
}

/// Pixel of normalized (x, y): u = fx xd + cx, v = fy yd + cy.
KESTREL_HD Point2d project_point(const CameraSetup& s, double x, double y) {
    const Point2d d = distort(s, x, y);
    return {dfma(s.fx, d.x, s.cx), dfma(s.fy, d.y, s.cy)};
}

// ---- pixels per radian (the relative pose's per-point threshold) ---------------------------------
/// How many pixels one radian of a bearing's motion moves its image at the direction (x, y, z) (any length;
/// z <= 0 only for the fisheye model, else NaN): the geometric mean of the radial and the tangential
/// magnification (the square root of the local area scale), with f = (fx + fy) / 2.
///   pinhole / radtan (p1, p2 ignored): r = tan(theta), rd = r radial(r^2): radial f (d rd / d r)(1 + r^2),
///   tangential f radial(r^2) sqrt(1 + r^2);
///   fisheye: radial f d theta_d / d theta, tangential f theta_d / sin(theta) (f on the axis).
/// NaN where the model folds (a magnification <= 0) or the direction is zero or not finite.
KESTREL_HD double pixels_per_radian_at(const CameraSetup& s, double x, double y, double z) {
    const double f = dmul(0.5, dadd(s.fx, s.fy));
    const double sn = dsqrt(dadd(dmul(x, x), dmul(y, y)));
    const double len = dsqrt(dadd(dmul(sn, sn), dmul(z, z)));
    if (!(len > 0.0) || !dfinite(len)) return dnan();
    double radial, tangential;
    if (s.model == static_cast<std::int32_t>(CameraModel::Fisheye)) {
        const double half_pi = 1.5707963267948966;
        const double theta = z > 0.0 ? datan(ddiv(sn, z)) : dsub(half_pi, datan(ddiv(z, sn)));
        radial = fisheye_dtheta_d(s, theta);
        tangential = sn > 1e-12 * len ? ddiv(fisheye_theta_d(s, theta), ddiv(sn, len)) : 1.0;
    } else {
        if (!(z > 0.0)) return dnan();
        const double r = ddiv(sn, z), r2 = dmul(r, r);
        double rad = 1.0, drad = 0.0;
        if (s.model == static_cast<std::int32_t>(CameraModel::PinholeRadtan)) {
            rad = radtan_radial(s, r2);
            drad = dfma(r2, dfma(r2, s.dk[2], s.dk[1]), s.dk[0]);  // d radial / d r^2
        }
        const double sec2 = dadd(1.0, r2);
        radial = dmul(dfma(dmul(2.0, r2), drad, rad), sec2);  // (radial + 2 r^2 radial') (1 + r^2)
        tangential = dmul(rad, dsqrt(sec2));
    }
    const double prod = dmul(radial, tangential);
    if (!(prod > 0.0)) return dnan();
    return dmul(f, dsqrt(prod));
}

// ---- undistortion -------------------------------------------------------------------------------
KESTREL_HD bool within_tolerance(double e, double tol) { return (e <= tol) & (e >= -tol); }

/// Radtan: normalized (x, y) with D(x, y) = (xd, yd); the status says whether it is valid.
KESTREL_HD UnprojectStatus undistort_radtan(const CameraSetup& s, double xd, double yd, double& x, double& y) {
    const double tol2 = dmul(s.tolerance, s.tolerance);
    double px = 0.0, py = 0.0;  // previous iterate (the origin, whose image is the origin, for the start)
    double cx = xd, cy = yd;    // candidate
    for (int it = 0;; ++it) {
        // Keep the iterate inside the region: halve the step back towards the previous iterate.
        int h = 0;
        while (!(dadd(dmul(cx, cx), dmul(cy, cy)) < s.max_r2) && h < kCamMaxHalvings) {
            cx = dmul(0.5, dadd(cx, px));
            cy = dmul(0.5, dadd(cy, py));
            ++h;
        }
        if (!(dadd(dmul(cx, cx), dmul(cy, cy)) < s.max_r2)) return UnprojectStatus::OutsideModel;
        const RadtanEval e = radtan_eval(s, cx, cy, true);
        const double ex = dsub(e.xd, xd), ey = dsub(e.yd, yd);
        const double det = dfma(e.a, e.d, -dmul(e.b, e.b));
        if (!(det > 0.0) || !(e.radial > 0.0)) return UnprojectStatus::OutsideModel;  // fold (or NaN)
        if (dadd(dmul(ex, ex), dmul(ey, ey)) <= tol2) {
            x = cx;
            y = cy;
            return UnprojectStatus::Ok;
        }
        if (it >= s.max_iterations) break;
        // Newton: J (dx, dy) = (ex, ey), J = [[a, b], [b, d]].
        const double dx = ddiv(dfma(e.d, ex, -dmul(e.b, ey)), det);
        const double dy = ddiv(dfma(e.a, ey, -dmul(e.b, ex)), det);
        px = cx;
        py = cy;
        cx = dsub(cx, dx);
        cy = dsub(cy, dy);
        if (!dfinite(cx) || !dfinite(cy)) return UnprojectStatus::OutsideModel;
    }
    return dadd(dmul(xd, xd), dmul(yd, yd)) >= s.max_rd2 ? UnprojectStatus::OutsideModel
                                                         : UnprojectStatus::NotConverged;
}

/// Fisheye: normalized (x, y) whose equidistant distortion is (xd, yd).
/// theta with theta_d(theta) = theta_d (> 0) in the region 0 <= theta < max_theta: Newton started at theta_d, an
/// iterate outside the region moved half way back towards the previous one (at most kCamMaxHalvings times).
/// Not converged after s.max_iterations: OutsideModel when rd2 >= max_rd2 (no preimage), else NotConverged.
KESTREL_HD UnprojectStatus fisheye_theta(const CameraSetup& s, double theta_d, double rd2, double max_theta,
                                         double max_rd2, double& theta) {
    double prev = 0.0, th = theta_d;
    for (int it = 0;; ++it) {
        int h = 0;
        while (!((th >= 0.0) & (th < max_theta)) && h < kCamMaxHalvings) {
            th = dmul(0.5, dadd(th, prev));
            ++h;
        }
        if (!((th >= 0.0) & (th < max_theta))) return UnprojectStatus::OutsideModel;
        const double g = dsub(fisheye_theta_d(s, th), theta_d);
        if (within_tolerance(g, s.tolerance)) {
            theta = th;
            return UnprojectStatus::Ok;
        }
        if (it >= s.max_iterations) break;
        const double gp = fisheye_dtheta_d(s, th);
        if (!(gp > 0.0)) return UnprojectStatus::OutsideModel;
        prev = th;
        th = dsub(th, ddiv(g, gp));
        if (!dfinite(th)) return UnprojectStatus::OutsideModel;
    }
    return rd2 >= max_rd2 ? UnprojectStatus::OutsideModel : UnprojectStatus::NotConverged;
}

KESTREL_HD UnprojectStatus undistort_fisheye(const CameraSetup& s, double xd, double yd, double& x, double& y) {
    const double rd2 = dadd(dmul(xd, xd), dmul(yd, yd));
    if (rd2 == 0.0) {
        x = xd;
        y = yd;
        return UnprojectStatus::Ok;
    }
    const double theta_d = dsqrt(rd2);
    double th = 0.0;
    const UnprojectStatus st = fisheye_theta(s, theta_d, rd2, s.max_theta, s.max_rd2, th);
    if (st != UnprojectStatus::Ok) return st;
    const double scale = ddiv(dtan(th), theta_d);
    x = dmul(xd, scale);
    y = dmul(yd, scale);
    if (!dfinite(x) || !dfinite(y)) return UnprojectStatus::OutsideModel;
    return UnprojectStatus::Ok;
}

/// THE unprojection of pixel (ud, vd): the normalized point, or NaN and a status other than Ok. The CPU
/// reference and the kernel call exactly this (with float keypoint coordinates converted exactly to double).
KESTREL_HD UnprojectStatus unproject_pixel(const CameraSetup& s, double ud, double vd, Point2d& out) {
    out.x = dnan();
    out.y = dnan();
    if (!dfinite(ud) || !dfinite(vd)) return UnprojectStatus::NonFinite;
    const double xd = ddiv(dsub(ud, s.cx), s.fx);
    const double yd = ddiv(dsub(vd, s.cy), s.fy);
    double x = xd, y = yd;
    UnprojectStatus st = UnprojectStatus::Ok;
    if (s.model == static_cast<std::int32_t>(CameraModel::PinholeRadtan))
        st = undistort_radtan(s, xd, yd, x, y);
    else if (s.model == static_cast<std::int32_t>(CameraModel::Fisheye))
        st = undistort_fisheye(s, xd, yd, x, y);
    if (st == UnprojectStatus::Ok) {
        out.x = x;
        out.y = y;
    }
    return st;
}

/// The unit bearing vector (x, y, z) of pixel (ud, vd): pinhole and radtan through unproject_pixel, (x, y, 1)
/// normalized; fisheye through theta (up to the first fold of theta_d, beyond 90 degrees off the axis where the
/// lens sees that far): (sin(theta) xd / |xd|, sin(theta) yd / |xd|, cos(theta)). NaN and a status other than
/// Ok where the model has no ray. Uses each side's sin and cos for the fisheye (a few ulp apart).
KESTREL_HD UnprojectStatus unproject_bearing_pixel(const CameraSetup& s, double ud, double vd, double* b) {
    b[0] = b[1] = b[2] = dnan();
    if (!dfinite(ud) || !dfinite(vd)) return UnprojectStatus::NonFinite;
    if (s.model == static_cast<std::int32_t>(CameraModel::Fisheye)) {
        const double xd = ddiv(dsub(ud, s.cx), s.fx);
        const double yd = ddiv(dsub(vd, s.cy), s.fy);
        const double rd2 = dadd(dmul(xd, xd), dmul(yd, yd));
        if (rd2 == 0.0) {
            b[0] = 0.0;
            b[1] = 0.0;
            b[2] = 1.0;
            return UnprojectStatus::Ok;
        }
        const double theta_d = dsqrt(rd2);
        double th = 0.0;
        const UnprojectStatus st = fisheye_theta(s, theta_d, rd2, s.max_theta_ray, s.max_rd2_ray, th);
        if (st != UnprojectStatus::Ok) return st;
        const double sn = ddiv(dsin(th), theta_d);
        b[0] = dmul(xd, sn);
        b[1] = dmul(yd, sn);
        b[2] = dcos(th);
        return UnprojectStatus::Ok;
    }
    Point2d p;
    const UnprojectStatus st = unproject_pixel(s, ud, vd, p);
    if (st != UnprojectStatus::Ok) return st;
    // (x, y, 1) / |(x, y, 1)|, scaled first by its largest component (no overflow for far-off-axis points)
    const double ax = p.x < 0.0 ? -p.x : p.x, ay = p.y < 0.0 ? -p.y : p.y;
    const double m = ax > ay ? (ax > 1.0 ? ax : 1.0) : (ay > 1.0 ? ay : 1.0);
    const double x = ddiv(p.x, m), y = ddiv(p.y, m), z = ddiv(1.0, m);
    const double len = dsqrt(dadd(dadd(dmul(x, x), dmul(y, y)), dmul(z, z)));
    b[0] = ddiv(x, len);
    b[1] = ddiv(y, len);
    b[2] = ddiv(z, len);
    return UnprojectStatus::Ok;
}

}  // namespace kestrel::detail
