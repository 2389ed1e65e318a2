// Relative pose of two calibrated views: RANSAC over the five-point solver (or, with a rotation prior, the
// two-point translation solver), MSAC-scored by the Sampson error in pixels, adaptive stop, refinement on the
// inliers, decomposition into R and unit t with the cheirality test. Docs: docs/geometry.md.
#pragma once
#include <cstdint>
#include <memory>

#include "kestrel/keypoint.hpp"
#include "kestrel/relative_pose_types.hpp"
#include "kestrel/stream.hpp"

namespace kestrel {

/// Created once for at most `max_points` correspondences and a backend; every call reuses its buffers (no
/// allocation per call). Points are normalized image coordinates (x, y interleaved: x1[2i], x1[2i + 1]) of
/// the first and the second view; the result's pose maps the first camera's frame into the second's.
/// The same input, configuration and seed give the same result run to run and on every backend.
class RelativePoseEstimator {
public:
    RelativePoseEstimator();  ///< empty: every call throws StateError
    RelativePoseEstimator(int max_points, const RelativePoseConfig& cfg = {}, Backend backend = Backend::Cpu);
    RelativePoseEstimator(RelativePoseEstimator&&) noexcept;
    RelativePoseEstimator& operator=(RelativePoseEstimator&&) noexcept;
    ~RelativePoseEstimator();

    Backend backend() const;
    const RelativePoseConfig& config() const;
    int max_points() const;

    /// Synchronous form. n in [0, max_points] (fewer than the method's minimum gives TooFewPoints);
    /// `inlier_mask` (n bytes, 1 = inlier of the final model) may be null. `rotation_prior` (3x3 row-major,
    /// X2 = R X1 + t) is required by PoseMethod::TwoPointWithRotation and ignored otherwise.
    RelativePoseResult estimate(const double* x1, const double* x2, int n, std::uint8_t* inlier_mask = nullptr,
                                const double* rotation_prior = nullptr);
    RelativePoseResult estimate(const float* x1, const float* x2, int n, std::uint8_t* inlier_mask = nullptr,
                                const double* rotation_prior = nullptr);

    /// Stream-ordered form: enqueues the work on `stream` (the host arrays are copied before it returns);
    /// finish() waits and returns the result, writing the mask when given. CPU backend: the work is done here.
    void estimate_async(const double* x1, const double* x2, int n, StreamHandle stream,
                        const double* rotation_prior = nullptr);
    void estimate_async(const float* x1, const float* x2, int n, StreamHandle stream,
                        const double* rotation_prior = nullptr);
    /// Device arrays (CUDA backend only): 2n doubles each in device or mapped memory, valid until finish().
    void estimate_device_async(const double* d_x1, const double* d_x2, int n, StreamHandle stream,
                               const double* rotation_prior = nullptr);
    RelativePoseResult finish(std::uint8_t* inlier_mask = nullptr);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
    Impl& impl(const char* where) const;
};

}  // namespace kestrel
