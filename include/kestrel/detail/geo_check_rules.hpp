// Rules of FeatureTracker's geometric check (TrackerConfig::geometric_check, docs/tracker.md "Geometric check"),
// shared by the CPU path (src/track/geometric_check.cpp) and the CUDA kernels (kernels/track/geo_check.cu):
//   which tracks are checked and the points the relative pose is estimated from (geo_check_points), and how the
//   estimator's inlier mask and record become the tracks' verdicts (geo_check_applies).
// Track k of a frame is checked when its verdict (detail::track_verdict) is Tracked and both its previous position
// (the staged origin) and its new position (the verdict's) unproject (detail::unproject_pixel) to normalized
// points; the checked tracks keep their order (a stable compaction), so that both backends hand the estimator
// the same arrays. The check applies when at least min_tracks tracks were checked and the estimate is Ok; a
// checked track outside the inlier mask of the model that decided (five-point, two-point or rotation-only) is
// then an Outlier.
#pragma once
#include <cstdint>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/camera_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/relative_pose_types.hpp"

namespace kestrel::detail {

/// What the device leaves for the host after a frame's check (pinned memory): the checked count and the
/// estimator's record.
struct GeoCheckSummary {
    int count;
    PoseRecord record;
};

/// Whether the track with verdict v and previous position (ox, oy) is checked; when it is, its previous and new
/// positions as normalized points (x1, y1) and (x2, y2).
KESTREL_HD bool geo_check_points(const CameraSetup& cam, const TrackVerdict& v, float ox, float oy, double* x1,
                                 double* x2) {
    if (v.status != TrackStatus::Tracked) return false;
    Point2d a, b;
    if (unproject_pixel(cam, static_cast<double>(ox), static_cast<double>(oy), a) != UnprojectStatus::Ok) return false;
    if (unproject_pixel(cam, static_cast<double>(v.x), static_cast<double>(v.y), b) != UnprojectStatus::Ok) return false;
    x1[0] = a.x;
    x1[1] = a.y;
    x2[0] = b.x;
    x2[1] = b.y;
    return true;
}

/// Whether the estimate over `checked` tracks ends tracks: enough tracks and a model (status Ok).
KESTREL_HD bool geo_check_applies(int checked, int min_tracks, int pose_status) {
    return checked >= min_tracks && pose_status == static_cast<int>(PoseStatus::Ok);
}

}  // namespace kestrel::detail
