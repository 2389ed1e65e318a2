// FAST score maps for all pyramid levels in one launch.
// Reference it must match bit for bit: fast_score_map_cpu (src/fast_cpu.cpp); semantics in
// include/kestrel/detail/fast_rules.hpp (segment test, 8 KiB lookup table, scores, border).
//
// A block scores a 32x8 tile of one level (one pixel per thread: Nsight Compute showed the 32x32 tile
// latency-bound at 0.6 waves): it stages the tile plus a 4-pixel halo in shared memory,
// each thread then classifies its pixel with two table lookups (bright and dark mask) and computes the
// selected score. For Harris the block first computes the Sobel gradients of the tile plus a 3-pixel
// halo into shared memory once (each gradient is shared by up to 49 windows), and corners sum their
// 7x7 window from there: the Harris response is fused with the segment test in the same pass.
#include "../src/cuda_check.hpp"
#include "fast_score.cuh"
#include "kestrel/detail/fast_rules.hpp"

namespace kestrel::kernels {
namespace {

constexpr int kHalo = 4;
constexpr int kSmemW = kScoreTileW + 2 * kHalo;  // 40
constexpr int kSmemH = kScoreTileH + 2 * kHalo;  // 40
constexpr int kGradW = kScoreTileW + 6;          // gradients for the tile plus a 3-pixel halo
constexpr int kGradH = kScoreTileH + 6;
constexpr int kThreadsX = 32, kThreadsY = 8;

template <ScoreType kType>
__global__ void __launch_bounds__(kThreadsX* kThreadsY) fast_score_kernel(ScoreDesc d) {
    __shared__ __align__(16) std::uint8_t tile[kSmemH][kSmemW];
    __shared__ short grad_x[kType == ScoreType::Harris ? kGradH : 1][kType == ScoreType::Harris ? kGradW : 1];
    __shared__ short grad_y[kType == ScoreType::Harris ? kGradH : 1][kType == ScoreType::Harris ? kGradW : 1];

    // Which level and tile this block scores.
    int k = 0;
    for (int i = 1; i < d.levels; ++i)
        if (static_cast<int>(blockIdx.x) >= d.level[i].block_begin) k = i;
    const ScoreLevel L = d.level[k];
    const int local = static_cast<int>(blockIdx.x) - L.block_begin;
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
            const int gx = x0 + 4 * wx - kHalo;
            const std::uint8_t* row = L.image + static_cast<std::size_t>(gy) * L.pitch;
            std::uint32_t w;
            if (L.aligned4 && gx >= 0 && gx + 3 < L.width) {
                w = __ldg(reinterpret_cast<const std::uint32_t*>(row + gx));
            } else {
                w = 0;
#pragma unroll
                for (int b = 0; b < 4; ++b)
                    w |= static_cast<std::uint32_t>(__ldg(row + min(max(gx + b, 0), L.width - 1))) << (8 * b);
            }
            tile_words[i] = w;
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

}  // namespace

void plan_score_blocks(ScoreDesc& d) {
    int begin = 0;
    for (int k = 0; k < d.levels; ++k) {
        ScoreLevel& L = d.level[k];
        L.blocks_x = (L.width + kScoreTileW - 1) / kScoreTileW;
        L.block_begin = begin;
        begin += L.blocks_x * ((L.height + kScoreTileH - 1) / kScoreTileH);
    }
    d.total_blocks = begin;
}

void launch_fast_score(const ScoreDesc& d, ScoreType type, cudaStream_t stream) {
    const dim3 block(kThreadsX, kThreadsY);
    const dim3 grid(static_cast<unsigned>(d.total_blocks));
    switch (type) {
        case ScoreType::SadCircle: fast_score_kernel<ScoreType::SadCircle><<<grid, block, 0, stream>>>(d); break;
        case ScoreType::SadArc: fast_score_kernel<ScoreType::SadArc><<<grid, block, 0, stream>>>(d); break;
        case ScoreType::MaxThreshold: fast_score_kernel<ScoreType::MaxThreshold><<<grid, block, 0, stream>>>(d); break;
        case ScoreType::Harris: fast_score_kernel<ScoreType::Harris><<<grid, block, 0, stream>>>(d); break;
    }
    KESTREL_CUDA_LAUNCH("fast score");
}

}  // namespace kestrel::kernels
