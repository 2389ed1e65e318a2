// Internal launch interface of kernels/geometry/ransac.cu (host-callable, no device code). The kernels match the
// CPU reference detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp) bit for bit.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kestrel/detail/ransac_rules.hpp"
#include "kestrel/relative_pose_types.hpp"

namespace kestrel::kernels {

constexpr int kPoseSolveThreads = 32;      // hypotheses per block of the solve launch (one per thread; one warp per block spreads the
                                           // solves, and their 5 KB of local memory each, over the SMs)
constexpr int kPoseScoreThreads = 256;     // 8 warps: one model each per batch
constexpr int kPoseScoreWarps = kPoseScoreThreads / detail::kPoseLanes;
constexpr int kPoseTile = 256;             // points per shared-memory tile (a multiple of 32: lane order kept)
constexpr int kPoseMaxRound = 2048;        // hypotheses of one pass per round at most (the scan: 256 threads x 8)
constexpr int kPoseScanPer = kPoseMaxRound / kPoseScoreThreads;
constexpr int kPoseSlots0 = kPoseMaxRound * detail::kFivePointMaxSolutions;  // translation models per round
constexpr int kPoseSlots = kPoseSlots0 + kPoseMaxRound;                       // + rotation models

/// The state of one call on the device (one per estimator), reset by the prepare launch.
struct PoseDeviceState {
    detail::PoseScan scan[2];  // 0: the translation pass, 1: the rotation-only pass
    double best[2][9];         // the winners' models so far
    int n;                     // the point count of the call
    int nmodels;               // models solved in the current round (solve -> score)
    unsigned int done;         // score blocks finished in the current round
    int pad;
};

/// Device buffers of an estimator (made once), by value.
struct PoseBuffers {
    int* tables;           // 2 * (kPoseStopBins + 1): m = 5, m = 2
    double* models;        // kPoseSlots * 9: slot j * 10 + s of the translation pass, kPoseSlots0 + j of the rotation pass
    int* nsol;             // 2 * kPoseMaxRound: models of hypothesis j of pass p at p * kPoseMaxRound + j
    int* list;             // kPoseSlots: the slots solved this round, in any order (scored by warps)
    double* cost;          // kPoseSlots: MSAC cost per slot
    int* inliers;          // kPoseSlots
    PoseDeviceState* state;
    std::uint8_t* mask;    // max_points
    PoseRecord* record;
};

/// Where the points come from. mode 0: staged by the host into x1, x2, s (3n, 3n, n doubles); 1: float bearings
/// (b1, b2: 3 floats per point; ppr: pixels per radian, optional), normalized with detail::pose_normalize3;
/// 2: normalized points (n1, n2: 2 doubles per point) -> (x, y, 1). The count is `bound`, or *device_count
/// clamped to [0, bound].
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
    int min_points;     // below it both passes are stopped at once (TooFewPoints)
    int rotation_pass;  // 0: the rotation pass is stopped at once
};

/// One round: hypotheses [first[p], first[p] + count[p]) of pass p (count <= kPoseMaxRound). problem[p].n is
/// replaced by the device count.
struct PoseRound {
    detail::PoseProblem problem[2];
    int first[2];
    int count[2];
    int cap[2];          // the pass' max_hypotheses (the rotation pass: its largest; detail::pose_rotation_cap on the device)
    const int* table[2]; // the pass' stop table (device)
};

/// Stages the points (modes 1, 2), the count, resets the state.
void launch_pose_prepare(const PosePrepare& in, const PoseBuffers& b, int blocks, cudaStream_t stream);
/// Solves the round's hypotheses (one thread each), unless their pass has stopped.
void launch_pose_solve(const PoseRound& r, const PoseBuffers& b, cudaStream_t stream);
/// Scores the round's models (a warp each, points in shared-memory tiles; `blocks` sized to the SMs, any number
/// works), then the last block to finish scans both passes in order (adaptive stop).
void launch_pose_score(const PoseRound& r, const PoseBuffers& b, int blocks, cudaStream_t stream);
/// The finish (one block of detail::kPoseFinishThreads): detail::pose_finish -> record and mask.
void launch_pose_finish(const detail::PoseFinishParams& fp, const PoseBuffers& b, cudaStream_t stream);

}  // namespace kestrel::kernels
