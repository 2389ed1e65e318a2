// Relative-pose RANSAC on the GPU in one launch per call: the staging of the points, both passes (translation:
// five-point or two-point; then rotation only), the in-order scan with the adaptive stop, and the finish (mask,
// decomposition, cheirality, refinement, the rotation-only model and the model choice).
//
// A block is 16 lane groups of 16 threads. Blocks take chunks of 16 hypotheses from a counter (one hypothesis
// per lane group) until the pass has stopped or its cap is handed out. A lane group draws its hypothesis' sample,
// solves it (five-point: detail::fpl_solve on a shared-memory workspace; two-point and rotation only: every lane
// the same) and scores every model with the MSAC sum in detail::pose_msac's order (lane l the points l, l + 16,
// ..., then the xor butterfly 8, 4, 2, 1); the lowest cost (the lower solution on ties) is the hypothesis' model,
// kept in a ring of results. When a chunk completes, its block marks it done and, holding the scan lock, scans
// the done chunks in index order (detail::pose_scan's rule: a strictly lower cost wins, the stop test after every
// hypothesis); the scan's stop ends the handing out. The rotation pass starts once the translation pass has
// stopped (its cap follows from that result). The last block to leave runs detail::pose_finish and resets the
// state for the next call.
//
// No block waits for one that has not started: the stager, the chunks being solved and the scan lock's holder
// are all running blocks, so any grid size works, also when only part of it is resident (e.g. a green context).
//
// Reference it must match: detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp), bit for bit: the same
// rules headers, +, -, *, /, sqrt and explicit fma only, the finish's sums in the order detail::PoseHostSum
// emulates, and this file is compiled with --fmad=false (CMakeLists.txt) so that nvcc fuses no a * b + c the host
// does not fuse either (the host side is built with -ffp-contract=off).
#include <climits>

#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

using detail::kFplLanes;
using detail::kPoseLanes;
constexpr unsigned kFull = 0xffffffffu;

/// detail::fpl_solve's lane group on the device: f(lane), then the group's barrier.
struct WarpLanes {
    int lane;
    unsigned mask;
    template <class F>
    __device__ void each(const F& f) const {
        f(lane);
        __syncwarp(mask);
    }
};

__device__ __forceinline__ int ld_volatile(const int* p) { return *reinterpret_cast<const volatile int*>(p); }

/// Stages the points (modes 1, 2) with the block's threads.
__device__ void stage_points(const PosePrepare& in, int n) {
    for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
        double* p = in.x1 + 3 * i;
        double* q = in.x2 + 3 * i;
        if (in.mode == 1) {
            for (int c = 0; c < 3; ++c) {
                p[c] = static_cast<double>(in.b1[3 * i + c]);
                q[c] = static_cast<double>(in.b2[3 * i + c]);
            }
            detail::pose_normalize3(p);
            detail::pose_normalize3(q);
            if (in.s) in.s[i] = static_cast<double>(in.ppr[i]);
        } else if (in.mode == 2) {
            p[0] = in.n1[2 * i];
            p[1] = in.n1[2 * i + 1];
            p[2] = 1.0;
            q[0] = in.n2[2 * i];
            q[1] = in.n2[2 * i + 1];
            q[2] = 1.0;
        }
    }
}

/// detail::pose_msac of model M on a lane group (lane in [0, 16), its mask).
__device__ double score_lanes(const detail::PoseProblem& p, const double* M, int lane, unsigned mask, int* inliers) {
    double cost = 0.0;
    int cnt = 0;
    for (int i = lane; i < p.n; i += detail::kPoseScoreLanes)
        detail::pose_msac_add(detail::pose_point_error2(p, M, i), p.thr2, cost, cnt);
    for (int off = detail::kPoseScoreLanes / 2; off >= 1; off >>= 1) {
        cost = cost + __shfl_xor_sync(mask, cost, off);
        cnt = cnt + __shfl_xor_sync(mask, cnt, off);
    }
    *inliers = cnt;
    return cost;
}

/// detail::pose_hypothesis on a lane group: the result of hypothesis k into the ring.
__device__ void run_hypothesis(const detail::PoseProblem& p, int k, detail::FplWork& w, int lane, unsigned mask,
                               const PoseBuffers& b) {
    int idx[detail::kPoseMaxSample];
    double best = 1e300;
    int best_inl = 0;
    double Mb[9];
    for (int j = 0; j < 9; ++j) Mb[j] = 0.0;
    if (detail::pose_hypothesis_sample(p, k, idx)) {
        if (p.method == 0) {
            if (lane < 15) {
                const int j = lane / 3, c = lane % 3;
                w.sample[lane] = p.x1[3 * idx[j] + c];
                w.sample[15 + lane] = p.x2[3 * idx[j] + c];
            }
            __syncwarp(mask);
            const int nr = detail::fpl_solve(WarpLanes{lane, mask}, w);
            for (int r = 0; r < nr; ++r) {
                if (!w.ok[r]) continue;
                double E[9];
                for (int j = 0; j < 9; ++j) E[j] = w.E[r][j];
                int inl = 0;
                const double c = score_lanes(p, E, lane, mask, &inl);
                if (c < best) {
                    best = c;
                    best_inl = inl;
                    for (int j = 0; j < 9; ++j) Mb[j] = E[j];
                }
            }
            __syncwarp(mask);  // the workspace is read: the next hypothesis may write it
        } else {
            double M[9];
            if (detail::pose_hypothesis_model2(p, idx, M)) {
                int inl = 0;
                const double c = score_lanes(p, M, lane, mask, &inl);
                best = c;
                best_inl = inl;
                for (int j = 0; j < 9; ++j) Mb[j] = M[j];
            }
        }
    }
    const int slot = k % kPoseRing;
    if (lane == 0) {
        b.hcost[slot] = best;
        b.hinliers[slot] = best_inl;
        for (int j = 0; j < 9; ++j) b.hmodel[9 * slot + j] = Mb[j];
    }
}

/// The in-order scan of pass `pass` over the done chunks, by one thread holding the lock; after releasing it,
/// scans again when the next chunk has completed meanwhile (its block found the lock held).
__device__ void scan_chunks(int pass, int cap, int n, const int* table, const PoseBuffers& b) {
    PoseDeviceState* st = b.state;
    for (;;) {
        if (atomicCAS(&st->lock, 0, 1) != 0) return;
        __threadfence();
        int c = ld_volatile(&st->scanned[pass]);
        detail::PoseScan s;
        s.best = ld_volatile(&st->scan[pass].best);
        s.cost = __ldcg(&st->scan[pass].cost);
        s.inliers = ld_volatile(&st->scan[pass].inliers);
        s.used = ld_volatile(&st->scan[pass].used);
        s.stopped = ld_volatile(&st->scan[pass].stopped);
        while (!s.stopped && c * kPoseGroups < cap && ld_volatile(b.done + pass * kPoseRingChunks + c % kPoseRingChunks) == c + 1) {
            __threadfence();
            for (int j = 0; j < kPoseGroups && !s.stopped; ++j) {
                const int k = c * kPoseGroups + j;
                if (k >= cap) break;
                const int slot = k % kPoseRing;
                const double cost = __ldcg(b.hcost + slot);
                if (cost < s.cost) {
                    s.best = k;
                    s.cost = cost;
                    s.inliers = __ldcg(b.hinliers + slot);
                    for (int q = 0; q < 9; ++q) st->best[pass][q] = __ldcg(b.hmodel + 9 * slot + q);
                }
                const int req = s.best < 0 ? cap : table[detail::pose_stop_bin(s.inliers, n)];
                s.used = k + 1;
                if (k + 1 >= req || k + 1 >= cap) s.stopped = 1;
            }
            ++c;
        }
        st->scan[pass] = s;
        st->scanned[pass] = c;
        __threadfence();
        if (s.stopped) *reinterpret_cast<volatile int*>(&st->stop[pass]) = 1;
        __threadfence();
        atomicExch(&st->lock, 0);
        __threadfence();
        if (s.stopped || c * kPoseGroups >= cap ||
            ld_volatile(b.done + pass * kPoseRingChunks + c % kPoseRingChunks) != c + 1)
            return;
    }
}

/// detail::pose_finish's sums on the block: each thread its points, the warp butterfly, the warps in order.
struct BlockSum {
    double* sh;  // kPoseFinishWarps * 30
    template <int K, class F>
    KESTREL_HD void sum(const F& f, int n, double* out) const {
#if defined(__CUDA_ARCH__)
        double acc[K];
        for (int k = 0; k < K; ++k) acc[k] = 0.0;
        for (int i = static_cast<int>(threadIdx.x); i < n; i += detail::kPoseFinishThreads) f(i, acc);
        for (int k = 0; k < K; ++k)
            for (int off = kPoseLanes / 2; off >= 1; off >>= 1) acc[k] = acc[k] + __shfl_xor_sync(kFull, acc[k], off);
        const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
        const int w = static_cast<int>(threadIdx.x) / kPoseLanes;
        __syncthreads();  // the previous sum's totals are read
        if (lane == 0)
            for (int k = 0; k < K; ++k) sh[w * K + k] = acc[k];
        __syncthreads();
        for (int k = 0; k < K; ++k) {
            double v = sh[k];
            for (int q = 1; q < detail::kPoseFinishWarps; ++q) v = v + sh[q * K + k];
            out[k] = v;
        }
#else
        (void)f;
        (void)n;
        (void)out;
#endif
    }
    KESTREL_HD void zero(std::uint8_t* mask, int from, int to) const {
#if defined(__CUDA_ARCH__)
        for (int i = from + static_cast<int>(threadIdx.x); i < to; i += detail::kPoseFinishThreads) mask[i] = 0;
#else
        (void)mask;
        (void)from;
        (void)to;
#endif
    }
};

union PoseShared {
    detail::FplWork w[kPoseGroups];
    double sum[detail::kPoseFinishWarps * 30];
};

__global__ void __launch_bounds__(kPoseThreads, 2) pose_call_kernel(PoseCallParams prm, PoseBuffers b) {
    __shared__ PoseShared sh;
    __shared__ int s_val;
    PoseDeviceState* st = b.state;
    const int t = static_cast<int>(threadIdx.x);
    const int g = t / kFplLanes, lane = t % kFplLanes;
    const unsigned mask = 0xffffu << (16 * (g & 1));
    // The count, and the points staged by the first block to arrive (the others wait for it: it is running).
    int n = prm.prep.bound;
    if (prm.prep.device_count) {
        const int c = *prm.prep.device_count;
        n = c < 0 ? 0 : (c > prm.prep.bound ? prm.prep.bound : c);
    }
    if (prm.prep.mode != 0) {
        if (t == 0) s_val = atomicAdd(&st->arrived, 1);
        __syncthreads();
        if (s_val == 0) {
            stage_points(prm.prep, n);
            __threadfence();
            __syncthreads();
            if (t == 0) atomicExch(&st->staged, 1);
        } else if (t == 0) {
            while (ld_volatile(&st->staged) == 0) __nanosleep(64);
        }
        __syncthreads();
        __threadfence();
    }
    const bool run = n >= prm.prep.min_points;
    for (int pass = 0; pass < 2 && run; ++pass) {
        if (pass == 1 && !prm.prep.rotation_pass) break;
        detail::PoseProblem p = prm.problem[pass];
        p.n = n;
        int cap = prm.cap[pass];
        if (pass == 1) {  // after the translation pass' stop: its result gives the cap
            if (t == 0)
                while (ld_volatile(&st->stop[0]) == 0) __nanosleep(64);
            __syncthreads();
            __threadfence();
            detail::PoseScan s0;
            s0.best = ld_volatile(&st->scan[0].best);
            s0.inliers = ld_volatile(&st->scan[0].inliers);
            cap = detail::pose_rotation_cap(s0, n, prm.table[1], prm.cap[1]);
        }
        for (;;) {
            if (t == 0) {
                int c = -1;
                if (ld_volatile(&st->stop[pass]) == 0) {
                    c = atomicAdd(&st->next[pass], 1);
                    if (c * kPoseGroups >= cap) {
                        c = -1;
                    } else {
                        while (c - ld_volatile(&st->scanned[pass]) >= kPoseRingChunks) __nanosleep(64);
                    }
                }
                s_val = c;
            }
            __syncthreads();
            const int c = s_val;
            __syncthreads();
            if (c < 0) break;
            const int k = c * kPoseGroups + g;
            if (k < cap) run_hypothesis(p, k, sh.w[g], lane, mask, b);
            __threadfence();
            __syncthreads();
            if (t == 0) {
                *reinterpret_cast<volatile int*>(b.done + pass * kPoseRingChunks + c % kPoseRingChunks) = c + 1;
                __threadfence();
                scan_chunks(pass, cap, n, prm.table[pass], b);
            }
        }
    }
    // The last block to leave: the finish, then the reset for the next call.
    __threadfence();
    __syncthreads();
    if (t == 0) s_val = static_cast<int>(atomicAdd(&st->exited, 1u));
    __syncthreads();
    if (s_val != static_cast<int>(gridDim.x) - 1) return;
    __threadfence();
    detail::PoseFinishParams fp = prm.fp;
    fp.pe.n = n;
    detail::PoseScan sc[2];
    double Eb[9], Rb[9];
    for (int q = 0; q < 2; ++q) {
        sc[q].best = ld_volatile(&st->scan[q].best);
        sc[q].cost = __ldcg(&st->scan[q].cost);
        sc[q].inliers = ld_volatile(&st->scan[q].inliers);
        sc[q].used = ld_volatile(&st->scan[q].used);
        sc[q].stopped = ld_volatile(&st->scan[q].stopped);
    }
    for (int j = 0; j < 9; ++j) {
        Eb[j] = __ldcg(&st->best[0][j]);
        Rb[j] = __ldcg(&st->best[1][j]);
    }
    PoseRecord rec;
    detail::pose_finish(BlockSum{sh.sum}, fp, sc[0], Eb, sc[1], Rb, b.mask, rec);
    if (t == 0) *b.record = rec;
    for (int i = t; i < 2 * kPoseRingChunks; i += kPoseThreads) b.done[i] = 0;
    if (t == 0) {
        for (int q = 0; q < 2; ++q) {
            st->scan[q] = detail::PoseScan{};
            for (int j = 0; j < 9; ++j) st->best[q][j] = 0.0;
            st->next[q] = 0;
            st->scanned[q] = 0;
            st->stop[q] = 0;
        }
        st->lock = 0;
        st->arrived = 0;
        st->staged = 0;
        st->exited = 0u;
    }
}

}  // namespace

int pose_blocks_per_sm() {
    int blocks = 0;
    KESTREL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, pose_call_kernel, kPoseThreads, 0),
                 "RelativePoseEstimator occupancy");
    return blocks > 0 ? blocks : 1;
}

void launch_pose_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    pose_call_kernel<<<blocks > 0 ? blocks : 1, kPoseThreads, 0, stream>>>(prm, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator");
}

}  // namespace kestrel::kernels
