// FAST score maps for all pyramid levels in one launch, and optionally the list of their corners.
// Reference it must match bit for bit: fast_score_map_cpu (src/detect/fast_cpu.cpp); semantics in
// include/kestrel/detail/fast_rules.hpp (segment test, 8 KiB lookup table, scores, border).
//
// SAD-B, SAD-A and MT (fast_score_swar_kernel): a block of 32x8 threads scores a 128x8 tile of one level,
// four horizontally adjacent centres per thread; it finds its tile without a division (cell_index.hpp).
// It stages the tile plus a 3-row / 4-column halo in shared memory with one 16-bit lane per pixel
// (coalesced 32-bit loads, each expanded to a pixel-pair word pair; a fused level 1 averages the parent's
// 8-byte loads in SIMD lanes). Pass 1: each thread runs the compass pre-test of its four centres (circle
// points 0, 4, 8, 12 in SIMD lanes, swar::compass_may_have_corner4 = detail::compass_run_holds: necessary
// for a corner; with the corner list the kernel is compiled per arc_min >> 2, so the test's case costs
// nothing), and the groups that pass (about a third on real images) join the block's list (with the
// corner list: per warp, by a ballot). Pass 2: the block's threads share the list: each reads the six
// words of each of the group's seven circle rows (21 64-bit loads), runs the full segment test of its
// four centres in SIMD lanes (kernels/detect/fast_swar.cuh: about 13 integer operations per circle point
// for all four), classifies each centre with the lookup table (two lookups, skipped when the mask has
// fewer than arc_min ones), and the warp's corners (usually few) are scored with the reference's own
// functions from shared memory, spread over its lanes; with ScoreDesc::corners each warp also appends
// its corners' keypoint_keys to the list in device memory (one global atomic per warp and 32 corners).
// Pass 3: one 16-byte store writes each thread's four scores (0 for every centre not scored).
// Harris (fast_harris_kernel): a block scores a 32x8 tile, one pixel per thread: it stages the tile plus
// a 4-pixel halo, computes the Sobel gradients of the tile plus a 3-pixel halo into shared memory once
// (each gradient is shared by up to 49 windows), and corners sum their 7x7 window from there: the
// Harris response is fused with the segment test in the same pass (and appended to the list likewise).
#include "kernels/common/cuda_check.hpp"
#include "cell_index.hpp"
#include "fast_score.cuh"
#include "fast_bits.cuh"
#include "fast_swar.cuh"
#include "grid_constant.cuh"
#include "kernels/common/sm_count.cuh"
#include "kernels/common/warp_scan.cuh"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/pyramid_rules.hpp"

namespace kestrel::kernels {
namespace {

constexpr int kHalo = 4;
constexpr int kSmemW = kScoreTileW + 2 * kHalo;  // 40
constexpr int kSmemH = kScoreTileH + 2 * kHalo;  // 40
constexpr int kGradW = kScoreTileW + 6;          // gradients for the tile plus a 3-pixel halo
constexpr int kGradH = kScoreTileH + 6;
constexpr int kThreadsX = 32, kThreadsY = 8;

/// The level block blockIdx.x scores (its index: *level), and the block's tile origin (x0, y0) in that level
/// (the tile's row and column among the level's blocks without a division: cell_index.hpp).
__device__ __forceinline__ const ScoreLevel& block_level(const ScoreDesc& d, int tile_w, int tile_h, int& x0, int& y0,
                                                         int* level = nullptr) {
    int k = 0;  // levels past d.levels start at INT_MAX (plan_score_blocks): a fixed, branch-free count
#pragma unroll
    for (int i = 1; i < kMaxLevels; ++i) k += static_cast<int>(blockIdx.x) >= d.level[i].block_begin ? 1 : 0;
    const ScoreLevel& L = d.level[k];
    const int local = static_cast<int>(blockIdx.x) - L.block_begin;
    const int by = div_by_magic(local, L.blocks_x_magic);
    x0 = (local - by * L.blocks_x) * tile_w;
    y0 = by * tile_h;
    if (level) *level = k;
    return L;
}

/// Appends the warp's non-zero keys to the corner list: one global atomic for the warp (every lane calls it).
__device__ __forceinline__ void append_corners(const ScoreDesc& d, std::uint64_t key) {
    const unsigned ballot = __ballot_sync(warp::kFullMask, key != 0);
    if (ballot == 0) return;  // warp-uniform
    const unsigned lane = warp::lane_id();
    unsigned first = 0;
    if (lane == 0) first = atomicAdd(d.corner_count, static_cast<unsigned>(__popc(ballot)));
    first = __shfl_sync(warp::kFullMask, first, 0);
    if (key != 0) d.corners[first + __popc(ballot & ((1u << lane) - 1u))] = key;
}

/// Pixels gx .. gx + 3 of row gy (already clamped) of level L as one little-endian word: one 32-bit load
/// inside an aligned level, else byte loads with clamped columns (clamped values only feed centres
/// within the border, which score 0).
__device__ __forceinline__ std::uint32_t load_word4(const ScoreLevel& L, int gy, int gx) {
    const std::uint8_t* row = L.image + static_cast<std::size_t>(gy) * L.pitch;
    if (L.aligned4 && gx >= 0 && gx + 3 < L.width) return __ldg(reinterpret_cast<const std::uint32_t*>(row + gx));
    std::uint32_t w = 0;
#pragma unroll
    for (int b = 0; b < 4; ++b) w |= static_cast<std::uint32_t>(__ldg(row + min(max(gx + b, 0), L.width - 1))) << (8 * b);
    return w;
}

template <bool kList>
__global__ void __launch_bounds__(kThreadsX* kThreadsY) fast_harris_kernel(KESTREL_GRID_CONSTANT const ScoreDesc d) {
    __shared__ __align__(16) std::uint8_t tile[kSmemH][kSmemW];
    __shared__ short grad_x[kGradH][kGradW];
    __shared__ short grad_y[kGradH][kGradW];

    // Which level and tile this block scores.
    int x0, y0, level;
    const ScoreLevel& L = block_level(d, kScoreTileW, kScoreTileH, x0, y0, &level);
    const int tid = threadIdx.y * kThreadsX + threadIdx.x;

    // Stage tile + halo: 40 rows of 10 words. Words inside the image are one 32-bit load when the
    // level is 4-byte aligned; words crossing an edge are read byte by byte with clamped coordinates
    // (clamped values only feed pixels inside the border, which score 0). All loads of a thread are
    // issued before the first use (the loop has a constant trip count and is unrolled).
    constexpr int kWordsPerRow = kSmemW / 4;
    constexpr int kWords = kWordsPerRow * kSmemH;
    constexpr int kThreads = kThreadsX * kThreadsY;
    std::uint32_t* tile_words = reinterpret_cast<std::uint32_t*>(&tile[0][0]);
#pragma unroll
    for (int j = 0; j < (kWords + kThreads - 1) / kThreads; ++j) {
        const int i = tid + j * kThreads;
        if (i < kWords) {
            const int ly = i / kWordsPerRow, wx = i % kWordsPerRow;
            const int gy = min(max(y0 + ly - kHalo, 0), L.height - 1);
            tile_words[i] = load_word4(L, gy, x0 + 4 * wx - kHalo);
        }
    }
    __syncthreads();
    for (int i = tid; i < kGradW * kGradH; i += kThreadsX * kThreadsY) {
        const int gx = i % kGradW + 1, gy = i / kGradW + 1;  // tile coordinates of the gradient's centre
        const int a0 = tile[gy - 1][gx - 1], a1 = tile[gy - 1][gx], a2 = tile[gy - 1][gx + 1];
        const int b0 = tile[gy][gx - 1], b2 = tile[gy][gx + 1];
        const int c0 = tile[gy + 1][gx - 1], c1 = tile[gy + 1][gx], c2 = tile[gy + 1][gx + 1];
        grad_x[gy - 1][gx - 1] = static_cast<short>((a2 + 2 * b2 + c2) - (a0 + 2 * b0 + c0));
        grad_y[gy - 1][gx - 1] = static_cast<short>((c0 + 2 * c1 + c2) - (a0 + 2 * a1 + a2));
    }
    __syncthreads();

    const int border = detail::score_border_px(true);
    const int t = d.threshold;
    const int lx = threadIdx.x;
    const int x = x0 + lx;
#pragma unroll
    for (int r = 0; r < kScoreTileH / kThreadsY; ++r) {
        const int ly = threadIdx.y + r * kThreadsY;
        const int y = y0 + ly;
        float s = 0.0f;
        if (x >= border && y >= border && x < L.width - border && y < L.height - border) {  // inside the level
            const int cx = lx + kHalo, cy = ly + kHalo;
            const int c = tile[cy][cx];
            int p[detail::kCircleSize];
#pragma unroll
            for (int i = 0; i < detail::kCircleSize; ++i) p[i] = tile[cy + detail::circle_dy(i)][cx + detail::circle_dx(i)];
            std::uint32_t bright, dark;
            detail::segment_masks(p, c, t, bright, dark);
            const bool corner = detail::mask_is_arc(d.lut, bright, d.arc_min) | detail::mask_is_arc(d.lut, dark, d.arc_min);
            if (corner) {
                // Window of gradients centred on (cx, cy): gradient index = tile index - 1.
                int sxx = 0, syy = 0, sxy = 0;
                for (int dy = -3; dy <= 3; ++dy)
#pragma unroll
                    for (int dx = -3; dx <= 3; ++dx) {
                        const int gx = grad_x[cy + dy - 1][cx + dx - 1], gy = grad_y[cy + dy - 1][cx + dx - 1];
                        sxx += gx * gx;
                        syy += gy * gy;
                        sxy += gx * gy;
                    }
                s = detail::harris_from_sums(sxx, syy, sxy);
            }
        }
        if (x < L.width && y < L.height)
            reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(y) * L.score_pitch)[x] = s;
        if (kList) append_corners(d, s > 0.0f ? detail::keypoint_key(s, level, x, y) : 0ull);
    }
}


// ---- SAD-B, SAD-A, MT: four centres per thread -------------------------------------------------
constexpr int kSwarThreadsX = kSwarTileW / 4;                  // 32
constexpr int kSwarThreadsY = kSwarTileH;                      // 8
constexpr int kSwarRows = kSwarTileH + 6;                      // 3-row halo above and below
constexpr int kSwarRowPixels = kSwarTileW + 8;                 // 4-column halo: words stay aligned
constexpr int kSwarRowWords = kSwarRowPixels / 2;              // one pixel per 16-bit lane
constexpr int kSwarLoadWords = kSwarRowPixels / 4 * kSwarRows; // 32-bit global loads per tile
static_assert(kSwarThreadsX == 32, "one warp per tile row");


// kCompass >= 0: the kernel for arc_min >> 2 == kCompass (the compass pre-test's case, fixed at compile time:
// no dispatch per test); -1: any arc_min.
template <ScoreType kType, bool kList, int kCompass>
__global__ void __launch_bounds__(kSwarThreadsX* kSwarThreadsY) fast_score_swar_kernel(KESTREL_GRID_CONSTANT const ScoreDesc d) {
    __shared__ __align__(16) std::uint32_t tile[kSwarRows][kSwarRowWords];
    __shared__ unsigned survivor_count;
    if (threadIdx.x == 0 && threadIdx.y == 0) survivor_count = 0;  // the staging barrier publishes it
    int x0, y0, level;
    const ScoreLevel& L = block_level(d, kSwarTileW, kSwarTileH, x0, y0, &level);
    const int tid = threadIdx.y * kSwarThreadsX + threadIdx.x;
    constexpr int kThreads = kSwarThreadsX * kSwarThreadsY;

    // Stage pixels x0 - 4 .. x0 + kSwarTileW + 3 of rows y0 - 3 .. y0 + kSwarTileH + 2 (clamped into the
    // level: clamped values only reach centres within the border, which score 0). A 32-bit load of four
    // pixels becomes two words of pixel pairs, one pixel per 16-bit lane.
    constexpr int kLoadsPerRow = kSwarRowPixels / 4;
#pragma unroll
    for (int j = 0; j < (kSwarLoadWords + kThreads - 1) / kThreads; ++j) {
        const int i = tid + j * kThreads;
        if (i < kSwarLoadWords) {
            const int ly = i / kLoadsPerRow, wx = i % kLoadsPerRow;
            const int gy = min(max(y0 + ly - 3, 0), L.height - 1);
            const int gx = x0 + 4 * wx - 4;
            if (L.parent == nullptr) {  // block-uniform
                const std::uint32_t w = load_word4(L, gy, gx);
                *reinterpret_cast<uint2*>(&tile[ly][2 * wx]) =
                    make_uint2(__byte_perm(w, 0, 0x4140), __byte_perm(w, 0, 0x4342));
            } else {
                // Fused pyramid: pixel (x, y) of this level = average4 of parent pixels (2x, 2y) .. (2x + 1,
                // 2y + 1) (pyramid_rules.hpp, s = 2), computed while staging; the tile's own rows and
                // columns are also written to the level's image. Clamped coordinates give the value of the
                // clamped pixel.
                const std::uint8_t* r0 = L.parent + static_cast<std::size_t>(2 * gy) * L.parent_pitch;
                const std::uint8_t* r1 = r0 + L.parent_pitch;
                std::uint32_t lo, hi;  // pixels gx, gx + 1 and gx + 2, gx + 3, one per 16-bit lane
                if (L.parent_aligned8 && gx >= 0 && gx + 3 < L.width) {
                    const uint2 a = __ldg(reinterpret_cast<const uint2*>(r0 + 2 * gx));
                    const uint2 b = __ldg(reinterpret_cast<const uint2*>(r1 + 2 * gx));
                    lo = swar::average4_pair(a.x, b.x);
                    hi = swar::average4_pair(a.y, b.y);
                } else {
                    std::uint32_t v[4];
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const int px = 2 * min(max(gx + q, 0), L.width - 1);
                        v[q] = detail::average4(__ldg(r0 + px), __ldg(r0 + px + 1), __ldg(r1 + px), __ldg(r1 + px + 1));
                    }
                    lo = v[0] | (v[1] << 16);
                    hi = v[2] | (v[3] << 16);
                }
                const std::uint32_t w = __byte_perm(lo, hi, 0x6420);  // the four pixels as bytes
                *reinterpret_cast<uint2*>(&tile[ly][2 * wx]) = make_uint2(lo, hi);
                const int oy = y0 + ly - 3;  // unclamped: the tile's own rows only
                if (ly >= 3 && ly < 3 + kSwarTileH && wx >= 1 && wx <= kSwarTileW / 4 && oy < L.height && gx < L.width) {
                    std::uint8_t* out = L.build_out + static_cast<std::size_t>(oy) * L.pitch + gx;
                    if (L.aligned4 && gx + 3 < L.width) {
                        *reinterpret_cast<std::uint32_t*>(out) = w;
                    } else {
#pragma unroll
                        for (int q = 0; q < 4; ++q)
                            if (gx + q < L.width) out[q] = static_cast<std::uint8_t>(w >> (8 * q));
                    }
                }
            }
        }
    }
    __syncthreads();

    const int lane = static_cast<int>(threadIdx.x), wy = static_cast<int>(threadIdx.y);
    const int x = x0 + 4 * lane, y = y0 + wy;
    const bool active = x < L.width && y < L.height;
    constexpr int border = 3;  // detail::score_border_px(false)
    const int t = d.threshold;

    // Pass 1: compass pre-test of the thread's four centres (rows y - 3, y, y + 3: 5 of the 21 words);
    // groups that may hold a corner join the block's list (one shared atomic per warp).
    __shared__ __align__(16) float block_scores[kSwarThreadsY][kSwarTileW];
    __shared__ std::uint8_t survivors[kThreads];  // (tile row << 5) | lane of the group
    __shared__ std::uint16_t todo[kSwarThreadsY][kSwarTileW];
    *reinterpret_cast<float4*>(&block_scores[wy][4 * lane]) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    bool may = false;
    if (active && y >= border && y < L.height - border && x + 3 >= border && x < L.width - border) {
        swar::RowWords r3[3];  // rows y - 3, y, y + 3
        swar::load_rows(&tile[wy][2 * lane], kSwarRowWords, 3, r3);
        // A constant 4 kCompass has the same arc_min >> 2 as d.arc_min: the same test, its case chosen here.
        may = swar::compass_may_have_corner4(r3[0], r3[1], r3[2], t, kCompass >= 0 ? 4 * kCompass : d.arc_min);
    }
    __shared__ __align__(16) unsigned warp_survivors[kSwarThreadsY];
    if constexpr (kCompass >= 0) {
        // Each warp lists its groups in its own 32 entries (a ballot, no atomic); pass 2 finds the i-th
        // survivor of the block from the warps' counts.
        const unsigned ballot = __ballot_sync(warp::kFullMask, may);
        if (may) survivors[wy * 32 + __popc(ballot & ((1u << lane) - 1u))] = static_cast<std::uint8_t>((wy << 5) | lane);
        if (lane == 0) warp_survivors[wy] = static_cast<unsigned>(__popc(ballot));
    } else {
        const unsigned slot = warp::append_one(may, &survivor_count);
        if (may) survivors[slot] = static_cast<std::uint8_t>((wy << 5) | lane);
    }
    __syncthreads();

    // Pass 2: the block's threads share the surviving groups (about a third on real images): full
    // segment test of four centres in SIMD lanes (kernels/detect/fast_swar.cuh), classification with the lookup
    // table, then the warp's corners are spread over its lanes (each lane scores todo[i], i = lane, lane +
    // 32, ...) with the reference's own score function into the block's score tile.
    int n_groups;
    unsigned per_warp[kSwarThreadsY];
    if constexpr (kCompass >= 0) {
        static_assert(kSwarThreadsY == 8, "two 16-byte loads of the warps' counts");
        const uint4 a = *reinterpret_cast<const uint4*>(&warp_survivors[0]);
        const uint4 b = *reinterpret_cast<const uint4*>(&warp_survivors[4]);
        per_warp[0] = a.x; per_warp[1] = a.y; per_warp[2] = a.z; per_warp[3] = a.w;
        per_warp[4] = b.x; per_warp[5] = b.y; per_warp[6] = b.z; per_warp[7] = b.w;
        n_groups = static_cast<int>(a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w);
    } else {
        n_groups = static_cast<int>(survivor_count);
    }
    if (wy * 32 < n_groups) {  // warp-uniform: every lane takes part in the shuffles below
        const int i = wy * 32 + lane;
        unsigned corners = 0;  // bit j: centre gx + j is a corner
        int g = 0;
        if (i < n_groups) {
            if constexpr (kCompass >= 0) {  // the i-th survivor: warp w's entry i - (survivors of warps < w)
                int w = 0, before = 0;
                bool found = false;
#pragma unroll
                for (int k = 0; k < kSwarThreadsY; ++k) {
                    const bool here = !found && i < before + static_cast<int>(per_warp[k]);
                    w = here ? k : w;
                    found |= here;
                    before += found ? 0 : static_cast<int>(per_warp[k]);
                }
                g = survivors[w * 32 + i - before];
            } else {
                g = survivors[i];
            }
            const int gr = g >> 5, gl = g & 31;
            const int gx = x0 + 4 * gl;
            swar::RowWords rows[7];  // tile rows gr .. gr + 6 (level rows y0 + gr - 3 ..), pixels gx - 4 .. gx + 7
            swar::load_rows(&tile[gr][2 * gl], kSwarRowWords, 1, rows);
            unsigned in = 0;  // centres inside the border (the group's row is: pass 1)
#pragma unroll
            for (int j = 0; j < 4; ++j) in |= static_cast<unsigned>(gx + j >= border && gx + j < L.width - border) << j;
            corners = swar::corners4(rows, t, d.lut, d.arc_min, in);
        }
        const unsigned mine = static_cast<unsigned>(__popc(corners));
        const unsigned incl = warp::inclusive_sum(mine);
        const int total = static_cast<int>(__shfl_sync(warp::kFullMask, incl, 31));
        unsigned pos = incl - mine;
        const int centre0 = ((g >> 5) << 7) | (4 * (g & 31));  // tile row << 7 | tile column of centre gx
        for (unsigned m = corners; m; m &= m - 1u) todo[wy][pos++] = static_cast<std::uint16_t>(centre0 + __ffs(m) - 1);
        __syncwarp();
        // kList: every lane runs every round (the append's ballot and shuffle need the whole warp).
        for (int k0 = 0; k0 < total; k0 += 32) {
            const int k = k0 + lane;
            std::uint64_t key = 0;
            if (k < total) {
                const int idx = todo[wy][k];
                const int cr = idx >> 7, cc = idx & 127;
                const std::uint16_t* base = reinterpret_cast<const std::uint16_t*>(&tile[cr + 3][0]) + 4 + cc;
                const int c = base[0];
                int p[detail::kCircleSize];
#pragma unroll
                for (int q = 0; q < detail::kCircleSize; ++q)
                    p[q] = base[detail::circle_dy(q) * kSwarRowPixels + detail::circle_dx(q)];
                const float s = static_cast<float>(detail::circle_score(kType, d.lut, p, c, t, d.arc_min, d.arc_max));
                block_scores[cr][cc] = s;
                if (kList && s > 0.0f) key = detail::keypoint_key(s, level, x0 + cc, y0 + cr);
            }
            if (kList) append_corners(d, key);  // one global atomic per round
        }
    }
    __syncthreads();

    // Pass 3: one 16-byte store of the thread's four scores.
    const float4 s4 = *reinterpret_cast<const float4*>(&block_scores[wy][4 * lane]);
    if (!active) return;
    float* out = reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(y) * L.score_pitch) + x;
    if (x + 3 < L.width) {
        *reinterpret_cast<float4*>(out) = s4;  // maps are cudaMallocPitch'ed
    } else {
        const float s[4] = {s4.x, s4.y, s4.z, s4.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (x + j < L.width) out[j] = s[j];
    }
}


// ---- SAD-B, SAD-A, MT with the corner list: bit-sliced segment test, 32 centres per thread --------
constexpr int kBitsThreads = 128;
constexpr int kBitsSegs = kBitsTileW / 32 + 2;         // 6: the left neighbour, the tile's 4, the right one
constexpr int kBitsRows = kBitsTileH + 6;              // 3-row halo above and below
constexpr int kBitsPlaneStride = kBitsSegs * 8 + 4;    // words per row: 16-byte loads of a quarter warp
                                                       // (2 rows x 4 segments) hit distinct banks
constexpr int kBitsByteStride = kBitsSegs * 32;        // bytes per row of the pixel copy
static_assert(kBitsThreads == kBitsTileH * kBitsTileW / 32, "one segment of 32 centres per thread");

/// load_segment's slow cases, out of line (the common case keeps its registers): a segment across the level's
/// left or right edge (clamped columns), an image that is not 16-byte aligned, or a derived level near its edge.
/// The 32 pixels go to `out` (shared memory, 16-byte aligned).
__device__ __noinline__ void load_segment_edge(const ScoreLevel& L, int gy, int gx, uint4* out) {
    std::uint32_t w[8];
    if (L.parent == nullptr) {
#pragma unroll
        for (int k = 0; k < 8; ++k) w[k] = load_word4(L, gy, gx + 4 * k);
        out[0] = make_uint4(w[0], w[1], w[2], w[3]);
        out[1] = make_uint4(w[4], w[5], w[6], w[7]);
        return;
    }
    const std::uint8_t* r0 = L.parent + static_cast<std::size_t>(2 * gy) * L.parent_pitch;
    const std::uint8_t* r1 = r0 + L.parent_pitch;
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        std::uint32_t v = 0;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int px = 2 * min(max(gx + 4 * k + q, 0), L.width - 1);
            v |= static_cast<std::uint32_t>(detail::average4(__ldg(r0 + px), __ldg(r0 + px + 1), __ldg(r1 + px),
                                                             __ldg(r1 + px + 1))) << (8 * q);
        }
        w[k] = v;
    }
    out[0] = make_uint4(w[0], w[1], w[2], w[3]);
    out[1] = make_uint4(w[4], w[5], w[6], w[7]);
}

/// Pixels gx .. gx + 31 of row gy (clamped) of level L as 8 little-endian words (clamped columns; a segment
/// wholly outside the level reads as 0: it only feeds centres outside the border). A derived level
/// (L.parent) averages the parent's 2x2 pixels (detail::average4, in SIMD lanes where aligned). `bytes` (shared
/// memory, the segment's place in the byte copy) is where the slow cases stage them.
__device__ __forceinline__ void load_segment(const ScoreLevel& L, int gy, int gx, std::uint32_t (&w)[8], uint4* bytes) {
    if (gx >= L.width || gx + 32 <= 0) {
#pragma unroll
        for (int k = 0; k < 8; ++k) w[k] = 0;
        return;
    }
    const bool inside = gx >= 0 && gx + 32 <= L.width;
    if (L.parent == nullptr) {  // block-uniform
        const bool a16 = ((reinterpret_cast<std::uintptr_t>(L.image) | L.pitch) & 15u) == 0;
        if (a16 && inside) {
            const uint4* row = reinterpret_cast<const uint4*>(L.image + static_cast<std::size_t>(gy) * L.pitch + gx);
            const uint4 a = __ldg(row), b = __ldg(row + 1);
            w[0] = a.x; w[1] = a.y; w[2] = a.z; w[3] = a.w;
            w[4] = b.x; w[5] = b.y; w[6] = b.z; w[7] = b.w;
            return;
        }
    } else {
        const bool a16 = ((reinterpret_cast<std::uintptr_t>(L.parent) | L.parent_pitch) & 15u) == 0;
        if (a16 && inside) {
            const std::uint8_t* p0 = L.parent + static_cast<std::size_t>(2 * gy) * L.parent_pitch + 2 * gx;
            const uint4* r0 = reinterpret_cast<const uint4*>(p0);
            const uint4* r1 = reinterpret_cast<const uint4*>(p0 + L.parent_pitch);
#pragma unroll
            for (int h = 0; h < 4; ++h) {  // parent bytes 2 gx + 16 h .. + 15: derived pixels gx + 8 h .. + 7
                const uint4 a = __ldg(r0 + h), b = __ldg(r1 + h);
                w[2 * h] = __byte_perm(swar::average4_pair(a.x, b.x), swar::average4_pair(a.y, b.y), 0x6420);
                w[2 * h + 1] = __byte_perm(swar::average4_pair(a.z, b.z), swar::average4_pair(a.w, b.w), 0x6420);
            }
            return;
        }
    }
    load_segment_edge(L, gy, gx, bytes);
    const uint4 a = bytes[0], b = bytes[1];
    w[0] = a.x; w[1] = a.y; w[2] = a.z; w[3] = a.w;
    w[4] = b.x; w[5] = b.y; w[6] = b.z; w[7] = b.w;
}

/// A derived level's 32 pixels gx .. gx + 31 of row oy (in shared memory at `src`) into its image (the columns
/// inside the level); out of line.
__device__ __noinline__ void store_derived(const ScoreLevel& L, int oy, int gx, const std::uint8_t* src) {
    std::uint8_t* out = L.build_out + static_cast<std::size_t>(oy) * L.pitch + gx;
    const bool a16 = ((reinterpret_cast<std::uintptr_t>(L.build_out) | L.pitch) & 15u) == 0;
    if (a16 && gx + 32 <= L.width) {
        reinterpret_cast<uint4*>(out)[0] = reinterpret_cast<const uint4*>(src)[0];
        reinterpret_cast<uint4*>(out)[1] = reinterpret_cast<const uint4*>(src)[1];
        return;
    }
    for (int k = 0; k < 32 && gx + k < L.width; ++k) out[k] = src[k];
}

/// The seven circle rows of one thread's segment, from the block's planes in shared memory.
struct SharedRows {
    const std::uint32_t* first;  // planes of row (centre row - 3), the left neighbour segment
    __device__ __forceinline__ void load(int r, std::uint32_t (&out)[3][8]) const {
        const uint4* src = reinterpret_cast<const uint4*>(first + r * kBitsPlaneStride);
#pragma unroll
        for (int s = 0; s < 3; ++s) {
            const uint4 a = src[2 * s], b = src[2 * s + 1];
            out[s][0] = a.x; out[s][1] = a.y; out[s][2] = a.z; out[s][3] = a.w;
            out[s][4] = b.x; out[s][5] = b.y; out[s][6] = b.z; out[s][7] = b.w;
        }
    }
};

/// Pass 1 of fast_score_bits_kernel for one segment: its bit planes and bytes into the block's shared rows, and a
/// derived level's own pixels into its image.
__device__ __forceinline__ void stage_segment(const ScoreLevel& L, int y0, int x0, int row, int seg, const std::uint32_t (&w)[8],
                                              std::uint32_t* plane_row, std::uint8_t* pix_row) {
    std::uint32_t pl[8];
    bits::to_planes(w, pl);
    uint4* dst = reinterpret_cast<uint4*>(plane_row + 8 * seg);
    dst[0] = make_uint4(pl[0], pl[1], pl[2], pl[3]);
    dst[1] = make_uint4(pl[4], pl[5], pl[6], pl[7]);
    uint4* bytes = reinterpret_cast<uint4*>(pix_row + 32 * seg);
    bytes[0] = make_uint4(w[0], w[1], w[2], w[3]);
    bytes[1] = make_uint4(w[4], w[5], w[6], w[7]);
    const int gx = x0 + 32 * (seg - 1), oy = y0 + row - 3;
    if (L.parent != nullptr && row >= 3 && row < 3 + kBitsTileH && seg >= 1 && seg <= kBitsTileW / 32 && oy < L.height &&
        gx < L.width)
        store_derived(L, oy, gx, pix_row + 32 * seg);
}

// Pass 1: each thread stages segments (rows y0 - 3 .. y0 + kBitsTileH + 2, segments of 32 pixels from x0 - 32
// to x0 + kBitsTileW + 31): 32 pixels, their 8 bit planes (bits::to_planes) and a byte copy for the scores; a
// derived level's own pixels are also written to its image. Pass 2: each thread tests the 32 centres of one
// segment of the tile (bits::segment_corners: about 750 instructions for 32 centres), writes their 32 scores
// as 0, and lists its corners in the warp's list. Pass 3: the warp's lanes share its corners, score each with
// the reference's function from the byte copy, store the score and append the keys (one atomic per warp).
// kList: append the corners' keys (ScoreDesc::corners); kArc9: arc_min = 9, arc_max = 16 (bits::arc_9_16).
// 8 blocks per SM (64 registers): the segment test runs without spilling; 6 blocks at 80 registers measured slower.
template <ScoreType kType, bool kList, bool kArc9>
__global__ void __launch_bounds__(kBitsThreads, 8) fast_score_bits_kernel(KESTREL_GRID_CONSTANT const ScoreDesc d) {
    __shared__ __align__(16) std::uint32_t planes[kBitsRows][kBitsPlaneStride];
    __shared__ __align__(16) std::uint8_t pix[kBitsRows][kBitsByteStride];
    __shared__ std::uint16_t todo[kBitsThreads / 32][32 * 32];  // (tile row << 7) | tile column
    int x0, y0, level;
    const ScoreLevel& L = block_level(d, kBitsTileW, kBitsTileH, x0, y0, &level);
    const int tid = static_cast<int>(threadIdx.x);

    // Two rounds of segments per thread (kJobs = 228 for 128 threads): both rounds' loads are issued before the
    // first transpose, so a block waits for global memory once.
    constexpr int kJobs = kBitsRows * kBitsSegs;
    static_assert(kJobs > kBitsThreads && kJobs <= 2 * kBitsThreads, "two rounds of segments");
    const int q1 = tid + kBitsThreads;
    const bool second = q1 < kJobs;
    std::uint32_t w0[8], w1[8];
    const int row0 = tid / kBitsSegs, seg0 = tid - row0 * kBitsSegs;
    const int row1 = q1 / kBitsSegs, seg1 = q1 - row1 * kBitsSegs;
    load_segment(L, min(max(y0 + row0 - 3, 0), L.height - 1), x0 + 32 * (seg0 - 1), w0,
                 reinterpret_cast<uint4*>(&pix[row0][32 * seg0]));
    if (second)
        load_segment(L, min(max(y0 + row1 - 3, 0), L.height - 1), x0 + 32 * (seg1 - 1), w1,
                     reinterpret_cast<uint4*>(&pix[row1][32 * seg1]));
    stage_segment(L, y0, x0, row0, seg0, w0, planes[row0], pix[row0]);
    if (second) stage_segment(L, y0, x0, row1, seg1, w1, planes[row1], pix[row1]);
    __syncthreads();

    constexpr int border = 3;  // detail::score_border_px(false)
    const int r = tid >> 2, s = tid & 3;  // a warp: 8 tile rows x 4 segments
    const int y = y0 + r, xs = x0 + 32 * s;
    const int lane = tid & 31, wid = tid >> 5;
    std::uint32_t corners = 0;  // bit j: centre xs + j
    if (y >= border && y < L.height - border && xs < L.width - border) {
        const int lo = max(border - xs, 0), hi = min(L.width - border - xs, 32);
        const std::uint32_t in = (hi >= 32 ? ~0u : (1u << hi) - 1u) & ~((1u << lo) - 1u);
        const SharedRows rows{&planes[r][8 * s]};  // tile row r = level row y - 3; segment s = left neighbour
        corners = bits::segment_corners<kArc9>(rows, d.threshold, d.arc_min, d.arc_max) & in;
    }
    if (y < L.height && xs < L.width) {  // every score of the segment is 0 but the corners' (below)
        float* out = reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(y) * L.score_pitch) + xs;
        if (xs + 32 <= L.width) {
            float4* o4 = reinterpret_cast<float4*>(out);  // maps are cudaMallocPitch'ed: 16-byte aligned rows
#pragma unroll
            for (int k = 0; k < 8; ++k) o4[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        } else {
#pragma unroll 1
            for (int k = 0; k < 32 && xs + k < L.width; ++k) out[k] = 0.0f;
        }
    }

    const unsigned mine = static_cast<unsigned>(__popc(corners));
    const unsigned incl = warp::inclusive_sum(mine);
    const int total = static_cast<int>(__shfl_sync(warp::kFullMask, incl, 31));
    unsigned pos = incl - mine;
    for (std::uint32_t m = corners; m; m &= m - 1u)
        todo[wid][pos++] = static_cast<std::uint16_t>((r << 7) | (32 * s + __ffs(m) - 1));
    __syncwarp();  // the warp's zeros are stored before its scores, its list is complete
    for (int k0 = 0; k0 < total; k0 += 32) {  // kList: every lane runs every round (the append is warp-wide)
        const int k = k0 + lane;
        std::uint64_t key = 0;
        if (k < total) {
            const int idx = todo[wid][k];
            const int cr = idx >> 7, cc = idx & 127;
            const std::uint8_t* base = &pix[cr + 3][32 + cc];
            const int c = base[0];
            int p[detail::kCircleSize];
#pragma unroll
            for (int i = 0; i < detail::kCircleSize; ++i) p[i] = base[detail::circle_dy(i) * kBitsByteStride + detail::circle_dx(i)];
            // MT with arc [9, 16]: its window lengths fixed at compile time (fast_rules.hpp, best_window_mins).
            constexpr bool kMt9 = kArc9 && kType == ScoreType::MaxThreshold;
            const float sc = static_cast<float>(detail::circle_score(kType, d.lut, p, c, d.threshold, kMt9 ? 9 : d.arc_min, kMt9 ? 16 : d.arc_max));
            const int cx = x0 + cc, cy = y0 + cr;
            reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(cy) * L.score_pitch)[cx] = sc;
            if (kList && sc > 0.0f) key = detail::keypoint_key(sc, level, cx, cy);
        }
        if (kList) append_corners(d, key);
    }
}

}  // namespace

void plan_score_blocks(ScoreDesc& d, ScoreType type) {
    const bool bit_sliced = d.bit_sliced && type != ScoreType::Harris;
    d.tile_w = type == ScoreType::Harris ? kScoreTileW : bit_sliced ? kBitsTileW : kSwarTileW;
    d.tile_h = type == ScoreType::Harris ? kScoreTileH : bit_sliced ? kBitsTileH : kSwarTileH;
    int begin = 0;
    for (int k = 0; k < d.levels; ++k) {
        ScoreLevel& L = d.level[k];
        L.blocks_x = (L.width + d.tile_w - 1) / d.tile_w;
        L.blocks_x_magic = div_magic(L.blocks_x);
        L.block_begin = begin;
        begin += L.blocks_x * ((L.height + d.tile_h - 1) / d.tile_h);
    }
    d.total_blocks = begin;
    for (int k = d.levels; k < kMaxLevels; ++k) d.level[k].block_begin = INT_MAX;  // block_level's search
}

namespace {
template <ScoreType kType>
void launch_swar(const ScoreDesc& d, dim3 grid, cudaStream_t stream) {
    if (d.bit_sliced) {
        const bool arc9 = d.arc_min == 9 && d.arc_max == 16;
        if (d.corners != nullptr) {
            if (arc9) fast_score_bits_kernel<kType, true, true><<<grid, kBitsThreads, 0, stream>>>(d);
            else fast_score_bits_kernel<kType, true, false><<<grid, kBitsThreads, 0, stream>>>(d);
        } else {
            if (arc9) fast_score_bits_kernel<kType, false, true><<<grid, kBitsThreads, 0, stream>>>(d);
            else fast_score_bits_kernel<kType, false, false><<<grid, kBitsThreads, 0, stream>>>(d);
        }
        return;
    }
    const dim3 block(kSwarThreadsX, kSwarThreadsY);
    if (d.corners == nullptr || d.generic_compass) {
        if (d.corners) fast_score_swar_kernel<kType, true, -1><<<grid, block, 0, stream>>>(d);
        else fast_score_swar_kernel<kType, false, -1><<<grid, block, 0, stream>>>(d);
        return;
    }
    switch (d.arc_min >> 2) {  // arc_min is 1..16
        case 0: fast_score_swar_kernel<kType, true, 0><<<grid, block, 0, stream>>>(d); break;
        case 1: fast_score_swar_kernel<kType, true, 1><<<grid, block, 0, stream>>>(d); break;
        case 2: fast_score_swar_kernel<kType, true, 2><<<grid, block, 0, stream>>>(d); break;
        case 3: fast_score_swar_kernel<kType, true, 3><<<grid, block, 0, stream>>>(d); break;
        default: fast_score_swar_kernel<kType, true, 4><<<grid, block, 0, stream>>>(d); break;
    }
}
}  // namespace

double swar_score_blocks_per_sm(const ScoreDesc& d) {
    int blocks = 0;
    for (int k = 0; k < d.levels; ++k)
        blocks += ((d.level[k].width + kSwarTileW - 1) / kSwarTileW) * ((d.level[k].height + kSwarTileH - 1) / kSwarTileH);
    return static_cast<double>(blocks) / sms_available();
}

void launch_fast_score(const ScoreDesc& d, ScoreType type, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(d.total_blocks));
    switch (type) {
        case ScoreType::SadCircle: launch_swar<ScoreType::SadCircle>(d, grid, stream); break;
        case ScoreType::SadArc: launch_swar<ScoreType::SadArc>(d, grid, stream); break;
        case ScoreType::MaxThreshold: launch_swar<ScoreType::MaxThreshold>(d, grid, stream); break;
        case ScoreType::Harris:
            if (d.corners) fast_harris_kernel<true><<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(d);
            else fast_harris_kernel<false><<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(d);
            break;
    }
    KESTREL_CUDA_LAUNCH("fast score");
}

}  // namespace kestrel::kernels
