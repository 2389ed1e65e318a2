// Plain data of the relative-pose estimator (include/kestrel/relative_pose.hpp): configuration, method, status,
// result. Model, conventions and contracts: docs/geometry.md.
#pragma once
#include <array>
#include <cstdint>

namespace kestrel {

/// Which minimal solver RANSAC samples with.
enum class PoseMethod {
    FivePoint,             ///< Nister / Stewenius five-point essential-matrix solver (5 correspondences)
    TwoPointWithRotation,  ///< rotation known (integrated gyro, passed per call): translation from 2 correspondences
};

/// What an estimate ended with. Only Ok carries a model.
enum class PoseStatus {
    Ok,             ///< E, R, t, inliers and mask are set
    TooFewPoints,   ///< fewer correspondences than the method's minimum (5, or 2 with a rotation prior)
    NoModel,        ///< no hypothesis had the minimum number of inliers (degenerate or pure outliers)
    Degenerate,     ///< the best model is degenerate: too few points pass the cheirality test (e.g. pure rotation)
};

const char* to_string(PoseMethod m);
const char* to_string(PoseStatus s);

/// RANSAC over minimal samples, MSAC-scored by the Sampson error in pixels, adaptive stop, refinement.
/// Points are normalized image coordinates (undistorted, z = 1 plane); focal_px converts them to pixels.
struct RelativePoseConfig {
    double focal_px = 500.0;        ///< pixels per normalized unit, (0, 1e6]: thresholds are in pixels
    double threshold_px = 1.0;      ///< inlier threshold on the Sampson error, (0, 1000] px
    double confidence = 0.999;      ///< adaptive stop, [0.5, 1)
    int max_hypotheses = 4096;      ///< minimal samples drawn at most, [1, 1 << 20]
    int batch = 16;                 ///< CPU backend: hypotheses scored per round before the in-order scan, [1, 65536]
                                    ///< (the result does not depend on it; the GPU scores 1024 per launch)
    std::uint64_t seed = 0;         ///< the counter-based generator's seed: same input + seed -> same result
    PoseMethod method = PoseMethod::FivePoint;
    bool refine = true;             ///< Gauss-Newton on the Sampson error over the inliers (R, unit t)
    int min_inliers = 8;            ///< fewer inliers -> NoModel, [2, 1 << 20]
};

/// Throws InvalidArgument naming the field and its bound.
void validate(const RelativePoseConfig& cfg, const char* where = "RelativePoseConfig");

/// The result. X2 = R X1 + t (the second camera's frame), |t| = 1, E = [t]x R (row-major), x2^T E x1 = 0.
struct RelativePoseResult {
    PoseStatus status = PoseStatus::NoModel;
    std::array<double, 9> E{};
    std::array<double, 9> R{1, 0, 0, 0, 1, 0, 0, 0, 1};
    std::array<double, 3> t{};
    int inliers = 0;            ///< Sampson error below the threshold for the final model
    int cheirality_inliers = 0; ///< of those, in front of both cameras (the recoverPose count)
    int hypotheses = 0;         ///< minimal samples drawn before the adaptive stop
    int best_hypothesis = -1;   ///< index of the sample whose model won (same on every backend)
    double cost = 0.0;          ///< MSAC cost of the final model (sum of min(e^2, threshold^2), px^2)
};

}  // namespace kestrel
