// The two-point method's call (method 1: the rotation known) in one launch, as a kernel template over its
// staging hook: Pose2Points (kernels/geometry/ransac.cu: the call's points, staging modes 0 to 2) or a hook that
// stages its own points and acts on the result (kernels/track/: the tracker's checked tracks). A Hook has
//   static constexpr bool kStages;  // true: stage() replaces the staging of the points (prep.mode != 0)
//   __device__ int stage(const PosePrepare&, int* scratch) const;   // block-wide, by the first block: the count;
//                                                                   // scratch: kPose2Round ints of shared memory
//   __device__ void verdicts(int n, const PoseRecord&, const std::uint8_t* mask, int* s_shared) const;
//                                                                   // block-wide, after the finish
// Matches detail::relative_pose_cpu bit for bit (the including file is compiled with --fmad=false).
#pragma once
#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/pose_device.cuh"

namespace kestrel::kernels {

/// The two-point call's hook for the call's own points (staging modes 0 to 2).
struct Pose2Points {
    static constexpr bool kStages = false;
    __device__ int stage(const PosePrepare&, int*) const { return 0; }
    __device__ void verdicts(int, const PoseRecord&, const std::uint8_t*, int*) const {}
};

namespace {

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
        msac_points(p, M, slice * kPoseLanes + wl, kPoseLanes * slices, units, cnt);
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
/// at its inlier fraction): the same state, computed by every warp of the block at once (the same values on every
/// thread): 64 results at a time, lane l the results 2 l and 2 l + 1, the lanes' best as a warp prefix, then each
/// lane walks its two from the state before them to the first stop. Returns the index of the last new best in
/// [0, count), or -1.
__device__ int pose2_scan_run(detail::PoseScan& s, const double* cost, const int* inl, const int* req, int first,
                              int count, const int* table, int n, int cap) {
    constexpr int kSeg = 2;
    const int lane = static_cast<int>(threadIdx.x) % kPoseLanes;
    const int best0 = s.best;
    int sreq = s.best < 0 ? cap : table[detail::pose_stop_bin(s.inliers, n)];
    for (int base = 0; base < count && !s.stopped; base += kSeg * kPoseLanes) {
        const int j0 = base + kSeg * lane;
        const int left = count - base;  // results left from base
        const int valid = left >= kSeg * kPoseLanes ? kSeg * kPoseLanes : left;
        const int mine = j0 - base + kSeg <= valid ? kSeg : (j0 - base < valid ? valid - (j0 - base) : 0);
        double c[kSeg];
        int in[kSeg], rq[kSeg];
        ScanBest seg{1e300, -1, 0, cap};
        KESTREL_UNROLL
        for (int q = 0; q < kSeg; ++q) {
            c[q] = q < mine ? cost[j0 + q] : 1e300;
            in[q] = q < mine ? inl[j0 + q] : 0;
            rq[q] = q < mine ? req[j0 + q] : cap;
            if (c[q] < seg.cost) seg = ScanBest{c[q], first + j0 + q, in[q], rq[q]};
        }
        ScanBest inc = seg;
        for (int off = 1; off < kPoseLanes; off <<= 1) {
            const ScanBest o = scan_shfl_up(inc, off);
            if (lane >= off && !(inc.cost < o.cost)) inc = o;
        }
        ScanBest cur{s.cost, s.best, s.inliers, sreq};
        const ScanBest prev = scan_shfl_up(inc, 1);
        if (lane > 0 && prev.cost < cur.cost) cur = prev;
        int stop_q = -1;
        KESTREL_UNROLL
        for (int q = 0; q < kSeg; ++q) {
            if (q >= mine || stop_q >= 0) continue;
            if (c[q] < cur.cost) cur = ScanBest{c[q], first + j0 + q, in[q], rq[q]};
            const int k = first + j0 + q;
            const int need = cur.idx < 0 ? cap : cur.req;
            if (k + 1 >= need || k + 1 >= cap) stop_q = q;
        }
        const unsigned stops = __ballot_sync(kFull, stop_q >= 0);
        const int last = stops ? __ffs(stops) - 1 : (valid - 1) / kSeg;  // the lane that ends the step
        const ScanBest fin = scan_shfl(cur, last);
        s.used = stops ? first + base + kSeg * last + __shfl_sync(kFull, stop_q, last) + 1 : first + base + valid;
        s.cost = fin.cost;
        s.best = fin.idx;
        s.inliers = fin.inl;
        sreq = fin.idx < 0 ? cap : fin.req;
        s.stopped = stops ? 1 : 0;
    }
    return s.best != best0 && s.best >= 0 ? s.best - first : -1;
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

template <class Hook>
__global__ void __launch_bounds__(kPoseThreads) pose2_call_kernel(PoseCallParams prm, PoseBuffers b, Hook hook) {
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
        stage_once(st, sm.s_val, [&]() {
            if constexpr (Hook::kStages) {
                const int c = hook.stage(prm.prep, sm.inl);
                if (t == 0) st->count = c;
            } else {
                stage_points(prm.prep, n);
            }
        });
        if constexpr (Hook::kStages) n = ld_volatile(&st->count);
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
    if constexpr (Hook::kStages) hook.verdicts(n, rec, b.mask, &sm.s_val);
    copy_to_host(prm, b, rec);
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

/// The call in one launch of `blocks` blocks (launch_pose2_call's contract) with the staging hook `hook`.
template <class Hook>
void launch_pose2_hooked(const PoseCallParams& prm, const PoseBuffers& b, const Hook& hook, int blocks,
                         cudaStream_t stream) {
    pose2_call_kernel<Hook><<<blocks > 0 ? blocks : 1, kPoseThreads, 0, stream>>>(prm, b, hook);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator");
}

}  // namespace
}  // namespace kestrel::kernels
