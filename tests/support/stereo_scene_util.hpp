// Helpers of the stereo tests: run a StereoTracker over generated scenes (stereo_scenes.hpp) and measure its
// tracks against the scenes' truth; compare two backends' tracks.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kestrel/stereo_tracker.hpp"
#include "stereo_scenes.hpp"

namespace kestrel::test {

/// The accuracy of one frame's stereo tracks against a scene's truth.
struct StereoErrors {
    std::size_t tracks = 0;
    std::size_t matched = 0;
    std::vector<double> errors;  ///< Matched tracks: |(right_x, right_y) - truth| (px)
    std::vector<double> disparity_errors;  ///< Matched tracks: |disparity - true disparity| (rectified rigs)
    std::vector<double> depth_rel_errors;  ///< Matched tracks: |depth - true Z| / true Z
    std::size_t count(StereoStatus s, const std::vector<StereoTrack>& t) const {
        return static_cast<std::size_t>(std::count_if(t.begin(), t.end(), [s](const StereoTrack& x) { return x.status == s; }));
    }
    double matched_fraction() const { return tracks ? static_cast<double>(matched) / tracks : 0.0; }
    static double median(std::vector<double> v) {
        if (v.empty()) return NAN;
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    }
    static double fraction_over(const std::vector<double>& v, double bound) {
        if (v.empty()) return 0.0;
        return static_cast<double>(std::count_if(v.begin(), v.end(), [bound](double e) { return e > bound; })) / v.size();
    }
    double median_error() const { return median(errors); }
    double median_disparity_error() const { return median(disparity_errors); }
    double median_depth_rel_error() const { return median(depth_rel_errors); }
};

inline StereoErrors measure(const StereoScene& scene, const std::vector<StereoTrack>& tracks) {
    StereoErrors e;
    e.tracks = tracks.size();
    for (const StereoTrack& t : tracks) {
        if (t.status != StereoStatus::Matched) continue;
        ++e.matched;
        const Point2d truth = scene.right_of(t.left.x, t.left.y);
        e.errors.push_back(std::hypot(t.right_x - truth.x, t.right_y - truth.y));
        if (scene.rig.type == RigType::Rectified) e.disparity_errors.push_back(std::abs(t.disparity - (t.left.x - truth.x)));
        const double z = scene.depth(t.left.x, t.left.y);
        e.depth_rel_errors.push_back(std::abs(t.depth - z) / z);
    }
    return e;
}

inline std::string describe(const StereoErrors& e) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%zu tracks, %zu Matched (%.1f%%), median error %.4f px, > 1 px %.2f%%, median depth error %.3f%%",
                  e.tracks, e.matched, 100.0 * e.matched_fraction(), e.median_error(),
                  100.0 * StereoErrors::fraction_over(e.errors, 1.0), 100.0 * e.median_depth_rel_error());
    return buf;
}

/// Runs a tracker of `backend` over the frames; returns every frame's tracks (copied).
inline std::vector<std::vector<StereoTrack>> run_stereo(const std::vector<StereoScene>& frames, const StereoConfig& cfg,
                                                        Backend backend) {
    StereoTracker tracker(frames.front().left.width(), frames.front().left.height(), frames.front().rig, cfg, backend);
    std::vector<std::vector<StereoTrack>> out;
    for (const StereoScene& s : frames) out.push_back(tracker.track(s.left.view(), s.right.view()));
    return out;
}

/// Equal within `tol` (absolute; relative with `relative`), NaN equal to NaN only, infinities equal only.
inline bool same_float(float a, float b, float tol, bool relative = false) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    if (std::isinf(a) || std::isinf(b)) return a == b;
    return std::abs(a - b) <= (relative ? tol * std::max(1.0f, std::abs(a)) : tol);
}

/// GPU == CPU: the same tracks in the same order, the same ids and statuses (temporal and stereo), positions,
/// right positions and disparities within `tol` px, depths within `tol` relative.
inline void expect_same_stereo_tracks(const std::vector<StereoTrack>& cpu, const std::vector<StereoTrack>& gpu,
                                      const std::string& where, float tol = 1e-3f) {
    ASSERT_EQ(cpu.size(), gpu.size()) << where;
    int reported = 0;
    for (std::size_t i = 0; i < cpu.size() && reported < 10; ++i) {
        const StereoTrack &a = cpu[i], &b = gpu[i];
        const bool same = a.left.id == b.left.id && a.left.status == b.left.status && a.status == b.status &&
                          same_float(a.left.x, b.left.x, tol) && same_float(a.left.y, b.left.y, tol) &&
                          same_float(a.right_x, b.right_x, tol) && same_float(a.right_y, b.right_y, tol) &&
                          same_float(a.disparity, b.disparity, tol) && same_float(a.depth, b.depth, tol, true);
        if (!same) {
            ++reported;
            ADD_FAILURE() << where << ": track " << i << " differs: cpu id " << a.left.id << " (" << a.left.x << ", "
                          << a.left.y << ") -> (" << a.right_x << ", " << a.right_y << ") " << to_string(a.status)
                          << " d " << a.disparity << " z " << a.depth << "; gpu id " << b.left.id << " (" << b.left.x
                          << ", " << b.left.y << ") -> (" << b.right_x << ", " << b.right_y << ") "
                          << to_string(b.status) << " d " << b.disparity << " z " << b.depth;
        }
    }
}

}  // namespace kestrel::test
