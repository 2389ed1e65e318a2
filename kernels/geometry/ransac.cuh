// Internal launch interface of kernels/geometry/ransac.cu (host-callable, no device code). The kernel matches the
// CPU reference detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp) bit for bit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/ransac_rules.hpp"
#include "kestrel/relative_pose_types.hpp"

namespace kestrel::kernels {

constexpr int kPoseThreads = detail::kPoseFinishThreads;               // one block: 16 lane groups, or the finish
constexpr int kPoseGroups = kPoseThreads / detail::kFplLanes;           // hypotheses per chunk at most (one per lane group)
constexpr int kPoseRing = 4096;                                         // hypotheses' results held until scanned
constexpr int kPose2Wave0 = 64;  // two-point call: translation hypotheses of the first wave (every block at once)
constexpr int kPose2Wave1 = 48;  // two-point call: rotation-only hypotheses of the first wave

/// The state of one call on the device (one per estimator). Zero at allocation; the finish resets it for the
/// next call.
struct PoseDeviceState {
    detail::PoseScan scan[2];  // 0: the translation pass, 1: the rotation-only pass
    double best[2][9];         // the winners' models so far
    int next[2];               // the next chunk to hand out, per pass
    int scanned[2];            // hypotheses scanned in order, per pass
    int stop[2];               // 1 once the pass' scan has stopped
    int lock[2];               // the scanner's lock, per pass (a straggler of the stopped translation pass that
                               // holds it must not make a rotation hypothesis' scan be skipped: the holder re-checks
                               // only its own pass)
    int count;                 // the two-point call's staged count (mode 3: known only once staged)
    int arrived;               // blocks started (the first stages the points)
    int staged;                // 1 once the points are staged
    unsigned int exited;       // blocks done (the last runs the finish)
};

/// Device buffers of an estimator (made once), by value.
struct PoseBuffers {
    int* tables;           // 2 * (kPoseStopBins + 1): m = 5, m = 2
    double* hmodel;        // 2 * kPoseRing * 9: the winning model of hypothesis k of pass p at p * kPoseRing + k % kPoseRing
    double* hcost;         // 2 * kPoseRing
    int* hinliers;         // 2 * kPoseRing
    int* hreq;             // 2 * kPoseRing (five-point call): the hypothesis' stop count were it the best (its table entry)
    int* done;             // 2 * kPoseRing: hypothesis k of pass p is in when done[p][k % kPoseRing] == k + 1
    PoseDeviceState* state;
    std::uint8_t* mask;    // max_points
    PoseRecord* record;
};

/// Where the points come from. mode 0: staged by the host into x1, x2, s (3n, 3n, n doubles); 1: float bearings
/// (b1, b2: 3 floats per point; ppr: pixels per radian, optional), normalized with detail::pose_normalize3;
/// 2: normalized points (n1, n2: 2 doubles per point) -> (x, y, 1). The count is `bound`, or *device_count
/// clamped to [0, bound]; 3 (two-point call only): staged by the call's hook (kernels/geometry/pose2_call.cuh:
/// the tracker's check, kernels/track/geo_check_pose.cu).
struct PosePrepare {
    int mode;
    const float* b1;
    const float* b2;
    const float* ppr;
    const double* n1;
    const double* n2;
    const int* device_count;
    int bound;
    double* x1;
    double* x2;
    double* s;          // null: no per-point scale
    int min_points;     // below it neither pass runs (TooFewPoints)
    int rotation_pass;  // 0: no rotation-only pass
};

/// One call: the staging, both passes, the finish. problem[p].n (and the finish's) are replaced by the count.
struct PoseCallParams {
    PosePrepare prep;
    detail::PoseProblem problem[2];
    int cap[2];           // the pass' max_hypotheses (the rotation pass: its largest; detail::pose_rotation_cap lowers it)
    const int* table[2];  // the pass' stop table (device)
    int in_flight;        // hypotheses in flight
    int score_cutoff;     // five-point call: 1 a model's scoring stops once it cannot win (set by launch_pose_call;
                          // KESTREL_POSE_SCORE_CUTOFF=0: off, for measurements; the same results)
    detail::PoseFinishParams fp;
    // Host entries: the record and the mask (bound bytes) also written to these (pinned) by the kernel itself, in
    // place of copies after it; null: not.
    PoseRecord* host_record;
    std::uint8_t* host_mask;
};

/// Blocks of the call's kernel that can be resident on one SM (for the grid size); also allows the kernel its
/// dynamic shared memory on the current device (call once per estimator, before launch_pose_call).
int pose_blocks_per_sm();
/// The whole call in one launch of `blocks` blocks (any number >= 1 works: blocks take chunks of hypotheses as they
/// come, the scan runs in order as chunks complete, the last block to leave runs the finish).
void launch_pose_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream);
/// The two-point method's call (problem[0].method == 1) in one launch of `blocks` blocks (any number >= 1; at
/// most kPose2Wave0 + kPose2Wave1 do work): the first wave of both passes over all blocks, then the last block to
/// leave it scans both passes (solving past the wave when a scan has not stopped there) and runs the finish.
void launch_pose2_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream);

#if defined(KESTREL_POSE_PROFILE)
/// The per-phase profile of both kernels (builds with KESTREL_POSE_PROFILE only): up to `max` entries, each a
/// phase's name and its mean per call since the last take (timeline entries: microseconds after the first
/// block's start, globaltimer; cycle entries: clock64 cycles, summed over the call's blocks; counts per call);
/// returns the number of entries and resets the profile. Entries that never occurred are left out.
int pose_profile_take(const char** names, double* values, int max, double* calls);
#endif

}  // namespace kestrel::kernels
