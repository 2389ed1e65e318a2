// The stereo tracker's plain data: validation of the rig and the configuration, names, the rig constructors.
#include <cmath>
#include <string>

#include "kestrel/camera.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stereo_tracker.hpp"

namespace kestrel {

const char* to_string(StereoStatus s) {
    switch (s) {
        case StereoStatus::Matched: return "Matched";
        case StereoStatus::NoMatch: return "NoMatch";
        case StereoStatus::Inconsistent: return "Inconsistent";
        case StereoStatus::OffEpipolar: return "OffEpipolar";
        case StereoStatus::OutOfRange: return "OutOfRange";
    }
    return "unknown";
}

const char* to_string(RigType t) {
    switch (t) {
        case RigType::Rectified: return "Rectified";
        case RigType::Raw: return "Raw";
    }
    return "unknown";
}

StereoRig rectified_rig(double focal, double cx, double cy, double baseline) {
    StereoRig r;
    r.type = RigType::Rectified;
    r.focal = focal;
    r.cx = cx;
    r.cy = cy;
    r.baseline = baseline;
    validate(r, "rectified_rig");
    return r;
}

StereoRig rig_from_body_poses(const Camera& left, const std::array<double, 16>& T_BS_left, const Camera& right,
                              const std::array<double, 16>& T_BS_right) {
    const char* where = "rig_from_body_poses";
    for (int i = 0; i < 16; ++i) {
        detail::check(std::isfinite(T_BS_left[static_cast<std::size_t>(i)]), where, "T_BS_left", "must be finite");
        detail::check(std::isfinite(T_BS_right[static_cast<std::size_t>(i)]), where, "T_BS_right", "must be finite");
    }
    // T_rl = inv(T_BS_right) * T_BS_left: R_rl = R_r^T R_l, t_rl = R_r^T (t_l - t_r).
    const auto R = [](const std::array<double, 16>& T, int i, int j) { return T[static_cast<std::size_t>(4 * i + j)]; };
    StereoRig rig;
    rig.type = RigType::Raw;
    rig.left = left;
    rig.right = right;
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) {
            double s = 0;
            for (int k = 0; k < 3; ++k) s += R(T_BS_right, k, i) * R(T_BS_left, k, j);
            rig.R_rl[static_cast<std::size_t>(3 * i + j)] = s;
        }
        double s = 0;
        for (int k = 0; k < 3; ++k) s += R(T_BS_right, k, i) * (R(T_BS_left, k, 3) - R(T_BS_right, k, 3));
        rig.t_rl[static_cast<std::size_t>(i)] = s;
    }
    validate(rig, where);
    return rig;
}

void validate(const StereoRig& rig, const char* where) {
    const std::string w(where);
    if (rig.type == RigType::Rectified) {
        detail::check_range(where, "focal", rig.focal, 1e-6, 1e9);
        detail::check(std::isfinite(rig.cx), where, "cx", "must be finite");
        detail::check(std::isfinite(rig.cy), where, "cy", "must be finite");
        detail::check_range(where, "baseline", rig.baseline, 1e-12, 1e12);
        return;
    }
    detail::check(rig.type == RigType::Raw, where, "type", "must be RigType::Rectified or RigType::Raw");
    validate(rig.left, (w + ".left").c_str());
    validate(rig.right, (w + ".right").c_str());
    for (double v : rig.R_rl) detail::check(std::isfinite(v), where, "R_rl", "must be finite");
    for (double v : rig.t_rl) detail::check(std::isfinite(v), where, "t_rl", "must be finite");
    // R_rl R_rl^T = I and det = +1, within 1e-6.
    double worst = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            double s = 0;
            for (int k = 0; k < 3; ++k) s += rig.R_rl[static_cast<std::size_t>(3 * i + k)] * rig.R_rl[static_cast<std::size_t>(3 * j + k)];
            worst = std::fmax(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
        }
    const auto& r = rig.R_rl;
    const double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) + r[2] * (r[3] * r[7] - r[4] * r[6]);
    detail::check(worst <= 1e-6 && std::fabs(det - 1.0) <= 1e-6, where, "R_rl",
                  "must be a rotation (orthonormal, det +1, within 1e-6): |R R^T - I| = " + detail::to_text(worst) +
                      ", det = " + detail::to_text(det));
    const double n = std::sqrt(rig.t_rl[0] * rig.t_rl[0] + rig.t_rl[1] * rig.t_rl[1] + rig.t_rl[2] * rig.t_rl[2]);
    detail::check(n > 1e-12, where, "t_rl", "must not be zero (the cameras must be apart)");
}

void validate(const StereoConfig& cfg, const char* where) {
    const std::string w(where);
    validate(cfg.tracker, (w + ".tracker").c_str());
    validate(cfg.match.lk, (w + ".match.lk").c_str());
    const PyramidConfig& a = cfg.tracker.lk.pyramid;
    const PyramidConfig& b = cfg.match.lk.pyramid;
    detail::check(a.scale == b.scale, where, "match.lk.pyramid.scale",
                  "= " + detail::to_text(b.scale) + " must equal tracker.lk.pyramid.scale = " + detail::to_text(a.scale) +
                      " (both images' pyramids are built once and shared)");
    detail::check(cfg.match.lk.template_source == TemplateSource::PreviousFrame, where, "match.lk.template_source",
                  "must be TemplateSource::PreviousFrame (the template is the left image of the same frame)");
    const StereoMatchConfig& m = cfg.match;
    detail::check_range(where, "match.refine_levels", m.refine_levels, 0, b.levels);
    detail::check(std::isfinite(m.epipolar_tolerance) && m.epipolar_tolerance > 0.0f && m.epipolar_tolerance <= 100.0f,
                  where, "match.epipolar_tolerance", "= " + detail::to_text(m.epipolar_tolerance) + " must be in (0, 100]");
    detail::check(std::isfinite(m.max_round_trip) && m.max_round_trip > 0.0f && m.max_round_trip <= 100.0f, where,
                  "match.max_round_trip", "= " + detail::to_text(m.max_round_trip) + " must be in (0, 100]");
    detail::check(std::isfinite(m.trust_distance) && m.trust_distance >= 0.0f && m.trust_distance <= 100.0f, where,
                  "match.trust_distance", "= " + detail::to_text(m.trust_distance) + " must be in [0, 100]");
    detail::check_range(where, "match.max_disparity", m.max_disparity, -16383.0f, 16383.0f);
    detail::check(std::isfinite(m.min_disparity) && m.min_disparity >= -16383.0f && m.min_disparity < m.max_disparity,
                  where, "match.min_disparity",
                  "= " + detail::to_text(m.min_disparity) + " must be in [-16383, max_disparity = " +
                      detail::to_text(m.max_disparity) + ")");
}

}  // namespace kestrel
