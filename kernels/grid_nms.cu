// Grid NMS with a budget of K per cell across all pyramid levels, global cap and compaction: ONE launch.
// Reference it must match exactly (same list, same order): grid_select_reference (src/grid_nms_cpu.cpp);
// rules in include/kestrel/detail/grid_rules.hpp (geometry, eligibility) and fast_rules.hpp
// (keypoint_key order, nms_suppressed_by).
//
// One block per level-0 cell (vilib). On each level k the block walks the cell's pixel rectangle
// [cell_begin(cx), cell_begin(cx+1)) x [cell_begin(cy), cell_begin(cy+1)) linearly: thread t reads
// pixels t, t + 256, ... so a warp reads a row segment, one pixel per lane. Each lane keeps its best K
// keys in registers (unrolled, constant indices); a pixel is tested for eligibility and NMS only when
// its key would enter the lane's list. Then per warp K rounds of a 64-bit shuffle argmax (the winning
// lane pops its head) give the warp's best K; warp 0 merges the warps' lists from shared memory the
// same way and writes slots cell*K + rank (0 = empty). No candidate list in global memory.
//
// The last block to finish (__threadfence + atomic ticket, reset by that block) then
//   - counts the non-empty slots,
//   - when max_features > 0 and more keys exist, finds the max_features-th largest key T by an exact
//     radix select (8 passes of 8 bits: histogram of the next digit among keys matching the prefix,
//     block scan from the top digit down picks the digit where the count crosses the remaining rank),
//   - compacts the slots with key >= T into the dense output in slot (= cell, rank) order,
//   - writes the count.
// Keys are unique (level, x, y differ), so every step is exact and the output is deterministic.
#include "../src/cuda_check.hpp"
#include "grid_nms.cuh"
#include "kestrel/detail/grid_rules.hpp"

namespace kestrel::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
static_assert(kThreads == 256, "the radix select uses one thread per 8-bit digit");

using Key = unsigned long long;

__device__ __forceinline__ Key warp_max(Key v) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const Key o = __shfl_xor_sync(kFullMask, v, off);
        v = o > v ? o : v;
    }
    return v;
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

/// Walks the cell's rectangle on level k, updating this thread's best-K list.
template <int K>
__device__ __forceinline__ void scan_level(const GridNmsParams& p, int k, int cx, int cy, Key (&top)[K]) {
    const GridLevel L = p.level[k];
    const int x0 = detail::cell_begin(cx, p.cell_width, L.scale, L.width, p.image_width);
    const int x1 = detail::cell_begin(cx + 1, p.cell_width, L.scale, L.width, p.image_width);
    const int y0 = detail::cell_begin(cy, p.cell_height, L.scale, L.height, p.image_height);
    const int y1 = detail::cell_begin(cy + 1, p.cell_height, L.scale, L.height, p.image_height);
    const int wr = x1 - x0, hr = y1 - y0;
    if (wr <= 0 || hr <= 0) return;
    // Linear walk of the wr x hr rectangle: index i = threadIdx.x + j * kThreads -> (i % wr, i / wr).
    const int step_x = kThreads % wr, step_y = kThreads / wr;
    int lx = static_cast<int>(threadIdx.x) % wr, ly = static_cast<int>(threadIdx.x) / wr;
    while (ly < hr) {
        const int x = x0 + lx, y = y0 + ly;
        const float sp = detail::score_at(L.scores, L.pitch, x, y);
        if (sp > 0.0f) {
            const Key key = detail::keypoint_key(sp, k, x, y);
            if (key > top[K - 1] && eligible(p, L.scale, x, y) &&
                detail::nms_is_maximum(L.scores, L.pitch, L.width, L.height, x, y, p.nms_radius, sp))
                detail::topk_insert(top, key);
        }
        lx += step_x;
        ly += step_y;
        if (lx >= wr) {
            lx -= wr;
            ++ly;
        }
    }
}

/// Exact max_features-th largest non-zero key among keys[0..n) (more than M exist).
__device__ Key radix_select(const Key* keys, int n, unsigned M) {
    __shared__ unsigned hist[256];
    __shared__ unsigned sel_digit, sel_above;
    Key prefix = 0, mask = 0;
    unsigned remaining = M;  // rank still to find among keys matching prefix
    for (int shift = 56; shift >= 0; shift -= 8) {
        hist[threadIdx.x] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += kThreads) {
            const Key key = __ldcg(keys + i);
            if (key != 0 && (key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xFFu], 1u);
        }
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
    const int n = p.cols * p.rows * K;
    unsigned local = 0;
    for (int i = threadIdx.x; i < n; i += kThreads) local += __ldcg(p.cell_keys + i) != 0 ? 1u : 0u;
    unsigned total;
    (void)block_scan(local, &total);
    Key threshold = 1;  // keeps every non-empty slot
    if (p.max_features > 0 && total > static_cast<unsigned>(p.max_features))
        threshold = radix_select(p.cell_keys, n, static_cast<unsigned>(p.max_features));

    unsigned base = 0;
    for (int start = 0; start < n; start += kThreads) {
        const int i = start + static_cast<int>(threadIdx.x);
        const Key key = i < n ? __ldcg(p.cell_keys + i) : 0;
        const unsigned keep = key >= threshold ? 1u : 0u;
        unsigned chunk;
        const unsigned pos = block_scan(keep, &chunk) - keep;
        if (keep) {
            const int level = detail::key_level(key);
            const float s = p.level[level].scale;
            Keypoint kp;
            kp.x = detail::level0_coord(detail::key_x(key), s);
            kp.y = detail::level0_coord(detail::key_y(key), s);
            kp.score = detail::key_score(key);
            kp.level = level;
            p.keypoints[base + pos] = kp;
        }
        base += chunk;
    }
    if (threadIdx.x == 0) {
        *p.count = static_cast<int>(base);
        *p.ticket = 0u;  // ready for the next launch (stream order)
    }
}

template <int K>
__global__ void __launch_bounds__(kThreads) grid_nms_kernel(const GridNmsParams p) {
    __shared__ Key warp_lists[kWarps * K];
    __shared__ bool is_last;
    const int cell = static_cast<int>(blockIdx.x);
    const int cx = cell % p.cols, cy = cell / p.cols;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    Key top[K];
#pragma unroll
    for (int i = 0; i < K; ++i) top[i] = 0;
    const bool skip = p.cell_skip != nullptr && p.cell_skip[cell] != 0;
    if (!skip)
        for (int k = 0; k < p.levels; ++k) scan_level<K>(p, k, cx, cy, top);

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
