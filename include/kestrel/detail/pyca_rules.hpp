// THE single definition of PyCA selection (pyramidal culling and aggregation, after Jetson-SLAM, Kumar et
// al.), included by the CPU reference (src/detect/pyca_cpu.cpp) and the CUDA kernels (kernels/detect/pyca.cu).
// Change it here only. Geometry, eligibility and keys come from grid_rules.hpp / fast_rules.hpp.
//
// 1. Feature culling (FC), per level k: the level is cut into square PyCA cells of c_k x c_k level-k
//    pixels (c_k = DetectorConfig::pyca.cell[k], a power of two in [8, 128]; the last row/column of cells
//    may be partial). A level-k pixel is a candidate when its score > 0 and it is eligible (grid_rules.hpp:
//    level-0 border, pixel mask, and the cell mask of the level-0 grid cell it falls in). Each PyCA cell
//    keeps its best candidate by keypoint_key (its survivor; none when it holds no candidate). The culling
//    runs vertically (each column's best over the cell's rows), then horizontally (the best of the
//    columns' bests); keys are unique, so that order and any other order give the same survivor.
//    No pixel NMS: the culling replaces it (DetectorConfig::nms_radius is unused under PyCA).
// 2. Pyramidal feature aggregation (PFA): every survivor is projected to its level-0 pixel
//    P = (X0, Y0) (level0_pixel). For a level-0 pixel P:
//      K_r(P) = sum of the scores of the survivors projecting to P, added in level order 0, 1, ...
//               (IEEE single, round to nearest: the same bits on both backends);
//      K_l(P) = how many survivors project to P (at most one per level: a level's pixels map to distinct
//               level-0 pixels, since every s_k >= 1);
//      rep(P) = the survivor projecting to P on the lowest level (the representative: its coordinates
//               and level are the keypoint's).
//    Level j's survivor projecting to P is found by gathering, not scattering: x_j = the first level-j
//    column with level0_pixel(x_j) >= X0 (cell_begin with a cell of 1), likewise y_j; it projects to P
//    when level0_pixel(x_j) == X0 and level0_pixel(y_j) == Y0, and it is a survivor when the key of
//    its PyCA cell is keypoint_key(score, j, x_j, y_j).
// 3. Sparse q x q NMS around each aggregated keypoint (q = pyca.q, odd, r = q / 2): P is suppressed when a
//    level-0 pixel Q != P with |dx|, |dy| <= r inside the image has K_l(Q) > 0 and dominates P:
//      K_r(Q) >= K_r(P) and K_l(Q) >= K_l(P), and one of the two is strictly greater
//      (a neighbour whose K_r and K_l are both at least P's and not both equal), or
//      K_r(Q) == K_r(P) and K_l(Q) == K_l(P) and Q comes before P in raster order (the grid's plateau rule).
//    The paper leaves the comparison open ("K_r and K_l below a neighbour's"); this is the Pareto reading
//    with the grid's tie-break, a pure function of the survivors, so both backends agree bit for bit.
// 4. Each P that survives gives one keypoint: key = keypoint_key(K_r(P), level of rep, x, y of rep);
//    x = level0_coord(rep.x), y = level0_coord(rep.y), score = K_r(P), level = rep's level.
//    Then the grid's budget (grid_rules.hpp): best per_cell keys per level-0 grid cell (cell_width x
//    cell_height, the cell of P; cell_skip masks it), global cap max_features by key, output in grid
//    cell order then rank.
#pragma once
#include <cstdint>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::detail {

constexpr int kPycaMinCell = 8;    ///< PyCA cell side bounds (level-k pixels), a power of two
constexpr int kPycaMaxCell = 128;
constexpr int kPycaMaxQ = 9;       ///< q odd in [1, 9]

/// Everything the rules need about one image size (POD: copied by value into kernel arguments).
struct PycaGeometry {
    int levels;
    int width, height;                 // level 0
    int level_w[kMaxLevels], level_h[kMaxLevels];
    float scale[kMaxLevels];           // s_k = level_scale(pyramid, k)
    int cell[kMaxLevels];              // c_k
    int cols[kMaxLevels], rows[kMaxLevels];  // PyCA cells of level k: ceil(level_w / c_k) x ceil(level_h / c_k)
    int offset[kMaxLevels];            // index of level k's first cell in the survivor array
    int total;                         // survivors (cells over all levels)
    int q;
};

/// Survivor slot of the level-k pixel (x, y) (its PyCA cell).
KESTREL_HD int pyca_slot(const PycaGeometry& g, int k, int x, int y) {
    return g.offset[k] + (y / g.cell[k]) * g.cols[k] + x / g.cell[k];
}

/// The level-j coordinate projecting to level-0 coordinate P (first v with level0_pixel(v) >= P, then
/// exact), or -1 when none does.
KESTREL_HD int pyca_level_coord(int P, float s, int level_len, int level0_len) {
    const int v = cell_begin(P, 1, s, level_len, level0_len);
    return v < level_len && level0_pixel(v, s, level0_len) == P ? v : -1;
}

/// K_r, K_l and the representative key (0 if none) of level-0 pixel (X0, Y0). `survivors[i]` is the key
/// of survivor slot i (0 = none): a pointer or any indexable reader.
struct PycaAggregate {
    float kr;
    int kl;
    std::uint64_t rep;
};

/// The level-j coordinates of level-0 pixel (X0, Y0) by the rule above (pyca_level_coord; -1: none). The
/// kernel passes a reader of tables filled with these same values (pyca_coord_tables, src/detect/pyca_cpu.cpp).
struct PycaRuleCoords {
    const PycaGeometry& g;
    KESTREL_HD int x(int j, int X0) const { return pyca_level_coord(X0, g.scale[j], g.level_w[j], g.width); }
    KESTREL_HD int y(int j, int Y0) const { return pyca_level_coord(Y0, g.scale[j], g.level_h[j], g.height); }
};

/// pyca_aggregate with the level coordinates read from `coords` (x(j, X0), y(j, Y0), as PycaRuleCoords).
template <typename Survivors, typename Coords>
KESTREL_HD PycaAggregate pyca_aggregate_at(const PycaGeometry& g, const Survivors& survivors, const Coords& coords,
                                           int X0, int Y0) {
    // Every level's survivor slot is read first (the reads do not depend on each other), then the levels are
    // combined in level order.
    std::uint64_t key[kMaxLevels];
    int xs[kMaxLevels], ys[kMaxLevels];
    KESTREL_UNROLL
    for (int j = 0; j < kMaxLevels; ++j) {
        key[j] = 0;
        xs[j] = ys[j] = -1;
        if (j < g.levels) {
            xs[j] = coords.x(j, X0);
            ys[j] = coords.y(j, Y0);
            if (xs[j] >= 0 && ys[j] >= 0) key[j] = survivors[pyca_slot(g, j, xs[j], ys[j])];
        }
    }
    PycaAggregate a{0.0f, 0, 0};
    KESTREL_UNROLL
    for (int j = 0; j < kMaxLevels; ++j) {
        if (key[j] == 0 || key_x(key[j]) != xs[j] || key_y(key[j]) != ys[j]) continue;
#if defined(__CUDA_ARCH__)
        a.kr = __fadd_rn(a.kr, key_score(key[j]));
#else
        a.kr = a.kr + key_score(key[j]);
#endif
        if (a.kl == 0) a.rep = key[j];
        ++a.kl;
    }
    return a;
}

template <typename Survivors>
KESTREL_HD PycaAggregate pyca_aggregate(const PycaGeometry& g, const Survivors& survivors, int X0, int Y0) {
    return pyca_aggregate_at(g, survivors, PycaRuleCoords{g}, X0, Y0);
}

/// Does Q (at raster offset dx, dy from P) suppress P? Step 3 above.
KESTREL_HD bool pyca_dominates(const PycaAggregate& q, const PycaAggregate& p, int dx, int dy) {
    if (q.kl == 0) return false;
    if (q.kr == p.kr && q.kl == p.kl) return dy < 0 || (dy == 0 && dx < 0);
    return q.kr >= p.kr && q.kl >= p.kl;
}

/// Window position i in [0, q * q) of the q x q NMS around level-0 pixel P = (X0, Y0) with aggregate p
/// (row-major: dy = i / q - r, dx = i % q - r): does the level-0 pixel there suppress P? False for P
/// itself and outside the image. Step 3 above; pyca_keypoint_key asks it for every i in order, the GPU
/// one window position per lane (the answer, "does any position suppress P", is the same).
template <typename Survivors>
KESTREL_HD bool pyca_window_suppresses(const PycaGeometry& g, const Survivors& survivors, int X0, int Y0,
                                       const PycaAggregate& p, int i) {
    const int r = g.q / 2;
    const int dy = i / g.q - r, dx = i % g.q - r;
    const int qx = X0 + dx, qy = Y0 + dy;
    if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= g.width || qy >= g.height) return false;
    return pyca_dominates(pyca_aggregate(g, survivors, qx, qy), p, dx, dy);
}

/// The aggregated keypoint key of survivor `key` of level k, or 0 when it is not its level-0 pixel's
/// representative or the q x q NMS suppresses that pixel. Steps 2-4 above.
template <typename Survivors>
KESTREL_HD std::uint64_t pyca_keypoint_key(const PycaGeometry& g, const Survivors& survivors, int k,
                                           std::uint64_t key) {
    const int x = key_x(key), y = key_y(key);
    const int X0 = level0_pixel(x, g.scale[k], g.width), Y0 = level0_pixel(y, g.scale[k], g.height);
    const PycaAggregate p = pyca_aggregate(g, survivors, X0, Y0);
    if (p.rep != key) return 0;
    for (int i = 0; i < g.q * g.q; ++i)
        if (pyca_window_suppresses(g, survivors, X0, Y0, p, i)) return 0;
    return keypoint_key(p.kr, k, x, y);
}

/// Is c a valid PyCA cell side (power of two in [kPycaMinCell, kPycaMaxCell])?
KESTREL_HD bool pyca_cell_valid(int c) { return c >= kPycaMinCell && c <= kPycaMaxCell && (c & (c - 1)) == 0; }

}  // namespace kestrel::detail
