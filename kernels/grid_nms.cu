// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/grid_nms_cpu.cpp);
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
//   3. Per warp K rounds of a warp argmax (the winning lane pops its head); after the block's second
//      barrier warp 0 merges the warps' lists the same way and writes slots cell*K + rank (0 = empty).
// (An earlier version staged each warp's rows plus halo in shared memory first: 4 000 SASS instructions
// for K = 1 and 1 400 executed per warp; this one has 2 000 and about 720, in the same time, about
// 11 us at 752x480 under Nsight Compute: the kernel is latency-bound, docs/benchmarks.md.)
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

template <int K, bool kN1>
__global__ void __launch_bounds__(kThreads, 3) grid_nms_kernel(const GridNmsParams p) {
    __shared__ int rect[kMaxLevels][4];  // the cell's rectangle on level k: x0, x1, y0, y1
    __shared__ Key warp_lists[kWarps * K];
    __shared__ bool is_last;
    const int cell = static_cast<int>(blockIdx.x);
    const int cx = cell % p.cols, cy = cell / p.cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    Key top[K];
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = 0;
    // Thread 4k + b computes boundary b of level k (the skip flag's load overlaps it).
    const bool skip = p.cell_skip != nullptr && p.cell_skip[cell] != 0;  // block-uniform
    if (threadIdx.x < 4 * p.levels) {
        const int k = threadIdx.x >> 2, b = threadIdx.x & 3;
        const GridLevel& L = p.level[k];
        rect[k][b] = b < 2 ? detail::cell_begin(cx + b, p.cell_width, L.scale, L.width, p.image_width)
                           : detail::cell_begin(cy + b - 2, p.cell_height, L.scale, L.height, p.image_height);
    }
    __syncthreads();
    if (!skip)
        for (int k = 0; k < p.levels; ++k) {
            const int w = rect[k][1] - rect[k][0], h = rect[k][3] - rect[k][2];
            if (w > 0 && h > 0) scan_rect<K, kN1>(p, k, rect[k][0], rect[k][2], w, h, top);
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
const void* kernel_for(int nms_radius) {
    return nms_radius == 1 ? reinterpret_cast<const void*>(&grid_nms_kernel<K, true>)
                           : reinterpret_cast<const void*>(&grid_nms_kernel<K, false>);
}

}  // namespace

GridNmsLaunch grid_nms_launch(const GridNmsParams& p) {
    GridNmsLaunch l;
    switch (p.per_cell) {
        case 1: l.func = kernel_for<1>(p.nms_radius); break;
        case 2: l.func = kernel_for<2>(p.nms_radius); break;
        case 3: l.func = kernel_for<3>(p.nms_radius); break;
        case 4: l.func = kernel_for<4>(p.nms_radius); break;
        case 5: l.func = kernel_for<5>(p.nms_radius); break;
        case 6: l.func = kernel_for<6>(p.nms_radius); break;
        case 7: l.func = kernel_for<7>(p.nms_radius); break;
        default: l.func = kernel_for<8>(p.nms_radius); break;
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
