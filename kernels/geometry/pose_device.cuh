// Device helpers shared by the relative-pose kernels (kernels/geometry/ransac.cu and the two-point call's
// kernel, kernels/geometry/pose2_call.cuh, also instantiated by kernels/track/): the staging of the points (by the
// first block to arrive: stage_once), the finish's block-wide sums (BlockSum: detail::PoseHostSum's order) and the
// per-phase profile
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

/// detail::pose_finish's sums on the block: each thread its points; the warp's sums by the xor butterfly
/// 16, 8, 4, 2, 1 (every lane ends with the same bits: each step adds two equal group sums in either order), for
/// K >= 8 as a reduce-scatter (at step `off` a lane keeps the half of its sums selected by lane & off and adds
/// the partner's copy: the butterfly's additions, 31 shuffles instead of 5 K; lane k ends with sum k); then
/// thread k < K adds the warps' sums in order ((w0 + w1) + w2) + ... and every thread reads the K totals.
/// sh: partials [0, kPoseFinishWarps * K), totals [kPoseFinishWarps * 32, + K). Two barriers per sum: the
/// partials of a sum are written after the previous sum's totals were made (its second barrier), the totals
/// after every thread has passed this sum's first barrier (so it has read the previous totals).
struct BlockSum {
    double* sh;  // kPoseFinishWarps * 32 + 32
    template <int K>
    __device__ static void reduce_scatter(double* a, int lane) {
        // a[0 .. 32): sums k (entries >= K are zero); after each step a[0 .. H) are the sums of the kept half.
        KESTREL_UNROLL
        for (int off = 16; off >= 1; off >>= 1) {
            const bool upper = (lane & off) != 0;
            KESTREL_UNROLL
            for (int i = 0; i < off; ++i) {
                if (i >= K) break;  // both halves zero from here (compile-time after unrolling)
                const double lo = a[i], hi = i + off < K ? a[i + off] : 0.0;
                const double recv = __shfl_xor_sync(kFull, upper ? lo : hi, off);
                a[i] = (upper ? hi : lo) + recv;
            }
        }
    }
    template <int K, class F>
    KESTREL_HD void sum(const F& f, int n, double* out) const {
#if defined(__CUDA_ARCH__)
        constexpr int W = detail::kPoseFinishWarps;
        const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
        const int w = static_cast<int>(threadIdx.x) / kPoseLanes;
        double* tot = sh + W * kPoseLanes;
        KPF(const unsigned long long pf_c0 = prof::cyc();)
        if constexpr (K >= 8) {
            double acc[kPoseLanes];
            KESTREL_UNROLL
            for (int k = 0; k < kPoseLanes; ++k) acc[k] = 0.0;
            for (int i = static_cast<int>(threadIdx.x); i < n; i += detail::kPoseFinishThreads) f(i, acc);
            reduce_scatter<K>(acc, lane);
            if (lane < K) sh[w * K + lane] = acc[0];
        } else {
            double acc[K];
            KESTREL_UNROLL
            for (int k = 0; k < K; ++k) acc[k] = 0.0;
            for (int i = static_cast<int>(threadIdx.x); i < n; i += detail::kPoseFinishThreads) f(i, acc);
            KESTREL_UNROLL
            for (int k = 0; k < K; ++k)
                KESTREL_UNROLL
                for (int off = kPoseLanes / 2; off >= 1; off >>= 1) acc[k] = acc[k] + __shfl_xor_sync(kFull, acc[k], off);
            if (lane == 0)
                KESTREL_UNROLL
                for (int k = 0; k < K; ++k) sh[w * K + k] = acc[k];
        }
        __syncthreads();
        if (threadIdx.x < K) {
            const int k = static_cast<int>(threadIdx.x);
            double v = sh[k];
            for (int q = 1; q < W; ++q) v = v + sh[q * K + k];
            tot[k] = v;
        }
        __syncthreads();
        KESTREL_UNROLL
        for (int k = 0; k < K; ++k) out[k] = tot[k];
        KPF(if (threadIdx.x == 0) prof::sum_done(K, pf_c0, prof::cyc());)
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
    // The points of each thread are those of its sums (no barrier needed).
    KESTREL_HD void keep_bit(std::uint8_t* mask, int n, int bit) const {
#if defined(__CUDA_ARCH__)
        for (int i = static_cast<int>(threadIdx.x); i < n; i += detail::kPoseFinishThreads)
            mask[i] = static_cast<std::uint8_t>((mask[i] >> bit) & 1);
#else
        (void)mask;
        (void)n;
        (void)bit;
#endif
    }
};

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

/// msac_points with an early stop (the whole warp calls it, the same i0 % 32 pattern): the warp's points U at a
/// time per lane, after each step the warp's partial sum (a lower bound of the model's cost: every term is >= 0) is
/// compared with `bound`; once it reaches it the warp stops and returns true (the sums are then incomplete).
__device__ __forceinline__ bool msac_points_cut(const detail::PoseProblem& p, const double* M, int i0, int stride,
                                                unsigned long long bound, unsigned long long& units, int& cnt) {
    constexpr int U = 4;
    const int lane0 = i0 - static_cast<int>(threadIdx.x) % kPoseLanes;  // the warp's first point
    for (int base = lane0; base < p.n; base += U * stride) {
        const int i = base + (i0 - lane0);
        if (i + (U - 1) * stride < p.n && p.method != 2) {
            double r[U], d[U];
            KESTREL_UNROLL
            for (int u = 0; u < U; ++u) {
                const int k = i + u * stride;
                detail::pose_epipolar(M, p.x1 + 3 * k, p.x2 + 3 * k, p.sphere, &r[u], &d[u]);
            }
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
        } else {
            for (int u = 0; u < U; ++u)
                if (i + u * stride < p.n) detail::pose_msac_point(p, M, i + u * stride, units, cnt);
        }
        unsigned long long w = units;
        for (int off = kPoseLanes / 2; off >= 1; off >>= 1) w += __shfl_xor_sync(kFull, w, off);
        if (w >= bound) return true;
    }
    return false;
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
