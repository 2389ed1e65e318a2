// PyCA selection (pyramidal culling and aggregation) on hand-built score maps with known answers
// (culling per cell, aggregation across levels, the q x q NMS and its Pareto rule and tie-break, masks,
// per-cell budget, cap), on the CPU reference and on the CUDA kernels; both also against an independent
// oracle (scatter instead of gather, sorting with explicit comparators) on random maps full of ties over
// a parameter grid. Plus validation, and the whole detector on real images under both policies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>

#include "detector_test_util.hpp"
#include "kestrel/detail/pyca_rules.hpp"
#include "kestrel/error.hpp"
#include "kestrel/pyca_select.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using test::blank_maps;
using test::set_score;
using test::random_maps;

DetectorConfig pyca_config(int levels = 1, float scale = 2.0f, int cell = 8, int q = 3) {
    DetectorConfig c;
    c.selection = SelectionPolicy::PyCA;
    c.pyramid = {levels, scale};
    c.pyca.cell.fill(cell);
    c.pyca.q = q;
    c.cell_width = 32;
    c.cell_height = 32;
    c.per_cell = 8;
    return c;
}

std::string describe(const DetectorConfig& c) {
    std::string s = test::describe(c) + " pyca.cell=";
    for (int k = 0; k < c.pyramid.levels; ++k) s += std::to_string(c.pyca.cell[static_cast<std::size_t>(k)]) + ",";
    return s + " q=" + std::to_string(c.pyca.q);
}

Keypoint kp(float x, float y, float score, int level) { return {x, y, score, level}; }

/// Independent oracle of docs/detector.md's PyCA rules: survivors by sorting each cell's candidates,
/// aggregation by scattering survivors into a map keyed by level-0 pixel, the NMS over that map.
std::vector<Keypoint> oracle_pyca(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                  const DetectionMasks& masks = {}) {
    struct Cand {
        float score;
        int level, x, y;
    };
    const auto better = [](const Cand& a, const Cand& b) {
        if (a.score != b.score) return a.score > b.score;
        if (a.level != b.level) return a.level < b.level;
        if (a.y != b.y) return a.y < b.y;
        return a.x < b.x;
    };
    const int W = maps[0].width, H = maps[0].height;
    const int gcols = (W + cfg.cell_width - 1) / cfg.cell_width;
    const int grows = (H + cfg.cell_height - 1) / cfg.cell_height;
    const auto to0 = [&](int v, float s, int lim) { return std::min(static_cast<int>(static_cast<float>(v) * s), lim - 1); };
    // Survivors, scattered to level 0: (X0, Y0) -> survivors by level.
    std::map<std::pair<int, int>, std::vector<Cand>> at0;
    for (int k = 0; k < static_cast<int>(maps.size()); ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const float s = level_scale(cfg.pyramid, k);
        const int c = cfg.pyca.cell[static_cast<std::size_t>(k)];
        std::map<std::pair<int, int>, std::vector<Cand>> cells;
        for (int y = 0; y < m.height; ++y)
            for (int x = 0; x < m.width; ++x) {
                const float sp = m.at(x, y);
                if (sp <= 0.0f) continue;
                const int X0 = to0(x, s, W), Y0 = to0(y, s, H);
                if (X0 < cfg.border || X0 > W - 1 - cfg.border || Y0 < cfg.border || Y0 > H - 1 - cfg.border) continue;
                if (masks.cell_skip && masks.cell_skip[(Y0 / cfg.cell_height) * gcols + X0 / cfg.cell_width]) continue;
                if (masks.pixel_mask.data && masks.pixel_mask.row(Y0)[X0] == 0) continue;
                cells[{x / c, y / c}].push_back({sp, k, x, y});
            }
        for (auto& [id, v] : cells) {
            std::sort(v.begin(), v.end(), better);
            const Cand& b = v.front();
            at0[{to0(b.x, s, W), to0(b.y, s, H)}].push_back(b);
        }
    }
    struct Agg {
        float kr = 0.0f;
        int kl = 0;
        Cand rep{};
    };
    std::map<std::pair<int, int>, Agg> agg;
    for (auto& [p, v] : at0) {
        std::sort(v.begin(), v.end(), [](const Cand& a, const Cand& b) { return a.level < b.level; });
        Agg a;
        for (const Cand& c : v) a.kr += c.score;  // level order
        a.kl = static_cast<int>(v.size());
        a.rep = v.front();
        agg[p] = a;
    }
    const int r = cfg.pyca.q / 2;
    std::vector<std::vector<Cand>> gcells(static_cast<std::size_t>(gcols) * grows);
    for (const auto& [p, a] : agg) {
        bool suppressed = false;
        for (const auto& [q, b] : agg) {
            const int dx = q.first - p.first, dy = q.second - p.second;
            if ((dx == 0 && dy == 0) || std::abs(dx) > r || std::abs(dy) > r) continue;
            const bool tie = b.kr == a.kr && b.kl == a.kl;
            if (tie ? (dy < 0 || (dy == 0 && dx < 0)) : (b.kr >= a.kr && b.kl >= a.kl)) suppressed = true;
        }
        if (suppressed) continue;
        gcells[static_cast<std::size_t>((p.second / cfg.cell_height) * gcols + p.first / cfg.cell_width)].push_back(
            {a.kr, a.rep.level, a.rep.x, a.rep.y});
    }
    std::vector<Cand> kept;
    std::vector<std::vector<Cand>> top(gcells.size());
    for (std::size_t i = 0; i < gcells.size(); ++i) {
        std::sort(gcells[i].begin(), gcells[i].end(), better);
        if (static_cast<int>(gcells[i].size()) > cfg.per_cell) gcells[i].resize(static_cast<std::size_t>(cfg.per_cell));
        kept.insert(kept.end(), gcells[i].begin(), gcells[i].end());
    }
    bool capped = false;
    Cand last{};
    if (cfg.max_features > 0 && static_cast<int>(kept.size()) > cfg.max_features) {
        std::sort(kept.begin(), kept.end(), better);
        last = kept[static_cast<std::size_t>(cfg.max_features - 1)];
        capped = true;
    }
    std::vector<Keypoint> out;
    for (const auto& cell : gcells)
        for (const Cand& c : cell) {
            if (capped && better(last, c)) continue;
            const float s = level_scale(cfg.pyramid, c.level);
            out.push_back({static_cast<float>(c.x) * s, static_cast<float>(c.y) * s, c.score, c.level});
        }
    return out;
}

class Pyca : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        if (GetParam() == Backend::Cuda) KESTREL_REQUIRE_GPU();
    }
    std::vector<Keypoint> run(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                              const DetectionMasks& masks = {}) {
        auto out = GetParam() == Backend::Cuda ? detail::pyca_select_cuda(maps, cfg, masks)
                                               : detail::pyca_select_cpu(maps, cfg, masks);
        test::expect_same_keypoints(out, oracle_pyca(maps, cfg, masks), "vs oracle, " + describe(cfg));
        if (GetParam() == Backend::Cuda) {
            test::expect_same_keypoints(out, detail::pyca_select_cpu(maps, cfg, masks), "vs CPU, " + describe(cfg));
            EXPECT_EQ(detail::pyca_cull_cuda(maps, cfg, masks, detail::PycaReduction::Mlpt),
                      detail::pyca_cull_cpu(maps, cfg, masks))
                << "MLPT culling, " << describe(cfg);
            EXPECT_EQ(detail::pyca_cull_cuda(maps, cfg, masks, detail::PycaReduction::Tree),
                      detail::pyca_cull_cpu(maps, cfg, masks))
                << "tree culling, " << describe(cfg);
        }
        return out;
    }
};

TEST_P(Pyca, EmptyMapsGiveNothing) {
    const auto cfg = pyca_config(3);
    EXPECT_TRUE(run(blank_maps(100, 70, cfg), cfg).empty());
}

TEST_P(Pyca, CullingKeepsTheBestOfEachCell) {
    auto cfg = pyca_config(1, 2.0f, 8, 1);  // q = 1: no aggregation NMS
    auto maps = blank_maps(64, 40, cfg);
    set_score(maps[0], 10, 10, 20.0f);  // cell (1, 1): 30 wins over 20
    set_score(maps[0], 14, 12, 30.0f);
    set_score(maps[0], 17, 9, 25.0f);   // cell (2, 1): alone
    set_score(maps[0], 40, 20, 7.0f);   // cell (5, 2): a tie, the first in raster order (lower y) wins
    set_score(maps[0], 41, 19, 7.0f);
    test::expect_same_keypoints(run(maps, cfg), {kp(14, 12, 30, 0), kp(17, 9, 25, 0), kp(41, 19, 7, 0)},
                                "culling");
}

TEST_P(Pyca, AggregationSumsTheLevelsAtLevelZero) {
    auto cfg = pyca_config(2, 2.0f, 8, 3);
    auto maps = blank_maps(64, 48, cfg);
    set_score(maps[0], 10, 10, 20.0f);  // level 1 (5, 5) projects to (10, 10): K_r = 35, K_l = 2
    set_score(maps[1], 5, 5, 15.0f);
    set_score(maps[1], 20, 12, 9.0f);   // level 1 alone: (40, 24), level 1, score 9
    test::expect_same_keypoints(run(maps, cfg), {kp(10, 10, 35, 0), kp(40, 24, 9, 1)}, "aggregation");
}

TEST_P(Pyca, QNmsSuppressesADominatedNeighbourOnly) {
    auto cfg = pyca_config(2, 2.0f, 8, 3);
    auto maps = blank_maps(96, 48, cfg);
    set_score(maps[0], 15, 10, 20.0f);  // level-0 cells 1 and 2, adjacent: 30 suppresses 20
    set_score(maps[0], 16, 10, 30.0f);
    set_score(maps[0], 39, 20, 12.0f);  // a tie next door: the first in raster order survives
    set_score(maps[0], 40, 21, 12.0f);
    set_score(maps[0], 64, 30, 10.0f);  // (64, 30): 10 + level 1 (32, 15) 12 = 22 from two levels beats
    set_score(maps[1], 32, 15, 12.0f);  //   its neighbour (63, 31), 20 from one level
    set_score(maps[0], 63, 31, 20.0f);
    test::expect_same_keypoints(run(maps, cfg), {kp(16, 10, 30, 0), kp(39, 20, 12, 0), kp(64, 30, 22, 0)}, "q nms");
    cfg.pyca.q = 1;  // no suppression: every representative stays
    test::expect_same_keypoints(run(maps, cfg),
                                {kp(16, 10, 30, 0), kp(15, 10, 20, 0), kp(63, 31, 20, 0), kp(39, 20, 12, 0),
                                 kp(40, 21, 12, 0), kp(64, 30, 22, 0)},
                                "q = 1");
}

TEST_P(Pyca, ParetoNeighboursBothSurvive) {
    auto cfg = pyca_config(2, 2.0f, 8, 3);
    auto maps = blank_maps(64, 48, cfg);
    set_score(maps[0], 23, 20, 30.0f);  // P = (23, 20): K_r 30, K_l 1 (level-0 cells 2 and 3: both survive culling)
    set_score(maps[0], 24, 20, 10.0f);  // Q = (24, 20): 10 + 15 (level 1 (12, 10)) = 25, K_l 2
    set_score(maps[1], 12, 10, 15.0f);
    test::expect_same_keypoints(run(maps, cfg), {kp(23, 20, 30, 0), kp(24, 20, 25, 0)}, "pareto");
}

TEST_P(Pyca, MasksApplyBeforeCulling) {
    auto cfg = pyca_config(1, 2.0f, 16, 3);
    auto maps = blank_maps(96, 64, cfg);
    set_score(maps[0], 10, 10, 50.0f);  // masked by the pixel mask: 20 in the same PyCA cell survives
    set_score(maps[0], 4, 4, 20.0f);
    set_score(maps[0], 40, 10, 60.0f);  // grid cell 1: skipped
    set_score(maps[0], 70, 40, 5.0f);   // grid cell 5
    HostImage mask(96, 64, 1);
    mask.at(10, 10) = 0;
    std::uint8_t skip[6] = {0, 1, 0, 0, 0, 0};
    DetectionMasks m;
    m.cell_skip = skip;
    m.cell_grid = {3, 2};
    m.pixel_mask = mask.view();
    test::expect_same_keypoints(run(maps, cfg, m), {kp(4, 4, 20, 0), kp(70, 40, 5, 0)}, "masks");
    test::expect_same_keypoints(run(maps, cfg), {kp(10, 10, 50, 0), kp(40, 10, 60, 0), kp(70, 40, 5, 0)}, "no masks");
}

TEST_P(Pyca, PerCellBudgetAndCapByAggregatedScore) {
    auto cfg = pyca_config(1, 2.0f, 8, 1);
    cfg.per_cell = 2;
    auto maps = blank_maps(64, 32, cfg);
    set_score(maps[0], 3, 3, 10.0f);   // grid cell 0 holds four PyCA cells' survivors: best two stay
    set_score(maps[0], 12, 3, 40.0f);
    set_score(maps[0], 20, 20, 30.0f);
    set_score(maps[0], 28, 28, 20.0f);
    set_score(maps[0], 40, 5, 35.0f);  // grid cell 1
    test::expect_same_keypoints(run(maps, cfg), {kp(12, 3, 40, 0), kp(20, 20, 30, 0), kp(40, 5, 35, 0)}, "budget");
    cfg.max_features = 2;
    test::expect_same_keypoints(run(maps, cfg), {kp(12, 3, 40, 0), kp(40, 5, 35, 0)}, "cap");
}


TEST_P(Pyca, RandomTiedMapsMatchTheOracle) {
    int trial = 0;
    const int cells[] = {8, 16, 32, 64, 128};
    for (const int levels : {1, 2, 4, 8})
        for (const float scale : {2.0f, 1.2f, 1.5f})
            for (const int q : {1, 3, 5}) {
                DetectorConfig cfg = pyca_config(levels, scale, 8, q);
                for (int k = 0; k < kMaxLevels; ++k) cfg.pyca.cell[static_cast<std::size_t>(k)] = cells[(trial + k) % 5];
                cfg.per_cell = 1 + (trial * 3) % 8;
                cfg.cell_width = trial % 2 ? 64 : 32;
                cfg.cell_height = trial % 3 ? 48 : 8;
                cfg.max_features = trial % 4 == 1 ? 37 : (trial % 4 == 3 ? 400 : 0);
                cfg.border = trial % 5;
                const int w = levels == 8 ? 300 + 7 * (trial % 5) : 97 + 13 * (trial % 7);
                const int h = levels == 8 ? 200 + 5 * (trial % 3) : 61 + 11 * (trial % 5);
                DetectorConfig fits = cfg;  // as many of the levels as the image allows (8 of factor 2 do not fit)
                for (;;) {
                    try {
                        (void)pyramid_sizes(w, h, fits.pyramid);
                        break;
                    } catch (const InvalidArgument&) {
                        --fits.pyramid.levels;
                    }
                }
                const auto maps = random_maps(w, h, fits, static_cast<std::uint32_t>(trial + 1), 0.3f);
                SCOPED_TRACE(describe(fits) + " size " + std::to_string(w) + "x" + std::to_string(h));
                run(maps, fits);
                ++trial;
            }
}

TEST_P(Pyca, RandomMapsWithMasksMatchTheOracle) {
    for (int trial = 0; trial < 6; ++trial) {
        DetectorConfig cfg = pyca_config(1 + trial % 3, trial % 2 ? 1.2f : 2.0f, 8 << (trial % 3), 3);
        cfg.per_cell = 1 + trial;
        const int w = 150 + 17 * trial, h = 100 + 9 * trial;
        const auto maps = random_maps(w, h, cfg, static_cast<std::uint32_t>(50 + trial), 0.2f);
        const Size2 grid = grid_size(w, h, cfg);
        std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width * grid.height));
        for (std::size_t i = 0; i < skip.size(); ++i) skip[i] = (i * 7 + static_cast<std::size_t>(trial)) % 5 == 0;
        HostImage mask(w, h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) mask.at(x, y) = ((x / 5 + y / 7 + trial) % 4) != 0;
        DetectionMasks m;
        m.cell_skip = skip.data();
        m.cell_grid = grid;
        m.pixel_mask = mask.view();
        SCOPED_TRACE(describe(cfg));
        run(maps, cfg, m);
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, Pyca, ::testing::Values(Backend::Cpu, Backend::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(PycaRules, LevelCoordinateIsTheInverseProjection) {
    for (const float factor : {2.0f, 1.2f, 1.5f})
        for (int k = 0; k < 8; ++k) {
            const float s = level_scale({kMaxLevels, factor}, k);
            const int W = 751, len = static_cast<int>(W / s);
            std::vector<int> hit(static_cast<std::size_t>(W), -1);
            for (int v = 0; v < len; ++v) hit[static_cast<std::size_t>(detail::level0_pixel(v, s, W))] = v;
            for (int P = 0; P < W; ++P)
                ASSERT_EQ(detail::pyca_level_coord(P, s, len, W), hit[static_cast<std::size_t>(P)])
                    << "factor " << factor << " level " << k << " P " << P;
        }
}

TEST(PycaRules, DominanceIsParetoWithTheRasterTieBreak) {
    const detail::PycaAggregate p{30.0f, 1, 1};
    EXPECT_TRUE(detail::pyca_dominates({31.0f, 1, 1}, p, 1, 1));
    EXPECT_TRUE(detail::pyca_dominates({30.0f, 2, 1}, p, 1, 1));
    EXPECT_FALSE(detail::pyca_dominates({29.0f, 2, 1}, p, -1, -1));   // more levels, less response
    EXPECT_FALSE(detail::pyca_dominates({31.0f, 0, 0}, p, -1, -1));   // nothing there
    EXPECT_TRUE(detail::pyca_dominates({30.0f, 1, 1}, p, 1, -1));     // tie: the earlier row wins
    EXPECT_TRUE(detail::pyca_dominates({30.0f, 1, 1}, p, -1, 0));
    EXPECT_FALSE(detail::pyca_dominates({30.0f, 1, 1}, p, 1, 0));
    EXPECT_FALSE(detail::pyca_dominates({30.0f, 1, 1}, p, -1, 1));
}

// Bad PyCA fields (pyca.cell, pyca.q, selection) and bad maps or masks given to the PyCA stage: rows pyca_* of the
// bad-input table (tests/core/test_bad_input.cpp, docs/bad-input.md). Here the values that are not errors.
TEST(PycaConfig, FieldsBeyondTheLevelsAndUnderTheGridPolicyAreNotChecked) {
    DetectorConfig c = pyca_config(3, 1.2f);
    validate(c);
    c.pyca.cell[5] = 3;  // beyond the levels: ignored
    EXPECT_NO_THROW(validate(c));
    c = DetectorConfig{};
    c.pyca.q = 2;  // PyCA's fields are not checked under the grid policy
    EXPECT_NO_THROW(validate(c));
}

TEST(PycaDetector, RealImagesBothPyramidsAreDeterministicAndSpread) {
    for (const std::string name : {"graf1.png", "graf3.png", "box.png"}) {
        const HostImage img = test::real_image(name);
        for (const PyramidConfig pyr : {PyramidConfig{8, 1.2f}, PyramidConfig{2, 2.0f}}) {
            DetectorConfig cfg = pyca_config(pyr.levels, pyr.scale, 16, 3);
            cfg.per_cell = 4;
            const auto a = detect_cpu(img.view(), cfg);
            const auto b = FeatureDetector(cfg, Backend::Cpu).detect(img.view());
            test::expect_same_keypoints(a, b, name);
            ASSERT_GT(a.size(), 50u) << name;
            int levels_used = 0;
            for (int k = 0; k < pyr.levels; ++k)
                levels_used += std::any_of(a.begin(), a.end(), [k](const Keypoint& p) { return p.level == k; });
            EXPECT_GE(levels_used, 2) << name;
            for (const Keypoint& p : a) {
                ASSERT_TRUE(p.x >= 0 && p.x < img.width() && p.y >= 0 && p.y < img.height()) << test::describe(p);
                ASSERT_GT(p.score, 0.0f);
            }
            // The level-0 budget holds: at most per_cell per grid cell.
            const Size2 grid = grid_size(img.width(), img.height(), cfg);
            std::vector<int> count(static_cast<std::size_t>(grid.width * grid.height), 0);
            for (const Keypoint& p : a)
                ++count[static_cast<std::size_t>(static_cast<int>(p.y) / cfg.cell_height * grid.width +
                                                 static_cast<int>(p.x) / cfg.cell_width)];
            EXPECT_LE(*std::max_element(count.begin(), count.end()), cfg.per_cell) << name;
        }
    }
}

}  // namespace
}  // namespace kestrel
