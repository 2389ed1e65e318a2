// Rules of FeatureTracker's geometric check (TrackerConfig::geometric_check, docs/tracker.md "Geometric check"),
// used by src/track/geometric_check.cpp on both backends (the check runs on the host after the frame's wait):
//   which tracks are checked and the points or bearings the relative pose is estimated from (geo_check_bearings),
//   and whether a frame's estimate ends tracks (geo_check_applies).
//
// Track k of a frame is checked when its verdict (detail::track_verdict) is Tracked, both its previous position
// (the staged origin) and its new position (the verdict's) unproject to unit bearings
// (detail::unproject_bearing_pixel: any direction the model sees, a fisheye's beyond 90 degrees too), and the
// camera's pixels per radian at the new bearing (detail::pixels_per_radian_at) is finite in (0, 1e7]. A fisheye's
// pose is estimated on those bearings (each point's threshold converted by its pixels per radian); a pinhole or
// radial-tangential camera's on the normalized points (detail::unproject_pixel, the estimator's focal_px the mean
// focal length), where all tracks lie in front and the estimator's model selection keeps a slowly translating
// camera's essential matrix more often. The checked tracks keep their order. The check applies when at least
// min_tracks tracks were checked and the estimate is Ok; a checked track outside the inlier mask of the model that
// decided (five-point, two-point or rotation-only) is then an Outlier.
#pragma once
#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/camera_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/relative_pose_types.hpp"

namespace kestrel::detail {

/// Whether the relative pose of the check is estimated on the z = 1 plane (normalized points: pinhole and
/// radial-tangential cameras) or on the sphere (bearings: the fisheye, whose tracks may lie beyond 90 degrees).
KESTREL_HD bool geo_check_on_plane(const CameraSetup& cam) {
    return cam.model != static_cast<std::int32_t>(CameraModel::Fisheye);
}

/// Whether the track with verdict v and previous position (ox, oy) is checked; when it is, the unit bearings of
/// its previous and new positions (b1, b2: 3 doubles each), the pixels per radian at the new one (ppr) and, when
/// `n1` is not null (geo_check_on_plane), their normalized points (n1, n2: 2 doubles each).
KESTREL_HD bool geo_check_bearings(const CameraSetup& cam, const TrackVerdict& v, float ox, float oy, double* b1,
                                   double* b2, double* ppr, double* n1 = nullptr, double* n2 = nullptr) {
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
    const double s = pixels_per_radian_at(cam, b[0], b[1], b[2]);
    if (!(s > 0.0) || !(s <= 1e7)) return false;  // NaN too
    for (int c = 0; c < 3; ++c) {
        b1[c] = a[c];
        b2[c] = b[c];
    }
    *ppr = s;
    return true;
}

/// Whether the estimate over `checked` tracks ends tracks: enough tracks and a model (status Ok).
KESTREL_HD bool geo_check_applies(int checked, int min_tracks, int pose_status) {
    return checked >= min_tracks && pose_status == static_cast<int>(PoseStatus::Ok);
}

}  // namespace kestrel::detail
