// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/detect/grid_select_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility, nms_is_maximum_fixed) and
// fast_rules.hpp (keypoint_key order, nms_suppressed_by).
//
// One block per level-0 cell (vilib), 256 threads:
//   1. Thread 4k + b computes boundary b (x0, x1, y0, y1) of the cell's rectangle on level k
//      (detail::cell_begin); one barrier.
//   2. On every level the block's threads share the rectangle's pixels (thread t: pixels t, t + 256, ...
//      in row-major order), loading kBatch scores before using any; each thread keeps its K + 2 largest
//      keys of positive scores, without NMS (collect).
//   3. Rounds of a block-wide argmax over the threads' largest untested keys: the round's maximum is the
//      cell's next candidate in key order, and only it is tested, by the thread that holds it: NMS (n = 1:
//      detail::nms_is_maximum_fixed<1>, its 8 loads issued together; n > 1: the reference's loop) and
//      eligibility (border, pixel mask). The first K that pass are the cell's best K (select_cell). A
//      thread whose kept keys are used up while it left some out collects again below the last it gave.
//      NMS thus runs on about K candidates per cell instead of on every positive score: at 752x480 (2
//      levels, vtest, FAST threshold 10) the scan of every candidate executed about 2.1 M warp
//      instructions, most of them NMS, which on 8 SMs took longer than the scores themselves.
//   4. merge_and_finish (kernels/detect/grid_select_block.cuh): warp and block best-K merge into the cell's slots,
//      and the last block to finish caps, compacts and counts.
// The detector itself uses this kernel where kernels/detect/cell_detect.cu (scores computed by the same
// blocks, no score maps) does not apply: Harris, cells too large for its shared memory, or a frame whose
// cells do not fit in one wave of the SMs present (8 or 16 SMs at 752x480).
#include "kernels/common/cuda_check.hpp"
#include "cell_detect.cuh"
#include "grid_nms.cuh"
#include "grid_select_block.cuh"

namespace kestrel::kernels {
namespace {
using namespace select;

/// Is the level-k pixel (x, y), score sp > 0, the maximum of its neighbourhood? kN1: n = 1,
/// detail::nms_is_maximum_fixed<1> (unrolled: its 8 loads are issued together; the block has just read
/// these rows, so most hit L1); otherwise the reference's own detail::nms_is_maximum (any n, a loop:
/// small code).
template <bool kN1>
__device__ __forceinline__ bool nms_is_maximum_at(const GridLevel& L, int n, int x, int y, float sp) {
    if (!kN1) return detail::nms_is_maximum(L.scores, L.pitch, L.width, L.height, x, y, n, sp);
    return detail::nms_is_maximum_fixed<1>(detail::MapNeighbours{L.scores, L.pitch, L.width, L.height, x, y}, sp);
}

/// Raw candidates of this thread: its pixels of the cell's rectangle on every level (thread t takes pixels t,
/// t + kThreads, ... of each level's rectangle in row-major order, kBatch scores loaded before any is used:
/// one memory round trip per batch) with a positive score and a key below `bound`, the R largest kept in
/// `raw` (best first; no NMS yet). Returns whether a qualifying key was left out (more than R of them).
template <int R>
__device__ bool collect(const GridNmsParams& p, const int (*rect)[4], Key bound, Key (&raw)[R]) {
    constexpr int kBatch = 4;
#pragma unroll
    for (int i = 0; i < R; ++i) raw[i] = 0;
    bool dropped = false;
    for (int k = 0; k < p.levels; ++k) {
        const int x0 = rect[k][0], y0 = rect[k][2], w = rect[k][1] - rect[k][0], h = rect[k][3] - rect[k][2];
        if (w <= 0 || h <= 0) continue;
        const GridLevel& L = p.level[k];
        const int total = w * h;  // < 2^28: w, h <= 16383
        const int step_x = kThreads % w, step_y = kThreads / w;
        int lx = static_cast<int>(threadIdx.x) % w, ly = static_cast<int>(threadIdx.x) / w;
        for (int start = 0; start < total; start += kThreads * kBatch) {
            float s[kBatch];
            int xs[kBatch], ys[kBatch];
#pragma unroll
            for (int j = 0; j < kBatch; ++j) {
                xs[j] = x0 + lx;
                ys[j] = y0 + ly;
                s[j] = ly < h ? detail::score_at(L.scores, L.pitch, xs[j], ys[j]) : 0.0f;
                lx += step_x;
                ly += step_y;
                if (lx >= w) {
                    lx -= w;
                    ++ly;
                }
            }
#pragma unroll
            for (int j = 0; j < kBatch; ++j) {
                if (!(s[j] > 0.0f)) continue;
                const Key key = detail::keypoint_key(s[j], k, xs[j], ys[j]);
                if (key >= bound) continue;
                dropped |= raw[R - 1] != 0 || !(key > raw[R - 1]);  // the list is full: one key falls out
                if (key > raw[R - 1]) detail::topk_insert(raw, key);
            }
        }
    }
    return dropped;
}

/// The cell's best K keypoints, exactly the reference's: the K largest keys among the cell's pixels that are
/// maxima of their neighbourhood (detail::nms_is_maximum*) and eligible. Rounds of a block-wide argmax over
/// the threads' raw candidates (collect: positive scores, no NMS): the round's largest key is the next
/// candidate in key order, and only it is tested (NMS and eligibility, by the thread that holds it); the
/// survivors, in key order, are the answer. A thread whose kept candidates are used up while it had left
/// some out collects again below the last one it gave. So NMS runs on about K candidates per cell instead of
/// every positive score. Keys are unique: one thread holds each round's maximum. The survivors end in their
/// holders' `top` lists (merge_and_finish merges the block's lists). Block-uniform; contains barriers.
template <int K, bool kN1>
__device__ void select_cell(const GridNmsParams& p, const int (*rect)[4], Key (&top)[K]) {
    constexpr int R = K + 2;  // raw candidates kept per thread (a refill is rare)
    __shared__ Key round_best[2][kWarps];
    __shared__ int accepted[2];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Key raw[R];
    Key last = ~0ull;  // every key of this thread's that is still untested is below it
    bool dropped = collect<R>(p, rect, last, raw);
    int found = 0;
    for (int round = 0;; ++round) {
        const int buf = round & 1;
        if (raw[0] == 0 && dropped) dropped = collect<R>(p, rect, last, raw);  // refill below the last tested
        const Key head = raw[0];
        const Key m = warp_max(head);
        if (lane == 0) round_best[buf][warp] = m;
        __syncthreads();
        if (round > 0) found += accepted[buf ^ 1];  // the previous round's verdict (written before this barrier)
        if (found == K) break;
        Key best = 0;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) best = round_best[buf][w] > best ? round_best[buf][w] : best;
        if (best == 0) break;  // no candidate left in the cell
        if (head == best) {    // exactly one thread: the candidate's holder tests it
            detail::topk_pop(raw);
            last = best;
            const int k = detail::key_level(best), x = detail::key_x(best), y = detail::key_y(best);
            const GridLevel& L = p.level[k];
            const bool ok = nms_is_maximum_at<kN1>(L, p.nms_radius, x, y, detail::key_score(best)) &&
                            eligible(p, L.scale, x, y);
            if (ok) detail::topk_insert(top, best);
            accepted[buf] = ok ? 1 : 0;
        }
    }
}

template <int K, bool kN1>
__global__ void __launch_bounds__(kThreads, 4) grid_nms_kernel(const GridNmsParams p_in) {
    // The descriptor is copied once per block into shared memory: collect indexes its per-level array with
    // a run-time level, which on kernel parameters forces a per-thread local copy of the whole struct.
    __shared__ GridNmsParams p;
    if (threadIdx.x == 0) p = p_in;
    __syncthreads();
    __shared__ int rect[kMaxLevels][4];  // the cell's rectangle on level k: x0, x1, y0, y1
    const int cell = static_cast<int>(blockIdx.x);
    Key top[K];
    if (!begin_cell(p, cell, rect, top)) select_cell<K, kN1>(p, rect, top);
    merge_and_finish<K>(p, top, cell);
}

template <int K, bool kN1>
struct GridNmsKernel {
    static const void* func() { return reinterpret_cast<const void*>(&grid_nms_kernel<K, kN1>); }
};

}  // namespace

GridNmsLaunch grid_nms_launch(const GridNmsParams& p) {
    if (p.fused) return cell_detect_launch(p);
    return selection_launch<GridNmsKernel>(p, 0);
}

void launch_grid_nms(const GridNmsParams& p, cudaStream_t stream) {
    const GridNmsLaunch l = grid_nms_launch(p);
    GridNmsParams arg = p;
    void* args[] = {&arg};
    KESTREL_CUDA(cudaLaunchKernel(l.func, l.grid, l.block, args, l.smem, stream),
                 p.fused ? "cell detect launch" : "grid nms launch");
    KESTREL_CUDA_LAUNCH(p.fused ? "cell detect" : "grid nms");
}

}  // namespace kestrel::kernels
