// FeatureTracker's geometric check (src/track/geometric_check.hpp), run on the host after the frame's wait on
// both backends. Per frame:
//   1. the checked tracks (detail::geo_check_bearings: Tracked, both positions unprojected to unit bearings by the
//      camera, the pixels per radian at the new one) in track order;
//   2. one relative pose over them (RelativePoseEstimator on the CPU: the bearing entry for a fisheye, the
//      threshold converted per point, else the normalized points; five-point, or two-point with the frame's
//      rotation prior; with its rotation-only model, chosen when the camera did not translate);
//   3. when the check applies (detail::geo_check_applies: at least min_tracks checked, status Ok), every checked
//      track outside the deciding model's inliers is an outlier;
//   4. with baseline_frames = L > 1, steps 1 to 3 again for the tracks step 3 kept that have a position L frames
//      back (from there to the new position, with the rotation prior over those frames when there is one).
// This file is compiled with -ffp-contract=off (the camera rules' double operations).
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

/// The frame pair's result from its estimate over `checked` tracks, `ended` of them outliers (both backends): the
/// estimate's status and counts when the check had enough tracks; the model, the motion and the ended tracks when
/// it applies (geo_check_applies).
GeometricCheckResult fill(const RelativePoseResult& pose, int checked, int ended, int min_tracks) {
    GeometricCheckResult r;
    r.checked = checked;
    if (checked < min_tracks) return r;
    r.pose_status = pose.status;
    r.hypotheses = pose.hypotheses;
    r.inliers = pose.inliers;
    if (geo_check_applies(checked, min_tracks, static_cast<int>(pose.status))) {
        r.model = check_model(static_cast<int>(pose.model));
        r.R = pose.R;
        r.t = pose.t;
        r.outliers = ended;
    }
    return r;
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

GeometricCheck::GeometricCheck(const GeometricCheckConfig& cfg, int capacity)
    : cfg_(cfg), cam_(make_camera_setup(cfg.camera, UndistortConfig{}, "FeatureTracker: geometric_check.camera")),
      capacity_(capacity) {
    five_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::FivePoint), Backend::Cpu);
    two_ = std::make_unique<RelativePoseEstimator>(capacity, geo_pose_config(cfg, PoseMethod::TwoPointWithRotation),
                                                   Backend::Cpu);
    const auto c = static_cast<std::size_t>(capacity);
    b1_.resize(3 * c);
    b2_.resize(3 * c);
    ppr_.resize(c);
    index_.resize(c);
    mask_.resize(c);
    plane_ = geo_check_on_plane(cam_);
    if (plane_) {
        n1_.resize(2 * c);
        n2_.resize(2 * c);
    }
}

RelativePoseResult GeometricCheck::judge(const TrackVerdict* v, const Point2f* from, int n, const double* R_prior,
                                         std::uint8_t* outlier, int* checked, int* ended) {
    int m = 0;
    for (int i = 0; i < n; ++i) {
        if (outlier[i]) continue;
        const std::size_t k = static_cast<std::size_t>(m);
        if (geo_check_bearings(cam_, v[i], from[i].x, from[i].y, &b1_[3 * k], &b2_[3 * k], &ppr_[k],
                               plane_ ? &n1_[2 * k] : nullptr, plane_ ? &n2_[2 * k] : nullptr))
            index_[static_cast<std::size_t>(m++)] = i;
    }
    *checked = m;
    *ended = 0;
    RelativePoseResult pose;
    pose.status = PoseStatus::NoModel;
    if (m < cfg_.min_tracks) return pose;  // the check does not apply
    RelativePoseEstimator& est = R_prior ? *two_ : *five_;
    pose = plane_ ? est.estimate(n1_.data(), n2_.data(), m, mask_.data(), R_prior)
                  : est.estimate_bearings(b1_.data(), b2_.data(), m, mask_.data(), R_prior, ppr_.data());
    if (!geo_check_applies(m, cfg_.min_tracks, static_cast<int>(pose.status))) return pose;
    for (int k = 0; k < m; ++k)
        if (!mask_[static_cast<std::size_t>(k)]) {
            outlier[index_[static_cast<std::size_t>(k)]] = 1;
            ++*ended;
        }
    return pose;
}

void GeometricCheck::enable_device() {
    if (plane_ && !dev_)
        dev_ = make_cuda_geo_check(capacity_, geo_pose_config(cfg_, PoseMethod::TwoPointWithRotation), cam_,
                                   cfg_.min_tracks);
}

bool GeometricCheck::run_device_async(const GeoTrackInputs& in, const double* R_prior, const Point2f* base,
                                      const double* R_base, StreamHandle stream) {
    if (!dev_ || !R_prior || (base && !R_base) || in.tracks <= 0) return false;
    if (base) std::memcpy(dev_->bases(), base, sizeof(Point2f) * static_cast<std::size_t>(in.tracks));
    dev_->enqueue(in, R_prior, base ? R_base : nullptr, stream);
    dev_base_ = base != nullptr;
    return true;
}

const GeometricCheckResult& GeometricCheck::finish_device(std::uint8_t* outlier, int n) {
    // run()'s result from the device's records: the frame pair's estimate, the ended tracks of both tests.
    std::memcpy(outlier, dev_->outlier(), static_cast<std::size_t>(n));
    const GeoDeviceOut& o = dev_->out(0);
    res_ = fill(pose_result(o.rec), o.checked, o.ended, cfg_.min_tracks);
    if (dev_base_) res_.outliers += dev_->out(1).ended;
    return res_;
}

const GeometricCheckResult& GeometricCheck::run(const TrackVerdict* v, const Point2f* origins, int n,
                                                const double* R_prior, std::uint8_t* outlier, const Point2f* base,
                                                const double* R_base) {
    std::memset(outlier, 0, static_cast<std::size_t>(n));
    int checked = 0, ended = 0;
    const RelativePoseResult pose = judge(v, origins, n, R_prior, outlier, &checked, &ended);
    res_ = fill(pose, checked, ended, cfg_.min_tracks);
    if (base) {  // the baseline test of the tracks the frame pair kept
        judge(v, base, n, R_base, outlier, &checked, &ended);
        res_.outliers += ended;
    }
    return res_;
}

}  // namespace detail
}  // namespace kestrel
