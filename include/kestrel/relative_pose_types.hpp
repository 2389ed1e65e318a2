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

/// Which model decided an estimate (RelativePoseResult::model, PoseRecord::model).
enum class PoseModel : int {
    None = 0,          ///< no model (the status is not Ok)
    FivePoint = 1,     ///< an essential matrix from the five-point RANSAC
    TwoPoint = 2,      ///< the translation from the two-point RANSAC with the rotation prior
    RotationOnly = 3,  ///< no measurable translation (static or purely rotating camera): R only, t = 0, E = 0;
                       ///< chosen by the model-selection rule (detail::pose_prefer_rotation, docs/geometry.md)
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
const char* to_string(PoseModel m);

/// RANSAC over minimal samples, MSAC-scored by the Sampson error in pixels, adaptive stop, refinement.
/// Points are normalized image coordinates (undistorted, z = 1 plane); focal_px converts them to pixels.
struct RelativePoseConfig {
    double focal_px = 500.0;        ///< pixels per normalized unit, (0, 1e6]: thresholds are in pixels
    double threshold_px = 1.0;      ///< inlier threshold on the Sampson error, (0, 1000] px
    double confidence = 0.999;      ///< adaptive stop, [0.5, 1)
    int max_hypotheses = 4096;      ///< minimal samples drawn at most, [1, 1 << 20]
    int batch = 1;                  ///< CPU backend: hypotheses scored per round before the in-order scan, [1, 65536]
                                    ///< (the result does not depend on it; 1 solves none past the stop)
    std::uint64_t seed = 0;         ///< the counter-based generator's seed: same input + seed -> same result
    PoseMethod method = PoseMethod::FivePoint;
    bool refine = true;             ///< Gauss-Newton on the Sampson error over the inliers (R, unit t)
    int min_inliers = 8;            ///< fewer inliers -> NoModel, [2, 1 << 20]
    bool rotation_only = true;      ///< also fit a rotation-only model (no translation) and keep it when the model
                                    ///< selection prefers it (static or purely rotating camera; docs/geometry.md)
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
    PoseModel model = PoseModel::None;  ///< which model decided (RotationOnly: t = 0, E = 0)
    int rotation_inliers = 0;   ///< inliers of the rotation-only model (0 when it was not fitted)
};

/// The result as the device holds it (RelativePoseEstimator::device_record()): plain data, written on the
/// stream by estimate_device_async (and by every CUDA-backend call); finish() converts it to RelativePoseResult.
struct PoseRecord {
    int status;              ///< PoseStatus, as int
    int model;               ///< PoseModel, as int
    int count;               ///< points used (the device count, clamped to [0, count bound])
    int inliers;             ///< inliers of the final model (mask entries set)
    int cheirality_inliers;  ///< of those, in front of both cameras (0 for RotationOnly)
    int hypotheses;          ///< minimal samples drawn by the model's RANSAC
    int best_hypothesis;     ///< index of the winning sample
    int rotation_inliers;    ///< inliers of the rotation-only model (0 when not fitted)
    double R[9];             ///< X2 = R X1 + t, row-major
    double t[3];             ///< unit, or 0 for RotationOnly
    double E[9];             ///< [t]x R (0 for RotationOnly)
    double cost;             ///< MSAC cost of the final model, px^2
};

/// The inputs of RelativePoseEstimator::estimate_device_async (the tracker's entry): device (or mapped pinned)
/// arrays, valid until the work enqueued on the stream has run. Give bearings or normalized points, not both.
struct PoseDeviceInput {
    /// Unit bearing vectors, 3 floats (x, y, z) per point, of the first (previous) and the second (current)
    /// view; any direction, also beyond 90 degrees off axis. Error: the tangent-plane Sampson error.
    const float* bearings1 = nullptr;
    const float* bearings2 = nullptr;
    /// Or normalized image coordinates (z = 1 plane), 2 doubles (x, y) per point, e.g. DeviceUnprojector's
    /// output. Error: the Sampson error on the plane (as the host entries).
    const double* normalized1 = nullptr;
    const double* normalized2 = nullptr;
    /// Point count, in [0, max_points]; with device_count, its upper bound (the arrays hold that many).
    int count = 0;
    /// Optional device int: the live count (clamped to [0, count]); lets a caller skip a host round trip.
    const int* device_count = nullptr;
    /// Optional, per point: pixels per radian at that point (threshold_px / it is the point's angular
    /// threshold). Null: focal_px for every point. Bearings only.
    const float* pixels_per_radian = nullptr;
    /// Optional host 3x3 row-major rotation (X2 = R X1 + t), read at enqueue: with it the two-point RANSAC
    /// (translation only) replaces the five-point one.
    const double* rotation_prior = nullptr;
};

}  // namespace kestrel
