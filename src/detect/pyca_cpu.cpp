// CPU reference of PyCA selection: feature culling per level in cells (vertical, then horizontal),
// pyramidal feature aggregation at level 0 (K_r, K_l), sparse q x q NMS, then the grid's per-cell budget,
// cap and order. The definition kernels/detect/pyca.cu must match exactly (same list, same order).
// Rules: include/kestrel/detail/pyca_rules.hpp (and grid_rules.hpp for geometry and eligibility).
#include <algorithm>

#include "kestrel/pyca_select.hpp"
#include "pyca_geometry.hpp"

namespace kestrel::detail {

PycaGeometry pyca_geometry(const GridGeometry& g, const DetectorConfig& cfg) {
    PycaGeometry pg{};
    pg.levels = g.levels;
    pg.width = g.width;
    pg.height = g.height;
    pg.q = cfg.pyca.q;
    int total = 0;
    for (int k = 0; k < g.levels; ++k) {
        const int c = cfg.pyca.cell[static_cast<std::size_t>(k)];
        pg.level_w[k] = g.level_size[k].width;
        pg.level_h[k] = g.level_size[k].height;
        pg.scale[k] = g.scale[k];
        pg.cell[k] = c;
        pg.cols[k] = (pg.level_w[k] + c - 1) / c;
        pg.rows[k] = (pg.level_h[k] + c - 1) / c;
        pg.offset[k] = total;
        total += pg.cols[k] * pg.rows[k];
    }
    pg.total = total;
    return pg;
}

std::vector<std::int16_t> pyca_coord_tables(const PycaGeometry& pg) {
    std::vector<std::int16_t> t(static_cast<std::size_t>(pg.levels) * (pg.width + pg.height));
    const PycaRuleCoords rule{pg};
    std::int16_t* xs = t.data();
    std::int16_t* ys = t.data() + static_cast<std::size_t>(pg.levels) * pg.width;
    for (int j = 0; j < pg.levels; ++j) {
        for (int X0 = 0; X0 < pg.width; ++X0) xs[j * pg.width + X0] = static_cast<std::int16_t>(rule.x(j, X0));
        for (int Y0 = 0; Y0 < pg.height; ++Y0) ys[j * pg.height + Y0] = static_cast<std::int16_t>(rule.y(j, Y0));
    }
    return t;
}

std::vector<std::uint64_t> pyca_cull_reference(const GridGeometry& g, const PycaGeometry& pg,
                                               const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                               const std::uint8_t* cell_skip, HostView pixel_mask) {
    std::vector<std::uint64_t> survivors(static_cast<std::size_t>(pg.total), 0);
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const float s = g.scale[k];
        // The candidate key of a level-k pixel (0 = not a candidate): score > 0 and eligible.
        const auto candidate = [&](int x, int y) -> std::uint64_t {
            const float sp = m.at(x, y);
            if (!(sp > 0.0f)) return 0;
            const int X0 = level0_pixel(x, s, g.width), Y0 = level0_pixel(y, s, g.height);
            if (!inside_border(X0, g.width, cfg.border) || !inside_border(Y0, g.height, cfg.border)) return 0;
            if (cell_skip && cell_skip[(Y0 / cfg.cell_height) * g.cols + X0 / cfg.cell_width]) return 0;
            if (pixel_mask.data && pixel_mask.row(Y0)[X0] == 0) return 0;
            return keypoint_key(sp, k, x, y);
        };
        const int c = pg.cell[k];
        for (int cy = 0; cy < pg.rows[k]; ++cy)
            for (int cx = 0; cx < pg.cols[k]; ++cx) {
                const int x0 = cx * c, x1 = std::min(x0 + c, m.width);
                const int y0 = cy * c, y1 = std::min(y0 + c, m.height);
                std::uint64_t best = 0;
                for (int x = x0; x < x1; ++x) {
                    std::uint64_t column = 0;  // vertical culling: the column's best
                    for (int y = y0; y < y1; ++y) column = std::max(column, candidate(x, y));
                    best = std::max(best, column);  // horizontal culling: the best column
                }
                survivors[static_cast<std::size_t>(pg.offset[k] + cy * pg.cols[k] + cx)] = best;
            }
    }
    return survivors;
}

std::vector<Keypoint> pyca_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                            const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                                            HostView pixel_mask) {
    const PycaGeometry pg = pyca_geometry(g, cfg);
    const std::vector<std::uint64_t> survivors = pyca_cull_reference(g, pg, maps, cfg, cell_skip, pixel_mask);
    const std::uint64_t* sv = survivors.data();
    const int K = cfg.per_cell;
    std::vector<std::uint64_t> slots(static_cast<std::size_t>(g.cells()) * K, 0);
    for (int k = 0; k < pg.levels; ++k)
        for (int i = pg.offset[k]; i < pg.offset[k] + pg.cols[k] * pg.rows[k]; ++i) {
            const std::uint64_t key = sv[i];
            if (key == 0) continue;
            const std::uint64_t agg = pyca_keypoint_key(pg, sv, k, key);
            if (agg == 0) continue;
            const int X0 = level0_pixel(key_x(key), g.scale[k], g.width);
            const int Y0 = level0_pixel(key_y(key), g.scale[k], g.height);
            const int cell = (Y0 / cfg.cell_height) * g.cols + X0 / cfg.cell_width;
            insert_best_first(&slots[static_cast<std::size_t>(cell) * K], K, agg);
        }
    return finish_selection(g, slots, cfg.max_features);
}

GridGeometry check_pyca_args(const char* where, const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                             const DetectionMasks& masks) {
    const GridGeometry g = check_grid_select_args(where, maps, cfg, masks);
    if (cfg.selection != SelectionPolicy::PyCA)
        fail(where, "cfg.selection", "must be SelectionPolicy::PyCA");
    return g;
}

std::vector<std::uint64_t> pyca_cull_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                         const DetectionMasks& masks) {
    const GridGeometry g = check_pyca_args("pyca_cull_cpu", maps, cfg, masks);
    return pyca_cull_reference(g, pyca_geometry(g, cfg), maps, cfg, masks.cell_skip, masks.pixel_mask);
}

std::vector<Keypoint> pyca_select_cpu(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                      const DetectionMasks& masks) {
    const GridGeometry g = check_pyca_args("pyca_select_cpu", maps, cfg, masks);
    return pyca_select_reference(g, maps, cfg, masks.cell_skip, masks.pixel_mask);
}

}  // namespace kestrel::detail
