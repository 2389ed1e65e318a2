// CPU reference of the grid selection: NMS on every level, best K per cell over all levels, global cap,
// output in cell order. The definition kernels/detect/grid_nms.cu must match exactly (same list, same order).
// Rules: include/kestrel/detail/grid_rules.hpp (geometry, eligibility) and fast_rules.hpp (order, NMS).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>

#include "detector_geometry.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/grid_select.hpp"

namespace kestrel::detail {

void insert_best_first(std::uint64_t* top, int K, std::uint64_t key) {
    if (key <= top[K - 1]) return;
    int i = K - 1;
    while (i > 0 && top[i - 1] < key) {
        top[i] = top[i - 1];
        --i;
    }
    top[i] = key;
}

namespace {

/// The selection's end (steps 2 and 3) into `out`, with `keys` as reused memory.
void finish_selection_into(const GridGeometry& g, const std::vector<std::uint64_t>& slots, int max_features,
                           std::vector<std::uint64_t>& keys, std::vector<Keypoint>& out) {
    // 2. Global cap: keep the max_features largest keys (keys are unique), never an arrival-order cut.
    std::uint64_t threshold = 1;  // keeps every non-empty slot
    if (max_features > 0) {
        keys.clear();
        for (std::uint64_t key : slots)
            if (key) keys.push_back(key);
        const std::size_t M = static_cast<std::size_t>(max_features);
        if (keys.size() > M) {
            std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(M - 1), keys.end(),
                             std::greater<std::uint64_t>());
            threshold = keys[M - 1];
        }
    }

    // 3. Output in cell order, then rank.
    out.clear();
    for (std::uint64_t key : slots) {
        if (key < threshold) continue;
        const int level = key_level(key);
        Keypoint kp;
        kp.x = level0_coord(key_x(key), g.scale[level]);
        kp.y = level0_coord(key_y(key), g.scale[level]);
        kp.score = key_score(key);
        kp.level = level;
        out.push_back(kp);
    }
}

/// A level's coordinate -> its level-0 pixel and cell index (-1: outside the border), per column and row.
void fill_axis(std::vector<int>& pixel, std::vector<int>& cell, int len, float s, int limit, int border, int cell_size) {
    pixel.resize(static_cast<std::size_t>(len));
    cell.resize(static_cast<std::size_t>(len));
    for (int v = 0; v < len; ++v) {
        const int p = level0_pixel(v, s, limit);
        pixel[static_cast<std::size_t>(v)] = p;
        cell[static_cast<std::size_t>(v)] = inside_border(p, limit, border) ? p / cell_size : -1;
    }
}

/// max(p[Lo], ..., p[Hi]) as a tree (independent maxima instead of one chain; scores are finite, >= 0).
template <int Lo, int Hi>
inline float range_max(const float* p) {
    if constexpr (Lo == Hi) {
        return p[Lo];
    } else {
        constexpr int mid = Lo + (Hi - Lo) / 2;
        const float a = range_max<Lo, mid>(p), b = range_max<mid + 1, Hi>(p);
        return a > b ? a : b;
    }
}

/// nms_is_maximum_radius (grid_rules.hpp) inside the level, restated for early exit: p (score sp > 0 at `at`,
/// rows w floats apart) survives iff every neighbour before it in raster order scores < sp and every one after
/// it <= sp. The neighbours are visited nearest rows first and the visit stops at the first one that
/// suppresses p: the same answer (the rule is "no neighbour suppresses"), fewer reads for the many corners
/// that a neighbour of their own blob suppresses.
/// A whole row's maximum decides for the rows above (before p: >= sp suppresses) and below (after p: > sp).
template <int N>
inline bool nms_survives_n(const float* at, int w, float sp) {
    for (int dx = 1; dx <= N; ++dx)
        if (at[-dx] >= sp || at[dx] > sp) return false;
    for (int dy = 1; dy <= N; ++dy) {
        const float* up = at - static_cast<std::ptrdiff_t>(dy) * w;  // before p
        const float* dn = at + static_cast<std::ptrdiff_t>(dy) * w;  // after p
        if (range_max<-N, N>(up) >= sp || range_max<-N, N>(dn) > sp) return false;
    }
    return true;
}

inline bool nms_survives(const float* at, int w, int n, float sp) {
    switch (n) {
        case 1: return nms_survives_n<1>(at, w, sp);
        case 2: return nms_survives_n<2>(at, w, sp);
        case 3: return nms_survives_n<3>(at, w, sp);
        default: return nms_survives_n<4>(at, w, sp);  // n in [1, 4] (validated)
    }
}

struct LevelTables {
    const int *X0, *Y0, *cx, *cy;
};

/// One candidate pixel (x, y) of level k with score sp > 0: eligibility, then (when its key would enter the
/// cell's list at all: insert_best_first ignores a key below the list's last) NMS and the cell's list.
inline void consider(const GridGeometry& g, const ScoreMap& m, const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                     HostView pixel_mask, const LevelTables& t, int k, int x, int y, std::uint64_t* slots) {
    const int cx = t.cx[x], cy = t.cy[y];
    if ((cx | cy) < 0) return;  // outside the border
    const int cell = cy * g.cols + cx;
    if (cell_skip && cell_skip[cell]) return;
    if (pixel_mask.data && pixel_mask.row(t.Y0[y])[t.X0[x]] == 0) return;
    const float sp = m.scores[static_cast<std::size_t>(y) * m.width + x];
    const std::uint64_t key = keypoint_key(sp, k, x, y);
    std::uint64_t* top = &slots[static_cast<std::size_t>(cell) * cfg.per_cell];
    if (key <= top[cfg.per_cell - 1]) return;
    const int n = cfg.nms_radius;
    if (x >= n && y >= n && x < m.width - n && y < m.height - n) {
        // Inside the level: nms_is_maximum restated (nms_survives) on direct reads.
        if (!nms_survives(m.scores.data() + static_cast<std::size_t>(y) * m.width + x, m.width, n, sp)) return;
    } else {
        const std::size_t pitch = sizeof(float) * static_cast<std::size_t>(m.width);
        if (!nms_is_maximum(m.scores.data(), pitch, m.width, m.height, x, y, n, sp)) return;
    }
    insert_best_first(top, cfg.per_cell, key);
}

}  // namespace

void grid_select_into(const GridGeometry& g, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                      const std::uint8_t* cell_skip, HostView pixel_mask, const CornerLists* corners,
                      GridScratch& scratch, std::vector<Keypoint>& out) {
    const int K = cfg.per_cell;
    std::vector<std::uint64_t>& slots = scratch.slots;
    slots.assign(static_cast<std::size_t>(g.cells()) * K, 0);

    // 1. Candidates: positive, eligible, maxima of their (2n+1)^2 neighbourhood; best K per cell. A cell's
    //    list keeps the K largest keys it is offered, in any order of offering (keys are unique).
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        fill_axis(scratch.x0, scratch.cx, m.width, g.scale[k], g.width, cfg.border, cfg.cell_width);
        fill_axis(scratch.y0, scratch.cy, m.height, g.scale[k], g.height, cfg.border, cfg.cell_height);
        const LevelTables t{scratch.x0.data(), scratch.y0.data(), scratch.cx.data(), scratch.cy.data()};
        if (corners) {  // the score stage's list of the level's positive scores
            for (int p = 0; p < corners->parts; ++p)
                for (std::uint32_t c : corners->lists[static_cast<std::size_t>(k * corners->parts + p)])
                    consider(g, m, cfg, cell_skip, pixel_mask, t, k, static_cast<int>(c & 0xFFFFu),
                             static_cast<int>(c >> 16), slots.data());
            continue;
        }
        for (int y = 0; y < m.height; ++y) {
            const float* row = m.scores.data() + static_cast<std::size_t>(y) * m.width;
            for (int x = 0; x < m.width; ++x)
                if (row[x] > 0.0f) consider(g, m, cfg, cell_skip, pixel_mask, t, k, x, y, slots.data());
        }
    }

    finish_selection_into(g, slots, cfg.max_features, scratch.keys, out);
}

std::vector<Keypoint> finish_selection(const GridGeometry& g, const std::vector<std::uint64_t>& slots,
                                       int max_features) {
    std::vector<std::uint64_t> keys;
    std::vector<Keypoint> out;
    finish_selection_into(g, slots, max_features, keys, out);
    return out;
}

std::vector<Keypoint> grid_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                            const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                                            HostView pixel_mask) {
    GridScratch scratch;
    std::vector<Keypoint> out;
    grid_select_into(g, maps, cfg, cell_skip, pixel_mask, nullptr, scratch, out);
    return out;
}

GridGeometry check_score_maps(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg) {
    validate(cfg, where);
    check_range(where, "maps.size()", static_cast<int>(maps.size()), cfg.pyramid.levels, cfg.pyramid.levels);
    const GridGeometry g = grid_geometry(where, maps[0].width, maps[0].height, cfg);
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        if (m.width != g.level_size[k].width || m.height != g.level_size[k].height ||
            m.scores.size() != static_cast<std::size_t>(m.width) * m.height)
            fail(where, "maps", "level " + to_text(k) + " is " + to_text(m.width) + "x" + to_text(m.height) +
                                    ", the pyramid level is " + to_text(g.level_size[k].width) + "x" +
                                    to_text(g.level_size[k].height));
        for (float v : m.scores)
            if (!(std::isfinite(v) && v >= 0.0f))
                fail(where, "maps", "level " + to_text(k) + " holds a score that is negative or not finite");
    }
    return g;
}

GridGeometry check_grid_select_args(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                    const DetectionMasks& masks) {
    const GridGeometry g = check_score_maps(where, maps, cfg);
    check_cell_mask(where, g, masks.cell_skip, masks.cell_grid);
    check_pixel_mask(where, g, masks.pixel_mask);
    return g;
}

std::vector<Keypoint> grid_select_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                      const DetectionMasks& masks) {
    const GridGeometry g = check_grid_select_args("grid_select_cpu", maps, cfg, masks);
    return grid_select_reference(g, maps, cfg, masks.cell_skip, masks.pixel_mask);
}

}  // namespace kestrel::detail
