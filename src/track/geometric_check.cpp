// FeatureTracker's geometric check, CPU path (src/track/geometric_check.hpp). Per frame:
//   1. the checked tracks (detail::geo_check_bearings: Tracked, both positions unprojected to unit bearings by the
//      camera, the pixels per radian at the new one) in track order;
//   2. one relative pose over them (RelativePoseEstimator on the CPU: the bearing entry for a fisheye, the
//      threshold converted per point, else the normalized points: five-point, or two-point with the frame's rotation
//      prior; with its rotation-only model, chosen when the camera did not translate);
//   3. when the check applies (detail::geo_check_applies: at least min_tracks checked, status Ok), every checked
//      track's evidence is updated against the deciding model and decides its end (detail::geo_evidence_update).
// The CUDA backend runs the same steps on the device (kernels/track/geo_check.cu and the estimator's device entry,
// bit-identical to its CPU backend); take() reads its summary. This file is compiled with -ffp-contract=off (the
// camera rules' double operations, as the kernel's --fmad=false).
#include "geometric_check.hpp"

#include <cstring>

#include "src/geometry/camera_internal.hpp"

namespace kestrel {

const char* to_string(CheckModel m) {
    switch (m) {
        case CheckModel::None: return "None";
        case CheckModel::Essential: return "Essential";
        case CheckModel::TwoPoint: return "TwoPoint";
        case CheckModel::RotationOnly: return "RotationOnly";
    }
    return "unknown";
}

namespace detail {

namespace {

CheckModel check_model(int pose_model) {
    switch (static_cast<PoseModel>(pose_model)) {
        case PoseModel::FivePoint: return CheckModel::Essential;
        case PoseModel::TwoPoint: return CheckModel::TwoPoint;
        case PoseModel::RotationOnly: return CheckModel::RotationOnly;
        case PoseModel::None: break;
    }
    return CheckModel::None;
}

}  // namespace

RelativePoseConfig geo_pose_config(const GeometricCheckConfig& c, PoseMethod method) {
    RelativePoseConfig p;
    p.focal_px = 0.5 * (c.camera.fx + c.camera.fy);
    p.threshold_px = c.threshold_px;
    p.confidence = c.confidence;
    p.max_hypotheses = c.max_hypotheses;
    p.seed = c.seed;
    p.method = method;
    p.refine = true;
    p.min_inliers = 8;
    p.rotation_only = true;
    return p;
}

GeoEvidenceRule geo_evidence_rule(const GeometricCheckConfig& c) {
    GeoEvidenceRule r;
    r.threshold = c.threshold_px;
    r.immediate = c.immediate_px;
    r.accumulated = c.accumulated_px;
    r.decay = c.decay;
    r.strikes = c.strikes;
    return r;
}

GeometricCheck::GeometricCheck(const GeometricCheckConfig& cfg, int capacity, bool cpu)
    : cfg_(cfg),
      cam_(make_camera_setup(cfg.camera, UndistortConfig{}, "FeatureTracker: geometric_check.camera")),
      rule_(geo_evidence_rule(cfg)) {
    if (!cpu) return;
    five_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::FivePoint), Backend::Cpu);
    two_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::TwoPointWithRotation),
                                                   Backend::Cpu);
    const auto c = static_cast<std::size_t>(capacity);
    b1_.resize(3 * c);
    b2_.resize(3 * c);
    ppr_.resize(c);
    d1_.resize(3 * c);
    d2_.resize(3 * c);
    dppr_.resize(c);
    index_.resize(c);
    plane_ = geo_check_on_plane(cam_);
    if (plane_) {
        n1_.resize(2 * c);
        n2_.resize(2 * c);
    }
}

const GeometricCheckResult& GeometricCheck::run(const TrackVerdict* v, const Point2f* origins, int n,
                                                const double* R_prior, GeoTrackEvidence* evidence,
                                                std::uint8_t* outlier) {
    res_ = GeometricCheckResult{};
    std::memset(outlier, 0, static_cast<std::size_t>(n));
    int m = 0;
    for (int i = 0; i < n; ++i) {
        const std::size_t k = static_cast<std::size_t>(m);
        if (geo_check_bearings(cam_, v[i], origins[i].x, origins[i].y, &b1_[3 * k], &b2_[3 * k], &ppr_[k],
                               plane_ ? &n1_[2 * k] : nullptr, plane_ ? &n2_[2 * k] : nullptr))
            index_[static_cast<std::size_t>(m++)] = i;
    }
    res_.checked = m;
    if (m < cfg_.min_tracks) return res_;  // the device runs the estimate anyway; the check does not apply
    // The estimator's host entry takes doubles: the same values the device entry reads.
    for (std::size_t j = 0; j < 3 * static_cast<std::size_t>(m); ++j) {
        d1_[j] = static_cast<double>(b1_[j]);
        d2_[j] = static_cast<double>(b2_[j]);
    }
    for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j) dppr_[j] = static_cast<double>(ppr_[j]);
    RelativePoseEstimator& est = R_prior ? *two_ : *five_;
    const RelativePoseResult pose =
        plane_ ? est.estimate(n1_.data(), n2_.data(), m, nullptr, R_prior)
               : est.estimate_bearings(d1_.data(), d2_.data(), m, nullptr, R_prior, dppr_.data());
    res_.pose_status = pose.status;
    res_.hypotheses = pose.hypotheses;
    res_.inliers = pose.inliers;
    if (!geo_check_applies(m, cfg_.min_tracks, static_cast<int>(pose.status))) return res_;
    res_.model = check_model(static_cast<int>(pose.model));
    res_.R = pose.R;
    res_.t = pose.t;
    const GeoModel model = geo_frame_model(static_cast<int>(pose.model), pose.R.data(), pose.E.data(), b1_.data(),
                                           b2_.data(), ppr_.data(), m, cfg_.threshold_px, R_prior);
    for (int k = 0; k < m; ++k) {
        const std::size_t kk = static_cast<std::size_t>(k);
        const int i = index_[kk];
        if (geo_evidence_update(model, &b1_[3 * kk], &b2_[3 * kk], ppr_[kk], rule_, evidence[i])) {
            outlier[i] = 1;
            ++res_.outliers;
        }
    }
    return res_;
}

const GeometricCheckResult& GeometricCheck::take(const GeoCheckSummary& s, const std::uint8_t* outlier, int n) {
    res_ = GeometricCheckResult{};
    res_.checked = s.count;
    for (int i = 0; i < n; ++i) res_.outliers += outlier[i] ? 1 : 0;
    if (s.count < cfg_.min_tracks) return res_;
    res_.pose_status = static_cast<PoseStatus>(s.record.status);
    res_.hypotheses = s.record.hypotheses;
    res_.inliers = s.record.inliers;
    if (!geo_check_applies(s.count, cfg_.min_tracks, s.record.status)) return res_;
    res_.model = check_model(s.record.model);
    for (int j = 0; j < 9; ++j) res_.R[static_cast<std::size_t>(j)] = s.record.R[j];
    for (int j = 0; j < 3; ++j) res_.t[static_cast<std::size_t>(j)] = s.record.t[j];
    return res_;
}

}  // namespace detail
}  // namespace kestrel
