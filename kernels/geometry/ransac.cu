// Relative-pose RANSAC on the GPU: many hypotheses per launch, one per thread; their models scored by warps
// over shared-memory tiles of the points; the in-order scan with the adaptive stop on the device; the finish
// (mask, decomposition, cheirality, refinement, the rotation-only model and the model choice) on the device.
//
// Per call: prepare (stage the points, the count, reset), then per round of hypotheses two launches (solve,
// score + scan; rounds after both passes stopped return at once, so the host enqueues every round without
// waiting), then the finish: one block. Nothing waits for the host; no launch depends on its blocks being
// resident together (the score launch's last block is found by an atomic ticket).
//
// Model: hypothesis k of a pass draws its sample from the counter-based generator (seed, k) and solves it
// (detail::pose_hypothesis_solve: five-point, two-point with the prior, or rotation only); every solution is
// scored by the MSAC cost of the squared error in pixels (detail::pose_msac: lane l sums the points l, l + 32,
// ... in order, then the xor butterfly 16, 8, 4, 2, 1; tiles of 256 points keep that order); the lowest cost
// (lower solution index on ties) is the hypothesis' model. The scan is detail::pose_scan, computed as a
// parallel prefix of "first index with the lowest cost" (comparisons only: the same state).
//
// Reference it must match: detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp), bit for bit: the
// same rules header, +, -, *, /, sqrt only, the finish's sums in the order detail::PoseHostSum emulates, and
// this file is compiled with --fmad=false (CMakeLists.txt) so that nvcc fuses no a * b + c the host does not
// fuse either (the host side is built with -ffp-contract=off).
#include <climits>

#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

using detail::kPoseLanes;
constexpr unsigned kFull = 0xffffffffu;

__global__ void pose_prepare_kernel(PosePrepare in, PoseBuffers b) {
    int n = in.bound;
    if (in.device_count) {
        const int c = *in.device_count;
        n = c < 0 ? 0 : (c > in.bound ? in.bound : c);
    }
    const int stride = static_cast<int>(gridDim.x * blockDim.x);
    for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += stride) {
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
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        PoseDeviceState* st = b.state;
        for (int p = 0; p < 2; ++p) {
            st->scan[p] = detail::PoseScan{};
            for (int j = 0; j < 9; ++j) st->best[p][j] = 0.0;
        }
        if (n < in.min_points) st->scan[0].stopped = 1;
        if (n < in.min_points || !in.rotation_pass) st->scan[1].stopped = 1;
        st->n = n;
        st->nmodels = 0;
        st->done = 0u;
    }
}

__device__ __forceinline__ double* model_of(const PoseBuffers& b, int slot) { return b.models + 9 * slot; }

__global__ void __launch_bounds__(kPoseSolveThreads) pose_solve_kernel(PoseRound r, PoseBuffers b) {
    const int tid = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (tid >= r.count[0] + r.count[1]) return;
    const int pass = tid < r.count[0] ? 0 : 1;
    const int j = pass == 0 ? tid : tid - r.count[0];
    PoseDeviceState* st = b.state;
    if (st->scan[pass].stopped) return;  // written by the previous round's scan
    detail::PoseProblem p = r.problem[pass];
    p.n = st->n;
    const int slot0 = pass == 0 ? j * detail::kFivePointMaxSolutions : kPoseSlots0 + j;
    double(*M)[9] = reinterpret_cast<double(*)[9]>(model_of(b, slot0));
    const int ns = detail::pose_hypothesis_solve(p, r.first[pass] + j, M);
    b.nsol[pass * kPoseMaxRound + j] = ns;
    if (ns > 0) {
        const int base = atomicAdd(&st->nmodels, ns);
        for (int s = 0; s < ns; ++s) b.list[base + s] = slot0 + s;
    }
}

/// The best of (cost, hypothesis index, inliers, slot): the later one wins only with a strictly lower cost
/// (detail::pose_scan's rule; none = cost 1e300, index -1).
struct Best {
    double cost;
    int idx, inliers, slot;
};
__device__ __forceinline__ Best later_wins_if_lower(const Best& a, const Best& later) {
    return later.cost < a.cost ? later : a;
}

/// detail::pose_scan over the round's hypotheses of one pass, by the whole block (kPoseScoreThreads).
__device__ void scan_pass(int pass, const PoseRound& r, const PoseBuffers& b, int n, double* sh_cost, int* sh_idx,
                          int* sh_inl, int* sh_slot, int* sh_stop) {
    PoseDeviceState* st = b.state;
    const detail::PoseScan s0 = st->scan[pass];
    const int count = r.count[pass];
    if (s0.stopped || count == 0) return;  // the same for every thread
    const int first = r.first[pass];
    // The rotation pass runs in rounds after the translation pass has stopped: its cap follows from that result.
    const int cap = pass == 0 ? r.cap[0] : detail::pose_rotation_cap(st->scan[0], n, r.table[1], r.cap[1]);
    const int t = static_cast<int>(threadIdx.x);
    // Each thread: its hypotheses' best models (detail::pose_hypothesis' choice), and their segment's best.
    Best h[kPoseScanPer];
    Best seg{1e300, -1, 0, -1};
    for (int q = 0; q < kPoseScanPer; ++q) {
        const int j = t * kPoseScanPer + q;
        h[q] = Best{1e300, -1, 0, -1};
        if (j >= count) continue;
        const int ns = b.nsol[pass * kPoseMaxRound + j];
        const int slot0 = pass == 0 ? j * detail::kFivePointMaxSolutions : kPoseSlots0 + j;
        for (int s = 0; s < ns; ++s) {
            const double c = __ldcg(b.cost + slot0 + s);
            if (c < h[q].cost) h[q] = Best{c, first + j, __ldcg(b.inliers + slot0 + s), slot0 + s};
        }
        seg = later_wins_if_lower(seg, h[q]);
    }
    // Inclusive prefix over the segments (Hillis-Steele).
    sh_cost[t] = seg.cost;
    sh_idx[t] = seg.idx;
    sh_inl[t] = seg.inliers;
    sh_slot[t] = seg.slot;
    if (t == 0) *sh_stop = INT_MAX;
    for (int off = 1; off < kPoseScoreThreads; off <<= 1) {
        __syncthreads();
        Best left{1e300, -1, 0, -1};
        if (t >= off) left = Best{sh_cost[t - off], sh_idx[t - off], sh_inl[t - off], sh_slot[t - off]};
        __syncthreads();
        if (t >= off) {
            const Best mine{sh_cost[t], sh_idx[t], sh_inl[t], sh_slot[t]};
            const Best c = later_wins_if_lower(left, mine);
            sh_cost[t] = c.cost;
            sh_idx[t] = c.idx;
            sh_inl[t] = c.inliers;
            sh_slot[t] = c.slot;
        }
    }
    __syncthreads();
    const Best carried{s0.best >= 0 ? s0.cost : 1e300, s0.best, s0.inliers, -1};
    Best cur = carried;
    if (t > 0) cur = later_wins_if_lower(carried, Best{sh_cost[t - 1], sh_idx[t - 1], sh_inl[t - 1], sh_slot[t - 1]});
    // Walk the own hypotheses with the stop test after each.
    int stop_j = INT_MAX;
    Best at_stop = cur;
    for (int q = 0; q < kPoseScanPer; ++q) {
        const int j = t * kPoseScanPer + q;
        if (j >= count) break;
        cur = later_wins_if_lower(cur, h[q]);
        const int k = first + j;
        const int* table = r.table[pass];
        const int need = cur.idx < 0 ? cap : table[detail::pose_stop_bin(cur.inliers, n)];
        if (k + 1 >= need || k + 1 >= cap) {
            stop_j = j;
            at_stop = cur;
            break;
        }
    }
    if (stop_j != INT_MAX) atomicMin(sh_stop, stop_j);
    __syncthreads();
    const int stop = *sh_stop;
    Best fin{};
    bool writer = false;
    int used = 0, stopped = 0;
    if (stop == INT_MAX) {
        if (t == 0) {
            writer = true;
            fin = later_wins_if_lower(carried, Best{sh_cost[kPoseScoreThreads - 1], sh_idx[kPoseScoreThreads - 1],
                                                    sh_inl[kPoseScoreThreads - 1], sh_slot[kPoseScoreThreads - 1]});
            used = first + count;
        }
    } else if (stop_j == stop) {
        writer = true;
        fin = at_stop;
        used = first + stop + 1;
        stopped = 1;
    }
    if (writer) {
        detail::PoseScan s = s0;
        if (fin.idx >= 0) {
            s.best = fin.idx;
            s.cost = fin.cost;
            s.inliers = fin.inliers;
        }
        s.used = used;
        s.stopped = stopped;
        st->scan[pass] = s;
        if (fin.idx >= first && fin.slot >= 0) {
            const double* M = model_of(b, fin.slot);
            for (int q = 0; q < 9; ++q) st->best[pass][q] = M[q];
        }
    }
    __syncthreads();
}

__global__ void __launch_bounds__(kPoseScoreThreads) pose_score_kernel(PoseRound r, PoseBuffers b) {
    __shared__ double tile[kPoseTile * 7];
    __shared__ double sh_cost[kPoseScoreThreads];
    __shared__ int sh_idx[kPoseScoreThreads], sh_inl[kPoseScoreThreads], sh_slot[kPoseScoreThreads];
    __shared__ int sh_stop;
    __shared__ unsigned int ticket;
    PoseDeviceState* st = b.state;
    const int n = st->n;
    const int nm = st->nmodels;
    const int warp = static_cast<int>(threadIdx.x) / kPoseLanes;
    const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
    const detail::PoseProblem& p0 = r.problem[0];
    const int batches = (nm + kPoseScoreWarps - 1) / kPoseScoreWarps;
    for (int bt = static_cast<int>(blockIdx.x); bt < batches; bt += static_cast<int>(gridDim.x)) {
        const int m = bt * kPoseScoreWarps + warp;
        const bool valid = m < nm;  // the same for the whole warp
        const int slot = valid ? b.list[m] : 0;
        const int pass = slot >= kPoseSlots0 ? 1 : 0;
        double M[9];
        for (int q = 0; q < 9; ++q) M[q] = valid ? model_of(b, slot)[q] : 0.0;
        const int method = r.problem[pass].method;
        const double thr2 = r.problem[pass].thr2;
        double cost = 0.0;
        int cnt = 0;
        for (int base = 0; base < n; base += kPoseTile) {
            const int tn = n - base < kPoseTile ? n - base : kPoseTile;
            __syncthreads();  // the previous tile is no longer read
            for (int t = static_cast<int>(threadIdx.x); t < tn; t += kPoseScoreThreads) {
                const int i = base + t;
                double* e = tile + 7 * t;
                for (int c = 0; c < 3; ++c) {
                    e[c] = p0.x1[3 * i + c];
                    e[3 + c] = p0.x2[3 * i + c];
                }
                e[6] = p0.s ? p0.s[i] * p0.s[i] : p0.f2;  // detail::pose_weight2
            }
            __syncthreads();
            if (valid)
                for (int t = lane; t < tn; t += kPoseLanes) {
                    const double* e = tile + 7 * t;
                    detail::pose_msac_add(detail::pose_error2(method, p0.sphere, M, e, e + 3, e[6]), thr2, cost, cnt);
                }
        }
        for (int off = kPoseLanes / 2; off >= 1; off >>= 1) {  // detail::pose_msac's butterfly
            cost = cost + __shfl_xor_sync(kFull, cost, off);
            cnt = cnt + __shfl_xor_sync(kFull, cnt, off);
        }
        if (valid && lane == 0) {
            b.cost[slot] = cost;
            b.inliers[slot] = cnt;
        }
    }
    // The last block to finish scans both passes.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) ticket = atomicAdd(&st->done, 1u);
    __syncthreads();
    if (ticket != gridDim.x - 1) return;
    __threadfence();
    scan_pass(0, r, b, n, sh_cost, sh_idx, sh_inl, sh_slot, &sh_stop);
    scan_pass(1, r, b, n, sh_cost, sh_idx, sh_inl, sh_slot, &sh_stop);
    if (threadIdx.x == 0) {
        st->done = 0u;
        st->nmodels = 0;
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

__global__ void __launch_bounds__(detail::kPoseFinishThreads) pose_finish_kernel(detail::PoseFinishParams fp,
                                                                                 PoseBuffers b) {
    __shared__ double sh[detail::kPoseFinishWarps * 30];
    const PoseDeviceState* st = b.state;
    fp.pe.n = st->n;
    const detail::PoseScan se = st->scan[0], sr = st->scan[1];
    double Eb[9], Rb[9];
    for (int j = 0; j < 9; ++j) {
        Eb[j] = st->best[0][j];
        Rb[j] = st->best[1][j];
    }
    PoseRecord rec;
    detail::pose_finish(BlockSum{sh}, fp, se, Eb, sr, Rb, b.mask, rec);
    if (threadIdx.x == 0) *b.record = rec;
}

}  // namespace

void launch_pose_prepare(const PosePrepare& in, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    pose_prepare_kernel<<<blocks, 256, 0, stream>>>(in, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator prepare");
}

void launch_pose_solve(const PoseRound& r, const PoseBuffers& b, cudaStream_t stream) {
    const int total = r.count[0] + r.count[1];
    if (total == 0) return;
    pose_solve_kernel<<<(total + kPoseSolveThreads - 1) / kPoseSolveThreads, kPoseSolveThreads, 0, stream>>>(r, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator solve");
}

void launch_pose_score(const PoseRound& r, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    pose_score_kernel<<<blocks, kPoseScoreThreads, 0, stream>>>(r, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator score");
}

void launch_pose_finish(const detail::PoseFinishParams& fp, const PoseBuffers& b, cudaStream_t stream) {
    pose_finish_kernel<<<1, detail::kPoseFinishThreads, 0, stream>>>(fp, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator finish");
}

}  // namespace kestrel::kernels
