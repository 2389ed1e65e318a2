// libFuzzer target: the camera models' CPU side. An arbitrary Camera (model, size, intrinsics, distortion
// coefficients, NaN / infinities / huge values among them) and UndistortConfig go through validate(); when
// accepted, arbitrary pixels (NaN, infinities, far outside the image) through unproject_cpu, unproject and
// project. Invariants: a rejected camera or configuration throws InvalidArgument naming its parameter; every
// status is one of UnprojectStatus's; an Ok point is finite, any other has NaN coordinates; the batch equals
// the single-point form; for the pinhole and radtan models an Ok point projects back onto its pixel within
// max(fx, fy) * tolerance plus rounding (the stop rule, docs/geometry.md). Any other exception, crash, hang
// or sanitizer report is a bug.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "kestrel/camera.hpp"

using namespace kestrel;

namespace {

/// A double drawn as fparam over [lo, hi] (NaN, infinities, bit patterns included).
double dparam(fuzz::Input& in, double lo, double hi) {
    return static_cast<double>(in.fparam(static_cast<float>(lo), static_cast<float>(hi)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    Camera c;
    c.model = static_cast<CameraModel>(in.param(0, 2));
    c.width = in.param(1, 2000);
    c.height = in.param(1, 2000);
    c.fx = dparam(in, 1.0, 2000.0);
    c.fy = dparam(in, 1.0, 2000.0);
    c.cx = dparam(in, -100.0, 2100.0);
    c.cy = dparam(in, -100.0, 2100.0);
    const bool big = in.flag();
    for (double& d : c.d) d = in.flag() ? 0.0 : dparam(in, big ? -1000.0 : -1.0, big ? 1000.0 : 1.0);
    UndistortConfig cfg;
    if (in.flag()) {
        cfg.max_iterations = in.param(1, 100);
        cfg.tolerance = dparam(in, 1e-15, 1e-3);
    }
    try {
        validate(c);
        validate(cfg);
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return 0;
    }
    const int n = in.range(0, 64);
    std::vector<float> xy(static_cast<std::size_t>(2 * n));
    for (float& v : xy) v = in.fparam(-0.25f * static_cast<float>(std::max(c.width, c.height)), 1.25f * static_cast<float>(std::max(c.width, c.height)));
    std::vector<Point2d> out(static_cast<std::size_t>(n));
    std::vector<UnprojectStatus> st(static_cast<std::size_t>(n));
    unproject_cpu(c, xy.data(), n, out.data(), st.data(), cfg);
    for (int i = 0; i < n; ++i) {
        const int s = static_cast<int>(st[i]);
        FUZZ_CHECK(s >= 0 && s <= 3);
        if (st[i] == UnprojectStatus::Ok) {
            FUZZ_CHECK(std::isfinite(out[i].x) && std::isfinite(out[i].y));
        } else {
            FUZZ_CHECK(std::isnan(out[i].x) && std::isnan(out[i].y));
        }
        const double u = xy[2 * i], v = xy[2 * i + 1];
        if (!std::isfinite(u) || !std::isfinite(v)) FUZZ_CHECK(st[i] == UnprojectStatus::NonFinite);
        const Unprojection one = unproject(c, {u, v}, cfg);
        FUZZ_CHECK(one.status == st[i]);
        if (st[i] != UnprojectStatus::Ok) continue;
        FUZZ_CHECK(one.normalized.x == out[i].x && one.normalized.y == out[i].y);
        const Point2d p = project(c, out[i]);
        if (c.model == CameraModel::Fisheye) continue;  // tan/atan rounding: no tight bound here
        const double eps = std::numeric_limits<double>::epsilon();
        const double bx = c.fx * cfg.tolerance * 1.001 + 16 * eps * (std::fabs(u) + std::fabs(c.cx) + c.fx * (std::fabs((u - c.cx) / c.fx) + 1.0));
        const double by = c.fy * cfg.tolerance * 1.001 + 16 * eps * (std::fabs(v) + std::fabs(c.cy) + c.fy * (std::fabs((v - c.cy) / c.fy) + 1.0));
        if (!(std::fabs(p.x - u) <= bx && std::fabs(p.y - v) <= by)) {
            std::fprintf(stderr, "pixel (%.17g, %.17g) -> (%.17g, %.17g) -> (%.17g, %.17g)\n", u, v, out[i].x, out[i].y,
                         p.x, p.y);
            FUZZ_CHECK(!"an Ok point projects back onto its pixel");
        }
    }
    return 0;
}
