// Camera and UndistortConfig validation, and their resolution into the setup the CPU reference and the
// kernel share (derived coefficients, the valid region of the undistortion).
#include <cmath>
#include <limits>
#include <string>

#include "camera_internal.hpp"
#include "kestrel/detail/validate.hpp"
#include "kestrel/image.hpp"

namespace kestrel {

const char* to_string(CameraModel m) {
    switch (m) {
        case CameraModel::Pinhole: return "Pinhole";
        case CameraModel::PinholeRadtan: return "PinholeRadtan";
        case CameraModel::Fisheye: return "Fisheye";
    }
    return "unknown";
}

const char* to_string(UnprojectStatus s) {
    switch (s) {
        case UnprojectStatus::Ok: return "Ok";
        case UnprojectStatus::NonFinite: return "NonFinite";
        case UnprojectStatus::OutsideModel: return "OutsideModel";
        case UnprojectStatus::NotConverged: return "NotConverged";
    }
    return "unknown";
}

namespace {

constexpr double kMinFocal = 1e-3, kMaxFocal = 1e7;  // pixels

const char* const kRadtanNames[5] = {"k1", "k2", "p1", "p2", "k3"};
const char* const kFisheyeNames[5] = {"k1", "k2", "k3", "k4", "d[4]"};
const char* const kPinholeNames[5] = {"d[0]", "d[1]", "d[2]", "d[3]", "d[4]"};

}  // namespace

void validate(const Camera& cam, const char* where) {
    const int model = static_cast<int>(cam.model);
    detail::check(model >= 0 && model <= 2, where, "model",
                  "= " + detail::to_text(model) + " is not one of Pinhole (0), PinholeRadtan (1), Fisheye (2)");
    detail::check_range(where, "width", cam.width, 1, kMaxImageSide);
    detail::check_range(where, "height", cam.height, 1, kMaxImageSide);
    detail::check_range(where, "fx", cam.fx, kMinFocal, kMaxFocal);
    detail::check_range(where, "fy", cam.fy, kMinFocal, kMaxFocal);
    // The principal point: within the image extended by half its size on each side (principal_point_range).
    const auto principal = [where](const char* param, double v, int size, const char* side) {
        const PrincipalPointRange r = principal_point_range(size);
        if (!std::isfinite(v)) detail::fail(where, param, "= " + detail::to_text(v) + " must be finite");
        if (!(v >= r.lo && v <= r.hi))
            detail::fail(where, param,
                         "= " + detail::to_text(v) + " is outside [" + detail::to_text(r.lo) + ", " +
                             detail::to_text(r.hi) + "]: the principal point must lie within the image (" + side +
                             " " + detail::to_text(size) + " px) extended by half its " + side + " on each side");
    };
    principal("cx", cam.cx, cam.width, "width");
    principal("cy", cam.cy, cam.height, "height");
    const char* const* names = cam.model == CameraModel::PinholeRadtan ? kRadtanNames
                               : cam.model == CameraModel::Fisheye     ? kFisheyeNames
                                                                       : kPinholeNames;
    for (int i = 0; i < 5; ++i) {
        const bool unused = cam.model == CameraModel::Pinhole || (cam.model == CameraModel::Fisheye && i == 4);
        if (unused) {
            detail::check(cam.d[i] == 0.0, where, names[i],
                          "= " + detail::to_text(cam.d[i]) + " must be 0 for the " + to_string(cam.model) +
                              " model (it has no such coefficient)");
        } else {
            detail::check_range(where, names[i], cam.d[i], -kMaxDistortionCoefficient, kMaxDistortionCoefficient);
        }
    }
}

void validate(const UndistortConfig& cfg, const char* where) {
    detail::check_range(where, "max_iterations", cfg.max_iterations, 1, 100);
    detail::check_range(where, "tolerance", cfg.tolerance, 1e-15, 1e-3);
}

namespace detail {
namespace {

constexpr int kFoldGrid = 4096;  // grid of the fold search; a sign change is then refined by bisection

/// Smallest t > 0 with f(t) <= 0 (f(0) = 1), searched on the grid t_i = map(i / kFoldGrid), i = 1, 2, ... while
/// t_i < `none`, and refined by bisection to the last t with f(t) > 0; `none` when the grid has no such t.
template <typename F, typename Map>
double first_fold(F f, Map map, double none) {
    double prev = 0.0;
    for (int i = 1; i <= kFoldGrid; ++i) {
        const double t = map(static_cast<double>(i) / kFoldGrid);
        if (!(t < none)) break;
        if (!(f(t) > 0.0)) {
            double lo = prev, hi = t;
            for (int b = 0; b < 200 && lo < hi; ++b) {
                const double mid = 0.5 * (lo + hi);
                if (mid <= lo || mid >= hi) break;
                if (f(mid) > 0.0) lo = mid;
                else hi = mid;
            }
            return lo;
        }
        prev = t;
    }
    return none;
}

}  // namespace

CameraSetup make_camera_setup(const Camera& cam, const UndistortConfig& cfg, const char* where, bool region) {
    validate(cam, where);
    validate(cfg, where);
    const double inf = std::numeric_limits<double>::infinity();
    CameraSetup s{};
    s.model = static_cast<std::int32_t>(cam.model);
    s.fx = cam.fx;
    s.fy = cam.fy;
    s.cx = cam.cx;
    s.cy = cam.cy;
    for (int i = 0; i < 5; ++i) s.k[i] = cam.d[i];
    s.max_r2 = inf;
    s.max_theta = inf;
    s.max_rd2 = inf;
    s.max_theta_ray = inf;
    s.max_rd2_ray = inf;
    s.max_iterations = cfg.max_iterations;
    s.tolerance = cfg.tolerance;
    if (cam.model == CameraModel::PinholeRadtan) {
        s.dk[0] = cam.d[0];
        s.dk[1] = 2.0 * cam.d[1];
        s.dk[2] = 3.0 * cam.d[4];
        s.dk[3] = 0.0;
        s.p2x[0] = 2.0 * cam.d[2];
        s.p2x[1] = 2.0 * cam.d[3];
        s.p2x[2] = 6.0 * cam.d[2];
        s.p2x[3] = 6.0 * cam.d[3];
        if (!region) return s;
        // r -> r radial(r^2) folds where 1 + 3 k1 s + 5 k2 s^2 + 7 k3 s^3 (s = r^2) first reaches 0. The grid runs
        // over u in (0, 1), s = u / (1 - u): s up to 4095 (r <= 64, 89 degrees off the axis; a fold further out is
        // not searched), spaced 1e-3 near s = 1.
        const auto f = [&](double r2) { return radtan_fold_function(s, r2); };
        const double fold = first_fold(
            f, [inf](double u) { return u >= 1.0 ? inf : u / (1.0 - u); }, inf);
        if (fold < inf) {
            s.max_r2 = fold;
            const double rd = std::sqrt(fold) * radtan_radial(s, fold);
            s.max_rd2 = rd * rd;
        }
    } else if (cam.model == CameraModel::Fisheye) {
        for (int i = 0; i < 4; ++i) s.dk[i] = (2.0 * i + 3.0) * cam.d[i];  // 3 k1, 5 k2, 7 k3, 9 k4
        if (!region) return s;
        // theta -> theta_d folds where d theta_d / d theta first reaches 0; a ray must also stay in front (< pi/2).
        const double half_pi = std::acos(0.0);
        const auto f = [&](double theta) { return fisheye_dtheta_d(s, theta); };
        s.max_theta = first_fold(f, [&](double u) { return u * half_pi; }, half_pi);
        const double rd = fisheye_theta_d(s, s.max_theta);
        s.max_rd2 = rd * rd;
        // Bearings (unproject_bearing) may point behind the image plane: the region is the first fold up to pi.
        const double pi = 2.0 * half_pi;
        s.max_theta_ray = first_fold(f, [&](double u) { return u * pi; }, pi);
        const double rdr = fisheye_theta_d(s, s.max_theta_ray);
        s.max_rd2_ray = rdr * rdr;
    }
    return s;
}

void check_unproject_args(const char* where, const float* xy, int count, int capacity, const Point2d* normalized,
                          const UnprojectStatus* status) {
    check_range(where, "count", count, 0, capacity);
    if (count == 0) return;
    check(xy != nullptr, where, "xy", "must not be null when count > 0");
    check(normalized != nullptr, where, "normalized", "must not be null when count > 0");
    check(status != nullptr, where, "status", "must not be null when count > 0");
}

}  // namespace detail
}  // namespace kestrel
