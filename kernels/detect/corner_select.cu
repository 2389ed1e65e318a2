// Grid selection from the score kernel's corner list: NMS, eligibility, best K per cell, global cap and
// compaction, ONE launch whose work follows the corners, not the pixels.
// Reference it must match exactly (same list, same order): grid_select_reference (src/detect/grid_select_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility, nms_is_maximum_fixed) and
// fast_rules.hpp (keypoint_key order, nms_suppressed_by).
//
// The score kernel (kernels/detect/fast_score.cu, with ScoreDesc::corners) has appended the keypoint_key of
// every pixel with a positive score (the only candidates) to a list, in no particular order. Here a fixed
// grid of blocks (one wave: p.list_blocks) shares the list, one corner per thread and round:
//   1. the corner's level, x, y and score come from its key; it is eligible (level-0 border, pixel mask, its
//      cell's skip flag; the cell index by div_by_magic, no division) and the maximum of its
//      neighbourhood in the level's score map (n = 1: detail::nms_is_maximum_fixed<1>, the 8 loads issued
//      together; n > 1: the reference's loop);
//   2. it enters its cell's K slots by 64-bit atomics: K = 1 one atomicMax; K > 1 a cascade, slot r keeping
//      the larger of its key and the incoming one and passing the smaller on to slot r + 1. Slot 0 sees
//      every key of the cell and keeps the largest; slot r + 1 sees all keys but the r + 1 largest, in any
//      order, and keeps the largest of them. Keys are unique (level, x, y differ), so the slots end as the
//      cell's best K in rank order whatever the order of the list or of the atomics: the result is exact
//      and deterministic. Before the atomics a corner reads slot K - 1 and stops when its key cannot enter
//      (slots only grow, so a stale read only costs work).
//   3. the last block (ticket) runs finish() (kernels/detect/grid_select_block.cuh): cap, compaction in cell
//      order, count; then it resets the list's count and the slots to 0 for the next launch.
#include "kernels/common/cuda_check.hpp"
#include "grid_constant.cuh"
#include "grid_nms.cuh"
#include "cell_index.hpp"
#include "grid_select_block.cuh"
#include "kernels/common/sm_count.cuh"
#include "sm_threads.cuh"

namespace kestrel::kernels {
namespace {
using namespace select;

template <int K, bool kN1>
__device__ __forceinline__ void select_corner(const GridNmsParams& p, Key key) {
    const int k = detail::key_level(key), x = detail::key_x(key), y = detail::key_y(key);
    const float sp = detail::key_score(key);
    const GridLevel& L = p.level[k];
    // Eligibility: level-0 pixel, border, pixel mask, cell mask.
    const int X0 = detail::level0_pixel(x, L.scale, p.image_width);
    const int Y0 = detail::level0_pixel(y, L.scale, p.image_height);
    if (!detail::inside_border(X0, p.image_width, p.border) || !detail::inside_border(Y0, p.image_height, p.border))
        return;
    const int cell = div_by_magic(Y0, p.cell_div_y) * p.cols + div_by_magic(X0, p.cell_div_x);
    Key* slots = p.cell_keys + static_cast<std::size_t>(cell) * K;
    const bool masked = p.pixel_mask != nullptr && p.pixel_mask[static_cast<std::size_t>(Y0) * p.mask_pitch + X0] == 0;
    const bool skipped = p.cell_skip != nullptr && p.cell_skip[cell] != 0;
    if (masked || skipped || key <= __ldcg(slots + K - 1)) return;
    const bool is_max = kN1 ? detail::nms_is_maximum_fixed<1>(detail::MapNeighbours{L.scores, L.pitch, L.width, L.height, x, y}, sp)
                            : detail::nms_is_maximum(L.scores, L.pitch, L.width, L.height, x, y, p.nms_radius, sp);
    if (!is_max) return;
    if (K == 1) {
        atomicMax(slots, key);
    } else {
        Key v = key;
#pragma unroll
        for (int r = 0; r < K; ++r) {
            const Key old = atomicMax(slots + r, v);
            if (old == 0) break;     // v took an empty slot: nothing is passed on
            v = old < v ? old : v;   // the smaller of the two goes on to slot r + 1
        }
    }
}

// K = 1 fits 32 registers: every warp slot of an SM (8 blocks on sm_90), so the list's corners are one
// round of the wave's threads.
template <int K, bool kN1>
__global__ void __launch_bounds__(kThreads, K == 1 ? kSmMaxThreads / kThreads : 5) corner_select_kernel(KESTREL_GRID_CONSTANT const GridNmsParams p_in) {
#if KESTREL_HAS_GRID_CONSTANT
    const GridNmsParams& p = p_in;  // read in place, also p.level[k] at a run-time level
#else
    // Without __grid_constant__ a run-time index into the parameter makes a per-thread copy: one shared copy
    // per block instead.
    __shared__ GridNmsParams p;
    if (threadIdx.x == 0) p = p_in;
    __syncthreads();
#endif
    const unsigned n = __ldcg(p.corner_count);
    const unsigned stride = gridDim.x * kThreads;
    for (unsigned i = blockIdx.x * kThreads + threadIdx.x; i < n; i += stride) select_corner<K, kN1>(p, __ldcg(p.corners + i));
    __shared__ bool is_last;
    __syncthreads();  // every atomic of the block is issued
    if (threadIdx.x == 0) {
        __threadfence();  // the block's slot updates are visible device-wide before the ticket is taken
        is_last = atomicAdd(p.ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();  // see every other block's slots
    finish<K>(p);
}

template <int K, bool kN1>
struct CornerSelectKernel {
    static const void* func() { return reinterpret_cast<const void*>(&corner_select_kernel<K, kN1>); }
};

}  // namespace

GridNmsLaunch corner_select_launch(const GridNmsParams& p) {
    GridNmsLaunch l = selection_launch<CornerSelectKernel>(p, 0);
    l.grid = dim3(static_cast<unsigned>(p.list_blocks));
    return l;
}

int corner_select_blocks(const GridNmsParams& p) {
    const int sms = sms_available();  // a green context's partition, not the whole device
    int per_sm = 0;
    KESTREL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, corner_select_launch(p).func, kThreads, 0),
                 "corner select plan");
    return (per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
}

}  // namespace kestrel::kernels
