// Relative-pose RANSAC on the GPU in one launch per call: the staging of the points, both passes (translation:
// five-point or two-point; then rotation only), the in-order scan with the adaptive stop, and the finish (mask,
// decomposition, cheirality, refinement, the rotation-only model and the model choice).
//
// A block is 16 lane groups of 16 threads. Blocks take chunks of 1 to 16 hypotheses from a counter
// until the pass has stopped or its cap is handed out. Lane group g draws hypothesis g's sample and solves it
// (five-point: detail::fpl_solve on a shared-memory workspace; two-point and rotation only: one lane); then the
// block's warps score the chunk's models, a warp per model (detail::pose_msac: integer units, so any split of the
// points gives the same sum); the lowest cost (the lower solution on ties) is the hypothesis' model, kept in a ring of results
// with a flag. Then warp 0, holding the scan lock, scans the results that are in, in index order, 32 at a time
// (detail::pose_scan's rule as a warp prefix: a strictly lower cost wins, the stop test after every hypothesis);
// the scan's stop ends the handing out. The rotation pass starts once the translation pass has stopped (its cap
// follows from that result). The last block to leave runs detail::pose_finish and resets the state for the next
// call. The chunk size and the grid change how much is solved past the stop, never the result.
//
// No block waits for one that has not started: the stager, the chunks being solved and the scan lock's holder
// are all running blocks, so any grid size works, also when only part of it is resident (e.g. a green context).
//
// Reference it must match: detail::relative_pose_cpu (src/geometry/relative_pose_cpu.cpp), bit for bit: the same
// rules headers, +, -, *, /, sqrt and explicit fma only, the finish's sums in the order detail::PoseHostSum
// emulates, and this file is compiled with --fmad=false (CMakeLists.txt) so that nvcc fuses no a * b + c the host
// does not fuse either (the host side is built with -ffp-contract=off).
#include <climits>
#include <cstdio>

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
    for (int s = 0; s < kSlots; ++s) g_call[s] = (s == T0 || s == ExitFirst) ? ~0ull : 0ull;
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

/// Mode 3: the tracker's checked tracks staged by the block in track order (detail::geo_check_bearings on the
/// plane, as (x, y, 1)); returns the count (every thread).
__device__ int stage_tracks(const PosePrepare& in, int* warp_counts) {
    const detail::PoseTrackStage& g = in.track;
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

/// The scan of pass `pass` by warp 0 of a block while it holds the lock: up to 256 hypotheses at a time, lane j
/// the hypotheses scanned + 8 j .. + 8 j + 7 whose results are in (the leading run of them); detail::pose_scan's
/// state as a warp prefix of the lanes' segments (a later hypothesis wins only with a strictly lower cost:
/// associative), then each lane walks its segment from the state before it, with each result's stop count (its
/// table entry, loaded with the result), to the first hypothesis whose stop test passes. After releasing the lock,
/// scans again when the next hypothesis has completed meanwhile (its block found the lock held).
constexpr int kScanSeg = 8;  // hypotheses per lane and scan step
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
__device__ void scan_warp(int pass, int cap, int n, const int* table, const PoseBuffers& b) {
    PoseDeviceState* st = b.state;
    const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
    int* done = b.done + pass * kPoseRing;
    const int ring0 = pass * kPoseRing;  // the pass' results (a hypothesis of the other pass may still write its own)
    for (;;) {
        int got = 0;
        if (lane == 0) got = atomicCAS(&st->lock[pass], 0, 1) == 0 ? 1 : 0;
        got = __shfl_sync(kFull, got, 0);
        if (!got) return;
        __threadfence();
        int base = ld_volatile(&st->scanned[pass]);
        detail::PoseScan s;
        s.best = ld_volatile(&st->scan[pass].best);
        s.cost = __ldcg(&st->scan[pass].cost);
        s.inliers = ld_volatile(&st->scan[pass].inliers);
        s.used = ld_volatile(&st->scan[pass].used);
        s.stopped = ld_volatile(&st->scan[pass].stopped);
        const int best0 = s.best;
        int sreq = s.best < 0 ? cap : table[detail::pose_stop_bin(s.inliers, n)];
        for (;;) {
            if (s.stopped || base >= cap) break;
            // The results that are in: the leading run over the lanes' segments.
            const int k0 = base + kScanSeg * lane;
            int run = 0;
            {
                bool in[kScanSeg];
                KESTREL_UNROLL
                for (int j = 0; j < kScanSeg; ++j) {
                    const int k = k0 + j;
                    in[j] = k < cap && ld_volatile(done + k % kPoseRing) == k + 1;
                }
                KESTREL_UNROLL
                for (int j = kScanSeg - 1; j >= 0; --j) run = in[j] ? run + 1 : 0;  // leading run from j = 0
            }
            const unsigned full = __ballot_sync(kFull, run == kScanSeg);
            const int L = full == kFull ? kPoseLanes : __ffs(~full) - 1;  // the first lane not full
            const int runL = L < kPoseLanes ? __shfl_sync(kFull, run, L) : 0;
            const int nvalid = kScanSeg * L + runL;
            if (nvalid == 0) break;
            const int mine = lane < L ? kScanSeg : (lane == L ? runL : 0);
            __threadfence();
            double c[kScanSeg];
            int inl[kScanSeg], req[kScanSeg];
            KESTREL_UNROLL
            for (int j = 0; j < kScanSeg; ++j) {
                c[j] = 1e300;
                inl[j] = 0;
                req[j] = cap;
                if (j < mine) {
                    const int slot = ring0 + (k0 + j) % kPoseRing;
                    c[j] = __ldcg(b.hcost + slot);
                    inl[j] = __ldcg(b.hinliers + slot);
                    req[j] = __ldcg(b.hreq + slot);
                }
            }
            // The segment's best (the first strictly lowest), then the inclusive prefix over the lanes.
            ScanBest seg{1e300, -1, 0, cap};
            KESTREL_UNROLL
            for (int j = 0; j < kScanSeg; ++j)
                if (c[j] < seg.cost) seg = ScanBest{c[j], k0 + j, inl[j], req[j]};
            ScanBest inc = seg;
            for (int off = 1; off < kPoseLanes; off <<= 1) {
                const ScanBest o = scan_shfl_up(inc, off);
                if (lane >= off && !(inc.cost < o.cost)) inc = o;
            }
            // The state before the lane's segment: the carried state, then the earlier lanes' best.
            ScanBest cur{s.cost, s.best, s.inliers, sreq};
            const ScanBest prev = scan_shfl_up(inc, 1);
            if (lane > 0 && prev.cost < cur.cost) cur = prev;
            // Walk the segment to the first stop.
            int stop_j = -1;
            KESTREL_UNROLL
            for (int j = 0; j < kScanSeg; ++j) {
                if (j >= mine || stop_j >= 0) continue;
                if (c[j] < cur.cost) cur = ScanBest{c[j], k0 + j, inl[j], req[j]};
                const int k = k0 + j;
                const int need = cur.idx < 0 ? cap : cur.req;
                if (k + 1 >= need || k + 1 >= cap) stop_j = j;
            }
            const unsigned stops = __ballot_sync(kFull, stop_j >= 0);
            const int last = stops ? __ffs(stops) - 1 : (runL > 0 ? L : L - 1);  // the lane that ends the step
            const ScanBest fin = scan_shfl(cur, last);
            const int used = stops ? base + kScanSeg * last + __shfl_sync(kFull, stop_j, last) + 1 : base + nvalid;
            s.cost = fin.cost;
            s.best = fin.idx;
            s.inliers = fin.inl;
            sreq = fin.idx < 0 ? cap : fin.req;
            s.used = used;
            s.stopped = stops ? 1 : 0;
            base = used;
            if (nvalid < kScanSeg * kPoseLanes) break;
        }
        if (s.best != best0 && s.best >= 0 && lane < 9)
            st->best[pass][lane] = __ldcg(b.hmodel + 9 * (ring0 + s.best % kPoseRing) + lane);
        if (lane == 0) {
            st->scan[pass] = s;
            st->scanned[pass] = base;
        }
        __syncwarp();
        __threadfence();
        if (lane == 0) {
            if (s.stopped) *reinterpret_cast<volatile int*>(&st->stop[pass]) = 1;
            KPF(if (s.stopped) prof::tmin(prof::Stop0 + pass);)
            __threadfence();
            atomicExch(&st->lock[pass], 0);
        }
        __syncwarp();
        __threadfence();
        const bool more = !s.stopped && base < cap && ld_volatile(done + base % kPoseRing) == base + 1;
        if (!__shfl_sync(kFull, more ? 1 : 0, 0)) return;
    }
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

union PoseShared {
    detail::FplWork w[kPoseGroups];
    double sum[detail::kPoseFinishWarps * kPoseLanes + kPoseLanes];
};

/// Chunk work: the models of the chunk's hypotheses (group g: nm[g] slots of w[g].E, valid where w[g].ok),
/// their MSAC sums (order-free integers, a warp per model).
struct ChunkShared {
    unsigned long long cost[kPoseGroups * detail::kFivePointMaxSolutions];
    int inl[kPoseGroups * detail::kFivePointMaxSolutions];
    int list[kPoseGroups * detail::kFivePointMaxSolutions];
    int nm[kPoseGroups];
    int count;
};

/// The kernel's shared memory (dynamic: above the 48 KB of static shared memory).
struct PoseSmem {
    PoseShared sh;
    ChunkShared ch;
    int s_val;
};

// One block per SM (255 registers: two blocks of 128 registers spill and were not faster end to end).
__global__ void __launch_bounds__(kPoseThreads, 1) pose_call_kernel(PoseCallParams prm, PoseBuffers b) {
    extern __shared__ __align__(16) unsigned char pose_smem[];
    PoseSmem& smem = *reinterpret_cast<PoseSmem*>(pose_smem);
    PoseShared& sh = smem.sh;
    ChunkShared& ch = smem.ch;
    int& s_val = smem.s_val;
    PoseDeviceState* st = b.state;
    const int t = static_cast<int>(threadIdx.x);
    const int g = t / kFplLanes, lane = t % kFplLanes;
    const unsigned mask = 0xffffu << (16 * (g & 1));
    KPF(if (t == 0) {
        prof::tmin(prof::T0);
        prof::tmax(prof::ArriveLast);
    })
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
            KPF(const unsigned long long pf_s = prof::cyc();)
            stage_points(prm.prep, n);
            __threadfence();
            __syncthreads();
            KPF(if (t == 0) {
                prof::add(prof::CyStage, prof::cyc() - pf_s);
                prof::tmax(prof::Staged);
            })
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
            KPF(const unsigned long long pf_w = prof::cyc();)
            if (t == 0)
                while (ld_volatile(&st->stop[0]) == 0) __nanosleep(64);
            __syncthreads();
            KPF(if (t == 0) prof::add(prof::CyPass1Wait, prof::cyc() - pf_w);)
            __threadfence();
            detail::PoseScan s0;
            s0.best = ld_volatile(&st->scan[0].best);
            s0.inliers = ld_volatile(&st->scan[0].inliers);
            cap = detail::pose_rotation_cap(s0, n, prm.table[1], prm.cap[1]);
        }
        // Hypotheses in flight: prm.in_flight (at most the cap), chunks of gh spread over that many blocks; the
        // others sit the pass out.
        const int target = prm.in_flight < cap ? prm.in_flight : cap;
        int gh = (target + static_cast<int>(gridDim.x) - 1) / static_cast<int>(gridDim.x);
        gh = gh < 1 ? 1 : (gh > kPoseGroups ? kPoseGroups : gh);
        const int active = (target + gh - 1) / gh;
        if (static_cast<int>(blockIdx.x) >= (active > 0 ? active : 1)) continue;
        for (;;) {
            KPF(unsigned long long pf_c = prof::cyc();)
            if (t == 0) {
                int c = -1;
                if (ld_volatile(&st->stop[pass]) == 0) {
                    c = atomicAdd(&st->next[pass], 1);
                    if (c * gh >= cap) {
                        c = -1;
                    } else if (c >= active) {
                        // Beyond the first wave the chunk waits until it can matter: its hypotheses lie below the
                        // stop that the scan's best so far asks for, and within `target` of the scanned ones (so
                        // within the ring); or the pass stops and it is dropped. Otherwise every block would start
                        // a second wave while the first one's results are being scanned. Only when chunks start
                        // changes, never the result; no deadlock: once everything before the chunk is scanned
                        // without a stop, the best so far asks for more than that.
                        const int* table = prm.table[pass];
                        for (;;) {
                            if (ld_volatile(&st->stop[pass]) != 0) {
                                c = -1;
                                break;
                            }
                            const int scanned = ld_volatile(&st->scanned[pass]);
                            const int best = ld_volatile(&st->scan[pass].best);
                            const int inl = ld_volatile(&st->scan[pass].inliers);
                            const int need = best < 0 ? cap : table[detail::pose_stop_bin(inl, n)];
                            if ((c + 1) * gh - scanned <= target && c * gh < need) break;
                            __nanosleep(128);
                        }
                    }
                }
                s_val = c;
            }
            __syncthreads();
            const int c = s_val;
            KPF(if (t == 0) {
                const unsigned long long x = prof::cyc();
                prof::add(prof::CyAcquire, x - pf_c);
                pf_c = x;
                if (c >= 0) prof::add(prof::Chunks, 1);
            })
            if (c < 0) break;
            // 1. Groups g < gh: hypothesis c * gh + g, its sample and models.
            const int k = c * gh + g;
            if (g < gh && lane == 0) ch.nm[g] = 0;
            if (g < gh && k < cap) {
                detail::FplWork& w = sh.w[g];
                int idx[detail::kPoseMaxSample];
                if (detail::pose_hypothesis_sample(p, k, idx)) {
                    if (p.method == 0) {
                        if (lane < 15) {
                            const int j = lane / 3, q = lane % 3;
                            w.sample[lane] = p.x1[3 * idx[j] + q];
                            w.sample[15 + lane] = p.x2[3 * idx[j] + q];
                        }
                        __syncwarp(mask);
                        const int nr = detail::fpl_solve(WarpLanes{lane, mask}, w);
                        if (lane == 0) ch.nm[g] = nr;
                    } else if (lane == 0) {
                        const bool ok = detail::pose_hypothesis_model2(p, idx, w.E[0]);
                        w.ok[0] = ok ? 1 : 0;
                        ch.nm[g] = 1;
                    }
                }
            }
            __syncthreads();
            KPF(if (t == 0) {
                const unsigned long long x = prof::cyc();
                prof::add(prof::CySolve, x - pf_c);
                pf_c = x;
            })
            // 2. The list of models (their sums zeroed), then every model's MSAC sum over all points.
            if (t == 0) {
                int m = 0;
                for (int q = 0; q < gh; ++q)
                    for (int r = 0; r < ch.nm[q]; ++r)
                        if (sh.w[q].ok[r]) {
                            const int id = q * detail::kFivePointMaxSolutions + r;
                            ch.list[m++] = id;
                            ch.cost[id] = 0ull;
                            ch.inl[id] = 0;
                        }
                ch.count = m;
            }
            __syncthreads();
            KPF(if (t == 0) {
                const unsigned long long x = prof::cyc();
                prof::add(prof::CyList, x - pf_c);
                pf_c = x;
            })
            // Warp w scores the jobs w, w + 8, ...: a job is a model and a slice of the points (with fewer models than
            // warps, each model's points are split over 8 / models warps); lane l of a job takes its slice's points
            // l, l + 32 * slices, ...; the job's integer sums are added to the model's by shared atomics (exact in
            // any order).
            const int nmod = ch.count;
            const int warp = t / kPoseLanes, wl = t % kPoseLanes;
            constexpr int kWarps = kPoseThreads / kPoseLanes;
            const int slices = nmod > 0 && nmod < kWarps ? kWarps / nmod : 1;
            for (int job = warp; job < nmod * slices; job += kWarps) {
                const int id = ch.list[job / slices];
                const int slice = job % slices;
                const double* E = sh.w[id / detail::kFivePointMaxSolutions].E[id % detail::kFivePointMaxSolutions];
                double M[9];
                for (int j = 0; j < 9; ++j) M[j] = E[j];
                unsigned long long units = 0ull;
                int cnt = 0;
#pragma unroll 4
                for (int i = slice * kPoseLanes + wl; i < n; i += kPoseLanes * slices)
                    detail::pose_msac_point(p, M, i, units, cnt);
                for (int off = kPoseLanes / 2; off >= 1; off >>= 1) {
                    units += __shfl_xor_sync(kFull, units, off);
                    cnt += __shfl_xor_sync(kFull, cnt, off);
                }
                if (wl == 0) {
                    atomicAdd(&ch.cost[id], units);
                    atomicAdd(&ch.inl[id], cnt);
                }
            }
            __syncthreads();
            KPF(if (t == 0) {
                const unsigned long long x = prof::cyc();
                prof::add(prof::CyScore, x - pf_c);
                pf_c = x;
            })
            // 3. Each hypothesis' best model (the lower solution on ties) into the ring, then its flag.
            if (t < gh && c * gh + t < cap) {
                const int kk = c * gh + t;
                double best = 1e300;
                int bi = 0, br = -1;
                for (int r = 0; r < ch.nm[t]; ++r) {
                    if (!sh.w[t].ok[r]) continue;
                    const double cost = static_cast<double>(ch.cost[t * detail::kFivePointMaxSolutions + r]);
                    if (cost < best) {
                        best = cost;
                        bi = ch.inl[t * detail::kFivePointMaxSolutions + r];
                        br = r;
                    }
                }
                const int slot = pass * kPoseRing + kk % kPoseRing;
                b.hcost[slot] = best;
                b.hinliers[slot] = bi;
                b.hreq[slot] = prm.table[pass][detail::pose_stop_bin(bi, n)];
                for (int j = 0; j < 9; ++j) b.hmodel[9 * slot + j] = br >= 0 ? sh.w[t].E[br][j] : 0.0;
                __threadfence();
                *reinterpret_cast<volatile int*>(b.done + slot) = kk + 1;
            }
            __syncthreads();
            KPF(if (t == 0) {
                const unsigned long long x = prof::cyc();
                prof::add(prof::CyRing, x - pf_c);
                pf_c = x;
            })
            if (t < kPoseLanes) scan_warp(pass, cap, n, prm.table[pass], b);
            KPF(if (t == 0) prof::add(prof::CyScan, prof::cyc() - pf_c);)
        }
    }
    // The last block to leave: the finish, then the reset for the next call.
    __threadfence();
    __syncthreads();
    KPF(if (t == 0) {
        prof::tmin(prof::ExitFirst);
        prof::tmax(prof::ExitLast);
    })
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
    KPF(const unsigned long long pf_f = prof::cyc(); if (t == 0) prof::g_call[prof::LastClock] = pf_f;)
    detail::pose_finish(BlockSum{sh.sum}, fp, sc[0], Eb, sc[1], Rb, b.mask, rec);
    KPF(const unsigned long long pf_e = prof::cyc(); if (t == 0) {
        prof::add(prof::CyFinish, pf_e - pf_f);
        prof::tmax(prof::FinishEnd);
    })
    if (t == 0) *b.record = rec;
    for (int i = t; i < 2 * kPoseRing; i += kPoseThreads) b.done[i] = 0;
    if (t == 0) {
        for (int q = 0; q < 2; ++q) {
            st->scan[q] = detail::PoseScan{};
            for (int j = 0; j < 9; ++j) st->best[q][j] = 0.0;
            st->next[q] = 0;
            st->scanned[q] = 0;
            st->stop[q] = 0;
            st->lock[q] = 0;
        }
        st->arrived = 0;
        st->staged = 0;
        st->exited = 0u;
    }
    KPF(__syncthreads(); if (t == 0) {
        prof::add(prof::CyTail, prof::cyc() - pf_e);
        prof::tmax(prof::End);
        prof::fold();
    })
}

// ---- the two-point method's call (method 1: the rotation known) ----------------------------------------------
// Shaped for latency: no block waits for another after the staging, one hand-off between blocks. Phase A (every
// block): the first kPose2Wave0 translation hypotheses and the first kPose2Wave1 rotation-only hypotheses,
// job j = (pass, k) to block j % grid, each model solved by one thread and scored by the block's warps (a warp per
// slice of the points), its result in the ring. The last block to leave phase A then runs phase B alone: both
// scans in index order (detail::pose_scan's state, every thread on the same shared arrays, each result's stop
// count loaded ahead in parallel), hypotheses past the
// wave when a scan has not stopped at its end (rounds of kPose2Round in the block), and the finish. The wave sizes
// change only what is solved past the stop, never the result.

/// Models a block solves and scores at a time.
constexpr int kPose2Round = 16;

struct Pose2Smem {
    double sum[detail::kPoseFinishWarps * kPoseLanes + kPoseLanes];  // the finish's sums
    double E[kPose2Round][9];
    unsigned long long units[kPose2Round];
    int inl[kPose2Round];
    int ok[kPose2Round];
    double cost[kPose2Wave0 + kPose2Wave1];  // phase B: the wave's results, pass 0 then pass 1
    int inliers[kPose2Wave0 + kPose2Wave1];
    int req[kPose2Wave0 + kPose2Wave1];  // the stop count were the hypothesis the best (its table entry)
    double rcost[kPose2Round];  // phase B: a round's results
    int rinl[kPose2Round];
    int rreq[kPose2Round];
    int s_val;
};

/// Models j < m of the round (hypothesis first + j of pass `pass`, or of the pass of job list entry j): thread j
/// draws the sample and solves it (E[j], ok[j]); then job q = (model q / slices, slice q % slices) for warp
/// q % 8, the slice's points summed in integer units (order-free) and added to the model's by shared atomics.
/// Leaves the block synchronized; writes cost (1e300 without a model) and inliers for j < m into cost/inl.
template <class PassOf, class KOf>
__device__ void pose2_round(const detail::PoseProblem* P, int m, const PassOf& pass_of, const KOf& k_of,
                            Pose2Smem& sm, double* cost, int* inl) {
    const int t = static_cast<int>(threadIdx.x);
    KPF(unsigned long long pf_c = prof::cyc();)
    if (t < m) {
        const detail::PoseProblem& p = P[pass_of(t)];
        int idx[detail::kPoseMaxSample];
        bool ok = detail::pose_hypothesis_sample(p, k_of(t), idx);
        if (ok) ok = detail::pose_hypothesis_model2(p, idx, sm.E[t]);
        sm.ok[t] = ok ? 1 : 0;
        sm.units[t] = 0ull;
        sm.inl[t] = 0;
    }
    __syncthreads();
    KPF(if (t == 0) {
        const unsigned long long x = prof::cyc();
        prof::add(prof::CyRoundSolve, x - pf_c);
        pf_c = x;
        prof::add(prof::Rounds, 1);
    })
    constexpr int kWarps = kPoseThreads / kPoseLanes;
    const int warp = t / kPoseLanes, wl = t % kPoseLanes;
    const int slices = m < kWarps ? kWarps / m : 1;
    for (int job = warp; job < m * slices; job += kWarps) {
        const int j = job / slices, slice = job % slices;
        if (!sm.ok[j]) continue;
        const detail::PoseProblem& p = P[pass_of(j)];
        double M[9];
        for (int q = 0; q < 9; ++q) M[q] = sm.E[j][q];
        unsigned long long units = 0ull;
        int cnt = 0;
#pragma unroll 4
        for (int i = slice * kPoseLanes + wl; i < p.n; i += kPoseLanes * slices) detail::pose_msac_point(p, M, i, units, cnt);
        for (int off = kPoseLanes / 2; off >= 1; off >>= 1) {
            units += __shfl_xor_sync(kFull, units, off);
            cnt += __shfl_xor_sync(kFull, cnt, off);
        }
        if (wl == 0) {
            atomicAdd(&sm.units[j], units);
            atomicAdd(&sm.inl[j], cnt);
        }
    }
    __syncthreads();
    KPF(if (t == 0) prof::add(prof::CyRoundScore, prof::cyc() - pf_c);)
    if (t < m) {
        cost[t] = sm.ok[t] ? static_cast<double>(sm.units[t]) : 1e300;
        inl[t] = sm.ok[t] ? sm.inl[t] : 0;
        if (!sm.ok[t])
            for (int q = 0; q < 9; ++q) sm.E[t][q] = 0.0;
    }
    __syncthreads();
}

/// detail::pose_scan over `count` results with each one's stop count looked up ahead (req[j] = the table's entry
/// at its inlier fraction, loaded in parallel): the same state, without a table load per step. Returns the index
/// of the last new best in [0, count), or -1.
__device__ int pose2_scan_run(detail::PoseScan& s, const double* cost, const int* inl, const int* req, int first,
                              int count, const int* table, int n, int cap) {
    int won = -1;
    int need = s.best < 0 ? cap : table[detail::pose_stop_bin(s.inliers, n)];
    for (int j = 0; j < count && !s.stopped; ++j) {
        const int k = first + j;
        if (cost[j] < s.cost) {
            s.best = k;
            s.cost = cost[j];
            s.inliers = inl[j];
            need = req[j];
            won = j;
        }
        s.used = k + 1;
        if (k + 1 >= need || k + 1 >= cap) s.stopped = 1;
    }
    return won;
}

/// Phase B's scan of one pass: the wave's results [0, wave) (sm.cost/inliers from `off`), then rounds of
/// hypotheses [wave, cap) in the block until the scan stops. Every thread runs detail::pose_scan on the same
/// values; the winner's model to M.
__device__ detail::PoseScan pose2_scan(const detail::PoseProblem* P, int pass, int wave, int off, int cap,
                                       const int* table, int n, const PoseBuffers& b, Pose2Smem& sm, double* M) {
    detail::PoseScan s;
    for (int q = 0; q < 9; ++q) M[q] = 0.0;
    const int w = wave < cap ? wave : cap;
    const int won = pose2_scan_run(s, sm.cost + off, sm.inliers + off, sm.req + off, 0, w, table, n, cap);
    if (won >= 0)
        for (int q = 0; q < 9; ++q) M[q] = __ldcg(b.hmodel + 9 * (pass * kPoseRing + won) + q);
    while (!s.stopped && s.used < cap) {
        const int first = s.used;
        const int m = cap - first < kPose2Round ? cap - first : kPose2Round;
        pose2_round(
            P, m, [pass](int) { return pass; }, [first](int j) { return first + j; }, sm, sm.rcost, sm.rinl);
        if (static_cast<int>(threadIdx.x) < m)
            sm.rreq[threadIdx.x] = table[detail::pose_stop_bin(sm.rinl[threadIdx.x], n)];
        __syncthreads();
        const int r = pose2_scan_run(s, sm.rcost, sm.rinl, sm.rreq, first, m, table, n, cap);
        if (r >= 0)
            for (int q = 0; q < 9; ++q) M[q] = sm.E[r][q];
        __syncthreads();  // the next round rewrites sm.E
    }
    return s;
}

__global__ void __launch_bounds__(kPoseThreads) pose2_call_kernel(PoseCallParams prm, PoseBuffers b) {
    __shared__ Pose2Smem sm;
    PoseDeviceState* st = b.state;
    const int t = static_cast<int>(threadIdx.x);
    KPF(if (t == 0) {
        prof::tmin(prof::T0);
        prof::tmax(prof::ArriveLast);
    })
    int n = prm.prep.bound;
    if (prm.prep.device_count) {
        const int c = *prm.prep.device_count;
        n = c < 0 ? 0 : (c > prm.prep.bound ? prm.prep.bound : c);
    }
    if (prm.prep.mode != 0) {  // the first block to arrive stages the points, the others wait for it (it runs)
        if (t == 0) sm.s_val = atomicAdd(&st->arrived, 1);
        __syncthreads();
        if (sm.s_val == 0) {
            KPF(const unsigned long long pf_s = prof::cyc();)
            if (prm.prep.mode == 3) {
                const int c = stage_tracks(prm.prep, sm.inl);
                if (t == 0) st->count = c;
            } else {
                stage_points(prm.prep, n);
            }
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
        if (prm.prep.mode == 3) n = ld_volatile(&st->count);
    }
    detail::PoseProblem P[2] = {prm.problem[0], prm.problem[1]};
    P[0].n = n;
    P[1].n = n;
    const bool run = n >= prm.prep.min_points;
    const int w0 = prm.cap[0] < kPose2Wave0 ? prm.cap[0] : kPose2Wave0;
    const int w1 = prm.prep.rotation_pass ? (prm.cap[1] < kPose2Wave1 ? prm.cap[1] : kPose2Wave1) : 0;
    // Phase A: jobs j = blockIdx.x + gridDim.x * r; j < w0: translation hypothesis j, else rotation j - w0.
    if (run) {
        const int G = static_cast<int>(gridDim.x), jobs = w0 + w1;
        for (int first = static_cast<int>(blockIdx.x); first < jobs; first += G * kPose2Round) {
            int m = (jobs - first + G - 1) / G;
            m = m < kPose2Round ? m : kPose2Round;
            const auto job = [first, G](int j) { return first + G * j; };
            pose2_round(
                P, m, [&](int j) { return job(j) < w0 ? 0 : 1; },
                [&](int j) { return job(j) < w0 ? job(j) : job(j) - w0; }, sm, sm.rcost, sm.rinl);
            if (t < m) {
                const int jj = job(t);
                const int slot = jj < w0 ? jj : kPoseRing + (jj - w0);
                b.hcost[slot] = sm.rcost[t];
                b.hinliers[slot] = sm.rinl[t];
                for (int q = 0; q < 9; ++q) b.hmodel[9 * slot + q] = sm.E[t][q];
            }
            KPF(const unsigned long long pf_w = prof::cyc();)
            __syncthreads();
            KPF(if (t == 0) prof::add(prof::CyRoundWrite, prof::cyc() - pf_w);)
        }
    }
    __threadfence();
    __syncthreads();
    KPF(if (t == 0) {
        prof::tmin(prof::ExitFirst);
        prof::tmax(prof::ExitLast);
    })
    if (t == 0) sm.s_val = static_cast<int>(atomicAdd(&st->exited, 1u));
    __syncthreads();
    if (sm.s_val != static_cast<int>(gridDim.x) - 1) return;
    __threadfence();
    // Phase B, the last block: the scans (and the hypotheses past the wave), the finish.
    KPF(unsigned long long pf_b = prof::cyc();)
    for (int i = t; i < w0 + w1; i += kPoseThreads) {
        const int slot = i < w0 ? i : kPoseRing + (i - w0);
        sm.cost[i] = run ? __ldcg(b.hcost + slot) : 1e300;
        const int inl = run ? __ldcg(b.hinliers + slot) : 0;
        sm.inliers[i] = inl;
        sm.req[i] = prm.table[i < w0 ? 0 : 1][detail::pose_stop_bin(inl, n)];
    }
    __syncthreads();
    KPF(if (t == 0) {
        const unsigned long long x = prof::cyc();
        prof::add(prof::CyPhaseBLoad, x - pf_b);
        pf_b = x;
    })
    detail::PoseScan sc[2];
    double Eb[9], Rb[9];
    for (int q = 0; q < 9; ++q) Eb[q] = Rb[q] = 0.0;
    if (run) {
        sc[0] = pose2_scan(P, 0, w0, 0, prm.cap[0], prm.table[0], n, b, sm, Eb);
        KPF(if (t == 0) {
            const unsigned long long x = prof::cyc();
            prof::add(prof::CyScan0, x - pf_b);
            pf_b = x;
        })
        if (prm.prep.rotation_pass) {
            const int cap1 = detail::pose_rotation_cap(sc[0], n, prm.table[1], prm.cap[1]);
            sc[1] = pose2_scan(P, 1, w1, w0, cap1, prm.table[1], n, b, sm, Rb);
        }
        KPF(if (t == 0) {
            const unsigned long long x = prof::cyc();
            prof::add(prof::CyScan1, x - pf_b);
            pf_b = x;
        })
    }
    KPF(if (t == 0) {
        prof::tmax(prof::ScanEnd);
        prof::g_call[prof::LastClock] = pf_b;
    })
    detail::PoseFinishParams fp = prm.fp;
    fp.pe.n = n;
    PoseRecord rec;
    detail::pose_finish<1>(BlockSum{sm.sum}, fp, sc[0], Eb, sc[1], Rb, b.mask, rec);
    KPF(const unsigned long long pf_e = prof::cyc(); if (t == 0) {
        prof::add(prof::CyFinish, pf_e - pf_b);
        prof::tmax(prof::FinishEnd);
    })
    if (prm.prep.mode == 3) {  // the tracker's check: its verdicts
        const detail::PoseTrackStage& g = prm.prep.track;
        if (t == 0) sm.s_val = 0;
        __syncthreads();  // the mask of every thread's points is written
        const bool applies = detail::geo_check_applies(n, g.min_tracks, rec.status);
        int ended = 0;
        if (applies)
            for (int k = t; k < n; k += kPoseThreads)
                if (!b.mask[k]) {
                    const int i = g.index[k];
                    g.outlier[i] = 1;
                    g.flags[i] = 1;
                    ++ended;
                }
        if (ended) atomicAdd(&sm.s_val, ended);
        __syncthreads();
        if (t == 0) {
            g.out->checked = n;
            g.out->ended = sm.s_val;
            g.out->rec = rec;
        }
    }
    if (prm.host_mask) {  // host entries: the mask and the record straight to pinned memory
        __syncthreads();  // every thread's mask entries are written
        const int bound = prm.fp.bound;
        const int words = bound / 4;
        const unsigned* src = reinterpret_cast<const unsigned*>(b.mask);
        unsigned* dst = reinterpret_cast<unsigned*>(prm.host_mask);
        for (int w = t; w < words; w += kPoseThreads) dst[w] = src[w];
        for (int i = 4 * words + t; i < bound; i += kPoseThreads) prm.host_mask[i] = b.mask[i];
        if (t == 0) *prm.host_record = rec;
    }
    if (t == 0) {
        *b.record = rec;
        st->arrived = 0;
        st->staged = 0;
        st->exited = 0u;
    }
    KPF(__syncthreads(); if (t == 0) {
        prof::add(prof::CyTail, prof::cyc() - pf_e);
        prof::tmax(prof::End);
        prof::fold();
    })
}

}  // namespace

int pose_blocks_per_sm() {
    int blocks = 0;
    const int bytes = static_cast<int>(sizeof(PoseSmem));
    KESTREL_CUDA(cudaFuncSetAttribute(pose_call_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
                 "RelativePoseEstimator shared memory");
    KESTREL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, pose_call_kernel, kPoseThreads, bytes),
                 "RelativePoseEstimator occupancy");
    return blocks > 0 ? blocks : 1;
}

void launch_pose_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    pose_call_kernel<<<blocks > 0 ? blocks : 1, kPoseThreads, sizeof(PoseSmem), stream>>>(prm, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator");
}

void launch_pose2_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    pose2_call_kernel<<<blocks > 0 ? blocks : 1, kPoseThreads, 0, stream>>>(prm, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator");
}

#if defined(KESTREL_POSE_PROFILE)
int pose_profile_take(const char** names, double* values, int max, double* calls) {
    static const char* const kNames[prof::Sum0] = {
        "t0", "t_arrive_last_us", "t_staged_us", "t_stop0_us", "t_stop1_us", "t_exit_first_us", "t_exit_last_us",
        "t_scan_end_us", "t_finish_end_us", "t_end_us", "cy_stage", "cy_acquire", "cy_pass1_wait", "cy_solve",
        "cy_list", "cy_score", "cy_ring", "cy_scan", "chunks", "cy_round_solve", "cy_round_score", "cy_round_write",
        "rounds", "cy_phaseB_load", "cy_scan0", "cy_scan1", "cy_finish", "cy_tail", "seq", "last"};
    static char sum_names[prof::kMaxSums][2][32];
    unsigned long long acc[prof::kSlots], nc = 0;
    KESTREL_CUDA(cudaDeviceSynchronize(), "pose profile");
    KESTREL_CUDA(cudaMemcpyFromSymbol(acc, prof::g_acc, sizeof acc), "pose profile");
    KESTREL_CUDA(cudaMemcpyFromSymbol(&nc, prof::g_calls, sizeof nc), "pose profile");
    unsigned long long zero[prof::kSlots] = {}, init[prof::kSlots] = {}, z = 0;
    init[prof::T0] = init[prof::ExitFirst] = ~0ull;
    KESTREL_CUDA(cudaMemcpyToSymbol(prof::g_acc, zero, sizeof zero), "pose profile");
    KESTREL_CUDA(cudaMemcpyToSymbol(prof::g_call, init, sizeof init), "pose profile");
    KESTREL_CUDA(cudaMemcpyToSymbol(prof::g_calls, &z, sizeof z), "pose profile");
    *calls = static_cast<double>(nc);
    if (nc == 0) return 0;
    int m = 0;
    const double per = 1.0 / static_cast<double>(nc);
    for (int s = 1; s < prof::Sum0 && m < max; ++s) {
        if (s == prof::Seq || s == prof::LastClock || acc[s] == 0) continue;
        names[m] = kNames[s];
        values[m++] = static_cast<double>(acc[s]) * per * (s < prof::kTimeline ? 1e-3 : 1.0);
    }
    for (int q = 0; q < prof::kMaxSums && m + 1 < max; ++q) {
        const unsigned long long K = acc[prof::Sum0 + 3 * q + 2];
        if (K == 0) continue;
        std::snprintf(sum_names[q][0], sizeof sum_names[q][0], "cy_sum%02d_K%llu", q, K);
        std::snprintf(sum_names[q][1], sizeof sum_names[q][1], "cy_sum%02d_before", q);
        names[m] = sum_names[q][1];
        values[m++] = static_cast<double>(acc[prof::Sum0 + 3 * q + 1]) * per;
        names[m] = sum_names[q][0];
        values[m++] = static_cast<double>(acc[prof::Sum0 + 3 * q]) * per;
    }
    return m;
}
#endif

}  // namespace kestrel::kernels
