// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/grid_nms_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility, nms_is_maximum_tile) and
// fast_rules.hpp (keypoint_key order, nms_suppressed_by).
//
// One block per level-0 cell (vilib). Per block:
//   1. Warp 0 computes the cell's rectangle on every level, one cell_begin per lane (lane 4k + b:
//      level k, boundary b = x0, x1, y0, y1), and places the level tiles (rectangle plus an n-pixel
//      halo, (w + 2n) x (h + 2n) floats, 0 outside the level) greedily into a fixed shared buffer of
//      kTileFloats; a level that does not fit is scanned from global memory as before.
//   2. All threads stage every placed tile at once (kStageBatch independent loads in flight per
//      thread, one barrier), so the NMS tests read shared memory only.
//   3. Each thread walks the rectangle linearly (pixels t, t + 256, ...) keeping its best K keys in
//      registers (unrolled, constant indices); a pixel is tested for NMS and eligibility only when its
//      key would enter the list. Order of levels and pixels does not matter: keys are unique.
//   4. Per warp K rounds of a warp argmax (the winning lane pops its head); warp 0 merges the warps'
//      lists the same way and writes slots cell*K + rank (0 = empty).
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
constexpr int kTileFloats = 6144;  // 24 KiB: 32x32 cells with n <= 4 on any number of levels fit
constexpr int kStageBatch = 10;    // loads in flight per thread while staging (2560 floats per pass)
constexpr int kCache = 8;          // finish: slot rounds kept in registers per lane
static_assert(kThreads == 256, "the radix select uses one thread per 8-bit digit");
static_assert(4 * kMaxLevels <= 32, "warp 0 computes one cell boundary per lane");

using Key = unsigned long long;

/// A cell's pixel rectangle [x0, x0 + w) x [y0, y0 + h) on one level and its tile's offset in the
/// shared buffer (-1: not staged, scan global memory).
struct CellRect {
    int x0, y0, w, h, off;
};

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

/// Warp 0: the cell's rectangles on all levels and the placement of their tiles; writes rect[0..levels).
__device__ void cell_rects(const GridNmsParams& p, int cx, int cy, CellRect* rect) {
    const int lane = threadIdx.x & 31;
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
    // Tile floats; 0 for an empty rectangle. (w + 2n) * (h + 2n) < 2^31 since w, h <= 16383.
    const int size = k < p.levels && w > 0 && h > 0 ? (w + 2 * n) * (h + 2 * n) : 0;
    int used = 0, mine = -1;
    for (int j = 0; j < p.levels; ++j) {  // greedy placement in level order, uniform across the warp
        const int sz = __shfl_sync(kFullMask, size, 4 * j);
        const bool fits = sz > 0 && sz <= kTileFloats - used;
        if (j == k) mine = fits ? used : -1;
        if (fits) used += sz;
    }
    if (b == 0 && k < p.levels) rect[k] = CellRect{x0, y0, w, h, mine};
}

/// All threads: copies every placed tile into shared memory (out-of-level pixels read as 0).
/// Element i of the buffer belongs to the placed level whose range holds it.
__device__ void stage_tiles(const GridNmsParams& p, const CellRect* rect, float* tile) {
    const int n = p.nms_radius;
    int total = 0;
    for (int k = 0; k < p.levels; ++k)
        if (rect[k].off >= 0) total = rect[k].off + (rect[k].w + 2 * n) * (rect[k].h + 2 * n);
    int k = 0;  // level of the current element; elements are visited in increasing order
    for (int start = 0; start < total; start += kThreads * kStageBatch) {
        float v[kStageBatch];
#pragma unroll
        for (int j = 0; j < kStageBatch; ++j) {
            const int i = start + j * kThreads + static_cast<int>(threadIdx.x);
            v[j] = 0.0f;
            if (i < total) {
                // advance to the placed level whose range [off, off + size) holds i
                while (rect[k].off < 0 || i >= rect[k].off + (rect[k].w + 2 * n) * (rect[k].h + 2 * n)) ++k;
                const CellRect r = rect[k];
                const int tw = r.w + 2 * n;
                const int t = i - r.off, ty = t / tw, tx = t - ty * tw;
                const int x = r.x0 - n + tx, y = r.y0 - n + ty;
                const GridLevel& L = p.level[k];
                if (x >= 0 && y >= 0 && x < L.width && y < L.height)
                    v[j] = __ldg(reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(L.scores) +
                                                                static_cast<std::size_t>(y) * L.pitch) + x);
            }
        }
#pragma unroll
        for (int j = 0; j < kStageBatch; ++j) {
            const int i = start + j * kThreads + static_cast<int>(threadIdx.x);
            if (i < total) tile[i] = v[j];
        }
    }
}

/// Walks the rectangle r of level k from its staged tile (halo N), updating this thread's best-K list.
template <int K, int N>
__device__ void scan_tile(const GridNmsParams& p, int k, const CellRect& r, const float* tile, Key (&top)[K]) {
    const float s = p.level[k].scale;
    const int tw = r.w + 2 * N;
    const float* origin = tile + r.off + N * tw + N;  // pixel (r.x0, r.y0)
    // Linear walk of the w x h rectangle: index i = threadIdx.x + j * kThreads -> (i % w, i / w).
    const int step_x = kThreads % r.w, step_y = kThreads / r.w;
    int lx = static_cast<int>(threadIdx.x) % r.w, ly = static_cast<int>(threadIdx.x) / r.w;
    while (ly < r.h) {
        const float* c = origin + ly * tw + lx;
        const float sp = *c;
        if (sp > 0.0f) {
            const int x = r.x0 + lx, y = r.y0 + ly;
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

/// The same from global memory (levels whose tile did not fit).
template <int K>
__device__ void scan_global(const GridNmsParams& p, int k, const CellRect& r, Key (&top)[K]) {
    const GridLevel& L = p.level[k];
    const int step_x = kThreads % r.w, step_y = kThreads / r.w;
    int lx = static_cast<int>(threadIdx.x) % r.w, ly = static_cast<int>(threadIdx.x) / r.w;
    while (ly < r.h) {
        const int x = r.x0 + lx, y = r.y0 + ly;
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
__device__ __forceinline__ void scan_level(const GridNmsParams& p, int k, const CellRect& r, const float* tile,
                                           Key (&top)[K]) {
    if (r.w <= 0 || r.h <= 0) return;
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
        }
        pos += __popc(ballot);
    });
    if (threadIdx.x == 0) {
        *p.count = static_cast<int>(kept);
        *p.ticket = 0u;  // ready for the next launch (stream order)
    }
}

template <int K>
__global__ void __launch_bounds__(kThreads) grid_nms_kernel(const GridNmsParams p) {
    __shared__ float tile[kTileFloats];
    __shared__ CellRect rect[kMaxLevels];
    __shared__ Key warp_lists[kWarps * K];
    __shared__ bool is_last;
    const int cell = static_cast<int>(blockIdx.x);
    const int cx = cell % p.cols, cy = cell / p.cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    Key top[K];
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = 0;
    const bool skip = p.cell_skip != nullptr && p.cell_skip[cell] != 0;  // block-uniform
    if (!skip) {
        if (warp == 0) cell_rects(p, cx, cy, rect);
        __syncthreads();
        stage_tiles(p, rect, tile);
        __syncthreads();
        for (int k = 0; k < p.levels; ++k) scan_level<K>(p, k, rect[k], tile, top);
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
