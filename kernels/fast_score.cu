// FAST score maps for all pyramid levels in one launch.
// Reference it must match bit for bit: fast_score_map_cpu (src/fast_cpu.cpp); semantics in
// include/kestrel/detail/fast_rules.hpp (segment test, 8 KiB lookup table, scores, border).
//
// SAD-B, SAD-A and MT (fast_score_swar_kernel): a block of 32x8 threads scores a 128x8 tile of one level,
// four horizontally adjacent centres per thread. It stages the tile plus a 3-row / 4-column halo in
// shared memory with one 16-bit lane per pixel (coalesced 32-bit loads, each expanded to a pixel-pair
// word pair), then each thread reads the six words of each of its seven circle rows (21 64-bit loads
// for four centres), runs the segment test of its four centres in SIMD lanes (kernels/fast_swar.cuh:
// about 13 integer operations per circle point for all four), classifies each centre with the lookup
// table (two lookups, skipped when the mask has fewer than arc_min ones), and computes the score of its
// corners (usually none) with the reference's own functions from shared memory. One 16-byte store
// writes the four scores.
// Harris (fast_score_kernel): a block scores a 32x8 tile, one pixel per thread: it stages the tile plus
// a 4-pixel halo, computes the Sobel gradients of the tile plus a 3-pixel halo into shared memory once
// (each gradient is shared by up to 49 windows), and corners sum their 7x7 window from there: the
// Harris response is fused with the segment test in the same pass.
#include "../src/cuda_check.hpp"
#include "fast_score.cuh"
#include "fast_swar.cuh"
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

/// The level block blockIdx.x scores, and its index among that level's blocks.
__device__ __forceinline__ ScoreLevel block_level(const ScoreDesc& d, int& local) {
    int k = 0;
    for (int i = 1; i < d.levels; ++i)
        if (static_cast<int>(blockIdx.x) >= d.level[i].block_begin) k = i;
    local = static_cast<int>(blockIdx.x) - d.level[k].block_begin;
    return d.level[k];
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

template <ScoreType kType>
__global__ void __launch_bounds__(kThreadsX* kThreadsY) fast_score_kernel(ScoreDesc d) {
    __shared__ __align__(16) std::uint8_t tile[kSmemH][kSmemW];
    __shared__ short grad_x[kType == ScoreType::Harris ? kGradH : 1][kType == ScoreType::Harris ? kGradW : 1];
    __shared__ short grad_y[kType == ScoreType::Harris ? kGradH : 1][kType == ScoreType::Harris ? kGradW : 1];

    // Which level and tile this block scores.
    int local;
    const ScoreLevel L = block_level(d, local);
    const int x0 = (local % L.blocks_x) * kScoreTileW, y0 = (local / L.blocks_x) * kScoreTileH;
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
    if (kType == ScoreType::Harris) {
        for (int i = tid; i < kGradW * kGradH; i += kThreadsX * kThreadsY) {
            const int gx = i % kGradW + 1, gy = i / kGradW + 1;  // tile coordinates of the gradient's centre
            const int a0 = tile[gy - 1][gx - 1], a1 = tile[gy - 1][gx], a2 = tile[gy - 1][gx + 1];
            const int b0 = tile[gy][gx - 1], b2 = tile[gy][gx + 1];
            const int c0 = tile[gy + 1][gx - 1], c1 = tile[gy + 1][gx], c2 = tile[gy + 1][gx + 1];
            grad_x[gy - 1][gx - 1] = static_cast<short>((a2 + 2 * b2 + c2) - (a0 + 2 * b0 + c0));
            grad_y[gy - 1][gx - 1] = static_cast<short>((c0 + 2 * c1 + c2) - (a0 + 2 * a1 + a2));
        }
        __syncthreads();
    }

    const int border = detail::score_border_px(kType == ScoreType::Harris);
    const int t = d.threshold;
    const int lx = threadIdx.x;
    const int x = x0 + lx;
#pragma unroll
    for (int r = 0; r < kScoreTileH / kThreadsY; ++r) {
        const int ly = threadIdx.y + r * kThreadsY;
        const int y = y0 + ly;
        if (x >= L.width || y >= L.height) continue;
        float s = 0.0f;
        if (x >= border && y >= border && x < L.width - border && y < L.height - border) {
            const int cx = lx + kHalo, cy = ly + kHalo;
            const int c = tile[cy][cx];
            int p[detail::kCircleSize];
#pragma unroll
            for (int i = 0; i < detail::kCircleSize; ++i) p[i] = tile[cy + detail::circle_dy(i)][cx + detail::circle_dx(i)];
            std::uint32_t bright, dark;
            detail::segment_masks(p, c, t, bright, dark);
            const bool corner = detail::mask_is_arc(d.lut, bright, d.arc_min) | detail::mask_is_arc(d.lut, dark, d.arc_min);
            if (corner) {
                if (kType == ScoreType::SadCircle) {
                    s = static_cast<float>(detail::score_sad_circle(p, c));
                } else if (kType == ScoreType::SadArc) {
                    s = static_cast<float>(detail::score_sad_arc(d.lut, p, c, t, d.arc_min));
                } else if (kType == ScoreType::MaxThreshold) {
                    s = static_cast<float>(detail::score_max_threshold(d.lut, p, c, t, d.arc_min, d.arc_max_is_16));
                } else {
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
        }
        reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(y) * L.score_pitch)[x] = s;
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


template <ScoreType kType>
__global__ void __launch_bounds__(kSwarThreadsX* kSwarThreadsY) fast_score_swar_kernel(ScoreDesc d) {
    __shared__ __align__(16) std::uint32_t tile[kSwarRows][kSwarRowWords];
    int local;
    const ScoreLevel L = block_level(d, local);
    const int x0 = (local % L.blocks_x) * kSwarTileW, y0 = (local / L.blocks_x) * kSwarTileH;
    const int tid = threadIdx.y * kSwarThreadsX + threadIdx.x;
    constexpr int kThreads = kSwarThreadsX * kSwarThreadsY;

    // Stage pixels x0 - 4 .. x0 + kSwarTileW + 3 of rows y0 - 3 .. y0 + kSwarTileH + 2 (clamped into the
    // level: clamped values only reach centres within the border, which score 0). A 32-bit load of four
    // pixels becomes two words of pixel pairs, one pixel per 16-bit lane.
    constexpr int kLoadsPerRow = kSwarRowPixels / 4;
    if (L.parent == nullptr) {
#pragma unroll
        for (int j = 0; j < (kSwarLoadWords + kThreads - 1) / kThreads; ++j) {
            const int i = tid + j * kThreads;
            if (i < kSwarLoadWords) {
                const int ly = i / kLoadsPerRow, wx = i % kLoadsPerRow;
                const int gy = min(max(y0 + ly - 3, 0), L.height - 1);
                const std::uint32_t w = load_word4(L, gy, x0 + 4 * wx - 4);
                *reinterpret_cast<uint2*>(&tile[ly][2 * wx]) =
                    make_uint2(__byte_perm(w, 0, 0x4140), __byte_perm(w, 0, 0x4342));
            }
        }
    } else {
        // Fused pyramid: pixel (x, y) of this level = average4 of parent pixels (2x, 2y) .. (2x + 1, 2y + 1)
        // (pyramid_rules.hpp, s = 2), computed while staging; the tile's own rows and columns are also
        // written to the level's image. Clamped coordinates give the value of the clamped pixel.
#pragma unroll
        for (int j = 0; j < (kSwarLoadWords + kThreads - 1) / kThreads; ++j) {
            const int i = tid + j * kThreads;
            if (i < kSwarLoadWords) {
                const int ly = i / kLoadsPerRow, wx = i % kLoadsPerRow;
                const int gy = min(max(y0 + ly - 3, 0), L.height - 1);
                const int gx = x0 + 4 * wx - 4;
                const std::uint8_t* r0 = L.parent + static_cast<std::size_t>(2 * gy) * L.parent_pitch;
                const std::uint8_t* r1 = r0 + L.parent_pitch;
                std::uint32_t w = 0;
                if (L.parent_aligned8 && gx >= 0 && gx + 3 < L.width) {
                    const uint2 a = __ldg(reinterpret_cast<const uint2*>(r0 + 2 * gx));
                    const uint2 b = __ldg(reinterpret_cast<const uint2*>(r1 + 2 * gx));
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const std::uint32_t wa = q < 2 ? a.x : a.y, wb = q < 2 ? b.x : b.y;
                        const int sh = 16 * (q & 1);
                        const std::uint32_t v = detail::average4((wa >> sh) & 0xFFu, (wa >> (sh + 8)) & 0xFFu,
                                                                 (wb >> sh) & 0xFFu, (wb >> (sh + 8)) & 0xFFu);
                        w |= v << (8 * q);
                    }
                } else {
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const int px = 2 * min(max(gx + q, 0), L.width - 1);
                        const std::uint32_t v = detail::average4(__ldg(r0 + px), __ldg(r0 + px + 1), __ldg(r1 + px),
                                                                 __ldg(r1 + px + 1));
                        w |= v << (8 * q);
                    }
                }
                *reinterpret_cast<uint2*>(&tile[ly][2 * wx]) =
                    make_uint2(__byte_perm(w, 0, 0x4140), __byte_perm(w, 0, 0x4342));
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

    const int x = x0 + 4 * static_cast<int>(threadIdx.x), y = y0 + static_cast<int>(threadIdx.y);
    const bool active = x < L.width && y < L.height;  // every lane stays: the warp shuffles below
    // Rows y - 3 .. y + 3; words 2 tx .. 2 tx + 5 = pixels x - 4 .. x + 7 (three 64-bit loads per row).
    swar::RowWords rows[7];
#pragma unroll
    for (int r = 0; r < 7; ++r) {
        const uint2* src = reinterpret_cast<const uint2*>(&tile[threadIdx.y + r][2 * threadIdx.x]);
#pragma unroll
        for (int h = 0; h < 3; ++h) {
            const uint2 v = src[h];
            rows[r].w[2 * h] = v.x;
            rows[r].w[2 * h + 1] = v.y;
        }
    }
    const int t = d.threshold;
    std::uint32_t bright[4], dark[4];
    swar::segment_masks4(rows, t, bright, dark);

    constexpr int border = 3;  // detail::score_border_px(false)
    const bool row_in = active && y >= border && y < L.height - border;
    unsigned corners = 0;  // bit j: centre x + j is a corner
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const bool in = row_in && x + j >= border && x + j < L.width - border;
        const bool corner = in && (detail::mask_is_arc(d.lut, bright[j], d.arc_min) |
                                   detail::mask_is_arc(d.lut, dark[j], d.arc_min));
        corners |= static_cast<unsigned>(corner) << j;
    }
    // Scores of the warp's corners (about 5 % of the centres), spread over the lanes: each lane scores
    // todo[i] for i = lane, lane + 32, ... so the warp runs the score code once per 32 corners rather than
    // once per corner of its busiest lane. One copy of the reference's score function.
    __shared__ std::uint16_t todo[kSwarThreadsY][kSwarTileW];
    __shared__ __align__(16) float warp_scores[kSwarThreadsY][kSwarTileW];
    const int lane = static_cast<int>(threadIdx.x), wy = static_cast<int>(threadIdx.y);
    *reinterpret_cast<float4*>(&warp_scores[wy][4 * lane]) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    const int mine = __popc(corners);
    int incl = mine;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const int v = __shfl_up_sync(0xFFFFFFFFu, incl, off);
        if (lane >= off) incl += v;
    }
    const int total = __shfl_sync(0xFFFFFFFFu, incl, 31);
    int pos = incl - mine;
    for (unsigned m = corners; m; m &= m - 1u) todo[wy][pos++] = static_cast<std::uint16_t>(4 * lane + __ffs(m) - 1);
    __syncwarp();
    const std::uint16_t* centre_row = reinterpret_cast<const std::uint16_t*>(&tile[wy + 3][0]) + 4;
    for (int i = lane; i < total; i += 32) {
        const int idx = todo[wy][i];
        const std::uint16_t* base = centre_row + idx;
        const int c = base[0];
        int p[detail::kCircleSize];
#pragma unroll
        for (int q = 0; q < detail::kCircleSize; ++q)
            p[q] = base[detail::circle_dy(q) * kSwarRowPixels + detail::circle_dx(q)];
        float v;
        if (kType == ScoreType::SadCircle) {
            v = static_cast<float>(detail::score_sad_circle(p, c));
        } else if (kType == ScoreType::SadArc) {
            v = static_cast<float>(detail::score_sad_arc(d.lut, p, c, t, d.arc_min));
        } else {
            v = static_cast<float>(detail::score_max_threshold(d.lut, p, c, t, d.arc_min, d.arc_max_is_16));
        }
        warp_scores[wy][idx] = v;
    }
    __syncwarp();
    const float4 s4 = *reinterpret_cast<const float4*>(&warp_scores[wy][4 * lane]);
    const float s[4] = {s4.x, s4.y, s4.z, s4.w};
    if (!active) return;
    float* out = reinterpret_cast<float*>(reinterpret_cast<char*>(L.scores) + static_cast<std::size_t>(y) * L.score_pitch) + x;
    if (x + 3 < L.width) {
        *reinterpret_cast<float4*>(out) = make_float4(s[0], s[1], s[2], s[3]);  // maps are cudaMallocPitch'ed
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (x + j < L.width) out[j] = s[j];
    }
}

}  // namespace

void plan_score_blocks(ScoreDesc& d, ScoreType type) {
    d.tile_w = type == ScoreType::Harris ? kScoreTileW : kSwarTileW;
    d.tile_h = type == ScoreType::Harris ? kScoreTileH : kSwarTileH;
    int begin = 0;
    for (int k = 0; k < d.levels; ++k) {
        ScoreLevel& L = d.level[k];
        L.blocks_x = (L.width + d.tile_w - 1) / d.tile_w;
        L.block_begin = begin;
        begin += L.blocks_x * ((L.height + d.tile_h - 1) / d.tile_h);
    }
    d.total_blocks = begin;
}

void launch_fast_score(const ScoreDesc& d, ScoreType type, cudaStream_t stream) {
    const dim3 grid(static_cast<unsigned>(d.total_blocks));
    const dim3 swar_block(kSwarThreadsX, kSwarThreadsY);
    switch (type) {
        case ScoreType::SadCircle: fast_score_swar_kernel<ScoreType::SadCircle><<<grid, swar_block, 0, stream>>>(d); break;
        case ScoreType::SadArc: fast_score_swar_kernel<ScoreType::SadArc><<<grid, swar_block, 0, stream>>>(d); break;
        case ScoreType::MaxThreshold:
            fast_score_swar_kernel<ScoreType::MaxThreshold><<<grid, swar_block, 0, stream>>>(d);
            break;
        case ScoreType::Harris:
            fast_score_kernel<ScoreType::Harris><<<grid, dim3(kThreadsX, kThreadsY), 0, stream>>>(d);
            break;
    }
    KESTREL_CUDA_LAUNCH("fast score");
}

}  // namespace kestrel::kernels
