// The per-level policies' validation and geometry (src/detect/orbslam_geometry.hpp).
#include "orbslam_geometry.hpp"

#include "kestrel/detail/validate.hpp"

namespace kestrel::detail {

void validate_orbslam(const DetectorConfig& cfg, const char* where) {
    const OrbSlamConfig& o = cfg.orbslam;
    check_range(where, "orbslam.threshold_initial", o.threshold_initial, 1, 254);
    check_range(where, "orbslam.threshold_min", o.threshold_min, 1, 254);
    check_range(where, "orbslam.cell", o.cell, kOrbSlamMinCell, kOrbSlamMaxCell);
    check_range(where, "orbslam.border", o.border, kOrbSlamMinBorder, kOrbSlamMaxBorder);
    if (cfg.max_features < 1)
        fail(where, "max_features", "= " + to_text(cfg.max_features) + " must be >= 1 under selection " +
                                        to_string(cfg.selection) + " (the budget spread over the levels)");
    if (cfg.max_features > kOrbSlamMaxFeatures)
        fail(where, "max_features", "= " + to_text(cfg.max_features) + " must be <= " + to_text(kOrbSlamMaxFeatures) +
                                        " under selection " + to_string(cfg.selection));
    if (cfg.fast.arc_max != 16)
        fail(where, "fast.arc_max", "= " + to_text(cfg.fast.arc_max) + " must be 16 under selection " +
                                        to_string(cfg.selection) + " (one score map serves both thresholds)");
    if (cfg.fast.score != ScoreType::MaxThreshold)
        fail(where, "fast.score", std::string("= ") + to_string(cfg.fast.score) +
                                      " must be MaxThreshold under selection " + to_string(cfg.selection));
}

FastConfig score_config(const DetectorConfig& cfg) {
    if (!per_level_policy(cfg)) return cfg.fast;
    // LevelHarris uses threshold_initial only; OrbSlam both, and one map at the lower serves both.
    const int t = cfg.selection == SelectionPolicy::LevelHarris ||
                          cfg.orbslam.threshold_initial < cfg.orbslam.threshold_min
                      ? cfg.orbslam.threshold_initial
                      : cfg.orbslam.threshold_min;
    return FastConfig{t, cfg.fast.arc_min, 16, ScoreType::MaxThreshold};
}

OrbSlamGeometry orbslam_geometry(const GridGeometry& g, const DetectorConfig& cfg) {
    OrbSlamGeometry o;
    o.levels = g.levels;
    o.harris = cfg.selection == SelectionPolicy::LevelHarris;
    orbslam_level_budgets(cfg.max_features, g.levels, cfg.pyramid.scale, o.budget);
    int out = 0, cells = 0;
    for (int k = 0; k < g.levels; ++k) {
        const OrbSlamCells c =
            orbslam_cells(g.level_size[k].width, g.level_size[k].height, cfg.orbslam.border, cfg.orbslam.cell);
        o.cells[k] = c;
        o.out_offset[k] = out;
        out += o.budget[k];
        o.cell_offset[k] = cells;
        cells += c.count();
        o.roots[k] = c.count() > 0 ? orbslam_root_count(c) : 0;
        const long long cand = c.count() > 0 ? static_cast<long long>(c.cols) * ((c.cw + 1) / 2) * c.rows * ((c.ch + 1) / 2) : 0;
        o.cand_capacity[k] = static_cast<int>(cand);
        o.node_capacity[k] = o.harris ? orbslam_harris_pool(o.budget[k]) + 1
                                      : (o.budget[k] > o.roots[k] ? o.budget[k] : o.roots[k]) + 3;
    }
    o.cell_offset[g.levels] = cells;
    return o;
}

}  // namespace kestrel::detail
