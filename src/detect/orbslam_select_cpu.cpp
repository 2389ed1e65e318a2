// CPU reference of the per-level policies (SelectionPolicy::OrbSlam, LevelHarris): the definition the CUDA
// kernels (kernels/detect/orbslam_select.cu) match bit for bit. Rules: include/kestrel/detail/orbslam_rules.hpp.
// Written to be read against the rules: a cell's candidates, then the quadtree as a list of nodes holding
// their keys (or the level's best keys), then the level's best N_l.
#include <algorithm>
#include <functional>

#include "orbslam_geometry.hpp"

namespace kestrel::detail {
namespace {

/// Step 3 for one level: the MT keys of every cell's candidates (cell by cell).
void level_candidates(const OrbSlamGeometry& o, int k, const GridGeometry& g, const ScoreMap& map,
                      const DetectorConfig& cfg, const std::uint8_t* cell_skip, HostView pixel_mask,
                      std::vector<std::uint64_t>& keys) {
    const OrbSlamCells& c = o.cells[k];
    const auto score = [&map](int x, int y) { return map.at(x, y); };
    const int thresholds[2] = {cfg.orbslam.threshold_initial, o.harris ? cfg.orbslam.threshold_initial
                                                                       : cfg.orbslam.threshold_min};
    for (int i = 0; i < c.rows; ++i)
        for (int j = 0; j < c.cols; ++j) {
            int x0, x1, y0, y1;
            orbslam_cell_rect(c, j, i, x0, x1, y0, y1);
            // The suppression window: the cell (OrbSlam), the whole level (LevelHarris).
            const int nx0 = o.harris ? 0 : x0, nx1 = o.harris ? map.width : x1;
            const int ny0 = o.harris ? 0 : y0, ny1 = o.harris ? map.height : y1;
            for (int t : thresholds) {
                bool found = false;
                for (int y = y0; y < y1; ++y)
                    for (int x = x0; x < x1; ++x) {
                        if (!orbslam_is_maximum(score, x, y, nx0, nx1, ny0, ny1, t)) continue;
                        if (!orbslam_eligible(x, y, g.scale[k], g.width, g.height, cfg.border, cell_skip,
                                              cfg.cell_width, cfg.cell_height, g.cols, pixel_mask.data,
                                              pixel_mask.pitch))
                            continue;
                        found = true;
                        keys.push_back(keypoint_key(map.at(x, y), k, x, y));
                    }
                if (found) break;  // the fallback threshold only where the first found nothing
            }
        }
}

/// Step 5, LevelHarris: the best 2 N_l keys by MT, then their Harris keys (positive responses only).
std::vector<std::uint64_t> harris_ranked(int k, int budget, const HostImage& level, std::vector<std::uint64_t> keys) {
    std::sort(keys.begin(), keys.end(), std::greater<std::uint64_t>());
    const std::size_t keep = static_cast<std::size_t>(orbslam_harris_pool(budget));
    if (keys.size() > keep) keys.resize(keep);
    const HostView im = level.view();
    const auto pixel = [&im](int x, int y) { return static_cast<int>(im.row(y)[x]); };
    std::vector<std::uint64_t> out;
    for (std::uint64_t key : keys) {
        const float r = orbslam_harris(pixel, key_x(key), key_y(key));
        if (r > 0.0f) out.push_back(keypoint_key(r, k, key_x(key), key_y(key)));
    }
    return out;
}

struct Node {
    QuadRect r;
    std::vector<std::uint64_t> keys;
};

/// Step 5, the quadtree: the best key of every final node.
std::vector<std::uint64_t> quadtree(const OrbSlamCells& c, int roots, int budget, const std::vector<std::uint64_t>& keys) {
    std::vector<Node> nodes;
    {
        std::vector<Node> root(static_cast<std::size_t>(roots));
        for (int i = 0; i < roots; ++i) root[static_cast<std::size_t>(i)].r = orbslam_root(c, i, roots);
        for (std::uint64_t key : keys) root[static_cast<std::size_t>(orbslam_root_of(c, roots, key_x(key)))].keys.push_back(key);
        for (Node& n : root)
            if (!n.keys.empty()) nodes.push_back(std::move(n));
    }
    for (;;) {
        std::vector<std::size_t> e;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (nodes[i].keys.size() >= 2) e.push_back(i);
        if (e.empty() || static_cast<int>(nodes.size()) >= budget) break;
        std::sort(e.begin(), e.end(), [&nodes](std::size_t a, std::size_t b) {
            return orbslam_splits_before(static_cast<int>(nodes[a].keys.size()), nodes[a].r,
                                         static_cast<int>(nodes[b].keys.size()), nodes[b].r);
        });
        std::vector<bool> split(nodes.size(), false);
        std::vector<Node> children;
        int live = static_cast<int>(nodes.size());
        for (std::size_t i : e) {
            if (live >= budget) break;
            Node q[4];
            for (int d = 0; d < 4; ++d) q[d].r = orbslam_child(nodes[i].r, d);
            for (std::uint64_t key : nodes[i].keys) q[orbslam_quadrant(nodes[i].r, key_x(key), key_y(key))].keys.push_back(key);
            split[i] = true;
            --live;
            for (Node& n : q)
                if (!n.keys.empty()) {
                    children.push_back(std::move(n));
                    ++live;
                }
        }
        std::vector<Node> next;
        for (std::size_t i = 0; i < nodes.size(); ++i)
            if (!split[i]) next.push_back(std::move(nodes[i]));
        for (Node& n : children) next.push_back(std::move(n));
        nodes = std::move(next);
    }
    std::vector<std::uint64_t> best;
    for (const Node& n : nodes) best.push_back(*std::max_element(n.keys.begin(), n.keys.end()));
    return best;
}

}  // namespace

std::vector<Keypoint> orbslam_select_reference(const GridGeometry& g, const std::vector<ScoreMap>& maps,
                                               const std::vector<HostImage>& pyramid, const DetectorConfig& cfg,
                                               const std::uint8_t* cell_skip, HostView pixel_mask) {
    const OrbSlamGeometry o = orbslam_geometry(g, cfg);
    std::vector<Keypoint> out;
    std::vector<std::uint64_t> keys;
    for (int k = 0; k < g.levels; ++k) {
        keys.clear();
        level_candidates(o, k, g, maps[static_cast<std::size_t>(k)], cfg, cell_skip, pixel_mask, keys);
        std::vector<std::uint64_t> best = o.harris ? harris_ranked(k, o.budget[k], pyramid[static_cast<std::size_t>(k)], keys)
                                                   : quadtree(o.cells[k], o.roots[k], o.budget[k], keys);
        std::sort(best.begin(), best.end(), std::greater<std::uint64_t>());
        if (static_cast<int>(best.size()) > o.budget[k]) best.resize(static_cast<std::size_t>(o.budget[k]));
        for (std::uint64_t key : best)
            out.push_back(Keypoint{level0_coord(key_x(key), g.scale[k]), level0_coord(key_y(key), g.scale[k]),
                                   key_score(key), k});
    }
    return out;
}

}  // namespace kestrel::detail
