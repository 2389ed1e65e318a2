// Device helpers shared by the relative-pose kernels (kernels/geometry/ransac.cu and the two-point call's
// kernel, kernels/geometry/pose2_call.cuh, also instantiated by kernels/track/): the staging of the points (by the
// first block to arrive: stage_once), the finish's sums over several blocks (GridSum: detail::PoseHostSum's order;
// pose_finish_shared) and the per-phase profile
// (KESTREL_POSE_PROFILE builds of ransac.cu only). Device code: include from .cu files only; everything is
// internal to the including file.
#pragma once
#include <cstdint>

#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

using detail::kPoseLanes;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ int ld_volatile(const int* p) { return *reinterpret_cast<const volatile int*>(p); }
__device__ __forceinline__ unsigned ld_volatile(const unsigned* p) {
    return *reinterpret_cast<const volatile unsigned*>(p);
}

// ---- the per-phase profile (KESTREL_POSE_PROFILE builds only) --------------------------------------------------
#if defined(KESTREL_POSE_PROFILE)
#define KPF(...) __VA_ARGS__
namespace prof {
constexpr int kMaxSums = 16;
enum Slot : int {
    // Timeline: globaltimer (ns) of the call, folded as the time after T0.
    T0 = 0,      // the first block's start (min)
    ArriveLast,  // the last block's start (max)
    Staged,      // the stager's end
    Stop0,       // the translation scan stopped
    Stop1,       // the rotation scan stopped
    ExitFirst,   // the first block to leave its passes (min)
    ExitLast,    // the last one: the finishing block (max)
    ScanEnd,     // two-point: the finishing block's scans done
    FinishEnd,   // pose_finish done
    End,         // the kernel's end (after the verdicts, copies, reset)
    kTimeline,
    // Cycles (clock64 of thread 0) summed over the call's blocks, and counts.
    CyStage = kTimeline,
    CyAcquire,  // five-point: taking a chunk (including the wait of a chunk beyond the first wave)
    CyPass1Wait,
    CySolve,
    CyList,
    CyScore,
    CyRing,
    CyScan,  // scan_warp (including the lock attempts)
    Chunks,
    CyRoundSolve,  // two-point rounds: the solve, the scoring, the ring write
    CyRoundScore,
    CyRoundWrite,
    Rounds,
    CyPhaseBLoad,
    CyScan0,
    CyScan1,
    CyFinish,  // the whole pose_finish
    CyTail,    // after pose_finish: the verdicts, the copies, the reset
    Seq,       // the finish's sums so far in this call (not folded)
    LastClock, // not folded
    Sum0,      // per sum in order: its cycles, the cycles before it since the last sum, its K
    kSlots = Sum0 + 3 * kMaxSums
};
__device__ unsigned long long g_call[kSlots];
__device__ unsigned long long g_acc[kSlots];
__device__ unsigned long long g_calls;
__device__ __forceinline__ unsigned long long now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned long long cyc() { return static_cast<unsigned long long>(clock64()); }
__device__ __forceinline__ void tmin(int s) { atomicMin(&g_call[s], now()); }
__device__ __forceinline__ void tmax(int s) { atomicMax(&g_call[s], now()); }
__device__ __forceinline__ void add(int s, unsigned long long v) { atomicAdd(&g_call[s], v); }
/// The call's values into the accumulated profile, then the call's slots reset (thread 0 of the last block, at
/// the kernel's end).
__device__ void fold() {
    __threadfence();
    const unsigned long long t0 = g_call[T0];
    for (int s = 1; s < kTimeline; ++s) {
        const unsigned long long v = g_call[s];
        if (v != 0 && v != ~0ull && v >= t0) g_acc[s] += v - t0;
    }
    for (int s = kTimeline; s < kSlots; ++s) {
        if (s == Seq || s == LastClock) continue;
        if (s >= Sum0 && (s - Sum0) % 3 == 2) {
            if (g_call[s]) g_acc[s] = g_call[s];  // the sum's K
        } else {
            g_acc[s] += g_call[s];
        }
    }
    ++g_calls;
    for (int s = 0; s < kSlots; ++s) g_call[s] = (s == T0 || s == ExitFirst || s == Stop0 || s == Stop1) ? ~0ull : 0ull;
    __threadfence();
}
/// The finish's sums: called by thread 0 at a sum's start and end.
__device__ void sum_done(int K, unsigned long long c0, unsigned long long c1) {
    const int q = static_cast<int>(g_call[Seq]++);
    if (q < kMaxSums) {
        g_call[Sum0 + 3 * q] += c1 - c0;
        g_call[Sum0 + 3 * q + 1] += c0 - g_call[LastClock];
        g_call[Sum0 + 3 * q + 2] = static_cast<unsigned long long>(K);
    }
    g_call[LastClock] = c1;
}
}  // namespace prof
#else
#define KPF(...)
#endif

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

/// The first block to arrive runs `stage()` (block-wide; the points, and whatever the caller stages with them),
/// the others wait for it (it is running); every block leaves synchronized, the staged data visible to it.
/// s_val: an int of shared memory.
template <class F>
__device__ void stage_once(PoseDeviceState* st, int& s_val, const F& stage) {
    const int t = static_cast<int>(threadIdx.x);
    if (t == 0) s_val = atomicAdd(&st->arrived, 1);
    __syncthreads();
    if (s_val == 0) {
        KPF(const unsigned long long pf_s = prof::cyc();)
        stage();
        __threadfence();
        __syncthreads();
        KPF(if (t == 0) {
            prof::add(prof::CyStage, prof::cyc() - pf_s);
            prof::tmax(prof::Staged);
        })
        if (t == 0) atomicExch(&st->staged, 1);
    } else if (t == 0) {
        while (ld_volatile(&st->staged) == 0) __nanosleep(32);
    }
    __syncthreads();
    __threadfence();
}

/// detail::pose_finish's sums (detail::PoseHostSum's order) over `blocks` blocks: rank r sums the slices r,
/// r + blocks, ... of the points (detail::pose_finish_slices), each as a block: thread tau its points lo + tau,
/// lo + tau + 256, ...; the warp's sums by the xor butterfly 16, 8, 4, 2, 1 (every lane ends with the same bits:
/// each step adds two equal group sums in either order), for K >= 8 as a reduce-scatter (at step `off` a lane keeps
/// the half of its sums selected by lane & off and adds the partner's copy: the butterfly's additions, 31 shuffles
/// instead of 5 K; lane k ends with sum k); thread k < K adds the warps' sums in order. One block: thread k adds
/// the slices' sums in order itself. Several: each slice's sums to st->fpart (two sums' worth: a block writes a
/// slice of sum q + 2 only once every block has written its slices of sum q + 1, so after it has read sum q), then
/// st->fdone counts the slice; once it reaches slices * (q + 1) thread k < K of every block adds sum q's slices in
/// order. Every thread of every block gets the same totals (and runs the algebra between the sums with them).
/// The mask entries of a slice's points are written and read only by the block of its rank (the same for every
/// sum of a call); entries from n on by rank 0.
/// sh: partials [0, kPoseFinishWarps * K), totals [kPoseFinishWarps * 32, + K). The totals are written after a
/// barrier of the sum that follows every thread's read of the previous totals; the partials after the barrier
/// that ends the previous slice.
struct GridSum {
    double* sh;  // kPoseFinishWarps * 32 + 32
    PoseDeviceState* st;
    int rank;    // 0: the finishing block
    int blocks;  // ranks [0, blocks), at most the slices
    int n;       // the points: the slices
    mutable int q;  // the sums so far in this call
    int one;     // 1: the algebra between the sums (solo) on thread 0, its results handed to the block; 0: every thread

    /// Slice [lo, hi)'s per-warp sums to sh[w * K + k].
    template <int K, class F>
    __device__ static void warp_sums(const F& f, int lo, int hi, double* sh) {
        const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
        const int w = static_cast<int>(threadIdx.x) / kPoseLanes;
        if constexpr (K >= 8) {
            double acc[kPoseLanes];
            KESTREL_UNROLL
            for (int k = 0; k < kPoseLanes; ++k) acc[k] = 0.0;
            for (int i = lo + static_cast<int>(threadIdx.x); i < hi; i += detail::kPoseFinishThreads) f(i, acc);
            // a[0 .. 32): sums k (entries >= K are zero); after each step a[0 .. H) are the sums of the kept half.
            KESTREL_UNROLL
            for (int off = 16; off >= 1; off >>= 1) {
                const bool upper = (lane & off) != 0;
                KESTREL_UNROLL
                for (int i = 0; i < off; ++i) {
                    if (i >= K) break;  // both halves zero from here (compile-time after unrolling)
                    const double lo_ = acc[i], hi_ = i + off < K ? acc[i + off] : 0.0;
                    const double recv = __shfl_xor_sync(kFull, upper ? lo_ : hi_, off);
                    acc[i] = (upper ? hi_ : lo_) + recv;
                }
            }
            if (lane < K) sh[w * K + lane] = acc[0];
        } else {
            double acc[K];
            KESTREL_UNROLL
            for (int k = 0; k < K; ++k) acc[k] = 0.0;
            for (int i = lo + static_cast<int>(threadIdx.x); i < hi; i += detail::kPoseFinishThreads) f(i, acc);
            KESTREL_UNROLL
            for (int k = 0; k < K; ++k)
                KESTREL_UNROLL
                for (int off = kPoseLanes / 2; off >= 1; off >>= 1) acc[k] = acc[k] + __shfl_xor_sync(kFull, acc[k], off);
            if (lane == 0)
                KESTREL_UNROLL
                for (int k = 0; k < K; ++k) sh[w * K + k] = acc[k];
        }
    }

    template <int K, class F>
    KESTREL_HD void sum(const F& f, int np, double* out) const {
#if defined(__CUDA_ARCH__)
        constexpr int W = detail::kPoseFinishWarps;
        const int t = static_cast<int>(threadIdx.x);
        double* tot = sh + W * kPoseLanes;
        KPF(const unsigned long long pf_c0 = prof::cyc();)
        const int S = detail::pose_finish_slices(np), len = detail::pose_finish_slice_points(np);
        const int qq = q++;
        double* part = &st->fpart[qq & 1][0][0];
        double mine = 0.0;
        int own = 0;
        for (int s = rank; s < S; s += blocks) {
            const int lo = s * len, hi = np - lo < len ? np : lo + len;
            warp_sums<K>(f, lo, hi, sh);
            __syncthreads();
            if (t < K) {
                double v = sh[t];
                for (int w = 1; w < W; ++w) v = v + sh[w * K + t];
                if (blocks == 1) {
                    mine = s == 0 ? v : mine + v;
                } else {
                    part[s * kPoseLanes + t] = v;
                    __threadfence();
                }
            }
            __syncthreads();  // sh is rewritten by the next slice; the slice's sums are out
            ++own;
        }
        if (blocks > 1) {
            if (t == 0) {
                atomicAdd(&st->fdone, static_cast<unsigned>(own));
                const unsigned target = static_cast<unsigned>(S) * static_cast<unsigned>(qq + 1);
                while (ld_volatile(&st->fdone) < target) {
                }
                __threadfence();
            }
            __syncthreads();
            if (t < K) {
                double v = __ldcg(part + t);
                for (int s = 1; s < S; ++s) v = v + __ldcg(part + s * kPoseLanes + t);
                mine = v;
            }
        }
        if (t < K) tot[t] = mine;
        __syncthreads();
        KESTREL_UNROLL
        for (int k = 0; k < K; ++k) out[k] = tot[k];
        KPF(if (t == 0 && rank == 0) prof::sum_done(K, pf_c0, prof::cyc());)
#else
        (void)f;
        (void)np;
        (void)out;
#endif
    }
    /// The algebra between the sums: f writes out[0 .. count) (count <= kPoseFinishWarps * 32); thread 0 runs it
    /// and hands the values to the block through the partials' area of sh (free between the sums: its last reads
    /// were before the previous sum's end barrier, its next writes after this one's).
    template <class F>
    KESTREL_HD void solo(const F& f, double* out, int count) const {
#if defined(__CUDA_ARCH__)
        if (!one) {
            f();
            return;
        }
        if (threadIdx.x == 0) {
            f();
            for (int k = 0; k < count; ++k) sh[k] = out[k];
        }
        __syncthreads();
        for (int k = 0; k < count; ++k) out[k] = sh[k];
        __syncthreads();
#else
        (void)out;
        (void)count;
        f();
#endif
    }
    /// mask[from, to) = 0: the block's slices' entries, and rank 0 those from n on.
    KESTREL_HD void zero(std::uint8_t* mask, int from, int to) const {
#if defined(__CUDA_ARCH__)
        const int S = detail::pose_finish_slices(n), len = detail::pose_finish_slice_points(n);
        for (int s = rank; s < S; s += blocks) {
            const int lo = s * len, hi = n - lo < len ? n : lo + len;
            const int a = from > lo ? from : lo, e = to < hi ? to : hi;
            for (int i = a + static_cast<int>(threadIdx.x); i < e; i += detail::kPoseFinishThreads) mask[i] = 0;
        }
        if (rank == 0)
            for (int i = (from > n ? from : n) + static_cast<int>(threadIdx.x); i < to; i += detail::kPoseFinishThreads)
                mask[i] = 0;
#else
        (void)mask;
        (void)from;
        (void)to;
#endif
    }
    /// mask[i] = bit `bit` of mask[i] for the block's slices' points (each thread its own points, as in its sums:
    /// no barrier needed).
    KESTREL_HD void keep_bit(std::uint8_t* mask, int np, int bit) const {
#if defined(__CUDA_ARCH__)
        const int S = detail::pose_finish_slices(np), len = detail::pose_finish_slice_points(np);
        for (int s = rank; s < S; s += blocks) {
            const int lo = s * len, hi = np - lo < len ? np : lo + len;
            for (int i = lo + static_cast<int>(threadIdx.x); i < hi; i += detail::kPoseFinishThreads)
                mask[i] = static_cast<std::uint8_t>((mask[i] >> bit) & 1);
        }
#else
        (void)mask;
        (void)np;
        (void)bit;
#endif
    }
};

/// The candidates of the finish of n points (blocks [0, c) wait for the finishing block): as many as take part at
/// most (its slices, finish_blocks, the grid), none when that is one.
__device__ __forceinline__ int pose_finish_candidates(const PoseCallParams& prm, int n) {
    const int S = detail::pose_finish_slices(n);
    int c = S < prm.finish_blocks ? S : prm.finish_blocks;
    c = c < static_cast<int>(gridDim.x) ? c : static_cast<int>(gridDim.x);
    return c > 1 ? c : 0;
}
/// The ranks of the finish: the finishing block f is rank 0, the candidates b < cand other than f follow in order;
/// ranks [0, pose_finish_ranks) take part (at most the slices and finish_blocks; a candidate past them leaves).
__device__ __forceinline__ int pose_finish_ranks(const PoseCallParams& prm, int n, int cand, int f) {
    const int S = detail::pose_finish_slices(n);
    int r = cand + (f >= cand ? 1 : 0);
    r = r < S ? r : S;
    r = r < prm.finish_blocks ? r : prm.finish_blocks;
    return r > 1 ? r : 1;
}

/// detail::pose_finish on the blocks that share it (every thread; one call site for both roles). The finishing
/// block (`last`; sc, Eb, Rb its passes' winners) publishes them and its index to the candidates, runs the finish
/// as rank 0, then waits until every candidate has left (their mask entries are written; the state may be reset);
/// returns true, its record in rec. A candidate (pose_finish_candidates) waits for the go, reads the winners into
/// sc, Eb, Rb, runs the finish as its rank (its slices of the sums; its record is dropped) when the rank takes
/// part, then leaves (st->fleft); returns false. s_val: an int of shared memory (read by the caller before).
template <int kMethod>
__device__ bool pose_finish_shared(const PoseCallParams& prm, const PoseBuffers& b, int n, double* sh, int& s_val,
                                   bool last, detail::PoseScan* sc, double* Eb, double* Rb, PoseRecord& rec) {
    PoseDeviceState* st = b.state;
    const int t = static_cast<int>(threadIdx.x);
    const int me = static_cast<int>(blockIdx.x);
    const int cand = pose_finish_candidates(prm, n);
    const int helpers = cand - (last && me < cand ? 1 : 0);
    int f = me, rank = 0;
    if (last) {
        if (helpers > 0) {
            if (t < 2) st->scan[t] = sc[t];
            if (t < 9) {
                st->best[0][t] = Eb[t];
                st->best[1][t] = Rb[t];
            }
            if (t == 0) st->fblock = f;
            __threadfence();
            __syncthreads();
            if (t == 0) atomicExch(&st->fgo, 1);
        }
    } else {
        __syncthreads();  // every thread has read s_val (the caller's exit test)
        if (t == 0) {
            while (ld_volatile(&st->fgo) == 0) __nanosleep(32);
            __threadfence();
            s_val = ld_volatile(&st->fblock);
        }
        __syncthreads();
        f = s_val;
        rank = me < f ? me + 1 : me;
    }
    const int ranks = pose_finish_ranks(prm, n, cand, f);
    if (rank < ranks) {
        if (!last) {
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
        }
        detail::PoseFinishParams fp = prm.fp;
        fp.pe.n = n;
        detail::pose_finish<kMethod>(GridSum{sh, st, rank, ranks, n, 0, prm.finish_solo}, fp, sc[0], Eb, sc[1], Rb,
                                     b.mask, rec);
    }
    if (!last) {
        __threadfence();
        __syncthreads();
        if (t == 0) atomicAdd(&st->fleft, 1);
        return false;
    }
    if (helpers > 0) {
        if (t == 0) {
            while (ld_volatile(&st->fleft) < helpers) __nanosleep(32);
            __threadfence();
        }
        __syncthreads();
    }
    return true;
}

/// The finish's state for the next call (thread 0 of the finishing block, after pose_finish_shared).
__device__ __forceinline__ void pose_finish_reset(PoseDeviceState* st) {
    st->fgo = 0;
    st->fblock = 0;
    st->fleft = 0;
    st->fdone = 0u;
}

/// The MSAC sums (detail::pose_msac_point: integer units, the same in any order) of model M over the points i0,
/// i0 + stride, ... below p.n, four at a time: their errors first (independent chains), then their terms.
__device__ __forceinline__ void msac_points(const detail::PoseProblem& p, const double* M, int i0, int stride,
                                            unsigned long long& units, int& cnt) {
    constexpr int U = 4;
    int i = i0;
    for (; i + (U - 1) * stride < p.n; i += U * stride) {
        if (p.method == 2) {
            double e2[U];
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) e2[u] = detail::pose_point_error2(p, M, i + u * stride);
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) detail::pose_msac_add_units(e2[u], p, units, cnt);
        } else {
            double r[U], d[U];
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) {
                const int k = i + u * stride;
                detail::pose_epipolar(M, p.x1 + 3 * k, p.x2 + 3 * k, p.sphere, &r[u], &d[u]);
            }
            // pose_msac_rd's terms, each division taken whether or not the point is an inlier (only an inlier's
            // is read), so that the four overlap.
            double e2[U];
            bool in[U];
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) {
                const double num = detail::pose_weight2(p, i + u * stride) * (r[u] * r[u]);
                in[u] = detail::pose_msac_in(p, num, d[u]);
                e2[u] = num / d[u];
            }
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) detail::pose_msac_units(p, in[u], e2[u], units, cnt);
        }
    }
    for (; i < p.n; i += stride) detail::pose_msac_point(p, M, i, units, cnt);
}

/// The state of detail::pose_scan carried through a warp's prefix: the best hypothesis so far (a later one wins only
/// with a strictly lower cost) and its stop count (the table's entry at its inlier fraction).
struct ScanBest {
    double cost;
    int idx;  // hypothesis, -1: none
    int inl;
    int req;  // its stop count
};
__device__ __forceinline__ ScanBest scan_shfl_up(const ScanBest& v, int off) {
    ScanBest r;
    r.cost = __shfl_up_sync(kFull, v.cost, off);
    r.idx = __shfl_up_sync(kFull, v.idx, off);
    r.inl = __shfl_up_sync(kFull, v.inl, off);
    r.req = __shfl_up_sync(kFull, v.req, off);
    return r;
}
__device__ __forceinline__ ScanBest scan_shfl(const ScanBest& v, int src) {
    ScanBest r;
    r.cost = __shfl_sync(kFull, v.cost, src);
    r.idx = __shfl_sync(kFull, v.idx, src);
    r.inl = __shfl_sync(kFull, v.inl, src);
    r.req = __shfl_sync(kFull, v.req, src);
    return r;
}
/// Host entries: the record and the mask (prm.fp.bound bytes) straight to pinned memory by the finishing block,
/// in place of copies after the kernel (block-wide; the mask of every thread's points is written before).
__device__ void copy_to_host(const PoseCallParams& prm, const PoseBuffers& b, const PoseRecord& rec) {
    if (!prm.host_mask) return;
    const int t = static_cast<int>(threadIdx.x);
    __syncthreads();  // every thread's mask entries are written
    const int bound = prm.fp.bound;
    const int words = bound / 4;
    const unsigned* src = reinterpret_cast<const unsigned*>(b.mask);
    unsigned* dst = reinterpret_cast<unsigned*>(prm.host_mask);
    for (int w = t; w < words; w += kPoseThreads) dst[w] = src[w];
    for (int i = 4 * words + t; i < bound; i += kPoseThreads) prm.host_mask[i] = b.mask[i];
    if (t == 0) *prm.host_record = rec;
}

}  // namespace
}  // namespace kestrel::kernels
