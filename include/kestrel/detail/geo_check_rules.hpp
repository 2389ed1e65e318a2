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
//
// The baseline test (GeometricCheckConfig::baseline_frames = L > 1): every track keeps its positions of the last L
// frames (GeoHistory: the frame of its birth, then one per frame it stays Tracked); a track whose history is full
// and that the frame pair kept is tested a second time, by the same rules, from its position L frames back (its
// base) to its new one: a second estimate over those tracks, with the product of the last L frames' rotation
// priors when each of them had one. A slow mover (below the threshold on every frame pair) is L times as far off
// over L frames, while an anchored track's error does not grow with the baseline.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/camera_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/lk_types.hpp"
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

/// The most frames the baseline test reaches back (GeometricCheckConfig::baseline_frames).
constexpr int kGeoMaxBaseline = 16;

/// One track's last positions, oldest first: x[0], y[0] is its position n - 1 frames before the newest.
struct GeoHistory {
    float x[kGeoMaxBaseline];
    float y[kGeoMaxBaseline];
    int n;
};

/// Appends the newest position, keeping the last L; L in [1, kGeoMaxBaseline] (GeometricCheckConfig's validation
/// holds it to that range; any other L leaves the history as it is).
inline void geo_history_push(GeoHistory& h, float x, float y, int L) {
    if (L < 1 || L > kGeoMaxBaseline) return;
    if (h.n < L) {
        h.x[h.n] = x;
        h.y[h.n] = y;
        ++h.n;
        return;
    }
    for (int j = 1; j < L; ++j) {
        h.x[j - 1] = h.x[j];
        h.y[j - 1] = h.y[j];
    }
    h.x[L - 1] = x;
    h.y[L - 1] = y;
}

/// Before a frame (the history holding the positions up to the previous frame): the track's position L frames
/// back, or NaN when it is younger.
inline Point2f geo_history_base(const GeoHistory& h, int L) {
    if (h.n < L) return {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::quiet_NaN()};
    return {h.x[0], h.y[0]};
}

/// a b, 3x3 row-major.
inline std::array<double, 9> geo_mat_mul(const std::array<double, 9>& a, const std::array<double, 9>& b) {
    std::array<double, 9> c{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            c[static_cast<std::size_t>(3 * i + j)] = a[static_cast<std::size_t>(3 * i)] * b[static_cast<std::size_t>(j)] +
                                                    a[static_cast<std::size_t>(3 * i + 1)] * b[static_cast<std::size_t>(3 + j)] +
                                                    a[static_cast<std::size_t>(3 * i + 2)] * b[static_cast<std::size_t>(6 + j)];
    return c;
}

/// The rotation priors of the last frames in a row that had one, oldest first (at most L - 1 kept).
struct GeoPriorRun {
    std::array<std::array<double, 9>, kGeoMaxBaseline> R;
    int n;
};

/// After a frame: its prior (null: none) joins the run, or ends it.
inline void geo_prior_push(GeoPriorRun& run, const std::array<double, 9>* R, int L) {
    if (!R || L < 2) {
        run.n = 0;
        return;
    }
    if (run.n == L - 1) {
        for (int j = 1; j < run.n; ++j) run.R[static_cast<std::size_t>(j - 1)] = run.R[static_cast<std::size_t>(j)];
        --run.n;
    }
    run.R[static_cast<std::size_t>(run.n++)] = *R;
}

/// The rotation over the last L frames, R_k R_(k-1) ... R_(k-L+1) (X_k = R X_(k-L) + t), from this frame's prior
/// R_k and the run of the frames before; false unless each of them had one.
inline bool geo_prior_over(const GeoPriorRun& run, const std::array<double, 9>& current, int L,
                           std::array<double, 9>* out) {
    if (run.n < L - 1) return false;
    std::array<double, 9> R = current;
    for (int j = 0; j < L - 1; ++j) R = geo_mat_mul(R, run.R[static_cast<std::size_t>(run.n - 1 - j)]);
    *out = R;
    return true;
}

/// What the tracker's check on the device leaves for the host (pinned).
struct GeoDeviceOut {
    int checked;  // tracks staged (detail::geo_check_bearings)
    int ended;    // of those, ended as Outlier (outside the deciding model's mask, when the check applies)
    PoseRecord rec;
};

/// The check on the device (the CUDA tracker with a rotation prior, cameras other than the fisheye): one two-point
/// call per test (kernels/geometry/ransac.cu) stages its points itself from the frame's LK results (pinned or device
/// memory) by the rules above: the verdict (track_verdict), then geo_check_bearings on the z = 1 plane as (x, y, 1),
/// tracks in order, those with outlier[i] set left out; its finish sets outlier[i] for every checked track outside
/// the deciding model's mask when geo_check_applies, and writes *out. The host's check (the CPU backend's) gives the
/// same flags: the same staged values, and the CPU estimator matches the kernel bit for bit.
struct PoseTrackStage {
    const LkResult* results;
    const LkResult* back;
    const detail::AnchorResult* anchors;
    const Point2f* origins;  // the tracks' previous positions (the verdict's)
    const Point2f* from;     // the test's first positions: origins (the frame pair) or the bases
    detail::TrackVerdictRule rule;
    detail::CameraSetup cam;
    int tracks;
    int min_tracks;
    std::uint8_t* outlier;  // per track (pinned, for the host)
    int* index;             // per checked point: its track
    GeoDeviceOut* out;
    int first;              // 1: the frame pair's test (verdicts made from the LK results and kept), 0: a later one
    TrackVerdict* verdicts;  // per track (device): the verdicts, made by the first test
    std::uint8_t* flags;     // per track (device): outlier's copy that the later tests read
};

/// Whether the estimate over `checked` tracks ends tracks: enough tracks and a model (status Ok).
KESTREL_HD bool geo_check_applies(int checked, int min_tracks, int pose_status) {
    return checked >= min_tracks && pose_status == static_cast<int>(PoseStatus::Ok);
}

}  // namespace kestrel::detail
