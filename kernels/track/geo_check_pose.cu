// The tracker's geometric check on the device (detail::PoseTrackStage, include/kestrel/detail/geo_check_rules.hpp):
// the two-point RANSAC call's kernel (kernels/geometry/pose2_call.cuh) with a hook that stages the frame's checked
// tracks itself (the track verdict and the bearings, in track order) and ends the tracks outside the deciding
// model's mask after the finish, so that the check costs no launch or copy of its own. Compiled with --fmad=false
// (CMakeLists.txt), as the geometry kernels: it matches detail::relative_pose_cpu bit for bit.
#include "kernels/track/geo_check_pose.cuh"

#include "kernels/geometry/pose2_call.cuh"

namespace kestrel::kernels {
namespace {

/// The two-point call's hook for the tracker's check (mode 3).
struct TrackStage {
    static constexpr bool kStages = true;
    detail::PoseTrackStage g;

    /// The tracker's checked tracks staged by the block in track order (detail::geo_check_bearings on the
    /// plane, as (x, y, 1)); returns the count (every thread).
    __device__ int stage(const PosePrepare& in, int* warp_counts) const {
        const int t = static_cast<int>(threadIdx.x), lane = t % kPoseLanes, w = t / kPoseLanes;
        constexpr int W = kPoseThreads / kPoseLanes;
        int base = 0;
        for (int c0 = 0; c0 < g.tracks; c0 += kPoseThreads) {
            const int i = c0 + t;
            double b1[3], b2[3], ppr, n1[2], n2[2];
            bool ok = false;
            if (i < g.tracks) {  // the first test reads the LK results (pinned) once; the later ones its verdicts
                detail::TrackVerdict v;
                bool skip = false;
                if (g.first) {
                    v = detail::track_verdict(g.results[i], g.back + i, g.origins[i].x, g.origins[i].y, g.anchors + i, g.rule);
                    g.verdicts[i] = v;
                    g.flags[i] = 0;
                } else {
                    v = g.verdicts[i];
                    skip = g.flags[i] != 0;
                }
                if (!skip) ok = detail::geo_check_bearings(g.cam, v, g.from[i].x, g.from[i].y, b1, b2, &ppr, n1, n2);
            }
            const unsigned bal = __ballot_sync(kFull, ok);
            if (lane == 0) warp_counts[w] = __popc(bal);
            __syncthreads();
            int before = base, total = 0;
            for (int q = 0; q < W; ++q) {
                const int cq = warp_counts[q];
                if (q < w) before += cq;
                total += cq;
            }
            if (ok) {
                const int k = before + __popc(bal & ((1u << lane) - 1u));
                double* p = in.x1 + 3 * k;
                double* q = in.x2 + 3 * k;
                p[0] = n1[0];
                p[1] = n1[1];
                p[2] = 1.0;
                q[0] = n2[0];
                q[1] = n2[1];
                q[2] = 1.0;
                g.index[k] = i;
            }
            base += total;
            __syncthreads();  // warp_counts is rewritten by the next chunk
        }
        return base;
    }

    /// After the finish: every checked track outside the mask ends as an outlier when the check applies
    /// (detail::geo_check_applies); the counts and the record to *g.out.
    __device__ void verdicts(int n, const PoseRecord& rec, const std::uint8_t* mask, int* s_val) const {
        const int t = static_cast<int>(threadIdx.x);
        if (t == 0) *s_val = 0;
        __syncthreads();  // the mask of every thread's points is written
        const bool applies = detail::geo_check_applies(n, g.min_tracks, rec.status);
        int ended = 0;
        if (applies)
            for (int k = t; k < n; k += kPoseThreads)
                if (!mask[k]) {
                    const int i = g.index[k];
                    g.outlier[i] = 1;
                    g.flags[i] = 1;
                    ++ended;
                }
        if (ended) atomicAdd(s_val, ended);
        __syncthreads();
        if (t == 0) {
            g.out->checked = n;
            g.out->ended = *s_val;
            g.out->rec = rec;
        }
    }
};

}  // namespace

void launch_geo_check_pose2(const PoseCallParams& prm, const PoseBuffers& b, const detail::PoseTrackStage& g,
                            int blocks, cudaStream_t stream) {
    launch_pose2_hooked(prm, b, TrackStage{g}, blocks, stream);
}

}  // namespace kestrel::kernels
