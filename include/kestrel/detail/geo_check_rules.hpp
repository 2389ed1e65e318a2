// Rules of FeatureTracker's geometric check (TrackerConfig::geometric_check, docs/tracker.md "Geometric check"),
// shared by the CPU path (src/track/geometric_check.cpp) and the CUDA kernels (kernels/track/geo_check.cu):
//   which tracks are checked and the bearings the relative pose is estimated from (geo_check_bearings), whether a
//   frame's estimate judges the tracks (geo_check_applies), and how one track's evidence is updated and decides
//   its end (geo_evidence_update).
//
// Selection: track k of a frame is checked when its verdict (detail::track_verdict) is Tracked, both its previous
// position (the staged origin) and its new position (the verdict's) unproject to unit bearings
// (detail::unproject_bearing_pixel: any direction the model sees, a fisheye's beyond 90 degrees too), and the
// camera's pixels per radian at the new bearing (detail::pixels_per_radian_at) is finite in (0, 1e7]. The bearings
// and that scale are rounded to float (the estimator's device entry takes floats; the CPU path passes the same
// values as doubles). A fisheye's pose is estimated on those bearings (each point's threshold by its pixels per
// radian); a pinhole or radial-tangential camera's on the normalized points (detail::unproject_pixel, focal_px the
// mean focal length), whose model selection keeps a slowly translating camera's essential matrix more often. The
// checked tracks keep their order (a stable compaction), so that both backends hand the estimator the same arrays.
//
// Evidence: the check applies when at least min_tracks tracks were checked and the estimate is Ok. Each checked
// track then gets its frame's error e (pixels: the estimator's own error of that model, the Sampson error on the
// sphere for an essential matrix, half the chord of the rotation's transfer for the rotation-only model, times the
// point's pixels per radian) and its off-model motion g (a tangent vector at the new bearing, |g| ~ e, pointing from
// the model's prediction to the observation: across the epipolar line, or away from R p). The track's evidence
// (GeoTrackEvidence) carries a decayed sum of these vectors, A <- decay * R A + g (R the frame's rotation: A stays
// in the current camera's frame), and a count of consecutive frames with e >= threshold. The track ends as Outlier
// when e >= immediate (one frame far off), the count reaches `strikes` (repeated failure) or |A| >= accumulated
// (accumulated failure: a slow mover's small per-frame deviations add up, while the noise of an anchored track does
// not, its per-frame errors being differences of bounded position errors). A frame where the check does not apply
// leaves every evidence as it was. All arithmetic is double through detail/exact_float.hpp, rounded to float where
// stored: both backends compute the same bits.
#pragma once
#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/camera_rules.hpp"
#include "kestrel/detail/exact_float.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/relative_pose_types.hpp"

namespace kestrel::detail {

/// What the device leaves for the host after a frame's check (pinned memory): the checked count and the
/// estimator's record.
struct GeoCheckSummary {
    int count;
    PoseRecord record;
};

/// One live track's evidence, carried from frame to frame (zero at birth).
struct GeoTrackEvidence {
    float a[3];       ///< decayed sum of the off-model motion, pixels, a tangent vector in the current camera's frame
    std::int32_t strikes;  ///< consecutive checked frames with an error at or above the threshold
};

/// The decision's parameters (GeometricCheckConfig), resolved once.
struct GeoEvidenceRule {
    double threshold;    ///< px: a frame's error at or above it is a failure (threshold_px)
    double immediate;    ///< px: a frame's error at or above it ends the track at once
    double accumulated;  ///< px: |A| at or above it ends the track
    double decay;        ///< A <- decay * R A + g
    int strikes;         ///< consecutive failures that end the track
};

/// The model that judges the tracks: the estimate's R and E (row-major) and whether it is the rotation-only one.
struct GeoModel {
    double R[9];
    double E[9];
    int rotation_only;
    int accumulate;  ///< whether the frame adds to the tracks' sums (a refined or gyro-based translation model)
};

/// Whether the relative pose of the check is estimated on the z = 1 plane (normalized points: pinhole and
/// radial-tangential cameras, whose tracks all lie in front) or on the sphere (bearings: the fisheye, whose tracks
/// may lie beyond 90 degrees off the axis). The evidence is computed on the bearings either way.
KESTREL_HD bool geo_check_on_plane(const CameraSetup& cam) {
    return cam.model != static_cast<std::int32_t>(CameraModel::Fisheye);
}

/// Whether the track with verdict v and previous position (ox, oy) is checked; when it is, the unit bearings of
/// its previous and new positions (b1, b2: 3 floats each), the pixels per radian at the new one (ppr) and, when
/// `n1` is not null (geo_check_on_plane), their normalized points (n1, n2: 2 doubles each, detail::unproject_pixel).
KESTREL_HD bool geo_check_bearings(const CameraSetup& cam, const TrackVerdict& v, float ox, float oy, float* b1,
                                   float* b2, float* ppr, double* n1 = nullptr, double* n2 = nullptr) {
    if (v.status != TrackStatus::Tracked) return false;
    if (n1) {
        Point2d a, b;
        if (unproject_pixel(cam, static_cast<double>(ox), static_cast<double>(oy), a) != UnprojectStatus::Ok) return false;
        if (unproject_pixel(cam, static_cast<double>(v.x), static_cast<double>(v.y), b) != UnprojectStatus::Ok)
            return false;
        n1[0] = a.x;
        n1[1] = a.y;
        n2[0] = b.x;
        n2[1] = b.y;
    }
    double a[3], b[3];
    if (unproject_bearing_pixel(cam, static_cast<double>(ox), static_cast<double>(oy), a) != UnprojectStatus::Ok)
        return false;
    if (unproject_bearing_pixel(cam, static_cast<double>(v.x), static_cast<double>(v.y), b) != UnprojectStatus::Ok)
        return false;
    const float s = static_cast<float>(pixels_per_radian_at(cam, b[0], b[1], b[2]));
    if (!(s > 0.0f) || !(s <= 1e7f)) return false;  // NaN too
    for (int c = 0; c < 3; ++c) {
        b1[c] = static_cast<float>(a[c]);
        b2[c] = static_cast<float>(b[c]);
    }
    *ppr = s;
    return true;
}

/// Whether the estimate over `checked` tracks judges them: enough tracks and a model (status Ok).
KESTREL_HD bool geo_check_applies(int checked, int min_tracks, int pose_status) {
    return checked >= min_tracks && pose_status == static_cast<int>(PoseStatus::Ok);
}

/// The judging model of an estimate that applies: its R and E, rotation-only or not.
KESTREL_HD GeoModel geo_model(int pose_model, const double* R, const double* E) {
    GeoModel m;
    for (int j = 0; j < 9; ++j) {
        m.R[j] = R[j];
        m.E[j] = E[j];
    }
    m.rotation_only = pose_model == static_cast<int>(PoseModel::RotationOnly) ? 1 : 0;
    m.accumulate = m.rotation_only ? 0 : 1;
    return m;
}

KESTREL_HD double geo_dot3(const double* a, const double* b) {
    return dadd(dadd(dmul(a[0], b[0]), dmul(a[1], b[1])), dmul(a[2], b[2]));
}
KESTREL_HD void geo_mat_vec(const double* M, const double* x, double* y) {
    for (int i = 0; i < 3; ++i) y[i] = geo_dot3(M + 3 * i, x);
}
KESTREL_HD void geo_mat_t_vec(const double* M, const double* x, double* y) {
    for (int i = 0; i < 3; ++i) y[i] = dadd(dadd(dmul(M[i], x[0]), dmul(M[3 + i], x[1])), dmul(M[6 + i], x[2]));
}
/// v minus its component along the unit vector u (the projection onto u's tangent plane).
KESTREL_HD void geo_tangent(const double* u, double* v) {
    const double c = geo_dot3(u, v);
    for (int i = 0; i < 3; ++i) v[i] = dsub(v[i], dmul(c, u[i]));
}
/// A float bearing as a unit double vector (false when its length is not positive and finite).
KESTREL_HD bool geo_unit(const float* f, double* v) {
    for (int i = 0; i < 3; ++i) v[i] = static_cast<double>(f[i]);
    const double n = dsqrt(geo_dot3(v, v));
    if (!(n > 0.0) || !dfinite(n)) return false;
    for (int i = 0; i < 3; ++i) v[i] = ddiv(v[i], n);
    return true;
}

/// The smallest eigenvector of the symmetric positive semi-definite 3x3 matrix M (xx, xy, xz, yy, yz, zz): the
/// dominant one of adj(M) (eigenvalues l2 l3 >= l1 l3 >= l1 l2), by 12 power steps from adj(M)'s longest column.
/// False when adj(M) vanishes (no unique direction).
KESTREL_HD bool geo_smallest_eigenvector(const double* m, double* v) {
    const double a = m[0], b = m[1], c = m[2], d = m[3], e = m[4], f = m[5];
    double A[9];
    A[0] = dsub(dmul(d, f), dmul(e, e));
    A[1] = dsub(dmul(c, e), dmul(b, f));
    A[2] = dsub(dmul(b, e), dmul(c, d));
    A[4] = dsub(dmul(a, f), dmul(c, c));
    A[5] = dsub(dmul(b, c), dmul(a, e));
    A[8] = dsub(dmul(a, d), dmul(b, b));
    A[3] = A[1];
    A[6] = A[2];
    A[7] = A[5];
    int best = 0;
    double bn = -1.0;
    for (int j = 0; j < 3; ++j) {
        const double col[3] = {A[j], A[3 + j], A[6 + j]};
        const double nn = geo_dot3(col, col);
        if (nn > bn) {
            bn = nn;
            best = j;
        }
    }
    if (!(bn > 0.0) || !dfinite(bn)) return false;
    double x[3] = {A[best], A[3 + best], A[6 + best]};
    for (int it = 0; it < 12; ++it) {
        double y[3];
        geo_mat_vec(A, x, y);
        const double n = dsqrt(geo_dot3(y, y));
        if (!(n > 0.0) || !dfinite(n)) return false;
        for (int i = 0; i < 3; ++i) x[i] = ddiv(y[i], n);
    }
    for (int i = 0; i < 3; ++i) v[i] = x[i];
    return true;
}

/// One track's error (px) under the model of a frame: the Sampson error on the sphere for E, half the rotation's
/// transfer chord for the rotation-only model; its off-model motion in g (a tangent vector at q, px, |g| ~ the
/// error). p, q unit bearings, s pixels per radian. False when the model cannot judge the point.
KESTREL_HD bool geo_point_error(const GeoModel& m, const double* p, const double* q, double s, double* err,
                                double* g) {
    const double inv_sqrt2 = 0.70710678118654752440;
    for (int i = 0; i < 3; ++i) g[i] = 0.0;
    if (m.rotation_only) {
        // g: the observation minus the rotated previous bearing, in q's tangent plane; e: half the chord, in px.
        double rp[3], d[3];
        geo_mat_vec(m.R, p, rp);
        for (int i = 0; i < 3; ++i) d[i] = dsub(q[i], rp[i]);
        *err = dmul(dmul(dsqrt(geo_dot3(d, d)), inv_sqrt2), s);
        geo_tangent(q, d);
        for (int i = 0; i < 3; ++i) g[i] = dmul(dmul(d[i], inv_sqrt2), s);
        return dfinite(*err);
    }
    // r = q^T E p; a = P_q E p, b = P_p E^T q (each point's gradient in its tangent plane); the Sampson error
    // |r| / sqrt(|a|^2 + |b|^2) in px; g along the flow's direction of steepest ascent of r, a - R b, signed by r
    // (the same g for E and -E).
    double a[3], b[3], rb[3], dir[3];
    geo_mat_vec(m.E, p, a);
    geo_mat_t_vec(m.E, q, b);
    const double r = geo_dot3(q, a);
    geo_tangent(q, a);
    geo_tangent(p, b);
    const double d = dadd(geo_dot3(a, a), geo_dot3(b, b));
    if (!(d > 1e-300)) return false;  // no gradient: the model cannot judge this point
    *err = dmul(ddiv(r < 0.0 ? -r : r, dsqrt(d)), s);
    geo_mat_vec(m.R, b, rb);
    for (int i = 0; i < 3; ++i) dir[i] = dsub(a[i], rb[i]);
    const double dn = dsqrt(geo_dot3(dir, dir));
    if (dn > 0.0) {
        const double k = ddiv(r < 0.0 ? -*err : *err, dn);
        for (int i = 0; i < 3; ++i) g[i] = dmul(k, dir[i]);
    }
    return dfinite(*err);
}

/// The model that judges a frame's m checked tracks (bearings b1, b2, pixels per radian ppr, as gathered), from an
/// estimate that applies. The estimator's essential matrix (five-point or two-point) judges as it is. Its
/// rotation-only model (chosen when at least 90 % as many points fit a rotation as a translation) may hide a slow
/// translation, whose near points then drift off the rotation frame after frame: the tracker tests for it. t is
/// fitted to the rotation's inliers (rotation error below 1.25 threshold: the smallest eigenvector of
/// sum s^2 c c^T, c = (R p) x q, the two-point constraints with R), and E = [t]x R judges when it halves the frame's
/// MSAC cost (sum of min(e^2, threshold^2)) against the rotation and lowers it by 0.1 px^2 per track; a static or
/// purely rotating camera leaves no such structure (the rotation stays). The fitted rotation absorbs part of the
/// translation, so an E built on it judges the frame without adding to the tracks' sums; with the gyro's rotation
/// (prior) t is fitted with it and the frame adds to them. Both sums run over k = 0 .. m - 1 in order (the
/// kernel: one thread).
KESTREL_HD GeoModel geo_frame_model(int pose_model, const double* R, const double* E, const float* b1, const float* b2,
                                    const float* ppr, int m, double threshold, const double* prior) {
    GeoModel model = geo_model(pose_model, R, E);
    if (!model.rotation_only) return model;
    if (prior) R = prior;  // the gyro's rotation: not biased by a hidden translation, as the fitted one is
    const double thr_fit = dmul(1.25, threshold), thr2 = dmul(threshold, threshold);
    double M[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    for (int k = 0; k < m; ++k) {
        double p[3], q[3], g[3], e = 0.0;
        if (!geo_unit(b1 + 3 * k, p) || !geo_unit(b2 + 3 * k, q)) continue;
        const double s = static_cast<double>(ppr[k]);
        if (!geo_point_error(model, p, q, s, &e, g) || !(e < thr_fit)) continue;
        double rp[3];
        geo_mat_vec(R, p, rp);
        const double c[3] = {dsub(dmul(rp[1], q[2]), dmul(rp[2], q[1])), dsub(dmul(rp[2], q[0]), dmul(rp[0], q[2])),
                             dsub(dmul(rp[0], q[1]), dmul(rp[1], q[0]))};
        const double w = dmul(s, s);
        M[0] = dadd(M[0], dmul(w, dmul(c[0], c[0])));
        M[1] = dadd(M[1], dmul(w, dmul(c[0], c[1])));
        M[2] = dadd(M[2], dmul(w, dmul(c[0], c[2])));
        M[3] = dadd(M[3], dmul(w, dmul(c[1], c[1])));
        M[4] = dadd(M[4], dmul(w, dmul(c[1], c[2])));
        M[5] = dadd(M[5], dmul(w, dmul(c[2], c[2])));
    }
    double t[3];
    if (!geo_smallest_eigenvector(M, t)) return model;
    GeoModel te = model;
    te.rotation_only = 0;
    te.accumulate = prior ? 1 : 0;
    for (int j = 0; j < 9; ++j) te.R[j] = R[j];
    const double tx[9] = {0.0, -t[2], t[1], t[2], 0.0, -t[0], -t[1], t[0], 0.0};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            te.E[3 * i + j] = dadd(dadd(dmul(tx[3 * i], R[j]), dmul(tx[3 * i + 1], R[3 + j])), dmul(tx[3 * i + 2], R[6 + j]));
    double cost_rot = 0.0, cost_t = 0.0;
    for (int k = 0; k < m; ++k) {
        double p[3], q[3], g[3], er = 0.0, et = 0.0;
        if (!geo_unit(b1 + 3 * k, p) || !geo_unit(b2 + 3 * k, q)) continue;
        const double s = static_cast<double>(ppr[k]);
        const double e2r = geo_point_error(model, p, q, s, &er, g) ? dmul(er, er) : thr2;
        const double e2t = geo_point_error(te, p, q, s, &et, g) ? dmul(et, et) : thr2;
        cost_rot = dadd(cost_rot, e2r < thr2 ? e2r : thr2);
        cost_t = dadd(cost_t, e2t < thr2 ? e2t : thr2);
    }
    // The translation model must halve the cost and lower it by 0.1 px^2 per track (a static camera's noise,
    // which a free t fits a little better too, stays below that).
    const bool better = dmul(2.0, cost_t) < cost_rot && dsub(cost_rot, cost_t) > dmul(0.1, static_cast<double>(m));
    return better ? te : model;
}

/// One checked track of a frame whose estimate applies: its bearings (b1 previous, b2 new), pixels per radian at b2,
/// the judging model. Updates the evidence `e` in place; returns 1 when the track ends as Outlier.
KESTREL_HD int geo_evidence_update(const GeoModel& m, const float* b1, const float* b2, float ppr,
                                   const GeoEvidenceRule& rule, GeoTrackEvidence& e) {
    double p[3], q[3];
    if (!geo_unit(b1, p) || !geo_unit(b2, q)) return 0;
    const double s = static_cast<double>(ppr);
    double err = 0.0, g[3];
    if (!geo_point_error(m, p, q, s, &err, g)) return 0;
    // A <- decay * R A + g, stored in float.
    double prev[3], ra[3], acc[3];
    for (int i = 0; i < 3; ++i) prev[i] = static_cast<double>(e.a[i]);
    geo_mat_vec(m.R, prev, ra);
    for (int i = 0; i < 3; ++i) {
        acc[i] = m.accumulate ? dadd(dmul(rule.decay, ra[i]), g[i]) : dmul(rule.decay, ra[i]);
        e.a[i] = static_cast<float>(acc[i]);
    }
    const double total = dsqrt(geo_dot3(acc, acc));
    e.strikes = err >= rule.threshold ? (e.strikes < 1000000 ? e.strikes + 1 : e.strikes) : 0;
    // A frame that does not add to the sums (its E rests on a fitted rotation) decides on its own, as a frame pair.
    if (!m.accumulate) return err >= rule.threshold ? 1 : 0;
    return (err >= rule.immediate || e.strikes >= rule.strikes || total >= rule.accumulated) ? 1 : 0;
}

}  // namespace kestrel::detail
