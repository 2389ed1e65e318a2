// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/grid_nms_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility, nms_is_maximum_tile) and
// fast_rules.hpp (keypoint_key order, nms_suppressed_by).
//
// One block per level-0 cell (vilib), 8 warps. Until the merge every warp works alone (no block barrier):
//   1. Every warp computes the cell's rectangle on every level, one cell_begin per lane (lane 4k + b:
//      level k, boundary b = x0, x1, y0, y1). Warp w owns rows [w c, (w + 1) c) of each rectangle,
//      c = ceil(h / 8), and places its tile of those rows plus an n-pixel halo ((rows + 2n) x (w + 2n)
//      floats, 0 outside the level; halo rows overlap the neighbouring warps') greedily into its own
//      kWarpFloats region of shared memory; a share that does not fit is scanned from global memory.
//   2. The warp stages its placed tiles (kStageBatch independent loads in flight per lane, __syncwarp),
//      so the NMS tests read shared memory only.
//   3. Each lane walks the warp's rows linearly (pixels lane, lane + 32, ...) keeping its best K keys
//      in registers (unrolled, constant indices); a pixel is tested for NMS and eligibility only when
//      its key would enter the list. Order of levels and pixels does not matter: keys are unique.
//   4. Per warp K rounds of a warp argmax (the winning lane pops its head); after the block's only
//      barrier warp 0 merges the warps' lists the same way and writes slots cell*K + rank (0 = empty).
// The last block to finish (__threadfence + atomic ticket, reset by that block) then works on all
// cols*rows*K slots with each warp owning one contiguous range (32 slots per round, up to kCache
// rounds kept in registers):
//   - counts the non-empty slots (ballot + popc per round, one barrier for the warp totals),
//   - when max_features > 0 and more keys exist, finds the max_features-th largest key T by an exact
//     radix select (8 passes of 8 bits: histogram of the next digit among keys matching the prefix,
//     block scan from the top digit down picks the digit where the count crosses the remaining rank)
//     and recounts the kept slots per warp,
//   - compacts the slots with key >= T into the dense output in slot (= cell, rank) order: warp w
//     starts at the kept count of warps < w, each round adds the ballot's popc,
//   - writes the count.
// With host_count/host_keypoints set, the list and count are also written straight into mapped pinned
// host memory: the frame then needs no download after this kernel (one graph node, one launch less).
// Keys are unique (level, x, y differ), so every step is exact and the output is deterministic.
#include <cstddef>

#include "../src/cuda_check.hpp"
#include "grid_nms.cuh"
#include "kestrel/detail/grid_rules.hpp"

static_assert(sizeof(kestrel::Keypoint) == 16 && offsetof(kestrel::Keypoint, level) == 12,
              "finish() stores a Keypoint {x, y, score, level} as one int4");

namespace kestrel::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kWarpFloats = 1024;  // per warp (32 KiB per block): 32x32 cells with n <= 4 on any number of
                                   // levels and 64x64 cells with n = 1 on 2 levels fit
constexpr int kStageBatch = 12;    // loads in flight per lane while staging (384 floats per warp pass)
constexpr int kCache = 8;          // finish: slot rounds kept in registers per lane
static_assert(kThreads == 256, "the radix select uses one thread per 8-bit digit");
static_assert(4 * kMaxLevels <= 32, "warp_tiles computes one cell boundary per lane");

using Key = unsigned long long;

__device__ __forceinline__ Key warp_max(Key v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    // max over the high words, then the max low word among the lanes holding that high word
    const unsigned hi = static_cast<unsigned>(v >> 32), lo = static_cast<unsigned>(v);
    const unsigned mh = __reduce_max_sync(kFullMask, hi);
    const unsigned ml = __reduce_max_sync(kFullMask, hi == mh ? lo : 0u);
    return (static_cast<Key>(mh) << 32) | ml;
#else
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const Key o = __shfl_xor_sync(kFullMask, v, off);
        v = o > v ? o : v;
    }
    return v;
#endif
}

/// Best K of the warp (all lanes receive them, best first): K rounds of argmax, winner pops its head.
template <int K>
__device__ __forceinline__ void warp_best_k(Key (&top)[K], Key (&best)[K]) {
#pragma unroll
    for (int r = 0; r < K; ++r) {
        const Key m = warp_max(top[0]);
        if (m != 0 && top[0] == m) detail::topk_pop(top);  // keys are unique: exactly one lane
        best[r] = m;
    }
}

/// Inclusive block scan of v; *total receives the block sum. All threads must call it.
__device__ __forceinline__ unsigned block_scan(unsigned v, unsigned* total) {
    __shared__ unsigned warp_total[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const unsigned o = __shfl_up_sync(kFullMask, v, off);
        if (lane >= off) v += o;
    }
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    unsigned before = 0, all = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
        before += w < warp ? warp_total[w] : 0u;
        all += warp_total[w];
    }
    __syncthreads();  // warp_total may be reused by the next call
    *total = all;
    return v + before;
}

/// Is the level-k pixel (x, y) eligible: level-0 border and pixel mask (its cell is known).
__device__ __forceinline__ bool eligible(const GridNmsParams& p, float s, int x, int y) {
    const int X0 = detail::level0_pixel(x, s, p.image_width);
    const int Y0 = detail::level0_pixel(y, s, p.image_height);
    if (!detail::inside_border(X0, p.image_width, p.border) || !detail::inside_border(Y0, p.image_height, p.border))
        return false;
    return p.pixel_mask == nullptr || p.pixel_mask[static_cast<std::size_t>(Y0) * p.mask_pitch + X0] != 0;
}

/// One warp's share of a cell on one level: the cell's rectangle [x0, x0 + w) x [y0, y0 + h), this
/// warp's rows [r0, r1) of it (relative to y0), and the offset of its staged tile (rows r0 - n ..
/// r1 + n - 1, columns x0 - n .. x0 + w + n - 1) in the warp's shared region (-1: scan global memory).
struct WarpTile {
    int x0, y0, w, r0, r1, off;
};

/// Every warp: its WarpTile of each level into wt[0..levels). Lane 4k + b computes boundary b
/// (x0, x1, y0, y1) of level k; lane 4k then places the tile greedily in level order (warp-uniform).
/// Ends with __syncwarp (wt is read by the whole warp).
__device__ __forceinline__ void warp_tiles(const GridNmsParams& p, int cx, int cy, WarpTile* wt) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int k = lane >> 2, b = lane & 3, n = p.nms_radius;
    int v = 0;
    if (k < p.levels) {
        const GridLevel& L = p.level[k];
        v = b < 2 ? detail::cell_begin(cx + b, p.cell_width, L.scale, L.width, p.image_width)
                  : detail::cell_begin(cy + b - 2, p.cell_height, L.scale, L.height, p.image_height);
    }
    const int q = lane & ~3;
    const int x0 = __shfl_sync(kFullMask, v, q), x1 = __shfl_sync(kFullMask, v, q + 1);
    const int y0 = __shfl_sync(kFullMask, v, q + 2), y1 = __shfl_sync(kFullMask, v, q + 3);
    const int w = x1 - x0, h = y1 - y0;
    // rows split in kWarps chunks of ceil(h / kWarps): warp gets [r0, r1) (possibly empty)
    const int chunk = (h + kWarps - 1) / kWarps;
    const int r0 = min(warp * chunk, h), r1 = min(r0 + chunk, h);
    // Tile floats; 0 for an empty share. (r1 - r0 + 2n) * (w + 2n) < 2^31 since w, h <= 16383.
    const int size = k < p.levels && w > 0 && r1 > r0 ? (r1 - r0 + 2 * n) * (w + 2 * n) : 0;
    int used = 0, mine = -1;
    for (int j = 0; j < p.levels; ++j) {  // greedy placement in level order, uniform across the warp
        const int sz = __shfl_sync(kFullMask, size, 4 * j);
        const bool fits = sz > 0 && sz <= kWarpFloats - used;
        if (j == k) mine = fits ? used : -1;
        if (fits) used += sz;
    }
    if (b == 0 && k < p.levels) wt[k] = WarpTile{x0, y0, w, r0, r1, mine};
    __syncwarp();
}

/// One warp: copies its placed tiles into its shared region (out-of-level pixels read as 0), then
/// __syncwarp. The placed tiles lie back to back in level order: [0, total). Lane l copies elements
/// l, l + 32, ...; it tracks its element's level k, offset t in that level's tile and tile column /
/// row (tx, ty) incrementally (+32 = +sx columns, +sy rows), dividing only when it enters a level.
__device__ void stage_tiles(const GridNmsParams& p, const WarpTile* wt, float* tile) {
    const int n = p.nms_radius, lane = threadIdx.x & 31;
    int total = 0;
    for (int k = 0; k < p.levels; ++k)
        if (wt[k].off >= 0) total = wt[k].off + (wt[k].r1 - wt[k].r0 + 2 * n) * (wt[k].w + 2 * n);
    int k = -1, size = 0, t = lane;  // t: offset of this lane's next element in level k's tile
    int tw = 1, sx = 0, sy = 0, tx = 0, ty = 0, gx0 = 0, gy0 = 0, lw = 0, lh = 0;
    const unsigned char* base = nullptr;
    std::size_t pitch = 0;
    for (int start = 0; start < total; start += 32 * kStageBatch) {
        float v[kStageBatch];
#pragma unroll
        for (int j = 0; j < kStageBatch; ++j) {
            v[j] = 0.0f;
            if (start + j * 32 + lane < total) {
                if (t >= size) {  // enter the placed level whose tile holds the element (i < total: one exists)
                    do {
                        t -= size;
                        do ++k;
                        while (wt[k].off < 0);
                        size = (wt[k].r1 - wt[k].r0 + 2 * n) * (wt[k].w + 2 * n);
                    } while (t >= size);
                    const GridLevel& L = p.level[k];
                    tw = wt[k].w + 2 * n;
                    ty = t / tw;
                    tx = t - ty * tw;
                    sx = 32 % tw;
                    sy = 32 / tw;
                    gx0 = wt[k].x0 - n;  // level coordinates of tile element (0, 0)
                    gy0 = wt[k].y0 + wt[k].r0 - n;
                    lw = L.width;
                    lh = L.height;
                    base = reinterpret_cast<const unsigned char*>(L.scores);
                    pitch = L.pitch;
                }
                const int x = gx0 + tx, y = gy0 + ty;
                if (x >= 0 && y >= 0 && x < lw && y < lh)
                    v[j] = __ldg(reinterpret_cast<const float*>(base + static_cast<std::size_t>(y) * pitch) + x);
                t += 32;  // next element of this lane
                tx += sx;
                ty += sy;
                if (tx >= tw) {
                    tx -= tw;
                    ++ty;
                }
            }
        }
#pragma unroll
        for (int j = 0; j < kStageBatch; ++j) {
            const int i = start + j * 32 + lane;
            if (i < total) tile[i] = v[j];
        }
    }
    __syncwarp();  // the warp's stores are visible to all its lanes
}

/// Walks the warp's rows of level k from its staged tile (halo N), updating this lane's best-K list.
template <int K, int N>
__device__ void scan_tile(const GridNmsParams& p, int k, const WarpTile& r, const float* tile, Key (&top)[K]) {
    const float s = p.level[k].scale;
    const int tw = r.w + 2 * N, rows = r.r1 - r.r0;
    const float* origin = tile + r.off + N * tw + N;  // pixel (x0, y0 + r0)
    // Linear walk of the w x rows share: index i = lane + 32 j -> (i % w, i / w).
    const int lane = threadIdx.x & 31;
    const int step_x = 32 % r.w, step_y = 32 / r.w;
    int lx = lane % r.w, ly = lane / r.w;
    while (ly < rows) {
        const float* c = origin + ly * tw + lx;
        const float sp = *c;
        if (sp > 0.0f) {
            const int x = r.x0 + lx, y = r.y0 + r.r0 + ly;
            const Key key = detail::keypoint_key(sp, k, x, y);
            if (key > top[K - 1] && detail::nms_is_maximum_tile<N>(c, tw, sp) && eligible(p, s, x, y))
                detail::topk_insert(top, key);
        }
        lx += step_x;
        ly += step_y;
        if (lx >= r.w) {
            lx -= r.w;
            ++ly;
        }
    }
}

/// The same from global memory (shares whose tile did not fit).
template <int K>
__device__ void scan_global(const GridNmsParams& p, int k, const WarpTile& r, Key (&top)[K]) {
    const GridLevel& L = p.level[k];
    const int rows = r.r1 - r.r0, lane = threadIdx.x & 31;
    const int step_x = 32 % r.w, step_y = 32 / r.w;
    int lx = lane % r.w, ly = lane / r.w;
    while (ly < rows) {
        const int x = r.x0 + lx, y = r.y0 + r.r0 + ly;
        const float sp = detail::score_at(L.scores, L.pitch, x, y);
        if (sp > 0.0f) {
            const Key key = detail::keypoint_key(sp, k, x, y);
            if (key > top[K - 1] && eligible(p, L.scale, x, y) &&
                detail::nms_is_maximum(L.scores, L.pitch, L.width, L.height, x, y, p.nms_radius, sp))
                detail::topk_insert(top, key);
        }
        lx += step_x;
        ly += step_y;
        if (lx >= r.w) {
            lx -= r.w;
            ++ly;
        }
    }
}

template <int K>
__device__ __forceinline__ void scan_level(const GridNmsParams& p, int k, const WarpTile& r, const float* tile,
                                           Key (&top)[K]) {
    if (r.w <= 0 || r.r1 <= r.r0) return;
    if (r.off >= 0) {
        switch (p.nms_radius) {  // the tile's halo is nms_radius (1..4, validated on the host)
            case 1: scan_tile<K, 1>(p, k, r, tile, top); return;
            case 2: scan_tile<K, 2>(p, k, r, tile, top); return;
            case 3: scan_tile<K, 3>(p, k, r, tile, top); return;
            case 4: scan_tile<K, 4>(p, k, r, tile, top); return;
            default: break;
        }
    }
    scan_global<K>(p, k, r, top);
}

/// The last block's view of the slots: warp w owns slots [w * rounds * 32, (w + 1) * rounds * 32),
/// read in rounds of 32 (slot first + 32 j in round j); the first kCache rounds stay in registers.
struct Owned {
    const Key* keys;
    int n, first, rounds;
};

/// Calls f(key) for every round of this lane's slots in slot order (key 0 past the end). Warp-uniform.
template <typename F>
__device__ __forceinline__ void for_each_owned(const Owned& o, const Key (&cache)[kCache], F&& f) {
#pragma unroll
    for (int j = 0; j < kCache; ++j)
        if (j < o.rounds) f(cache[j]);
    for (int j = kCache; j < o.rounds; ++j) {
        const int i = o.first + 32 * j;
        f(i < o.n ? __ldcg(o.keys + i) : 0ull);
    }
}

/// Slots with key >= threshold among this warp's (warp-uniform), then the block: *before = kept in
/// warps < this one, returns the block's total. Contains a barrier; `count` is this call's own array.
__device__ __forceinline__ unsigned count_kept(const Owned& o, const Key (&cache)[kCache], Key threshold,
                                               unsigned* count, unsigned* before) {
    unsigned c = 0;
    for_each_owned(o, cache, [&](Key key) { c += __popc(__ballot_sync(kFullMask, key >= threshold)); });
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) count[warp] = c;
    __syncthreads();
    unsigned b = 0, all = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
        b += w < warp ? count[w] : 0u;
        all += count[w];
    }
    *before = b;
    return all;
}

/// Exact M-th largest non-zero key among all slots (more than M exist).
__device__ Key radix_select(const Owned& o, const Key (&cache)[kCache], unsigned M) {
    __shared__ unsigned hist[256];
    __shared__ unsigned sel_digit, sel_above;
    Key prefix = 0, mask = 0;
    unsigned remaining = M;  // rank still to find among keys matching prefix
    for (int shift = 56; shift >= 0; shift -= 8) {
        hist[threadIdx.x] = 0;
        __syncthreads();
        for_each_owned(o, cache, [&](Key key) {
            if (key != 0 && (key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xFFu], 1u);
        });
        __syncthreads();
        // Thread t holds digit 255 - t: the inclusive scan counts keys whose digit is >= 255 - t.
        const unsigned c = hist[255 - threadIdx.x];
        unsigned total;
        const unsigned incl = block_scan(c, &total);
        const unsigned excl = incl - c;
        if (excl < remaining && remaining <= incl) {  // exactly one thread: the crossing digit
            sel_digit = 255u - threadIdx.x;
            sel_above = excl;
        }
        __syncthreads();
        prefix |= static_cast<Key>(sel_digit) << shift;
        mask |= static_cast<Key>(0xFFu) << shift;
        remaining -= sel_above;
        __syncthreads();  // sel_* and hist are rewritten by the next pass
    }
    return prefix;
}

/// Last block: cap, compaction in slot order, count; resets the ticket.
template <int K>
__device__ void finish(const GridNmsParams& p) {
    __shared__ unsigned nonzero_count[kWarps], kept_count[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Owned o;
    o.keys = p.cell_keys;
    o.n = p.cols * p.rows * K;
    o.rounds = (o.n + kThreads - 1) / kThreads;
    o.first = warp * o.rounds * 32 + lane;
    Key cache[kCache];
#pragma unroll
    for (int j = 0; j < kCache; ++j) {
        const int i = o.first + 32 * j;
        cache[j] = j < o.rounds && i < o.n ? __ldcg(o.keys + i) : 0ull;
    }
    Key threshold = 1;  // keeps every non-empty slot
    unsigned before;
    unsigned kept = count_kept(o, cache, threshold, nonzero_count, &before);
    if (p.max_features > 0 && kept > static_cast<unsigned>(p.max_features)) {  // block-uniform
        threshold = radix_select(o, cache, static_cast<unsigned>(p.max_features));
        kept = count_kept(o, cache, threshold, kept_count, &before);
    }

    const unsigned lower = (1u << lane) - 1u;
    unsigned pos = before;  // this warp's first output index
    for_each_owned(o, cache, [&](Key key) {
        const bool keep = key >= threshold;
        const unsigned ballot = __ballot_sync(kFullMask, keep);
        if (keep) {
            const int level = detail::key_level(key);
            const float s = p.level[level].scale;
            // Keypoint {x, y, score, level} as one 16-byte store (the slots are 16-byte aligned).
            const int4 kp = make_int4(__float_as_int(detail::level0_coord(detail::key_x(key), s)),
                                      __float_as_int(detail::level0_coord(detail::key_y(key), s)),
                                      __float_as_int(detail::key_score(key)), level);
            reinterpret_cast<int4*>(p.keypoints)[pos + __popc(ballot & lower)] = kp;
            if (p.host_keypoints) reinterpret_cast<int4*>(p.host_keypoints)[pos + __popc(ballot & lower)] = kp;
        }
        pos += __popc(ballot);
    });
    if (threadIdx.x == 0) {
        *p.count = static_cast<int>(kept);
        if (p.host_count) *p.host_count = static_cast<int>(kept);
        *p.ticket = 0u;  // ready for the next launch (stream order)
    }
}

template <int K>
__global__ void __launch_bounds__(kThreads, 4) grid_nms_kernel(const GridNmsParams p) {
    __shared__ float tile[kWarps * kWarpFloats];
    __shared__ WarpTile wtiles[kWarps][kMaxLevels];
    __shared__ Key warp_lists[kWarps * K];
    __shared__ bool is_last;
    const int cell = static_cast<int>(blockIdx.x);
    const int cx = cell % p.cols, cy = cell / p.cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    Key top[K];
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = 0;
    // The skip flag's load overlaps the geometry (computed even for skipped cells).
    const bool skip = p.cell_skip != nullptr && p.cell_skip[cell] != 0;  // block-uniform
    WarpTile* wt = wtiles[warp];
    warp_tiles(p, cx, cy, wt);
    if (!skip) {  // warp-local until the merge: no block barrier before it
        float* region = tile + warp * kWarpFloats;
        stage_tiles(p, wt, region);
        for (int k = 0; k < p.levels; ++k) scan_level<K>(p, k, wt[k], region, top);
    }

    // Warp lists, then warp 0 merges them.
    Key best[K];
    warp_best_k(top, best);
    if (lane == 0) {
#pragma unroll
        for (int r = 0; r < K; ++r) warp_lists[warp * K + r] = best[r];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int i = 0; i < K; ++i) top[i] = 0;
        for (int j = lane; j < kWarps * K; j += 32) detail::topk_insert(top, warp_lists[j]);
        warp_best_k(top, best);
        if (lane == 0) {
#pragma unroll
            for (int r = 0; r < K; ++r) p.cell_keys[static_cast<std::size_t>(cell) * K + r] = best[r];
            __threadfence();  // slots visible device-wide before the ticket is taken (same thread)
            const unsigned ticket = atomicAdd(p.ticket, 1u);
            is_last = ticket == gridDim.x - 1;
        }
    }
    __syncthreads();
    if (!is_last) return;
    __threadfence();  // see every other block's slots
    finish<K>(p);
}

template <int K>
const void* kernel_for() {
    return reinterpret_cast<const void*>(&grid_nms_kernel<K>);
}

}  // namespace

GridNmsLaunch grid_nms_launch(const GridNmsParams& p) {
    GridNmsLaunch l;
    switch (p.per_cell) {
        case 1: l.func = kernel_for<1>(); break;
        case 2: l.func = kernel_for<2>(); break;
        case 3: l.func = kernel_for<3>(); break;
        case 4: l.func = kernel_for<4>(); break;
        case 5: l.func = kernel_for<5>(); break;
        case 6: l.func = kernel_for<6>(); break;
        case 7: l.func = kernel_for<7>(); break;
        default: l.func = kernel_for<8>(); break;
    }
    l.grid = dim3(static_cast<unsigned>(p.cols * p.rows));
    l.block = dim3(kThreads);
    return l;
}

void launch_grid_nms(const GridNmsParams& p, cudaStream_t stream) {
    const GridNmsLaunch l = grid_nms_launch(p);
    GridNmsParams arg = p;
    void* args[] = {&arg};
    KESTREL_CUDA(cudaLaunchKernel(l.func, l.grid, l.block, args, 0, stream), "grid nms launch");
    KESTREL_CUDA_LAUNCH("grid nms");
}

}  // namespace kestrel::kernels
