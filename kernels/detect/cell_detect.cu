// Fused detection: FAST scores + grid NMS + best K per cell over all levels + global cap + compaction,
// ONE launch, no score maps in global memory.
// Reference it must match exactly (same list, same order): detect_cpu = fast_score_map_cpu on every
// level (src/detect/fast_cpu.cpp) + grid_select_reference (src/detect/grid_select_cpu.cpp); rules in
// include/kestrel/detail/fast_rules.hpp (segment test, lookup table, scores, keypoint_key) and
// grid_rules.hpp (geometry, eligibility, nms_is_maximum_radius).
//
// One block (256 threads) per level-0 cell. On level k the cell is the rectangle R_k = [x0, x0 + w) x
// [y0, y0 + h) (detail::cell_begin, as in kernels/detect/grid_nms.cu); NMS of radius n needs the scores of
// E_k = R_k grown by n on every side, and the segment test 3 more pixels of image around E_k. So:
//   1. Stage, for every level, the pixels of E_k + 3 rows above/below and 4 columns left/right (4q + 8
//      columns, 4q >= |E_k| wide) into shared memory, one pixel per 16-bit lane (the layout of
//      kernels/detect/fast_swar.cuh). Coordinates are clamped into the level: clamped values only reach centres
//      within the 3-pixel border, which score 0. With p.src[k].derived (level 1 of a factor-2 pyramid that
//      is not built) the level's pixels are detail::average4 of level 0's 2x2 blocks, computed here, so
//      the frame needs no pyramid launch. One barrier.
//   2. Compass pre-test of every E_k centre, four adjacent centres per thread in SIMD lanes
//      (swar::compass_may_have_corner4: circle points 0, 4, 8, 12, detail::compass_run_holds, a necessary
//      condition); every centre's score in the block's shared score block S_k (E_k sized) is set to 0,
//      and the groups of four that pass (about a third on real images) join a shared task list. One
//      barrier. Then the full segment test of the listed groups, four centres per thread
//      (swar::segment_masks4, the lookup table: exactly the score kernel's classification); corners are
//      appended to a shared corner list (warp-aggregated: one shared atomic per warp and round). One
//      barrier.
//   3. The block's threads share the list: each corner's score by the reference's own function (SAD-B,
//      SAD-A or MT) from the staged pixels, into S_k. One barrier.
//   4. Every pixel of R_k with S_k > 0 enters the thread's best-K list when its key beats the list's
//      last, it is the maximum of its (2n+1)^2 neighbourhood in S_k (detail::nms_is_maximum_radius: S_k
//      holds 0 outside the level, as the reference's maps do) and it is eligible (border, pixel mask).
//   5. merge_and_finish (kernels/detect/grid_select_block.cuh): the cell's K slots; the last block caps,
//      compacts and counts, writing the list to device memory and, mapped, to pinned host memory.
// Halo scores are computed by both neighbouring blocks (n = 1, 32x32 cells: 13 % more centres than the
// maps), in exchange for no score-map round trip through global memory and one launch less.
// Harris and cells whose plan exceeds kCellDetectMaxSmem use the two-kernel path (fast_score.cu, then
// grid_nms.cu) instead; the results are the same.
#include "kernels/common/cuda_check.hpp"
#include "cell_detect.cuh"
#include "fast_swar.cuh"
#include "grid_select_block.cuh"
#include "kernels/common/sm_count.cuh"
#include "kernels/common/warp_scan.cuh"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/pyramid_rules.hpp"

namespace kestrel::kernels {
namespace {
using namespace select;

constexpr int kBorder = 3;  // detail::score_border_px(false): SAD-B, SAD-A and MT

/// The cell on one level: its rectangle R, the grown rectangle E (origin x0 - n, y0 - n), the centre
/// quads per E row (the score block's row stride is 4q) and the staged tile's words per row.
struct CellLevel {
    int x0, y0, w, h;
    int ew, eh, q, words;
};

__device__ __host__ inline CellLevel cell_level(int x0, int x1, int y0, int y1, int n) {
    CellLevel c;
    c.x0 = x0;
    c.y0 = y0;
    c.w = x1 - x0;
    c.h = y1 - y0;
    const bool empty = c.w <= 0 || c.h <= 0;
    c.ew = empty ? 0 : c.w + 2 * n;
    c.eh = empty ? 0 : c.h + 2 * n;
    c.q = (c.ew + 3) >> 2;
    c.words = 2 * c.q + 4;  // pixels ex0 - 4 .. ex0 + 4q + 3, two per word
    return c;
}

__device__ __forceinline__ CellLevel cell_level_at(const int (*rect)[4], int k, int n) {
    return cell_level(rect[k][0], rect[k][1], rect[k][2], rect[k][3], n);
}

/// One pixel of a derived level (detail::average4 of the parent's 2x2 block at (2x, 2 row)), byte loads.
__device__ __forceinline__ std::uint32_t derived_pixel(const std::uint8_t* r0, std::size_t pitch, int x) {
    const std::uint8_t* r1 = r0 + pitch;
    return detail::average4(__ldg(r0 + 2 * x), __ldg(r0 + 2 * x + 1), __ldg(r1 + 2 * x), __ldg(r1 + 2 * x + 1));
}

/// Stages level k's tile: pixel (tx, ty) of the tile = level pixel (tx0 + tx, ty0 + ty) with coordinates
/// clamped into the level, one pixel per 16-bit lane (word i = pixels 2 wx, 2 wx + 1 of row ty, i = ty *
/// words + wx). Thread work item g = four pixels (two words): one 32-bit load (two aligned loads and a
/// funnel shift) where the four lie inside an aligned level, else clamped byte loads; a derived level
/// (level 1 of factor 2, detail::average4 of level 0's 2x2 blocks) reads two or three aligned words per
/// parent row and averages them in SIMD lanes, byte by byte at the level's edges.
__device__ __forceinline__ void stage_tile(const GridNmsParams& p, int k, int tx0, int ty0, int rows, int words,
                                           std::uint32_t* tile) {
    const DetectSource& S = p.src[k];
    const int W = p.level[k].width, H = p.level[k].height;
    const int groups = words >> 1;  // words = 2q + 4 is even
    const int total = rows * groups;
    // Work item g = (ty, gx) = (g / groups, g % groups), stepped without a division per item.
    const int tid = static_cast<int>(threadIdx.x);
    int ty = tid / groups, gx = tid - ty * groups;
    const int step_y = kThreads / groups, step_x = kThreads - step_y * groups;
#pragma unroll 2
    for (int g = tid; g < total; g += kThreads) {
        const int gy = min(max(ty0 + ty, 0), H - 1);
        const int px = tx0 + 4 * gx;  // first of the four pixels
        std::uint32_t lo, hi;         // pixels px, px + 1 and px + 2, px + 3, one per 16-bit lane
        bool done = false;
        if (S.derived) {
            // Parent bytes 2 px .. 2 px + 7 of rows 2 gy, 2 gy + 1: aligned words (funnel-shifted when 2 px
            // is not 4-byte aligned), averaged in SIMD lanes (swar::average4_pair = detail::average4).
            const std::uint8_t* r0 = S.image + static_cast<std::size_t>(2 * gy) * S.pitch;
            const std::uint8_t* r1 = r0 + S.pitch;
            const int pb = 2 * px, base = pb & ~3, sh = pb & 3;  // sh is 0 or 2
            if (S.aligned && px >= 0 && px + 3 < W && base + (sh ? 11 : 7) < p.level[0].width) {
                std::uint32_t a0 = __ldg(reinterpret_cast<const std::uint32_t*>(r0 + base));
                std::uint32_t a1 = __ldg(reinterpret_cast<const std::uint32_t*>(r0 + base + 4));
                std::uint32_t b0 = __ldg(reinterpret_cast<const std::uint32_t*>(r1 + base));
                std::uint32_t b1 = __ldg(reinterpret_cast<const std::uint32_t*>(r1 + base + 4));
                if (sh) {
                    const std::uint32_t a2 = __ldg(reinterpret_cast<const std::uint32_t*>(r0 + base + 8));
                    const std::uint32_t b2 = __ldg(reinterpret_cast<const std::uint32_t*>(r1 + base + 8));
                    a0 = __funnelshift_r(a0, a1, 16);
                    a1 = __funnelshift_r(a1, a2, 16);
                    b0 = __funnelshift_r(b0, b1, 16);
                    b1 = __funnelshift_r(b1, b2, 16);
                }
                lo = swar::average4_pair(a0, b0);
                hi = swar::average4_pair(a1, b1);
                done = true;
            }
        }
        if (!done) {
            std::uint32_t v = 0;  // the four pixels, little endian
            if (S.derived) {
                const std::uint8_t* r0 = S.image + static_cast<std::size_t>(2 * gy) * S.pitch;
#pragma unroll
                for (int b = 0; b < 4; ++b) v |= derived_pixel(r0, S.pitch, min(max(px + b, 0), W - 1)) << (8 * b);
            } else {
                const std::uint8_t* row = S.image + static_cast<std::size_t>(gy) * S.pitch;
                const int base = px & ~3, sh = px & 3;
                if (S.aligned && px >= 0 && base + (sh ? 7 : 3) < W) {
                    const std::uint32_t w0 = __ldg(reinterpret_cast<const std::uint32_t*>(row + base));
                    const std::uint32_t w1 = sh ? __ldg(reinterpret_cast<const std::uint32_t*>(row + base + 4)) : 0u;
                    v = __funnelshift_r(w0, w1, 8 * sh);
                } else {
#pragma unroll
                    for (int b = 0; b < 4; ++b)
                        v |= static_cast<std::uint32_t>(__ldg(row + min(max(px + b, 0), W - 1))) << (8 * b);
                }
            }
            lo = __byte_perm(v, 0, 0x4140);
            hi = __byte_perm(v, 0, 0x4342);
        }
        *reinterpret_cast<uint2*>(tile + ty * words + 2 * gx) = make_uint2(lo, hi);
        gx += step_x;
        ty += step_y;
        if (gx >= groups) {
            gx -= groups;
            ++ty;
        }
    }
}

/// Neighbour (dx, dy) of a pixel of the shared score block (row stride `stride` floats).
struct BlockNeighbours {
    const float* centre;
    int stride;
    __device__ float operator()(int dx, int dy) const { return centre[dy * stride + dx]; }
};

// List entry of a corner (or of a task, with its quad index as column): level << 28 | E row << 14 | E column.
__device__ __forceinline__ std::uint32_t corner_entry(int k, int er, int ec) {
    return (static_cast<std::uint32_t>(k) << 28) | (static_cast<std::uint32_t>(er) << 14) | static_cast<std::uint32_t>(ec);
}
struct Entry {
    int k, er, ec;
};
__device__ __forceinline__ Entry entry_of(std::uint32_t e) {
    return {static_cast<int>(e >> 28), static_cast<int>((e >> 14) & 0x3FFFu), static_cast<int>(e & 0x3FFFu)};
}

/// What phase 2 needs of one level, computed once per block (thread k) during the staging.
struct LevelTasks {
    int end;           // flat task index after this level's tasks (tasks: E rows x quads)
    int q, words, ew;  // quads per E row, tile words per row, E width
    int ex0, ey0;      // E origin (level pixels)
};

/// Steps 1-4 for the block's cell (not skipped); block-uniform, contains barriers.
template <int K, bool kN1>
__device__ __forceinline__ void detect_cell(const GridNmsParams& p, const int (*rect)[4], unsigned char* smem,
                                            unsigned* corner_count, unsigned* task_count, Key (&top)[K]) {
    __shared__ LevelTasks lt[kMaxLevels];
    const int n = kN1 ? 1 : p.nms_radius;
    const int tid = static_cast<int>(threadIdx.x), lane = tid & 31;
    std::uint32_t* list = reinterpret_cast<std::uint32_t*>(smem + p.list_off);   // corners
    std::uint32_t* tasks = reinterpret_cast<std::uint32_t*>(smem + p.task_off);  // tasks passing 2a

    // 1. Stage every level's tile; thread k fills lt[k].
    int total_tasks = 0;
    for (int k = 0; k < p.levels; ++k) {
        const CellLevel c = cell_level_at(rect, k, n);
        total_tasks += c.eh * c.q;
        if (tid == k) lt[k] = LevelTasks{total_tasks, c.q, c.words, c.ew, c.x0 - n, c.y0 - n};
        if (c.ew == 0) continue;
        stage_tile(p, k, c.x0 - n - 4, c.y0 - n - 3, c.eh + 6, c.words,
                   reinterpret_cast<std::uint32_t*>(smem + p.src[k].tile_off));
    }
    __syncthreads();

    // 2a. Compass pre-test of every task (four adjacent E centres; swar::compass_may_have_corner4, 5 of the
    //     21 words), zeros to S; tasks that may hold a corner join the shared task list.
    const int t = p.threshold;
    for (int base = 0; base < total_tasks; base += kThreads) {  // block-uniform trip count
        const int i = base + tid;
        bool may = false;
        std::uint32_t entry = 0;
        if (i < total_tasks) {
            int k = 0;
            while (i >= lt[k].end) ++k;  // the level of task i (empty levels have no tasks)
            const LevelTasks L = lt[k];
            const int begin = k == 0 ? 0 : lt[k - 1].end;
            const int er = (i - begin) / L.q, eq = (i - begin) - er * L.q;
            float* S = reinterpret_cast<float*>(smem + p.src[k].score_off);
            *reinterpret_cast<float4*>(S + er * 4 * L.q + 4 * eq) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            const int W = p.level[k].width, H = p.level[k].height;
            const int y = L.ey0 + er, x = L.ex0 + 4 * eq;
            // Some centre of the four inside the level's border and E.
            const bool in = y >= kBorder && y <= H - 1 - kBorder && x + 3 >= kBorder && x <= W - 1 - kBorder;
            if (in) {
                const std::uint32_t* tile = reinterpret_cast<const std::uint32_t*>(smem + p.src[k].tile_off);
                swar::RowWords r3[3];  // E rows er - 3, er, er + 3
                swar::load_rows(tile + er * L.words + 2 * eq, L.words, 3, r3);
                may = swar::compass_may_have_corner4(r3[0], r3[1], r3[2], t, p.arc_min);
                entry = corner_entry(k, er, eq);
            }
        }
        const unsigned slot = warp::append_one(may, task_count);
        if (may) tasks[slot] = entry;
    }
    __syncthreads();

    // 2b. Segment test of the listed tasks (about a third on real images), four centres per thread in SIMD
    //     lanes (swar::segment_masks4 + the lookup table: exactly the score kernel's classification);
    //     corners are appended to the corner list (warp-aggregated: one shared atomic per warp and round).
    const int listed = static_cast<int>(*task_count);
    for (int base = 0; base < listed; base += kThreads) {  // block-uniform trip count
        if (base + tid - lane >= listed) break;           // warp-uniform: the warp has no task left
        const int i = base + tid;
        unsigned corners = 0;  // bit j: centre 4 eq + j is a corner
        Entry task{0, 0, 0};   // ec: the quad eq
        if (i < listed) {
            task = entry_of(tasks[i]);
            const LevelTasks L = lt[task.k];
            const std::uint32_t* tile = reinterpret_cast<const std::uint32_t*>(smem + p.src[task.k].tile_off);
            swar::RowWords rows[7];
            swar::load_rows(tile + task.er * L.words + 2 * task.ec, L.words, 1, rows);
            const int W = p.level[task.k].width;
            const int x = L.ex0 + 4 * task.ec;  // the task's row is inside the border (2a)
            unsigned in = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                in |= static_cast<unsigned>(x + j >= kBorder && x + j <= W - 1 - kBorder && 4 * task.ec + j < L.ew) << j;
            corners = swar::corners4(rows, t, p.lut, p.arc_min, in);
        }
        unsigned pos = warp::append(static_cast<unsigned>(__popc(corners)), corner_count);
        for (unsigned m = corners; m; m &= m - 1u) list[pos++] = corner_entry(task.k, task.er, 4 * task.ec + __ffs(m) - 1);
    }
    __syncthreads();

    // 3. Scores of the corners, by the reference's functions, from the staged pixels.
    const unsigned corners_total = *corner_count;
    for (unsigned i = static_cast<unsigned>(tid); i < corners_total; i += kThreads) {
        const auto [k, er, ec] = entry_of(list[i]);
        const LevelTasks L = lt[k];
        const int row_pixels = 2 * L.words;
        const std::uint16_t* centre =
            reinterpret_cast<const std::uint16_t*>(smem + p.src[k].tile_off) + (er + 3) * row_pixels + ec + 4;
        const int cv = centre[0];
        int px[detail::kCircleSize];
#pragma unroll
        for (int q = 0; q < detail::kCircleSize; ++q) px[q] = centre[detail::circle_dy(q) * row_pixels + detail::circle_dx(q)];
        const int v = detail::circle_score(static_cast<ScoreType>(p.score_type), p.lut, px, cv, t, p.arc_min, p.arc_max);
        reinterpret_cast<float*>(smem + p.src[k].score_off)[er * 4 * L.q + ec] = static_cast<float>(v);
    }
    __syncthreads();

    // 4. Only corners have a positive score: NMS, eligibility and best K over the listed corners that lie
    //    in the cell's rectangle R (E minus its n-pixel halo).
    for (unsigned i = static_cast<unsigned>(tid); i < corners_total; i += kThreads) {
        const auto [k, er, ec] = entry_of(list[i]);
        const LevelTasks L = lt[k];
        if (er < n || ec < n || er >= n + rect[k][3] - rect[k][2] || ec >= n + rect[k][1] - rect[k][0]) continue;
        const int stride = 4 * L.q;
        const float* centre = reinterpret_cast<const float*>(smem + p.src[k].score_off) + er * stride + ec;
        const float sp = *centre;
        if (!(sp > 0.0f)) continue;
        const int x = L.ex0 + ec, y = L.ey0 + er;
        const Key key = detail::keypoint_key(sp, k, x, y);
        if (key <= top[K - 1]) continue;
        const BlockNeighbours q{centre, stride};
        const bool is_max = kN1 ? detail::nms_is_maximum_fixed<1>(q, sp) : detail::nms_is_maximum_radius(q, n, sp);
        if (is_max && eligible(p, p.level[k].scale, x, y)) detail::topk_insert(top, key);
    }
}

template <int K, bool kN1>
__global__ void __launch_bounds__(kThreads, 4) cell_detect_kernel(const GridNmsParams p) {
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int rect[kMaxLevels][4];  // the cell's rectangle on level k: x0, x1, y0, y1
    __shared__ unsigned corner_count, task_count;
    const int cell = static_cast<int>(blockIdx.x);
    Key top[K];
    if (threadIdx.x == 0) corner_count = task_count = 0;  // begin_cell's barrier publishes them
    if (!begin_cell(p, cell, rect, top)) detect_cell<K, kN1>(p, rect, smem, &corner_count, &task_count, top);
    merge_and_finish<K>(p, top, cell);
}

template <int K, bool kN1>
struct CellDetectKernel {
    static const void* func() { return reinterpret_cast<const void*>(&cell_detect_kernel<K, kN1>); }
};

int align16(int v) { return (v + 15) & ~15; }

}  // namespace

bool plan_cell_detect(GridNmsParams& p, ScoreType type) {
    if (type == ScoreType::Harris) return false;
    const int n = p.nms_radius;
    int off = 0, tasks = 0;
    int tile_off[kMaxLevels], score_off[kMaxLevels];
    for (int k = 0; k < p.levels; ++k) {
        const GridLevel& L = p.level[k];
        // The largest rectangle over the cells (rows and columns are independent).
        int w = 0, h = 0;
        for (int c = 0; c < p.cols; ++c) {
            const int a = detail::cell_begin(c, p.cell_width, L.scale, L.width, p.image_width);
            const int b = detail::cell_begin(c + 1, p.cell_width, L.scale, L.width, p.image_width);
            w = b - a > w ? b - a : w;
        }
        for (int r = 0; r < p.rows; ++r) {
            const int a = detail::cell_begin(r, p.cell_height, L.scale, L.height, p.image_height);
            const int b = detail::cell_begin(r + 1, p.cell_height, L.scale, L.height, p.image_height);
            h = b - a > h ? b - a : h;
        }
        const CellLevel c = cell_level(0, w, 0, h, n);
        tile_off[k] = off;
        off = align16(off + (c.eh + 6) * c.words * 4);
        score_off[k] = off;
        off = align16(off + c.eh * 4 * c.q * 4);
        tasks += c.eh * c.q;
        if (off > kCellDetectMaxSmem) return false;
    }
    const int list_off = off;
    off = align16(off + 4 * tasks * 4);  // every centre may be a corner
    const int task_off = off;
    off = align16(off + tasks * 4);      // every task may pass the compass test
    if (off > kCellDetectMaxSmem) return false;
    for (int k = 0; k < p.levels; ++k) {
        p.src[k].tile_off = tile_off[k];
        p.src[k].score_off = score_off[k];
    }
    p.list_off = list_off;
    p.task_off = task_off;
    p.smem_bytes = off;
    return true;
}

bool cell_detect_fits_one_wave(const GridNmsParams& p) {
    const int sms = sms_available();  // a green context's partition, not the whole device
    int per_sm = 0;
    KESTREL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cell_detect_launch(p).func, kThreads,
                                                               static_cast<std::size_t>(p.smem_bytes)),
                 "cell detect plan");
    return static_cast<long long>(p.cols) * p.rows <= static_cast<long long>(sms) * per_sm;
}

GridNmsLaunch cell_detect_launch(const GridNmsParams& p) {
    return selection_launch<CellDetectKernel>(p, static_cast<std::size_t>(p.smem_bytes));
}

}  // namespace kestrel::kernels
