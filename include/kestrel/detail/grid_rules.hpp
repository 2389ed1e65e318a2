// THE single definition of the detector's grid geometry and per-pixel eligibility, included by the CPU
// reference (src/detect/grid_select_cpu.cpp) and the CUDA kernel (kernels/detect/grid_nms.cu). Change it here only.
//
// Level-k pixel (x, y) with s_k = level_scale(pyramid, k) (a float computed once on the host):
//   level-0 position   fx = x * s_k, fy = y * s_k            (one IEEE float multiply, round to nearest;
//                                                              reported as the keypoint's x, y)
//   level-0 pixel      X0 = min(trunc(fx), W - 1), Y0 = min(trunc(fy), H - 1)
//   cell               (X0 / cell_width, Y0 / cell_height)  (integer division; cols = ceil(W / cw))
//   border             eligible when border <= X0 <= W - 1 - border and border <= Y0 <= H - 1 - border
//   pixel mask         eligible when mask[Y0][X0] != 0 (mask is level-0 sized)
//   cell mask          every pixel of a cell with cell_skip[cell] != 0 is ineligible
// X0 is non-decreasing in x, so a cell's pixels on level k form one rectangle
// [cell_begin(c), cell_begin(c + 1)) x [...]: the GPU walks exactly that rectangle.
//
// A pixel is a candidate when its score s > 0, it is eligible, and no neighbour q with
// |dx|, |dy| <= n suppresses it (detail::nms_suppressed_by; neighbours outside the level score 0;
// suppression uses the raw score map, masks do not change a neighbour's score).
// Each cell keeps its best per_cell candidates over all levels by keypoint_key; the global cap then
// keeps the best max_features keys; output is in cell order (row-major), then rank (best first).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

/// fx = v * s as one IEEE single multiply on both sides (no contraction into an FMA is possible:
/// there is no addition; __fmul_rn makes it explicit on the device).
KESTREL_HD float level0_coord(int v, float s) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(static_cast<float>(v), s);
#else
    return static_cast<float>(v) * s;
#endif
}

/// X0 = min(trunc(v * s), limit - 1): the level-0 pixel a level-k coordinate falls in.
KESTREL_HD int level0_pixel(int v, float s, int limit) {
    const int p = static_cast<int>(level0_coord(v, s));  // truncating conversion, v * s >= 0
    return p < limit - 1 ? p : limit - 1;
}

/// border <= p <= limit - 1 - border
KESTREL_HD bool inside_border(int p, int limit, int border) { return p >= border && p <= limit - 1 - border; }

/// First level-k coordinate v in [0, level_len] whose cell index is >= c (level_len when none):
/// cells c cover [cell_begin(c), cell_begin(c + 1)). A float estimate, corrected by the exact rule
/// (cell index non-decreasing in v), so host and device agree whatever the estimate's rounding.
KESTREL_HD int cell_begin(int c, int cell, float s, int level_len, int level0_len) {
    const float est = static_cast<float>(c) * static_cast<float>(cell) / s;
    int v = static_cast<int>(est);
    v = v < 0 ? 0 : (v > level_len ? level_len : v);
    while (v > 0 && level0_pixel(v - 1, s, level0_len) / cell >= c) --v;
    while (v < level_len && level0_pixel(v, s, level0_len) / cell < c) ++v;
    return v;
}

/// Score at (x, y) of a pitched float map (pitch in bytes).
KESTREL_HD float score_at(const float* map, std::size_t pitch, int x, int y) {
    return reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(map) +
                                          static_cast<std::size_t>(y) * pitch)[x];
}

/// Is (x, y), with score sp > 0, the maximum of its (2n+1)^2 neighbourhood under the raster
/// tie-break (detail::nms_suppressed_by)? Neighbours outside the w x h level score 0 and never
/// suppress a positive score.
KESTREL_HD bool nms_is_maximum(const float* map, std::size_t pitch, int w, int h, int x, int y, int n, float sp) {
    const int ya = y - n < 0 ? 0 : y - n, yb = y + n > h - 1 ? h - 1 : y + n;
    const int xa = x - n < 0 ? 0 : x - n, xb = x + n > w - 1 ? w - 1 : x + n;
    for (int qy = ya; qy <= yb; ++qy)
        for (int qx = xa; qx <= xb; ++qx) {
            if (qx == x && qy == y) continue;
            if (nms_suppressed_by(sp, score_at(map, pitch, qx, qy), qx - x, qy - y)) return false;
        }
    return true;
}

/// nms_is_maximum restated on a reader of the neighbourhood (tests check the equivalence): q(dx, dy) is
/// the score of the neighbour at offset (dx, dy) from p, 0 where it is outside the level (MapNeighbours
/// below reads a map; the fused detection kernel reads its shared-memory score block, the tests a staged
/// tile). With b = max(0, scores of q before p in raster order) and a = max(0, scores of q after p):
/// p survives iff b < sp and a <= sp (sp > 0; a zero or NaN neighbour never suppresses, exactly as in
/// nms_suppressed_by). Any radius n >= 1.
template <typename Neighbours>
KESTREL_HD bool nms_is_maximum_radius(const Neighbours& q, int n, float sp) {
    float before = 0.0f, after = 0.0f;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int dy = -n; dy <= n; ++dy) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
        for (int dx = -n; dx <= n; ++dx) {
            if (dx == 0 && dy == 0) continue;
            const float v = q(dx, dy);
            if (dy < 0 || (dy == 0 && dx < 0))
                before = v > before ? v : before;
            else
                after = v > after ? v : after;
        }
    }
    return before < sp && after <= sp;
}

/// The same for a fixed radius N: fully unrolled on the GPU (the grid-NMS kernel's n = 1 path).
template <int N, typename Neighbours>
KESTREL_HD bool nms_is_maximum_fixed(const Neighbours& q, float sp) {
    return nms_is_maximum_radius(q, N, sp);
}

/// The neighbours of (x, y) in a pitched w x h score map, for nms_is_maximum_fixed (0 outside the map).
struct MapNeighbours {
    const float* map;
    std::size_t pitch;  // bytes
    int w, h, x, y;
    KESTREL_HD float operator()(int dx, int dy) const {
        const int qx = x + dx, qy = y + dy;
        return qx >= 0 && qy >= 0 && qx < w && qy < h ? score_at(map, pitch, qx, qy) : 0.0f;
    }
};

// Inverse of keypoint_key (fast_rules.hpp): key = score bits << 32 | (15 - level) << 28 |
// (0x3FFF - y) << 14 | (0x3FFF - x). Key 0 marks an empty slot (real keys have score > 0).
KESTREL_HD float key_score(std::uint64_t key) {
    const std::uint32_t bits = static_cast<std::uint32_t>(key >> 32);
#if defined(__CUDA_ARCH__)
    return __uint_as_float(bits);
#else
    float f;
    __builtin_memcpy(&f, &bits, sizeof f);
    return f;
#endif
}
KESTREL_HD int key_level(std::uint64_t key) { return 15 - static_cast<int>((key >> 28) & 0xFu); }
KESTREL_HD int key_y(std::uint64_t key) { return 0x3FFF - static_cast<int>((key >> 14) & 0x3FFFu); }
KESTREL_HD int key_x(std::uint64_t key) { return 0x3FFF - static_cast<int>(key & 0x3FFFu); }

/// Inserts key into best-first top[0..K-1] (0 = empty) when it beats top[K-1]. Fully unrolled with
/// constant indices only, so top[] stays in registers on the GPU.
template <typename T, int K>
KESTREL_HD void topk_insert(T (&top)[K], T key) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = K - 1; i > 0; --i) top[i] = key > top[i - 1] ? top[i - 1] : (key > top[i] ? key : top[i]);
    top[0] = key > top[0] ? key : top[0];
}

/// Removes top[0], shifting the rest up (unrolled, constant indices).
template <typename T, int K>
KESTREL_HD void topk_pop(T (&top)[K]) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < K - 1; ++i) top[i] = top[i + 1];
    top[K - 1] = 0;
}

}  // namespace kestrel::detail
