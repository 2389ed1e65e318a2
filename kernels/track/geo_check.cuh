// Launch interface of kernels/track/geo_check.cu: FeatureTracker's geometric check on the device, around the
// relative-pose estimator's device entry (RelativePoseEstimator::estimate_device_async). CPU reference it must
// match: detail::GeometricCheck::run (src/track/geometric_check.cpp); both use detail/geo_check_rules.hpp.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/geo_check_rules.hpp"

namespace kestrel::kernels {

/// The gather: every track's verdict, the checked ones' bearings and pixels per radian compacted in track order.
struct GeoGatherLaunch {
    detail::CameraSetup cam;
    detail::TrackVerdictRule rule;
    const LkResult* fwd = nullptr;               // count results (pinned or device)
    const LkResult* back = nullptr;              // forward-backward only, else null
    const Point2f* origins = nullptr;            // the previous positions
    const detail::AnchorResult* anchors = nullptr;  // anchoring only, else null
    int count = 0;
    float* b1 = nullptr;        // 3 * count floats: the checked tracks' previous positions, unit bearings
    float* b2 = nullptr;        // and their new ones
    float* ppr = nullptr;       // count floats: pixels per radian at the new bearing
    double* n1 = nullptr;       // on the plane (detail::geo_check_on_plane): 2 * count doubles, normalized points
    double* n2 = nullptr;       // (null otherwise)
    int* index = nullptr;       // count: checked point k -> track index
    int* checked = nullptr;     // one int: how many were checked
    std::uint8_t* outlier = nullptr;  // count flags, zeroed here (set by the apply launch)
};

/// The verdicts: when the estimate applies, every checked track's evidence is updated against the estimate's model
/// (detail::geo_evidence_update) and decides its end; the summary (checked count, the estimator's record) for the
/// host.
struct GeoApplyLaunch {
    const PoseRecord* record = nullptr;   // the estimator's device record
    const int* checked = nullptr;
    const int* index = nullptr;
    const float* b1 = nullptr;            // the gather's bearings and pixels per radian
    const float* b2 = nullptr;
    const float* ppr = nullptr;
    int min_tracks = 0;
    detail::GeoEvidenceRule rule{};
    int has_prior = 0;     // the frame's rotation prior (the gyro), by value
    double prior[9] = {};
    detail::GeoTrackEvidence* evidence = nullptr;  // one per track (pinned), updated in place
    std::uint8_t* outlier = nullptr;
    detail::GeoCheckSummary* summary = nullptr;  // pinned
};

void launch_geo_gather(const GeoGatherLaunch& p, cudaStream_t stream);
void launch_geo_apply(const GeoApplyLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
