// Optional OpenCV interop (header-only; CMake target kestrel::opencv, which adds OpenCV's core).
// The core library never includes this header and never needs OpenCV.
//
//   cv::Mat (CV_8UC1)             -> HostView / HostMutView   (no copy; any ROI / row step)
//   cv::cuda::GpuMat (CV_8UC1)    -> DeviceView / DeviceMutView (no copy; needs OpenCV's CUDA module
//                                    header, <opencv2/core/cuda.hpp>; compiled only when present)
//   HostView                      -> cv::Mat header (no copy)
//   Keypoint                      -> cv::KeyPoint: pt = (x, y), size = kKeypointDiameter * s^level,
//                                    response = score, octave = level, angle = -1
//   anything with .x and .y       -> cv::Point2f (keypoints, tracks), e.g. for cv::findFundamentalMat
//
// Conversions of images throw kestrel::InvalidArgument (naming the parameter) when the matrix is
// empty, not 8-bit single channel, or not 2-D.
#pragma once
#include <opencv2/core.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "kestrel/detail/validate.hpp"
#include "kestrel/image.hpp"
#include "kestrel/keypoint.hpp"
#include "kestrel/pyramid.hpp"

#if __has_include(<opencv2/core/cuda.hpp>)
#include <opencv2/core/cuda.hpp>
#define KESTREL_OPENCV_HAS_GPUMAT 1
#else
#define KESTREL_OPENCV_HAS_GPUMAT 0
#endif

namespace kestrel {

/// Diameter (level-0 px) given to a level-0 keypoint: the FAST circle (radius 3) spans 7 pixels.
constexpr float kKeypointDiameter = 7.0f;

namespace detail {
template <typename M>
void check_cv_grey(const M& m, const char* where, const char* param) {
    if (m.empty()) fail(where, param, "must not be empty");
    if (m.type() != CV_8UC1)
        fail(where, param, "must be CV_8UC1 (8-bit, one channel); got type " + to_text(m.type()) +
                               " (convert first, e.g. cv::cvtColor(..., cv::COLOR_BGR2GRAY))");
}
}  // namespace detail

/// View of a CV_8UC1 cv::Mat (the matrix must outlive the view).
inline HostView host_view(const cv::Mat& m) {
    detail::check_cv_grey(m, "host_view", "mat");
    if (m.dims != 2) detail::fail("host_view", "mat.dims", "must be 2 (got " + detail::to_text(m.dims) + ")");
    const HostView v{m.data, m.cols, m.rows, m.step[0]};
    validate_view("host_view", "mat", v);
    return v;
}

/// Writable view of a CV_8UC1 cv::Mat.
inline HostMutView host_mut_view(cv::Mat& m) {
    const HostView v = host_view(m);
    return {m.data, v.width, v.height, v.pitch};
}

/// A cv::Mat header over a host view's pixels (no copy; do not write through it when the view
/// came from read-only memory).
inline cv::Mat to_mat(HostView v) {
    validate_view("to_mat", "view", v);
    return cv::Mat(v.height, v.width, CV_8UC1, const_cast<std::uint8_t*>(v.data), v.pitch);
}

#if KESTREL_OPENCV_HAS_GPUMAT
/// View of a CV_8UC1 cv::cuda::GpuMat (device memory; the GpuMat must outlive the view).
/// Compiles with any OpenCV that ships the header; a GpuMat holds device memory only when
/// OpenCV was built with CUDA.
inline DeviceView device_view(const cv::cuda::GpuMat& m) {
    detail::check_cv_grey(m, "device_view", "gpumat");
    const DeviceView v{m.data, m.cols, m.rows, m.step};
    validate_view("device_view", "gpumat", v);
    return v;
}

inline DeviceMutView device_mut_view(cv::cuda::GpuMat& m) {
    const DeviceView v = device_view(m);
    return {m.data, v.width, v.height, v.pitch};
}

/// A cv::cuda::GpuMat header over a device view (no copy, no allocation).
inline cv::cuda::GpuMat to_gpumat(DeviceView v) {
    validate_view("to_gpumat", "view", v);
    return cv::cuda::GpuMat(v.height, v.width, CV_8UC1, const_cast<std::uint8_t*>(v.data), v.pitch);
}
#endif

/// cv::KeyPoint of a Kestrel keypoint detected with pyramid `pyr`: size = kKeypointDiameter * s^level
/// (the FAST circle on its level, in level-0 pixels), response = score, octave = level.
inline cv::KeyPoint to_cv_keypoint(const Keypoint& k, const PyramidConfig& pyr) {
    if (k.level < 0 || k.level >= pyr.levels)
        detail::check_range("to_cv_keypoint", "keypoint.level", k.level, 0, pyr.levels - 1);
    return cv::KeyPoint(k.x, k.y, kKeypointDiameter * level_scale(pyr, k.level), -1.0f, k.score, k.level, -1);
}

inline std::vector<cv::KeyPoint> to_cv_keypoints(const std::vector<Keypoint>& kps, const PyramidConfig& pyr) {
    std::vector<cv::KeyPoint> out;
    out.reserve(kps.size());
    for (const Keypoint& k : kps) out.push_back(to_cv_keypoint(k, pyr));
    return out;
}

/// Positions of keypoints, tracks or LK results (anything with float members x and y).
template <typename T>
std::vector<cv::Point2f> to_cv_points(const std::vector<T>& items) {
    std::vector<cv::Point2f> out;
    out.reserve(items.size());
    for (const T& t : items) out.emplace_back(t.x, t.y);
    return out;
}

}  // namespace kestrel
