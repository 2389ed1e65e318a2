// DetectorConfig validation, the cell grid, the geometry of one image size and the mask checks shared by
// the CPU and CUDA backends (src/detect/detector_geometry.hpp).
#include <cmath>
#include <limits>

#include "detector_geometry.hpp"
#include "kestrel/detail/pyca_rules.hpp"
#include "orbslam_geometry.hpp"
#include "kestrel/device_image.hpp"

namespace kestrel {

void validate(const DetectorConfig& cfg, const char* where) {
    validate(cfg.pyramid, where);
    validate(cfg.fast, where);
    detail::check_range(where, "nms_radius", cfg.nms_radius, 1, 4);
    detail::check_range(where, "cell_width", cfg.cell_width, 32, 1024);
    if (cfg.cell_width % 32 != 0)
        detail::fail(where, "cell_width", "= " + detail::to_text(cfg.cell_width) + " must be a multiple of 32");
    detail::check_range(where, "cell_height", cfg.cell_height, 8, 1024);
    detail::check_range(where, "per_cell", cfg.per_cell, 1, kMaxPerCell);
    detail::check_range(where, "max_features", cfg.max_features, 0, kMaxFeaturesCap);
    detail::check_range(where, "border", cfg.border, 0, 64);
    detail::check_range(where, "threads", cfg.threads, 0, 256);
    if (cfg.selection != SelectionPolicy::Grid && cfg.selection != SelectionPolicy::PyCA &&
        cfg.selection != SelectionPolicy::OrbSlam && cfg.selection != SelectionPolicy::LevelHarris)
        detail::fail(where, "selection",
                     "must be SelectionPolicy::Grid, SelectionPolicy::PyCA, SelectionPolicy::OrbSlam or "
                     "SelectionPolicy::LevelHarris");
    if (detail::per_level_policy(cfg)) detail::validate_orbslam(cfg, where);
    if (cfg.selection == SelectionPolicy::PyCA) {
        for (int k = 0; k < cfg.pyramid.levels; ++k) {
            const int c = cfg.pyca.cell[static_cast<std::size_t>(k)];
            if (!detail::pyca_cell_valid(c))
                detail::fail(where, ("pyca.cell[" + detail::to_text(k) + "]").c_str(),
                             "= " + detail::to_text(c) + " must be a power of two in [" +
                                 detail::to_text(detail::kPycaMinCell) + ", " + detail::to_text(detail::kPycaMaxCell) +
                                 "]");
        }
        detail::check_range(where, "pyca.q", cfg.pyca.q, 1, detail::kPycaMaxQ);
        if (cfg.pyca.q % 2 == 0)
            detail::fail(where, "pyca.q", "= " + detail::to_text(cfg.pyca.q) + " must be odd");
    }
}

const char* to_string(SelectionPolicy p) {
    switch (p) {
        case SelectionPolicy::Grid: return "grid";
        case SelectionPolicy::PyCA: return "pyca";
        case SelectionPolicy::OrbSlam: return "orb-slam";
        case SelectionPolicy::LevelHarris: return "level-harris";
    }
    return "unknown";
}

Size2 grid_size(int width, int height, const DetectorConfig& cfg) {
    validate(cfg, "grid_size");
    detail::check_range("grid_size", "width", width, 1, kMaxImageSide);
    detail::check_range("grid_size", "height", height, 1, kMaxImageSide);
    return {(width + cfg.cell_width - 1) / cfg.cell_width, (height + cfg.cell_height - 1) / cfg.cell_height};
}

namespace {
// Enough pixels inside the border for one FAST circle, and every level at least 7x7.
void check_image_size(const char* where, const char* wname, const char* hname, int width, int height,
                      const DetectorConfig& cfg) {
    validate(cfg, where);
    detail::check_range(where, wname, width, 1, kMaxImageSide);
    detail::check_range(where, hname, height, 1, kMaxImageSide);
    const int need = 2 * cfg.border + kMinLevelSide;
    if (width < need)
        detail::fail(where, wname, "= " + detail::to_text(width) + " must be >= 2 * border + " +
                                       detail::to_text(kMinLevelSide) + " = " + detail::to_text(need));
    if (height < need)
        detail::fail(where, hname, "= " + detail::to_text(height) + " must be >= 2 * border + " +
                                       detail::to_text(kMinLevelSide) + " = " + detail::to_text(need));
}
}  // namespace

void validate_image_size(int width, int height, const DetectorConfig& cfg, const char* where) {
    check_image_size(where, "width", "height", width, height, cfg);
    (void)pyramid_sizes(width, height, cfg.pyramid);  // throws naming 'levels'
}

namespace detail {

GridGeometry grid_geometry(const char* where, int width, int height, const DetectorConfig& cfg) {
    check_image_size(where, "image.width", "image.height", width, height, cfg);
    const std::vector<Size2> sizes = pyramid_sizes(width, height, cfg.pyramid);  // throws naming 'levels'
    GridGeometry g;
    g.width = width;
    g.height = height;
    const Size2 grid = grid_size(width, height, cfg);
    g.cols = grid.width;
    g.rows = grid.height;
    g.levels = cfg.pyramid.levels;
    for (int k = 0; k < g.levels; ++k) {
        g.level_size[k] = sizes[static_cast<std::size_t>(k)];
        g.scale[k] = level_scale(cfg.pyramid, k);
    }
    const long long slots = static_cast<long long>(g.cols) * g.rows * cfg.per_cell;
    g.capacity = static_cast<int>(cfg.max_features > 0 && cfg.max_features < slots ? cfg.max_features : slots);
    if (per_level_policy(cfg)) g.capacity = cfg.max_features;  // the per-level budgets sum to max_features
    return g;
}

void check_cell_mask(const char* where, const GridGeometry& g, const std::uint8_t* cell_skip, Size2 cell_grid) {
    if (cell_skip == nullptr) return;
    if (cell_grid.width != g.cols || cell_grid.height != g.rows)
        fail(where, "masks.cell_grid",
             "= " + to_text(cell_grid.width) + "x" + to_text(cell_grid.height) + " must equal the cell grid " +
                 to_text(g.cols) + "x" + to_text(g.rows) + " of a " + to_text(g.width) + "x" + to_text(g.height) +
                 " image (grid_size())");
}

void fail_pixel_mask_size(const char* where, const GridGeometry& g, int w, int h) {
    fail(where, "masks.pixel_mask", "size " + to_text(w) + "x" + to_text(h) + " must equal the image size " +
                                        to_text(g.width) + "x" + to_text(g.height));
}

}  // namespace detail
}  // namespace kestrel
