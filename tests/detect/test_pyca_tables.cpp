// The PyCA aggregation as the CUDA kernel organises it, checked on the CPU: the coordinate tables it reads
// (pyca_coord_tables) equal the rule (PycaRuleCoords) for every level-0 column and row, and the kernel's
// decomposition -- per level-0 grid cell, the culling cells overlapping its rectangle on every level, their
// survivors inside it listed in rounds of 256, each survivor's q x q window of aggregates through the tables,
// the rules' tests, the cell's best K -- emulated step for step gives exactly pyca_select_reference's list on
// real images over pyramids, culling cells, q (multiple evaluation rounds), grid cells (multiple list rounds)
// and masks.
#include <gtest/gtest.h>

#include <algorithm>

#include "detector_test_util.hpp"
#include "kestrel/detail/pyca_rules.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/pyca_select.hpp"
#include "kestrel/pyramid.hpp"
#include "src/detect/pyca_geometry.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

struct HostTableCoords {
    const std::int16_t* xs;
    const std::int16_t* ys;
    int width, height;
    int x(int j, int X0) const { return xs[j * width + X0]; }
    int y(int j, int Y0) const { return ys[j * height + Y0]; }
};

DetectorConfig pyca_config(PyramidConfig pyr, int cell, int q, int cw, int ch, int K) {
    DetectorConfig c;
    c.selection = SelectionPolicy::PyCA;
    c.pyramid = pyr;
    c.pyca.cell.fill(cell);
    c.pyca.q = q;
    c.cell_width = cw;
    c.cell_height = ch;
    c.per_cell = K;
    c.fast.threshold = 10;
    return c;
}

/// The kernel's algorithm (kernels/detect/pyca.cu, pyca_aggregate_kernel), one grid cell after the other.
std::vector<Keypoint> emulate_kernel(const detail::GridGeometry& g, const DetectorConfig& cfg,
                                     const std::vector<std::uint64_t>& survivors, const std::uint8_t* cell_skip,
                                     int* max_list_rounds, int* max_eval_rounds) {
    using namespace detail;
    const PycaGeometry pg = pyca_geometry(g, cfg);
    const std::vector<std::int16_t> tables = pyca_coord_tables(pg);
    const HostTableCoords coords{tables.data(), tables.data() + static_cast<std::size_t>(pg.levels) * pg.width,
                                 pg.width, pg.height};
    const std::uint64_t* sv = survivors.data();
    const int K = cfg.per_cell, q = pg.q, qq = q * q, r = q / 2, centre = qq / 2, per_round = 256 / qq;
    std::vector<std::uint64_t> slots(static_cast<std::size_t>(g.cells()) * K, 0);
    for (int cell = 0; cell < g.cells(); ++cell) {
        if (cell_skip && cell_skip[cell]) continue;
        const int cx = cell % g.cols, cy = cell / g.cols;
        int rect[kMaxLevels][4], begin[kMaxLevels + 1], n = 0;
        for (int k = 0; k < pg.levels; ++k) {
            rect[k][0] = cell_begin(cx, cfg.cell_width, g.scale[k], pg.level_w[k], g.width);
            rect[k][1] = cell_begin(cx + 1, cfg.cell_width, g.scale[k], pg.level_w[k], g.width);
            rect[k][2] = cell_begin(cy, cfg.cell_height, g.scale[k], pg.level_h[k], g.height);
            rect[k][3] = cell_begin(cy + 1, cfg.cell_height, g.scale[k], pg.level_h[k], g.height);
            begin[k] = n;
            const int c = pg.cell[k];
            if (rect[k][1] > rect[k][0] && rect[k][3] > rect[k][2])
                n += ((rect[k][1] - 1) / c - rect[k][0] / c + 1) * ((rect[k][3] - 1) / c - rect[k][2] / c + 1);
        }
        begin[pg.levels] = n;
        for (int base = 0; base < n; base += 256) {
            *max_list_rounds = std::max(*max_list_rounds, base / 256 + 1);
            std::vector<std::uint64_t> list;
            for (int i = base; i < std::min(n, base + 256); ++i) {
                int k = 0;
                while (i >= begin[k + 1]) ++k;
                const int c = pg.cell[k];
                const int px0 = rect[k][0] / c, py0 = rect[k][2] / c, pw = (rect[k][1] - 1) / c - px0 + 1;
                const int local = i - begin[k];
                const std::uint64_t key = sv[pg.offset[k] + (py0 + local / pw) * pg.cols[k] + px0 + local % pw];
                const int x = key_x(key), y = key_y(key);
                if (key != 0 && x >= rect[k][0] && x < rect[k][1] && y >= rect[k][2] && y < rect[k][3])
                    list.push_back(key);
            }
            std::reverse(list.begin(), list.end());  // any order (the kernel lists by atomics)
            for (std::size_t s0 = 0; s0 < list.size(); s0 += static_cast<std::size_t>(per_round)) {
                *max_eval_rounds = std::max(*max_eval_rounds, static_cast<int>(s0 / per_round) + 1);
                for (std::size_t s = s0; s < std::min(list.size(), s0 + per_round); ++s) {
                    const std::uint64_t key = list[s];
                    const int k = key_level(key);
                    std::vector<PycaAggregate> agg(static_cast<std::size_t>(qq));
                    for (int w = 0; w < qq; ++w) {
                        const int X = level0_pixel(key_x(key), g.scale[k], g.width) + w % q - r;
                        const int Y = level0_pixel(key_y(key), g.scale[k], g.height) + w / q - r;
                        agg[static_cast<std::size_t>(w)] = X >= 0 && Y >= 0 && X < g.width && Y < g.height
                                                               ? pyca_aggregate_at(pg, sv, coords, X, Y)
                                                               : PycaAggregate{0.0f, 0, 0};
                    }
                    const PycaAggregate& a = agg[static_cast<std::size_t>(centre)];
                    if (a.rep != key) continue;
                    bool suppressed = false;
                    for (int v = 0; v < qq && !suppressed; ++v)
                        suppressed = v != centre && pyca_dominates(agg[static_cast<std::size_t>(v)], a, v % q - r, v / q - r);
                    if (!suppressed)
                        insert_best_first(&slots[static_cast<std::size_t>(cell) * K], K,
                                          keypoint_key(a.kr, k, key_x(key), key_y(key)));
                }
            }
        }
    }
    return finish_selection(g, slots, cfg.max_features);
}

TEST(PycaTables, CoordinateTablesEqualTheRule) {
    int checked = 0;
    for (const PyramidConfig pyr : {PyramidConfig{8, 1.2f}, PyramidConfig{2, 2.0f}, PyramidConfig{5, 1.5f}})
        for (const Size2 sz : {Size2{752, 480}, Size2{641, 479}, Size2{97, 603}}) {
            const DetectorConfig cfg = pyca_config(pyr, 16, 3, 32, 32, 4);
            const detail::GridGeometry g = detail::grid_geometry("test", sz.width, sz.height, cfg);
            const detail::PycaGeometry pg = detail::pyca_geometry(g, cfg);
            const std::vector<std::int16_t> t = detail::pyca_coord_tables(pg);
            ASSERT_EQ(t.size(), static_cast<std::size_t>(pg.levels) * (pg.width + pg.height));
            const detail::PycaRuleCoords rule{pg};
            for (int j = 0; j < pg.levels; ++j) {
                for (int X = 0; X < pg.width; ++X) ASSERT_EQ(t[static_cast<std::size_t>(j * pg.width + X)], rule.x(j, X));
                for (int Y = 0; Y < pg.height; ++Y)
                    ASSERT_EQ(t[static_cast<std::size_t>(pg.levels * pg.width + j * pg.height + Y)], rule.y(j, Y));
                checked += pg.width + pg.height;
            }
        }
    EXPECT_GT(checked, 40000);
}

TEST(PycaTables, KernelDecompositionEqualsTheReference) {
    struct Case {
        PyramidConfig pyr;
        int cell, q, cw, ch, K, max_features;
        bool masks;
    };
    const Case cases[] = {
        {{8, 1.2f}, 16, 3, 32, 32, 4, 0, false},   {{2, 2.0f}, 16, 3, 32, 32, 4, 0, true},
        {{8, 1.2f}, 8, 9, 96, 40, 8, 150, false},  {{3, 1.5f}, 8, 7, 1024, 1024, 8, 0, true},
        {{2, 2.0f}, 8, 5, 512, 256, 3, 0, false},  {{1, 2.0f}, 32, 1, 32, 8, 1, 0, false},
        {{8, 1.2f}, 64, 9, 64, 48, 2, 100, true},
    };
    int list_rounds = 0, eval_rounds = 0;
    std::size_t keypoints = 0;
    for (const char* file : {"graf1.png", "vtest_000.png"})
        for (const Case& c : cases) {
            const HostImage img = test::crop(test::real_image(file), 3, 5, 701, 451);
            DetectorConfig cfg = pyca_config(c.pyr, c.cell, c.q, c.cw, c.ch, c.K);
            cfg.max_features = c.max_features;
            const detail::GridGeometry g = detail::grid_geometry("test", img.width(), img.height(), cfg);
            std::vector<std::uint8_t> skip(static_cast<std::size_t>(g.cells()));
            for (std::size_t i = 0; i < skip.size(); ++i) skip[i] = c.masks && i % 3 == 0;
            const std::vector<ScoreMap> maps = fast_score_maps_cpu(build_pyramid_cpu(img.view(), cfg.pyramid), cfg.fast);
            DetectionMasks m;
            if (c.masks) {
                m.cell_skip = skip.data();
                m.cell_grid = {g.cols, g.rows};
            }
            const std::vector<Keypoint> want = detail::pyca_select_cpu(maps, cfg, m);
            const std::vector<std::uint64_t> survivors = detail::pyca_cull_cpu(maps, cfg, m);
            const std::vector<Keypoint> got =
                emulate_kernel(g, cfg, survivors, c.masks ? skip.data() : nullptr, &list_rounds, &eval_rounds);
            SCOPED_TRACE(std::string(file) + " " + test::describe(cfg) + " q=" + std::to_string(c.q));
            test::expect_same_keypoints(got, want, "kernel decomposition");
            keypoints += want.size();
        }
    EXPECT_GE(list_rounds, 2);  // some grid cell overlaps more than 256 culling cells
    EXPECT_GE(eval_rounds, 2);  // some round holds more survivors than 256 / q^2
    EXPECT_GT(keypoints, 2000u);
}

}  // namespace
}  // namespace kestrel
