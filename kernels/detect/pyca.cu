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
//    kernel. begin_cell gives the grid cell's rectangle on every level (detail::cell_begin). The work is spread
//    over the block's threads, not walked by one warp survivor after survivor:
//      a. the culling cells overlapping the rectangle on every level, flattened into one index range: one
//         cell per thread; its survivor, when inside the rectangle, joins a list in shared memory (in any
//         order: each survivor's outcome and the block's best K do not depend on it, keys being unique);
//      b. per round of 256 / q^2 listed survivors, one thread per (survivor, q x q window position): the
//         aggregate of that level-0 pixel (detail::pyca_aggregate_at, the rules' own function: K_r summed in
//         level order with __fadd_rn, K_l, the representative; 0 outside the image), into shared memory;
//      c. the survivor's thread then applies the rules' tests of pyca_keypoint_key: its pixel's representative,
//         and no window position dominating it (detail::pyca_dominates), and puts keypoint_key(K_r, ...) into
//         its best-K list.
//    The level-j column and row of a level-0 pixel are read from tables computed by the rule once per image
//    size on the host (pyca_coord_tables: PycaRuleCoords' values) instead of evaluating cell_begin's search at
//    every lookup, and the levels' loads of one aggregate are independent of each other. merge_and_finish
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

/// The level coordinates of a level-0 column / row from the tables (p.coords: pyca_coord_tables, the rule's
/// values, read through the read-only cache).
struct TableCoords {
    const std::int16_t* xs;
    const std::int16_t* ys;
    int width, height;
    __host__ __device__ __forceinline__ int x(int j, int X0) const { return load(xs + j * width + X0); }
    __host__ __device__ __forceinline__ int y(int j, int Y0) const { return load(ys + j * height + Y0); }
    __host__ __device__ __forceinline__ static int load(const std::int16_t* a) {
#if defined(__CUDA_ARCH__)
        return __ldg(a);
#else
        return *a;
#endif
    }
};

/// Reads survivor slots through the read-only cache (written by the culling launch before this one).
struct SurvivorReader {
    const unsigned long long* keys;
    __host__ __device__ __forceinline__ unsigned long long operator[](int i) const {
#if defined(__CUDA_ARCH__)
        return __ldg(keys + i);
#else
        return keys[i];
#endif
    }
};

template <int K>
__global__ void __launch_bounds__(kThreads, 4) pyca_aggregate_kernel(const PycaParams p_in) {
    KESTREL_PYCA_SHARED_PARAMS(p_in, p)
    __shared__ int rect[kMaxLevels][4];           // the grid cell's rectangle on level k: x0, x1, y0, y1
    __shared__ int cells_begin[kMaxLevels + 1];   // culling cells overlapping it, levels flattened
    __shared__ Key list[kThreads];                // one round's survivors inside the rectangle
    __shared__ int list_n;
    __shared__ detail::PycaAggregate agg[kThreads];  // one aggregate per (survivor, window position)
    const int cell = static_cast<int>(blockIdx.x);
    const int tid = static_cast<int>(threadIdx.x);
    const detail::PycaGeometry& g = p.geo;
    const TableCoords coords{p.coords, p.coords + g.levels * g.width, g.width, g.height};
    const SurvivorReader survivors{p.survivors};
    Key top[K];  // each thread's best-K list of the keypoints it evaluated
    if (!begin_cell(p.grid, cell, rect, top)) {  // block-uniform
        if (tid == 0) {
            int n = 0;
            for (int k = 0; k < g.levels; ++k) {
                cells_begin[k] = n;
                const int c = g.cell[k];
                if (rect[k][1] > rect[k][0] && rect[k][3] > rect[k][2])
                    n += ((rect[k][1] - 1) / c - rect[k][0] / c + 1) * ((rect[k][3] - 1) / c - rect[k][2] / c + 1);
            }
            cells_begin[g.levels] = n;
        }
        __syncthreads();
        const int total = cells_begin[g.levels];
        const int q = g.q, qq = q * q, r = q / 2, centre = qq / 2;
        const int per_round = kThreads / qq;  // survivors evaluated together (q <= 9: at least 3)
        for (int base = 0; base < total; base += kThreads) {
            // 1. This round's culling cells, one per thread: their survivors inside the rectangle, listed.
            if (tid == 0) list_n = 0;
            __syncthreads();
            const int i = base + tid;
            if (i < total) {
                int k = 0;
                while (i >= cells_begin[k + 1]) ++k;
                const int c = g.cell[k];
                const int x0 = rect[k][0], x1 = rect[k][1], y0 = rect[k][2], y1 = rect[k][3];
                const int px0 = x0 / c, py0 = y0 / c, pw = (x1 - 1) / c - px0 + 1;
                const int local = i - cells_begin[k];
                const Key key = survivors[g.offset[k] + (py0 + local / pw) * g.cols[k] + px0 + local % pw];
                const int x = detail::key_x(key), y = detail::key_y(key);
                if (key != 0 && x >= x0 && x < x1 && y >= y0 && y < y1) list[atomicAdd(&list_n, 1)] = key;
            }
            __syncthreads();
            const int n = list_n;
            // 2. Per survivor, the aggregates of its level-0 pixel P and of the q x q window around it, one
            //    (survivor, position) per thread; then each survivor's thread applies the rules' tests
            //    (pyca_keypoint_key: P's representative, no window position dominating it) and keeps the key.
            for (int s0 = 0; s0 < n; s0 += per_round) {
                const int sl = tid / qq, w = tid % qq;
                if (sl < per_round && s0 + sl < n) {
                    const Key key = list[s0 + sl];
                    const int k = detail::key_level(key);
                    const int X = detail::level0_pixel(detail::key_x(key), g.scale[k], g.width) + w % q - r;
                    const int Y = detail::level0_pixel(detail::key_y(key), g.scale[k], g.height) + w / q - r;
                    agg[tid] = X >= 0 && Y >= 0 && X < g.width && Y < g.height
                                   ? detail::pyca_aggregate_at(g, survivors, coords, X, Y)
                                   : detail::PycaAggregate{0.0f, 0, 0};  // outside: suppresses nothing
                }
                __syncthreads();
                if (tid < per_round && s0 + tid < n) {
                    const Key key = list[s0 + tid];
                    const detail::PycaAggregate* a = agg + tid * qq;
                    if (a[centre].rep == key) {
                        bool suppressed = false;
                        for (int v = 0; v < qq && !suppressed; ++v)
                            suppressed = v != centre && detail::pyca_dominates(a[v], a[centre], v % q - r, v / q - r);
                        if (!suppressed)
                            detail::topk_insert(top, static_cast<Key>(detail::keypoint_key(
                                                         a[centre].kr, detail::key_level(key), detail::key_x(key),
                                                         detail::key_y(key))));
                    }
                }
                __syncthreads();  // agg is rewritten by the next round
            }
            __syncthreads();  // list and list_n are rewritten by the next round
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
