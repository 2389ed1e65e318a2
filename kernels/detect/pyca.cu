// PyCA selection (pyramidal culling and aggregation, after Jetson-SLAM): two launches on the levels' score
// maps, no host round trip.
// Reference it must match exactly (same list, same order): pyca_select_reference (src/detect/pyca_cpu.cpp);
// rules in include/kestrel/detail/pyca_rules.hpp (culling, aggregation, the q x q rule), grid_rules.hpp
// (geometry, eligibility, keys) and fast_rules.hpp (keypoint_key).
//
// 1. Feature culling (pyca_cull_kernel): one survivor key per PyCA cell of every level.
//    Thread-Efficient Warp Allocation (TEWA): warps, not blocks, are the unit of work, and a warp's 32 lanes
//    always cover 32 columns of cells of one cell row of one level:
//      c <= 32: the warp takes 32 / c horizontally adjacent cells, lanes [j c, (j + 1) c) the columns of the
//               j-th (lane l: column l % c of cell l / c);
//      c >= 32: the warp takes one cell and lane l its columns l, l + 32, ... (c / 32 per lane).
//    So every lane is mapped to a column of a cell whatever the cell size: warp efficiency 100 % for
//    c = 8, 16, 32, 64, 128 (one warp per cell would leave 75 % of the lanes idle at c = 8 and 50 % at
//    c = 16); only cells cut by the level's right edge and the last warp of a cell row (fewer than
//    32 / c cells left) have idle lanes. Warps of all levels form one launch (p.warp_begin[k] is level k's
//    first warp); 8 warps per block.
//    Multi-Location-Per-Thread (MLPT), vertical culling: each lane walks its column(s) down the cell's c
//    rows (c locations per column, loads issued four rows at a time; a warp reads one 32-column row segment
//    per step, coalesced) and keeps the best candidate key (score > 0, eligible: detail::level0_pixel,
//    inside_border, pixel mask, cell mask of the level-0 grid cell) in a register.
//    Horizontal culling: a butterfly (__shfl_xor_sync) over the c lanes of each cell (log2 c steps, the
//    segments are aligned powers of two), or over the warp for c > 32; the cell's first lane writes the
//    survivor. Keys are unique, so the result is the reference's max whatever the order.
//    pyca_cull_tree_kernel computes the same survivors the textbook way for comparison: one block per
//    cell with min(c^2, 256) threads, each thread one location (or c^2 / 256 of them), then a log2 tree
//    reduction in shared memory with a barrier per step.
// 2. Aggregation (pyca_aggregate_kernel): one block (256 threads) per level-0 grid cell, as the grid-NMS
//    kernel. begin_cell gives the grid cell's rectangle on every level (detail::cell_begin); the block's
//    8 warps share the PyCA cells overlapping it, one warp per cell. For a survivor inside the rectangle
//    every lane computes its level-0 pixel's aggregate (detail::pyca_aggregate, the reference's own
//    function: K_r summed in level order with __fadd_rn, K_l, the representative), and when the survivor
//    is the representative, lane i asks detail::pyca_window_suppresses for window position i (the
//    neighbour's aggregate gathered from the survivor slots, the Pareto rule): a warp vote says whether
//    any position suppresses it, the same answer as the reference's loop over the positions
//    (detail::pyca_keypoint_key). Lane 0 puts the keypoint into its best-K list; merge_and_finish
//    (kernels/detect/grid_select_block.cuh) writes the cell's K slots, and the last block caps, compacts and
//    counts, writing the list to device memory and, mapped, to pinned host memory.
#include "kernels/common/cuda_check.hpp"
#include "grid_select_block.cuh"
#include "pyca.cuh"

namespace kestrel::kernels {
namespace {
using namespace select;

/// The candidate key of level-k pixel (x, y): 0 unless its score > 0 and it is eligible (border, pixel
/// mask, cell mask of its level-0 grid cell).
__device__ __forceinline__ Key candidate_key(const GridNmsParams& p, int k, float sp, int x, int y) {
    if (!(sp > 0.0f)) return 0;
    const float s = p.level[k].scale;
    const int X0 = detail::level0_pixel(x, s, p.image_width), Y0 = detail::level0_pixel(y, s, p.image_height);
    if (!detail::inside_border(X0, p.image_width, p.border) || !detail::inside_border(Y0, p.image_height, p.border))
        return 0;
    if (p.cell_skip != nullptr && p.cell_skip[(Y0 / p.cell_height) * p.cols + X0 / p.cell_width] != 0) return 0;
    if (p.pixel_mask != nullptr && p.pixel_mask[static_cast<std::size_t>(Y0) * p.mask_pitch + X0] == 0) return 0;
    return detail::keypoint_key(sp, k, x, y);
}

__device__ __forceinline__ Key key_max(Key a, Key b) { return a > b ? a : b; }

// The launch descriptor is copied once per block into shared memory: the kernels index its per-level arrays
// with a run-time level, which on kernel parameters would force a per-thread local copy of the whole struct.
#define KESTREL_PYCA_SHARED_PARAMS(p_in, p) \
    __shared__ PycaParams p##_shared;       \
    if (threadIdx.x == 0) p##_shared = p_in; \
    __syncthreads();                        \
    const PycaParams& p = p##_shared;

__global__ void __launch_bounds__(kThreads) pyca_cull_kernel(const PycaParams p_in) {
    KESTREL_PYCA_SHARED_PARAMS(p_in, p)
    const int lane = threadIdx.x & 31;
    const int gw = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x >> 5);
    const detail::PycaGeometry& g = p.geo;
    if (gw >= p.warp_begin[g.levels]) return;  // warp-uniform
    int k = 0;
    while (k + 1 < g.levels && gw >= p.warp_begin[k + 1]) ++k;
    const int c = g.cell[k];
    const int cpw = c < 32 ? 32 / c : 1;         // cells per warp
    const int wpr = (g.cols[k] + cpw - 1) / cpw;  // warps per cell row
    const int local = gw - p.warp_begin[k];
    const int cr = local / wpr;
    const int seg = c < 32 ? lane / c : 0;
    const int cc = (local % wpr) * cpw + seg;
    const int col = c < 32 ? lane % c : lane;
    const int per_lane = c > 32 ? c / 32 : 1;     // columns per lane
    const GridLevel& L = p.grid.level[k];
    const int y0 = cr * c, y1 = min(y0 + c, L.height);
    Key best = 0;
    if (cc < g.cols[k]) {
        for (int j = 0; j < per_lane; ++j) {
            const int x = cc * c + col + 32 * j;
            if (x >= L.width) break;
            // Vertical culling, MLPT: this lane's column over the cell's rows, four loads in flight.
            int y = y0;
            for (; y + 4 <= y1; y += 4) {
                float s[4];
#pragma unroll
                for (int i = 0; i < 4; ++i) s[i] = detail::score_at(L.scores, L.pitch, x, y + i);
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (s[i] > 0.0f) best = key_max(best, candidate_key(p.grid, k, s[i], x, y + i));
            }
            for (; y < y1; ++y) {
                const float s = detail::score_at(L.scores, L.pitch, x, y);
                if (s > 0.0f) best = key_max(best, candidate_key(p.grid, k, s, x, y));
            }
        }
    }
    // Horizontal culling: butterfly over the cell's lanes (all lanes take part).
    const int width = c < 32 ? c : 32;
    for (int off = width >> 1; off > 0; off >>= 1) best = key_max(best, __shfl_xor_sync(kFullMask, best, off));
    if (col == 0 && cc < g.cols[k]) p.survivors[g.offset[k] + cr * g.cols[k] + cc] = best;
}

/// Comparison kernel: the survivors of level k by a log2 tree reduction per cell (one block per cell).
__global__ void pyca_cull_tree_kernel(const PycaParams p_in, int k) {
    KESTREL_PYCA_SHARED_PARAMS(p_in, p)
    __shared__ Key part[kThreads];
    const detail::PycaGeometry& g = p.geo;
    const int c = g.cell[k];
    const int cell = static_cast<int>(blockIdx.x);
    const int cx = cell % g.cols[k], cy = cell / g.cols[k];
    const GridLevel& L = p.grid.level[k];
    const int n = static_cast<int>(blockDim.x);
    Key best = 0;
    for (int i = static_cast<int>(threadIdx.x); i < c * c; i += n) {
        const int x = cx * c + i % c, y = cy * c + i / c;
        if (x < L.width && y < L.height)
            best = key_max(best, candidate_key(p.grid, k, detail::score_at(L.scores, L.pitch, x, y), x, y));
    }
    part[threadIdx.x] = best;
    __syncthreads();
    for (int half = n >> 1; half > 0; half >>= 1) {
        if (static_cast<int>(threadIdx.x) < half) part[threadIdx.x] = key_max(part[threadIdx.x], part[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) p.survivors[g.offset[k] + cell] = part[0];
}

template <int K>
__global__ void __launch_bounds__(kThreads) pyca_aggregate_kernel(const PycaParams p_in) {
    KESTREL_PYCA_SHARED_PARAMS(p_in, p)
    __shared__ int rect[kMaxLevels][4];  // the grid cell's rectangle on level k: x0, x1, y0, y1
    const int cell = static_cast<int>(blockIdx.x);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const detail::PycaGeometry& g = p.geo;
    Key top[K];  // lane 0 of each warp collects its warp's keypoints; the other lanes' lists stay empty
    if (!begin_cell(p.grid, cell, rect, top))
        for (int k = 0; k < g.levels; ++k) {
            const int x0 = rect[k][0], x1 = rect[k][1], y0 = rect[k][2], y1 = rect[k][3];
            if (x1 <= x0 || y1 <= y0) continue;
            const int c = g.cell[k];
            const int px0 = x0 / c, py0 = y0 / c;
            const int pw = (x1 - 1) / c - px0 + 1, ph = (y1 - 1) / c - py0 + 1;
            // One warp per culling cell overlapping the rectangle (every branch below is warp-uniform).
            for (int i = warp; i < pw * ph; i += kWarps) {
                const Key key = p.survivors[g.offset[k] + (py0 + i / pw) * g.cols[k] + px0 + i % pw];
                if (key == 0) continue;
                const int x = detail::key_x(key), y = detail::key_y(key);
                if (x < x0 || x >= x1 || y < y0 || y >= y1) continue;  // another grid cell's
                const int X0 = detail::level0_pixel(x, g.scale[k], g.width);
                const int Y0 = detail::level0_pixel(y, g.scale[k], g.height);
                const detail::PycaAggregate a = detail::pyca_aggregate(g, p.survivors, X0, Y0);
                if (a.rep != key) continue;
                bool suppressed = false;  // the q x q window, one position per lane
                for (int w = lane; w < g.q * g.q; w += 32)
                    suppressed = suppressed || detail::pyca_window_suppresses(g, p.survivors, X0, Y0, a, w);
                if (__any_sync(kFullMask, suppressed)) continue;
                if (lane == 0) detail::topk_insert(top, static_cast<Key>(detail::keypoint_key(a.kr, k, x, y)));
            }
        }
    merge_and_finish<K>(p.grid, top, cell);
}

template <int K, bool>
struct PycaAggregateKernel {
    static const void* func() { return reinterpret_cast<const void*>(&pyca_aggregate_kernel<K>); }
};

}  // namespace

void plan_pyca(PycaParams& p) {
    int warps = 0;
    for (int k = 0; k < p.geo.levels; ++k) {
        const int c = p.geo.cell[k];
        const int cpw = c < 32 ? 32 / c : 1;
        p.warp_begin[k] = warps;
        warps += p.geo.rows[k] * ((p.geo.cols[k] + cpw - 1) / cpw);
    }
    for (int k = p.geo.levels; k <= kMaxLevels; ++k) p.warp_begin[k] = warps;
}

double pyca_cull_warp_efficiency(int c) {
    // Lanes mapped to a column: c <= 32: (32 / c) cells of c lanes; c > 32: 32 lanes, c / 32 columns each.
    const int mapped = c <= 32 ? (32 / c) * c : 32;
    return mapped / 32.0;
}

void launch_pyca_cull(const PycaParams& p, cudaStream_t stream) {
    const int warps = p.warp_begin[p.geo.levels];
    if (warps == 0) return;
    const unsigned blocks = static_cast<unsigned>((warps + kWarps - 1) / kWarps);
    pyca_cull_kernel<<<blocks, kThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("pyca cull");
}

void launch_pyca_cull_tree(const PycaParams& p, cudaStream_t stream) {
    for (int k = 0; k < p.geo.levels; ++k) {
        const int c = p.geo.cell[k];
        const int cells = p.geo.cols[k] * p.geo.rows[k];
        if (cells == 0) continue;
        const unsigned threads = static_cast<unsigned>(c * c < kThreads ? c * c : kThreads);
        pyca_cull_tree_kernel<<<static_cast<unsigned>(cells), threads, 0, stream>>>(p, k);
        KESTREL_CUDA_LAUNCH("pyca cull (tree)");
    }
}

void launch_pyca_aggregate(const PycaParams& p, cudaStream_t stream) {
    const GridNmsLaunch l = selection_launch<PycaAggregateKernel>(p.grid, 0);
    PycaParams arg = p;
    void* args[] = {&arg};
    KESTREL_CUDA(cudaLaunchKernel(l.func, l.grid, l.block, args, l.smem, stream), "pyca aggregate launch");
    KESTREL_CUDA_LAUNCH("pyca aggregate");
}

}  // namespace kestrel::kernels
