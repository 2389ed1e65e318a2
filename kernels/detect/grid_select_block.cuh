// Device-only building blocks shared by the two selection kernels (kernels/detect/grid_nms.cu on score maps,
// kernels/detect/cell_detect.cu computing its scores itself): the block's start (begin_cell), warp/block best-K
// merge, the last block's cap and compaction (finish), eligibility, the cell rectangles. Reference:
// grid_select_reference (src/detect/grid_select_cpu.cpp); rules in include/kestrel/detail/grid_rules.hpp and
// fast_rules.hpp.
//
// The last block to finish (__threadfence + atomic ticket, reset by that block) works on all
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
// host memory: the frame then needs no download after the kernel (one graph node, one launch less).
// Keys are unique (level, x, y differ), so every step is exact and the output is deterministic.
#pragma once
#include <cstddef>

#include "grid_nms.cuh"
#include "kernels/common/warp_scan.cuh"
#include "kestrel/detail/grid_rules.hpp"

static_assert(sizeof(kestrel::Keypoint) == 16 && offsetof(kestrel::Keypoint, level) == 12,
              "finish() stores a Keypoint {x, y, score, level} as one int4");

namespace kestrel::kernels::select {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
constexpr int kCache = 8;          // finish: slot rounds kept in registers per lane
static_assert(kThreads == 256, "the radix select uses one thread per 8-bit digit");
static_assert(4 * kMaxLevels <= kThreads, "one thread per cell boundary");

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

/// Sum of the per-warp totals of warps < warp (returned) and of all warps (*all).
__device__ __forceinline__ unsigned sum_warp_totals(const unsigned* totals, int warp, unsigned* all) {
    unsigned before = 0, sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
        before += w < warp ? totals[w] : 0u;
        sum += totals[w];
    }
    *all = sum;
    return before;
}

/// Inclusive block scan of v; *total receives the block sum. All threads must call it.
__device__ __forceinline__ unsigned block_scan(unsigned v, unsigned* total) {
    __shared__ unsigned warp_total[kWarps];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp::inclusive_sum(v);
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    const unsigned before = sum_warp_totals(warp_total, warp, total);
    __syncthreads();  // warp_total may be reused by the next call
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
    unsigned all;
    *before = sum_warp_totals(count, warp, &all);
    return all;
}

/// Exact M-th largest non-zero key among all slots (more than M exist).
__device__ inline Key radix_select(const Owned& o, const Key (&cache)[kCache], unsigned M) {
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
        if (p.listed) *p.corner_count = 0u;
    }
    if (p.listed) {  // block-uniform: the corner-list selection needs empty slots at its next launch
        __syncthreads();  // every lane has read its slots
        for (int i = static_cast<int>(threadIdx.x); i < o.n; i += kThreads) p.cell_keys[i] = 0ull;
    }
}


/// The block's end, shared by both selection kernels: every thread holds its best-K list `top` of the
/// cell `cell`. Per warp K rounds of a warp argmax (the winning lane pops its head); after a barrier warp 0
/// merges the warps' lists the same way and writes slots cell*K + rank (0 = empty), then takes the ticket
/// (__threadfence + atomic); the last block runs finish(). Every thread of the block must call it.
template <int K>
__device__ __forceinline__ void merge_and_finish(const GridNmsParams& p, Key (&top)[K], int cell) {
    __shared__ Key warp_lists[kWarps * K];
    __shared__ bool is_last;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
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

/// The cell's rectangle on every level: thread 4k + b computes boundary b (x0, x1, y0, y1) of level k
/// (detail::cell_begin). The caller's barrier publishes rect.
__device__ __forceinline__ void cell_rects(const GridNmsParams& p, int cx, int cy, int (*rect)[4]) {
    if (threadIdx.x < 4 * p.levels) {
        const int k = threadIdx.x >> 2, b = threadIdx.x & 3;
        const GridLevel& L = p.level[k];
        rect[k][b] = b < 2 ? detail::cell_begin(cx + b, p.cell_width, L.scale, L.width, p.image_width)
                           : detail::cell_begin(cy + b - 2, p.cell_height, L.scale, L.height, p.image_height);
    }
}

/// A selection block's start (both kernels): clears the best-K list, reads the cell's skip flag and
/// computes the cell's rectangle on every level (cell_rects), published by one barrier. Returns whether the
/// cell is skipped (block-uniform). Every thread of the block must call it.
template <int K>
__device__ __forceinline__ bool begin_cell(const GridNmsParams& p, int cell, int (*rect)[4], Key (&top)[K]) {
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = 0;
    const bool skip = p.cell_skip != nullptr && p.cell_skip[cell] != 0;  // the load overlaps the rectangles
    cell_rects(p, cell % p.cols, cell / p.cols, rect);
    __syncthreads();
    return skip;
}

/// The launch of a selection kernel (one block of kThreads per cell, `smem` dynamic shared memory bytes),
/// specialised on K = p.per_cell (1..8, validated) and on n == 1: KernelOf<K, kN1>::func() names it.
template <template <int, bool> class KernelOf>
GridNmsLaunch selection_launch(const GridNmsParams& p, std::size_t smem) {
    const bool n1 = p.nms_radius == 1;
    GridNmsLaunch l;
    switch (p.per_cell) {
        case 1: l.func = n1 ? KernelOf<1, true>::func() : KernelOf<1, false>::func(); break;
        case 2: l.func = n1 ? KernelOf<2, true>::func() : KernelOf<2, false>::func(); break;
        case 3: l.func = n1 ? KernelOf<3, true>::func() : KernelOf<3, false>::func(); break;
        case 4: l.func = n1 ? KernelOf<4, true>::func() : KernelOf<4, false>::func(); break;
        case 5: l.func = n1 ? KernelOf<5, true>::func() : KernelOf<5, false>::func(); break;
        case 6: l.func = n1 ? KernelOf<6, true>::func() : KernelOf<6, false>::func(); break;
        case 7: l.func = n1 ? KernelOf<7, true>::func() : KernelOf<7, false>::func(); break;
        default: l.func = n1 ? KernelOf<8, true>::func() : KernelOf<8, false>::func(); break;
    }
    l.grid = dim3(static_cast<unsigned>(p.cols * p.rows));
    l.block = dim3(kThreads);
    l.smem = smem;
    return l;
}

}  // namespace kestrel::kernels::select
