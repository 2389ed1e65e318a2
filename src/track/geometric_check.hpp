// Internal: FeatureTracker's geometric check (TrackerConfig::geometric_check; policy in docs/tracker.md,
// "Geometric check"). Host code shared by both backends, run on the frame's LK verdicts after the wait, so that
// the CPU and the CUDA tracker end the same tracks as Outlier.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/feature_tracker.hpp"
#include "kestrel/relative_pose.hpp"

namespace kestrel::detail {

class GeometricCheck {
public:
    /// cfg validated by validate(TrackerConfig); `capacity` tracks at most per frame. Allocates everything here.
    GeometricCheck(const GeometricCheckConfig& cfg, int capacity);

    /// Tracks i in [0, n) with candidate[i] != 0 moved from prev[i] to cur[i] (level-0 pixels); `R_prior` (or
    /// null) the frame's rotation prior. Sets outlier[i] = 1 for every candidate the chosen model rejects (0
    /// elsewhere) and returns the frame's result. No allocation.
    const GeometricCheckResult& run(const Point2f* prev, const Point2f* cur, const std::uint8_t* candidate, int n,
                                    const double* R_prior, std::uint8_t* outlier);

    const GeometricCheckResult& result() const { return res_; }
    void clear() { res_ = GeometricCheckResult{}; }

private:
    GeometricCheckConfig cfg_;
    int capacity_ = 0;
    double focal_ = 1.0;
    RelativePoseEstimator five_, two_;
    std::vector<float> px1_, px2_;
    std::vector<Point2d> n1_, n2_;
    std::vector<UnprojectStatus> s1_, s2_;
    std::vector<double> x1_, x2_;       // normalized points of the checked tracks
    std::vector<int> index_;            // checked point k -> track index
    std::vector<std::uint8_t> mask_;    // the pose's inlier mask
    std::vector<std::uint8_t> rmask_;   // the rotation-only model's inlier mask
    std::vector<double> e_pose_, e_rot_;  // per checked point: Sampson error, rotation transfer error (px)
    GeometricCheckResult res_;
};

/// The rotation-only model of m correspondences of normalized points (x1, x2: 2m each): with `R_prior` that
/// rotation, else a RANSAC over two-point rotations (triad construction), MSAC-scored by the transfer error
/// focal * |b2 - R b1| (b the unit bearing vectors), adaptive stop, then Gauss-Newton on the inliers (kept when
/// it lowers the cost). Writes R, the per-point error (px) and the inlier mask (error < threshold); returns the
/// hypotheses drawn. Deterministic for a seed.
int rotation_only_fit(const double* x1, const double* x2, int m, double focal, double threshold_px, double confidence,
                      int max_hypotheses, std::uint64_t seed, const double* R_prior, double* R, double* err,
                      std::uint8_t* mask);

/// Torr's GRIC of a model with manifold dimension d and k parameters over m squared errors e2 (px^2), noise
/// sigma (px), data dimension 4: sum min(e2 / sigma^2, 2 (4 - d)) + ln(4) d m + ln(4 m) k.
double gric(const double* e2, int m, double sigma, int d, int k);

}  // namespace kestrel::detail
