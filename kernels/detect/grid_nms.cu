// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/detect/grid_select_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility, nms_is_maximum_fixed) and
// fast_rules.hpp (keypoint_key order, nms_suppressed_by).
//
// One block per level-0 cell (vilib), 256 threads:
//   1. Thread 4k + b computes boundary b (x0, x1, y0, y1) of the cell's rectangle on level k
//      (detail::cell_begin); one barrier.
//   2. On every level the block's threads share the rectangle's pixels (thread t: pixels t, t + 256, ...
//      in row-major order), loading kBatch scores before using any. A pixel enters the thread's best-K
//      list (registers, unrolled, constant indices) when its key beats the list's last and it survives
//      NMS (n = 1: detail::nms_is_maximum_fixed<1>, its 8 loads issued together, mostly L1 hits;
//      n > 1: the reference's loop) and is eligible (border, pixel mask). One copy of that candidate
//      code per kernel: the kernel is specialised on K and on n == 1 only, so it stays small.
//   3. merge_and_finish (kernels/detect/grid_select_block.cuh): warp and block best-K merge into the cell's slots,
//      and the last block to finish caps, compacts and counts.
// (An earlier version staged each warp's rows plus halo in shared memory first: 4 000 SASS instructions
// for K = 1 and 1 400 executed per warp; this one has 2 000 and about 720, in the same time, about
// 11 us at 752x480 under Nsight Compute: the kernel is latency-bound, docs/benchmarks.md.)
// The detector itself uses this kernel only where kernels/detect/cell_detect.cu (scores computed by the same
// blocks, no score maps) does not apply: Harris, or cells too large for its shared memory.
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

/// The block's pixels of the cell's rectangle [x0, x0 + w) x [y0, y0 + h) on level k: thread t takes
/// pixels t, t + kThreads, ... in row-major order, kBatch scores loaded before any is used (one memory
/// round trip per batch). Each positive score (about 5 % of the pixels) then goes through one copy of
/// the candidate code (a loop over the batch's candidate bits: small code, few instruction-cache
/// misses): it enters the thread's best-K list when its key beats the list's last, it survives NMS and
/// it is eligible. Order of levels and pixels does not matter: keys are unique.
template <int K, bool kN1>
__device__ void scan_rect(const GridNmsParams& p, int k, int x0, int y0, int w, int h, Key (&top)[K]) {
    constexpr int kBatch = 4;
    const GridLevel& L = p.level[k];
    const int total = w * h;  // < 2^28: w, h <= 16383
    const int step_x = kThreads % w, step_y = kThreads / w;
    int lx = static_cast<int>(threadIdx.x) % w, ly = static_cast<int>(threadIdx.x) / w;
    for (int start = 0; start < total; start += kThreads * kBatch) {
        float s[kBatch];
        int xs[kBatch], ys[kBatch];
        unsigned cand = 0;
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
        for (int j = 0; j < kBatch; ++j) cand |= static_cast<unsigned>(s[j] > 0.0f) << j;
        while (cand != 0) {
            const int j = __ffs(cand) - 1;
            cand &= cand - 1u;
            float sp = s[0];
            int x = xs[0], y = ys[0];
#pragma unroll
            for (int i = 1; i < kBatch; ++i)
                if (i == j) {
                    sp = s[i];
                    x = xs[i];
                    y = ys[i];
                }
            const Key key = detail::keypoint_key(sp, k, x, y);
            if (key > top[K - 1] && nms_is_maximum_at<kN1>(L, p.nms_radius, x, y, sp) && eligible(p, L.scale, x, y))
                detail::topk_insert(top, key);
        }
    }
}

template <int K, bool kN1>
__global__ void __launch_bounds__(kThreads, 4) grid_nms_kernel(const GridNmsParams p_in) {
    // The descriptor is copied once per block into shared memory: scan_rect indexes its per-level array with
    // a run-time level, which on kernel parameters forces a per-thread local copy of the whole struct.
    __shared__ GridNmsParams p;
    if (threadIdx.x == 0) p = p_in;
    __syncthreads();
    __shared__ int rect[kMaxLevels][4];  // the cell's rectangle on level k: x0, x1, y0, y1
    const int cell = static_cast<int>(blockIdx.x);
    Key top[K];
    if (!begin_cell(p, cell, rect, top))
        for (int k = 0; k < p.levels; ++k) {
            const int w = rect[k][1] - rect[k][0], h = rect[k][3] - rect[k][2];
            if (w > 0 && h > 0) scan_rect<K, kN1>(p, k, rect[k][0], rect[k][2], w, h, top);
        }
    merge_and_finish<K>(p, top, cell);
}

template <int K, bool kN1>
struct GridNmsKernel {
    static const void* func() { return reinterpret_cast<const void*>(&grid_nms_kernel<K, kN1>); }
};

}  // namespace

GridNmsLaunch grid_nms_launch(const GridNmsParams& p) {
    if (p.fused) return cell_detect_launch(p);
    if (p.listed) return corner_select_launch(p);
    return selection_launch<GridNmsKernel>(p, 0);
}

void launch_grid_nms(const GridNmsParams& p, cudaStream_t stream) {
    const GridNmsLaunch l = grid_nms_launch(p);
    GridNmsParams arg = p;
    void* args[] = {&arg};
    KESTREL_CUDA(cudaLaunchKernel(l.func, l.grid, l.block, args, l.smem, stream),
                 p.fused ? "cell detect launch" : p.listed ? "corner select launch" : "grid nms launch");
    KESTREL_CUDA_LAUNCH(p.fused ? "cell detect" : p.listed ? "corner select" : "grid nms");
}

}  // namespace kestrel::kernels
