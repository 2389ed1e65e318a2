// The per-level policies on the GPU (SelectionPolicy::OrbSlam, LevelHarris). Must equal the CPU reference
// src/detect/orbslam_select_cpu.cpp bit for bit; every rule is include/kestrel/detail/orbslam_rules.hpp's.
//
// Launch 1, orbslam_cells_kernel: one warp per cell, the cells of every level in one grid. The warp walks its
// cell 32 pixels at a time; each lane tests its pixel (orbslam_is_maximum on the score map, orbslam_eligible);
// a ballot counts the candidates, one lane reserves their slots in the level's list with one atomicAdd and each
// candidate lane writes its key. Where the first threshold found nothing (OrbSlam), the warp walks the cell
// again at threshold_min. The list's order depends on scheduling; nothing after depends on that order.
//
// Launch 2, orbslam_distribute_kernel: one block per level.
//  OrbSlam: the quadtree as arrays. Each candidate holds its node (node_of); a node is a rectangle and a count.
//  A round: (a) every node with two or more candidates finds its place in the split order by counting the
//  nodes before it (orbslam_splits_before; nodes < N_l, so this is at most N_l^2 comparisons); (b) every
//  candidate of such a node adds itself to its quadrant's count; (c) in split order, a block scan of the new
//  nodes each split adds (non-empty quadrants - 1) gives, for split j, the live count before it: the split is
//  made when that count is below N_l (the reference's loop: splits in order while below the budget). A split
//  node's first non-empty quadrant keeps its slot, the others take slots after the live ones in split order;
//  (d) the candidates of split nodes move to their quadrant's slot. The rounds end as the reference's loop.
//  Then every node's best key (atomicMax), and the level's best N_l nodes by rank (counting the larger keys).
//  LevelHarris: the 2 N_l best MT keys by an exact radix select (8 passes of 8-bit digits over the list), their
//  Harris keys, and the best N_l of those by rank.
//  The last block to finish (ticket) writes the levels in order as keypoints into the result block (device and
//  mapped pinned host memory) and the count, and resets the ticket.
#include "orbslam_select.cuh"

#include "kernels/common/cuda_check.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/detail/orbslam_rules.hpp"

namespace kestrel::kernels {
namespace {

constexpr int kCellWarps = 4;      // warps (cells) per block of the cell kernel
constexpr int kDistThreads = 512;  // threads per block of the distribution kernel
constexpr unsigned kFull = 0xFFFFFFFFu;

struct MapScore {
    const float* map;
    std::size_t pitch;
    __device__ float operator()(int x, int y) const { return detail::score_at(map, pitch, x, y); }
};

struct ImagePixel {
    const std::uint8_t* image;
    std::size_t pitch;
    __device__ int operator()(int x, int y) const { return image[static_cast<std::size_t>(y) * pitch + x]; }
};

__global__ void __launch_bounds__(kCellWarps * 32) orbslam_cells_kernel(OrbSlamParams p) {
    const int cell = blockIdx.x * kCellWarps + static_cast<int>(threadIdx.x >> 5);
    const int lane = static_cast<int>(threadIdx.x & 31u);
    if (cell >= p.total_cells) return;  // whole warps leave together
    int k = 0;
    while (k + 1 < p.levels && cell >= p.lv[k + 1].cell_offset) ++k;
    const OrbSlamLevel& L = p.lv[k];
    const int c = cell - L.cell_offset;
    int x0, x1, y0, y1;
    detail::orbslam_cell_rect(L.cells, c % L.cells.cols, c / L.cells.cols, x0, x1, y0, y1);
    const int nx0 = p.harris ? 0 : x0, nx1 = p.harris ? L.width : x1;
    const int ny0 = p.harris ? 0 : y0, ny1 = p.harris ? L.height : y1;
    const int cw = x1 - x0, area = cw > 0 && y1 > y0 ? cw * (y1 - y0) : 0;
    const MapScore score{L.scores, L.pitch};
    const GridNmsParams& g = p.grid;
    for (int pass = 0; pass < 2; ++pass) {
        const int t = pass == 0 || p.harris ? p.threshold_initial : p.threshold_min;
        bool found = false;
        for (int base = 0; base < area; base += 32) {
            const int i = base + lane;
            const int x = x0 + (i < area ? i % cw : 0), y = y0 + (i < area ? i / cw : 0);
            const bool cand = i < area && detail::orbslam_is_maximum(score, x, y, nx0, nx1, ny0, ny1, t) &&
                              detail::orbslam_eligible(x, y, L.scale, g.image_width, g.image_height, g.border,
                                                       g.cell_skip, g.cell_width, g.cell_height, g.cols, g.pixel_mask,
                                                       g.mask_pitch);
            const unsigned vote = __ballot_sync(kFull, cand);
            if (vote == 0u) continue;
            found = true;
            int slot = 0;
            if (lane == 0) slot = atomicAdd(L.cand_count, __popc(vote));
            slot = __shfl_sync(kFull, slot, 0);
            if (cand)
                L.cand[slot + __popc(vote & ((1u << lane) - 1u))] = detail::keypoint_key(score(x, y), k, x, y);
        }
        if (found || p.harris) break;  // the fallback threshold only where the first found nothing
    }
}

/// Exclusive prefix sum of v over the block (all threads call it); *total gets the block's sum.
__device__ int block_exclusive_scan(int v, int* s_warp, int* total) {
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    int incl = v;
    for (int d = 1; d < 32; d <<= 1) {
        const int u = __shfl_up_sync(kFull, incl, d);
        if (lane >= d) incl += u;
    }
    if (lane == 31) s_warp[warp] = incl;
    __syncthreads();
    if (warp == 0) {
        const int n = static_cast<int>(blockDim.x >> 5);
        int w = lane < n ? s_warp[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            const int u = __shfl_up_sync(kFull, w, d);
            if (lane >= d) w += u;
        }
        if (lane < n) s_warp[lane] = w;  // inclusive over the warps
    }
    __syncthreads();
    const int before = warp > 0 ? s_warp[warp - 1] : 0;
    *total = s_warp[(blockDim.x >> 5) - 1];
    __syncthreads();  // s_warp may be reused by the next call
    return before + incl - v;
}

__device__ detail::QuadRect to_rect(int4 r) { return {r.x, r.y, r.z, r.w}; }
__device__ int4 to_int4(const detail::QuadRect& r) { return make_int4(r.x0, r.y0, r.x1, r.y1); }

/// OrbSlam's quadtree on level L's n candidates; returns the live node count (their best keys in L.best).
__device__ int quadtree(const OrbSlamLevel& L, int n, int* s_warp) {
    __shared__ int s_live, s_e, s_new_live;
    const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
    const int roots = L.roots;
    // Roots: count, then number the non-empty ones in root order.
    for (int r = tid; r < roots; r += nt) L.count[r] = 0;
    __syncthreads();
    for (int i = tid; i < n; i += nt) atomicAdd(&L.count[detail::orbslam_root_of(L.cells, roots, detail::key_x(L.cand[i]))], 1);
    __syncthreads();
    if (tid == 0) {
        int live = 0;
        for (int r = 0; r < roots; ++r) L.order[r] = L.count[r] > 0 ? live++ : -1;
        s_live = live;
    }
    __syncthreads();
    // Move the root counts to their node slots (slot <= root index, ascending: one thread keeps the order).
    if (tid == 0)
        for (int r = 0; r < roots; ++r)
            if (L.order[r] >= 0) {
                const int s = L.order[r];
                L.count[s] = L.count[r];
                L.rect[s] = to_int4(detail::orbslam_root(L.cells, r, roots));
            }
    __syncthreads();
    for (int i = tid; i < n; i += nt) L.node_of[i] = L.order[detail::orbslam_root_of(L.cells, roots, detail::key_x(L.cand[i]))];
    for (int s = tid; s < L.node_capacity; s += nt) L.stamp[s] = -1;
    __syncthreads();
    for (int round = 0;; ++round) {
        const int live = s_live;
        if (tid == 0) {
            s_e = 0;
            s_new_live = live;
        }
        __syncthreads();
        // (a) the split order
        for (int a = tid; a < live; a += nt) {
            const int na = L.count[a];
            if (na < 2) continue;
            const detail::QuadRect ra = to_rect(L.rect[a]);
            int r = 0;
            for (int b = 0; b < live; ++b) {
                const int nb = L.count[b];
                r += nb >= 2 && b != a && detail::orbslam_splits_before(nb, to_rect(L.rect[b]), na, ra);
            }
            L.order[r] = a;
            atomicAdd(&s_e, 1);
        }
        __syncthreads();
        const int e = s_e;
        if (e == 0 || live >= L.budget) break;  // uniform: shared values after a barrier
        for (int j = tid; j < e; j += nt) {
            int* ch = L.child + 4 * L.order[j];
            ch[0] = ch[1] = ch[2] = ch[3] = 0;
        }
        __syncthreads();
        // (b) quadrant counts
        for (int i = tid; i < n; i += nt) {
            const int a = L.node_of[i];
            if (L.count[a] < 2) continue;
            const unsigned long long key = L.cand[i];
            const int q = detail::orbslam_quadrant(to_rect(L.rect[a]), detail::key_x(key), detail::key_y(key));
            L.quad[i] = static_cast<unsigned char>(q);
            atomicAdd(&L.child[4 * a + q], 1);
        }
        __syncthreads();
        // (c) the splits made, in order, and their new slots
        int carry = 0;
        for (int base = 0; base < e; base += nt) {
            const int j = base + tid;
            int cnt[4] = {0, 0, 0, 0}, d = 0;
            if (j < e) {
                const int* ch = L.child + 4 * L.order[j];
                for (int q = 0; q < 4; ++q) cnt[q] = ch[q];
                d = (cnt[0] > 0) + (cnt[1] > 0) + (cnt[2] > 0) + (cnt[3] > 0) - 1;
            }
            int total = 0;
            const int before = live + carry + block_exclusive_scan(d, s_warp, &total);
            if (j < e && before < L.budget) {
                const int a = L.order[j];
                const detail::QuadRect parent = to_rect(L.rect[a]);
                int next = before;  // the first non-empty quadrant keeps slot a; the others take before, before + 1, ..
                bool first = true;
                for (int q = 0; q < 4; ++q) {
                    int slot = -1;
                    if (cnt[q] > 0) {
                        slot = first ? a : next++;
                        first = false;
                        L.rect[slot] = to_int4(detail::orbslam_child(parent, q));
                        L.count[slot] = cnt[q];
                    }
                    L.child[4 * a + q] = slot;
                }
                L.stamp[a] = round;
                atomicMax(&s_new_live, before + d);
            }
            carry += total;
            __syncthreads();
        }
        // (d) candidates of split nodes to their quadrant's node
        for (int i = tid; i < n; i += nt) {
            const int a = L.node_of[i];
            if (L.stamp[a] == round) L.node_of[i] = L.child[4 * a + L.quad[i]];
        }
        __syncthreads();
        if (tid == 0) s_live = s_new_live;
        __syncthreads();
    }
    const int live = s_live;
    for (int s = tid; s < live; s += nt) L.best[s] = 0ull;
    __syncthreads();
    for (int i = tid; i < n; i += nt) atomicMax(&L.best[L.node_of[i]], L.cand[i]);
    __syncthreads();
    return live;
}

/// The want-th largest of the n (distinct) keys, by 8 passes of 8-bit digits from the top.
__device__ unsigned long long radix_select(const unsigned long long* keys, int n, int want) {
    __shared__ unsigned int s_hist[256];
    __shared__ unsigned long long s_prefix;
    __shared__ int s_want;
    const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
    if (tid == 0) {
        s_prefix = 0ull;
        s_want = want;
    }
    unsigned long long mask = 0ull;
    for (int shift = 56; shift >= 0; shift -= 8) {
        for (int d = tid; d < 256; d += nt) s_hist[d] = 0u;
        __syncthreads();
        const unsigned long long prefix = s_prefix;
        for (int i = tid; i < n; i += nt) {
            const unsigned long long key = keys[i];
            if ((key & mask) == prefix) atomicAdd(&s_hist[(key >> shift) & 255ull], 1u);
        }
        __syncthreads();
        if (tid == 0) {
            int w = s_want;
            for (int d = 255; d >= 0; --d) {
                const int h = static_cast<int>(s_hist[d]);
                if (w <= h) {
                    s_prefix = prefix | (static_cast<unsigned long long>(d) << shift);
                    break;
                }
                w -= h;
            }
            s_want = w;
        }
        mask |= 255ull << shift;
        __syncthreads();
    }
    return s_prefix;
}

/// LevelHarris: the 2 N_l best MT keys, keyed by their Harris responses into L.best; returns how many.
__device__ int harris_pool(const OrbSlamLevel& L, int k, int n) {
    __shared__ int s_pool;
    const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
    const int want = detail::orbslam_harris_pool(L.budget);
    const unsigned long long floor_key = n > want ? radix_select(L.cand, n, want) : 0ull;
    if (tid == 0) s_pool = 0;
    __syncthreads();
    const ImagePixel pixel{L.image, L.image_pitch};
    for (int i = tid; i < n; i += nt) {
        const unsigned long long key = L.cand[i];
        if (key < floor_key) continue;
        const int x = detail::key_x(key), y = detail::key_y(key);
        const float r = detail::orbslam_harris(pixel, x, y);
        if (r > 0.0f) L.best[atomicAdd(&s_pool, 1)] = detail::keypoint_key(r, k, x, y);
    }
    __syncthreads();
    return s_pool;
}

__global__ void __launch_bounds__(kDistThreads) orbslam_distribute_kernel(OrbSlamParams p) {
    __shared__ int s_warp[32];
    __shared__ bool s_last;
    __shared__ int s_off[kMaxLevels + 1];
    const int k = static_cast<int>(blockIdx.x);
    const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
    const OrbSlamLevel& L = p.lv[k];
    const int n = *L.cand_count;
    int w = 0;
    if (n > 0 && L.budget > 0) w = p.harris ? harris_pool(L, k, n) : quadtree(L, n, s_warp);
    // The level's best N_l by rank (keys are distinct), best first.
    for (int a = tid; a < w; a += nt) {
        const unsigned long long key = L.best[a];
        int r = 0;
        for (int b = 0; b < w; ++b) r += L.best[b] > key;
        if (r < L.budget) p.level_keys[L.out_offset + r] = key;
    }
    __syncthreads();
    if (tid == 0) {
        p.level_count[k] = w < L.budget ? w : L.budget;
        *L.cand_count = 0;  // for the next frame's cell kernel
    }
    // The last block compacts the levels into the result block.
    __threadfence();
    __syncthreads();
    if (tid == 0) s_last = atomicAdd(p.grid.ticket, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!s_last) return;
    __threadfence();
    if (tid == 0) {
        int off = 0;
        for (int l = 0; l < p.levels; ++l) {
            s_off[l] = off;
            off += __ldcg(&p.level_count[l]);
        }
        s_off[p.levels] = off;
    }
    __syncthreads();
    for (int l = 0; l < p.levels; ++l) {
        const int c = s_off[l + 1] - s_off[l];
        for (int r = tid; r < c; r += nt) {
            const unsigned long long key = __ldcg(&p.level_keys[p.lv[l].out_offset + r]);
            Keypoint kp;
            kp.x = detail::level0_coord(detail::key_x(key), p.lv[l].scale);
            kp.y = detail::level0_coord(detail::key_y(key), p.lv[l].scale);
            kp.score = detail::key_score(key);
            kp.level = l;
            p.grid.keypoints[s_off[l] + r] = kp;
            if (p.grid.host_keypoints) p.grid.host_keypoints[s_off[l] + r] = kp;
        }
    }
    if (tid == 0) {
        *p.grid.count = s_off[p.levels];
        if (p.grid.host_count) *p.grid.host_count = s_off[p.levels];
        *p.grid.ticket = 0u;
    }
}

}  // namespace

void launch_orbslam_select(const OrbSlamParams& p, cudaStream_t stream) {
    if (p.total_cells > 0) {
        const int blocks = (p.total_cells + kCellWarps - 1) / kCellWarps;
        orbslam_cells_kernel<<<blocks, kCellWarps * 32, 0, stream>>>(p);
        KESTREL_CUDA_LAUNCH("orbslam cells");
    }
    orbslam_distribute_kernel<<<p.levels, kDistThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("orbslam distribution");
}

}  // namespace kestrel::kernels
