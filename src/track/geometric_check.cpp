// FeatureTracker's geometric check, CPU path (src/track/geometric_check.hpp). Per frame:
//   1. the checked tracks (detail::geo_check_points: Tracked, both positions unprojected by the camera) in track
//      order, as normalized points;
//   2. one relative pose over them (RelativePoseEstimator on the CPU: five-point, or two-point with the frame's
//      rotation prior; with its rotation-only model, chosen when the camera did not translate);
//   3. when the check applies (detail::geo_check_applies: at least min_tracks checked, status Ok), every checked
//      track outside the deciding model's inliers is an outlier.
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

GeometricCheck::GeometricCheck(const GeometricCheckConfig& cfg, int capacity, bool cpu)
    : cfg_(cfg), cam_(make_camera_setup(cfg.camera, UndistortConfig{}, "FeatureTracker: geometric_check.camera")) {
    if (!cpu) return;
    five_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::FivePoint), Backend::Cpu);
    two_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::TwoPointWithRotation),
                                                   Backend::Cpu);
    const auto c = static_cast<std::size_t>(capacity);
    x1_.resize(2 * c);
    x2_.resize(2 * c);
    index_.resize(c);
    mask_.resize(c);
}

const GeometricCheckResult& GeometricCheck::run(const TrackVerdict* v, const Point2f* origins, int n,
                                                const double* R_prior, std::uint8_t* outlier) {
    res_ = GeometricCheckResult{};
    std::memset(outlier, 0, static_cast<std::size_t>(n));
    int m = 0;
    for (int i = 0; i < n; ++i)
        if (geo_check_points(cam_, v[i], origins[i].x, origins[i].y, &x1_[2 * static_cast<std::size_t>(m)],
                             &x2_[2 * static_cast<std::size_t>(m)]))
            index_[static_cast<std::size_t>(m++)] = i;
    res_.checked = m;
    if (m < cfg_.min_tracks) return res_;  // the device runs the estimate anyway; the check does not apply
    RelativePoseEstimator& est = R_prior ? *two_ : *five_;
    const RelativePoseResult pose = est.estimate(x1_.data(), x2_.data(), m, mask_.data(), R_prior);
    res_.pose_status = pose.status;
    res_.hypotheses = pose.hypotheses;
    res_.inliers = pose.inliers;
    if (!geo_check_applies(m, cfg_.min_tracks, static_cast<int>(pose.status))) return res_;
    res_.model = check_model(static_cast<int>(pose.model));
    res_.R = pose.R;
    res_.t = pose.t;
    for (int k = 0; k < m; ++k)
        if (!mask_[static_cast<std::size_t>(k)]) {
            outlier[index_[static_cast<std::size_t>(k)]] = 1;
            ++res_.outliers;
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
