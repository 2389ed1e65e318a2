// Relative-pose RANSAC on the GPU in one launch per call: the staging of the points, both passes (translation:
// five-point or two-point; then rotation only), the in-order scan with the adaptive stop, and the finish (mask,
// decomposition, cheirality, refinement, the rotation-only model and the model choice).
//
// A block is 16 lane groups of 16 threads. Blocks take chunks of 1 to 16 hypotheses from a counter
// until the pass has stopped or its cap is handed out. Lane group g draws hypothesis g's sample and solves it
// (five-point: detail::fpl_solve on a shared-memory workspace; two-point and rotation only: one lane); then the
// block's warps score the chunk's models, a warp per model (detail::pose_msac: integer units, so any split of the
// points gives the same sum); the lowest cost (the lower solution on ties) is the hypothesis' model, kept in a ring of results
// with a flag. Then warp 0, holding the scan lock, scans the results that are in, in index order, up to 256 at a
// time (detail::pose_scan's rule as a warp prefix: a strictly lower cost wins, the stop test after every hypothesis);
// the scan's stop ends the handing out. The rotation pass starts once the translation pass has stopped (its cap
// follows from that result). The last block to leave runs detail::pose_finish and resets the state for the next
// call. The chunk size and the grid change how much is solved past the stop, never the result.
//
// The two-point method's call is its own kernel (kernels/geometry/pose2_call.cuh, instantiated here for the
// call's points and by kernels/track/geo_check_pose.cu for the tracker's check).
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
#include <cstdlib>

#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/pose2_call.cuh"
#include "kernels/geometry/ransac.cuh"

namespace kestrel::kernels {
namespace {

using detail::kFplLanes;

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

/// The scan of pass `pass` by warp 0 of a block while it holds the lock: up to 256 hypotheses at a time, lane j
/// the hypotheses scanned + 8 j .. + 8 j + 7 whose results are in (the leading run of them); detail::pose_scan's
/// state as a warp prefix of the lanes' segments (a later hypothesis wins only with a strictly lower cost:
/// associative), then each lane walks its segment from the state before it, with each result's stop count (its
/// table entry, loaded with the result), to the first hypothesis whose stop test passes. After releasing the lock,
/// scans again when the next hypothesis has completed meanwhile (its block found the lock held).
constexpr int kScanSeg = 8;  // hypotheses per lane and scan step
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
    int dropped;  // the pass stopped while the chunk was in work: its results are not needed
    int cut[kPoseGroups * detail::kFivePointMaxSolutions];  // 1: the model's scoring stopped early (it cannot win)
    unsigned long long bound;  // the scanned prefix's best cost when the chunk's scoring starts (units)
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
    if (prm.prep.mode != 0) stage_once(st, s_val, [&]() { stage_points(prm.prep, n); });
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
            // 2. The list of models (their sums zeroed), then every model's MSAC sum over all points. A chunk whose
            // pass has stopped meanwhile lies past the stop (the scan needs no result it has not got): it is dropped
            // here, or by the warps between scoring jobs, and writes nothing.
            if (t == 0) {
                ch.dropped = ld_volatile(&st->stop[pass]) != 0 ? 1 : 0;
                // A model whose partial cost reaches the best cost of the scanned prefix cannot win at its place in
                // the scan (every hypothesis being scored lies after that prefix, and a later one wins only with a
                // strictly lower cost), so its scoring may stop there; the scan then reads it as no model.
                const double bc = prm.score_cutoff ? __ldcg(&st->scan[pass].cost) : 1e300;
                ch.bound = bc < 1.8e19 ? static_cast<unsigned long long>(bc) : ~0ull;
                int m = 0;
                for (int q = 0; q < gh; ++q)
                    for (int r = 0; r < ch.nm[q]; ++r)
                        if (sh.w[q].ok[r]) {
                            const int id = q * detail::kFivePointMaxSolutions + r;
                            ch.list[m++] = id;
                            ch.cost[id] = 0ull;
                            ch.cut[id] = 0;
                            ch.inl[id] = 0;
                        }
                ch.count = ch.dropped ? 0 : m;
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
                // Dropped (checked again below); the warp decides as one (its lanes shuffle below).
                if (__shfl_sync(kFull, wl == 0 ? ld_volatile(&st->stop[pass]) : 0, 0) != 0) break;
                const int id = ch.list[job / slices];
                const int slice = job % slices;
                const double* E = sh.w[id / detail::kFivePointMaxSolutions].E[id % detail::kFivePointMaxSolutions];
                double M[9];
                for (int j = 0; j < 9; ++j) M[j] = E[j];
                unsigned long long units = 0ull;
                int cnt = 0;
                const unsigned long long bound = ch.bound;
                if (bound != ~0ull) {
                    if (msac_points_cut(p, M, slice * kPoseLanes + wl, kPoseLanes * slices, bound, units, cnt) &&
                        wl == 0)
                        atomicOr(&ch.cut[id], 1);  // (several slices of a model may stop)
                } else {
                    msac_points(p, M, slice * kPoseLanes + wl, kPoseLanes * slices, units, cnt);
                }
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
            if (t == 0 && ld_volatile(&st->stop[pass]) != 0) ch.dropped = 1;
            __syncthreads();
            // 3. Each hypothesis' best model (the lower solution on ties) into the ring, then its flag.
            if (!ch.dropped && t < gh && c * gh + t < cap) {
                const int kk = c * gh + t;
                double best = 1e300;
                int bi = 0, br = -1;
                for (int r = 0; r < ch.nm[t]; ++r) {
                    if (!sh.w[t].ok[r]) continue;
                    const int id = t * detail::kFivePointMaxSolutions + r;
                    const double cost = ch.cut[id] ? 1e300 : static_cast<double>(ch.cost[id]);
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
    copy_to_host(prm, b, rec);
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

void launch_pose_call(const PoseCallParams& prm_in, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    static const int cutoff = [] {
        const char* e = std::getenv("KESTREL_POSE_SCORE_CUTOFF");
        return e && e[0] == '0' ? 0 : 1;
    }();
    PoseCallParams prm = prm_in;
    prm.score_cutoff = cutoff;
    pose_call_kernel<<<blocks > 0 ? blocks : 1, kPoseThreads, sizeof(PoseSmem), stream>>>(prm, b);
    KESTREL_CUDA_LAUNCH("RelativePoseEstimator");
}

void launch_pose2_call(const PoseCallParams& prm, const PoseBuffers& b, int blocks, cudaStream_t stream) {
    launch_pose2_hooked(prm, b, Pose2Points{}, blocks, stream);
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
    init[prof::T0] = init[prof::ExitFirst] = init[prof::Stop0] = init[prof::Stop1] = ~0ull;
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
