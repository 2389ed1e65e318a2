// Launch interface of kernels/track/geo_check.cu: FeatureTracker's geometric check on the device, around the
// relative-pose estimator's device entry (RelativePoseEstimator::estimate_device_async). CPU reference it must
// match: detail::GeometricCheck::run (src/track/geometric_check.cpp); both use detail/geo_check_rules.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/geo_check_rules.hpp"

namespace kestrel::kernels {

/// The gather: every track's verdict, the checked ones' normalized points compacted in track order.
struct GeoGatherLaunch {
    detail::CameraSetup cam;
    detail::TrackVerdictRule rule;
    const LkResult* fwd = nullptr;               // count results (pinned or device)
    const LkResult* back = nullptr;              // forward-backward only, else null
    const Point2f* origins = nullptr;            // the previous positions
    const detail::AnchorResult* anchors = nullptr;  // anchoring only, else null
    int count = 0;
    double* x1 = nullptr;       // 2 * count doubles: the checked tracks' previous positions, normalized
    double* x2 = nullptr;       // and their new ones
    int* index = nullptr;       // count: checked point k -> track index
    int* checked = nullptr;     // one int: how many were checked
    std::uint8_t* outlier = nullptr;  // count flags, zeroed here (set by the apply launch)
};

/// The verdicts: every checked track outside the mask of an estimate that applies is an outlier; the summary
/// (checked count, the estimator's record) for the host.
struct GeoApplyLaunch {
    const std::uint8_t* mask = nullptr;   // the estimator's device mask (one byte per checked point)
    const PoseRecord* record = nullptr;   // the estimator's device record
    const int* checked = nullptr;
    const int* index = nullptr;
    int min_tracks = 0;
    std::uint8_t* outlier = nullptr;
    detail::GeoCheckSummary* summary = nullptr;  // pinned
};

void launch_geo_gather(const GeoGatherLaunch& p, cudaStream_t stream);
void launch_geo_apply(const GeoApplyLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
