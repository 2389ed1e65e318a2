// THE single definition of the per-level selection policies, SelectionPolicy::OrbSlam (ORB-SLAM's extractor:
// Mur-Artal, Montiel, Tardos, "ORB-SLAM: a Versatile and Accurate Monocular SLAM System", IEEE T-RO 2015, and
// ORB-SLAM2/3's quadtree distribution) and SelectionPolicy::LevelHarris (cv::ORB's ranking: Rublee et al.,
// ICCV 2011), included by the CPU reference (src/detect/orbslam_select_cpu.cpp) and the CUDA kernels
// (kernels/detect/orbslam_select.cu). Change it here only. Keys and level-0 positions are the grid's
// (fast_rules.hpp, grid_rules.hpp).
//
// Both policies, on every level k of the detector's pyramid (w x h level-k pixels):
// 1. Budget. N = max_features features over n levels of scale s (f = 1/s): level l < n - 1 gets
//    N_l = round(N (1 - f) / (1 - f^n) f^l) (round half away from zero, in double; never more than what is
//    left of N), the last level what remains of N (ORB-SLAM's geometric budget). Host-side, passed to the kernels.
// 2. Cells. The region R = [b, w - b) x [b, h - b) (b = orbslam.border) is cut into cols x rows cells:
//    cols = max(1, rw / c) (rw = w - 2b > 0, c = orbslam.cell, integer division), cell width
//    cw = ceil(rw / cols); cell j covers columns [b + j cw, min(b + (j + 1) cw, w - b)); rows alike. A level with
//    rw <= 0 or rh <= 0 has no cell and gives no feature.
// 3. FAST per cell. The score map holds the MT score (fast_rules.hpp, arcs [arc_min, 16]) at the threshold
//    t0 = min(threshold_initial, threshold_min) (LevelHarris: t0 = threshold_initial). MT is monotone in the threshold, so at any t >= t0 the score of
//    pixel p is s_t(p) = s(p) if s(p) >= t, else 0: one map serves both thresholds. p is a candidate of its cell
//    at threshold t when s_t(p) > 0, s_t(p) > s_t(q) for each of its 8 neighbours q inside the suppression
//    window, and p is eligible (grid_rules.hpp: the level-0 border, pixel mask and cell mask).
//    OrbSlam: the window is the cell (each cell is detected on its own, as ORB-SLAM runs cv::FAST with its 3x3
//    non-maximum suppression on each cell's image); a cell's candidates are those at threshold_initial, and
//    where that finds none, those at threshold_min (ORB-SLAM's fallback).
//    LevelHarris: the window is the whole level (cv::FAST on the level), threshold_initial only.
//    A candidate's key is keypoint_key(s(p), k, x, y).
// 4. OrbSlam, the quadtree: nodes are rectangles [x0, x1) x [y0, y1) of level pixels holding candidates. The
//    roots: n_r = max(1, round(rw / rh)) (half up) columns of R, root i covering [b + floor(i rw / n_r),
//    b + floor((i + 1) rw / n_r)) x [b, h - b); the roots holding a candidate are the first nodes. Splitting a
//    node: mx = x0 + ceil((x1 - x0) / 2), my likewise; a candidate goes to quadrant (x >= mx) + 2 (y >= my); the
//    quadrants holding a candidate replace the node. Then, repeatedly: E = the nodes holding two or more
//    candidates, ordered by count (more first), then y0, then x0 (nodes are disjoint, so the order is total);
//    stop when E is empty or there are N_l or more nodes; else split the nodes of E in that order, each only
//    while there are still fewer than N_l nodes. (ORB-SLAM splits every node while a full round stays within
//    the budget and the largest nodes first after that, its ties in memory order; this rule splits in one fixed
//    order throughout.) Every node then keeps its best key; the best N_l of those are the level's.
// 5. LevelHarris, cv::ORB's ranking: the best 2 N_l candidates by key (cv::ORB's retainBest on the FAST
//    response), each then keyed by its Harris response (fast_rules.hpp's Harris on the level image, k = 0.04,
//    7x7 window; a response that is not positive drops the candidate): keypoint_key(harris, k, x, y); the best
//    N_l of those are the level's.
// 6. Output: level by level (0 first), each level's keys best first; keypoint x = level0_coord(x, s_k),
//    y = level0_coord(y, s_k), score = the response, level = k.
#pragma once
#include <cmath>
#include <cstdint>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/detail/hd.hpp"
#include "kestrel/pyramid_types.hpp"

namespace kestrel::detail {

constexpr int kOrbSlamMinCell = 16, kOrbSlamMaxCell = 256;
constexpr int kOrbSlamMinBorder = 4, kOrbSlamMaxBorder = 64;  // 4: the Harris window fits inside the level
/// Largest max_features under these policies: the GPU ranks a level's nodes (or LevelHarris' pool of 2 N_l) by
/// counting, a cost that grows with the square of the level's budget (ORB-SLAM runs 1000 to 5000 features).
constexpr int kOrbSlamMaxFeatures = 20000;

/// Step 1 (host): budgets[0..levels-1] of `features` over `levels` levels of factor `scale`.
inline void orbslam_level_budgets(int features, int levels, float scale, int* budgets) {
    const double f = 1.0 / static_cast<double>(scale);
    const double first = static_cast<double>(features) * (1.0 - f) / (1.0 - std::pow(f, levels));
    int used = 0;
    for (int l = 0; l < levels - 1; ++l) {
        const long long want = std::llround(first * std::pow(f, l));
        const int left = features - used;
        const int n = want < left ? static_cast<int>(want) : left;
        budgets[l] = n;
        used += n;
    }
    budgets[levels - 1] = features - used;
}

/// Step 2: the cells of one level.
struct OrbSlamCells {
    int b;         // border: region starts at (b, b)
    int rw, rh;    // region size (<= 0: no cell)
    int cols, rows;
    int cw, ch;    // cell width, height
    KESTREL_HD int count() const { return cols * rows; }
};

KESTREL_HD OrbSlamCells orbslam_cells(int w, int h, int border, int cell) {
    OrbSlamCells c{};
    c.b = border;
    c.rw = w - 2 * border;
    c.rh = h - 2 * border;
    if (c.rw <= 0 || c.rh <= 0) return c;  // cols = rows = 0
    c.cols = c.rw / cell > 1 ? c.rw / cell : 1;
    c.rows = c.rh / cell > 1 ? c.rh / cell : 1;
    c.cw = (c.rw + c.cols - 1) / c.cols;
    c.ch = (c.rh + c.rows - 1) / c.rows;
    return c;
}

/// Cell (j, i)'s pixels [x0, x1) x [y0, y1) (may be empty at the far edge of a wide level).
KESTREL_HD void orbslam_cell_rect(const OrbSlamCells& c, int j, int i, int& x0, int& x1, int& y0, int& y1) {
    x0 = c.b + j * c.cw;
    y0 = c.b + i * c.ch;
    const int xe = c.b + c.rw, ye = c.b + c.rh;
    x1 = x0 + c.cw < xe ? x0 + c.cw : xe;
    y1 = y0 + c.ch < ye ? y0 + c.ch : ye;
}

/// s_t: the score at threshold t of a pixel whose map score is s (map threshold <= t).
KESTREL_HD float orbslam_at(float s, int t) { return s >= static_cast<float>(t) ? s : 0.0f; }

/// Step 3 without eligibility: is (x, y) a maximum at threshold t within the suppression window [x0, x1) x [y0, y1)?
/// score(x, y) reads the level's raw map (called only inside the cell).
template <typename Score>
KESTREL_HD bool orbslam_is_maximum(const Score& score, int x, int y, int x0, int x1, int y0, int y1, int t) {
    const float sp = orbslam_at(score(x, y), t);
    if (sp <= 0.0f) return false;
    for (int dy = -1; dy <= 1; ++dy) {
        const int qy = y + dy;
        if (qy < y0 || qy >= y1) continue;
        for (int dx = -1; dx <= 1; ++dx) {
            const int qx = x + dx;
            if ((dx == 0 && dy == 0) || qx < x0 || qx >= x1) continue;
            if (!(sp > orbslam_at(score(qx, qy), t))) return false;
        }
    }
    return true;
}

/// Eligibility of level-k pixel (x, y) under the detector's level-0 border and masks (grid_rules.hpp).
KESTREL_HD bool orbslam_eligible(int x, int y, float s, int width, int height, int border, const std::uint8_t* cell_skip,
                                 int cell_width, int cell_height, int cols, const std::uint8_t* pixel_mask,
                                 std::size_t mask_pitch) {
    const int X0 = level0_pixel(x, s, width), Y0 = level0_pixel(y, s, height);
    if (!inside_border(X0, width, border) || !inside_border(Y0, height, border)) return false;
    if (pixel_mask && pixel_mask[static_cast<std::size_t>(Y0) * mask_pitch + X0] == 0) return false;
    if (cell_skip && cell_skip[(Y0 / cell_height) * cols + X0 / cell_width] != 0) return false;
    return true;
}

/// Step 5, LevelHarris: fast_rules.hpp's Harris response at (x, y), 4 or more pixels inside the level;
/// pixel(x, y) reads the level image.
template <typename Pixel>
KESTREL_HD float orbslam_harris(const Pixel& pixel, int x, int y) {
    std::int64_t sxx = 0, syy = 0, sxy = 0;
    for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx) {
            const int u = x + dx, v = y + dy;
            const int gx = (pixel(u + 1, v - 1) + 2 * pixel(u + 1, v) + pixel(u + 1, v + 1)) -
                           (pixel(u - 1, v - 1) + 2 * pixel(u - 1, v) + pixel(u - 1, v + 1));
            const int gy = (pixel(u - 1, v + 1) + 2 * pixel(u, v + 1) + pixel(u + 1, v + 1)) -
                           (pixel(u - 1, v - 1) + 2 * pixel(u, v - 1) + pixel(u + 1, v - 1));
            sxx += static_cast<std::int64_t>(gx) * gx;
            syy += static_cast<std::int64_t>(gy) * gy;
            sxy += static_cast<std::int64_t>(gx) * gy;
        }
    return harris_from_sums(sxx, syy, sxy);
}

/// Step 5: how many of the best MT keys get a Harris response (cv::ORB keeps twice its budget).
KESTREL_HD int orbslam_harris_pool(int budget) { return 2 * budget; }

/// Step 4: a quadtree node's rectangle.
struct QuadRect {
    int x0, y0, x1, y1;
};

KESTREL_HD int orbslam_root_count(const OrbSlamCells& c) {
    const int n = (2 * c.rw + c.rh) / (2 * c.rh);  // round(rw / rh), half up
    return n > 1 ? n : 1;
}

/// Root i of n: [b + floor(i rw / n), b + floor((i + 1) rw / n)) x [b, b + rh).
KESTREL_HD QuadRect orbslam_root(const OrbSlamCells& c, int i, int n) {
    const long long rw = c.rw;
    return {c.b + static_cast<int>(i * rw / n), c.b, c.b + static_cast<int>((i + 1) * rw / n), c.b + c.rh};
}

/// The root holding column x (inside the region): the largest i with floor(i rw / n) <= x - b.
KESTREL_HD int orbslam_root_of(const OrbSlamCells& c, int n, int x) {
    const long long u = x - c.b;
    return static_cast<int>(((u + 1) * n - 1) / c.rw);
}

KESTREL_HD int orbslam_quadrant(const QuadRect& r, int x, int y) {
    const int mx = r.x0 + (r.x1 - r.x0 + 1) / 2, my = r.y0 + (r.y1 - r.y0 + 1) / 2;
    return (x >= mx ? 1 : 0) + (y >= my ? 2 : 0);
}

KESTREL_HD QuadRect orbslam_child(const QuadRect& r, int q) {
    const int mx = r.x0 + (r.x1 - r.x0 + 1) / 2, my = r.y0 + (r.y1 - r.y0 + 1) / 2;
    QuadRect c = r;
    if (q & 1) c.x0 = mx; else c.x1 = mx;
    if (q & 2) c.y0 = my; else c.y1 = my;
    return c;
}

/// The split order of step 4: does node a (count na) come before node b (count nb)?
KESTREL_HD bool orbslam_splits_before(int na, const QuadRect& a, int nb, const QuadRect& b) {
    if (na != nb) return na > nb;
    if (a.y0 != b.y0) return a.y0 < b.y0;
    return a.x0 < b.x0;
}

}  // namespace kestrel::detail
