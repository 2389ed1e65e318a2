// The per-level policies (SelectionPolicy::OrbSlam, LevelHarris; rules: detail/orbslam_rules.hpp): the rules
// against known answers, the CPU reference on generated score maps with known results (fallback threshold,
// suppression window, quadtree spread, budgets), LevelHarris' responses against the Harris score map, real
// images (budgets filled, order, border, thread counts) and bad configurations. GPU == CPU:
// tests/detect/test_orbslam_cuda.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "detector_test_util.hpp"
#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "src/detect/orbslam_geometry.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

DetectorConfig policy(SelectionPolicy s, int features, PyramidConfig pyr = {8, 1.2f}) {
    DetectorConfig c;
    c.selection = s;
    c.pyramid = pyr;
    c.max_features = features;
    return c;
}

TEST(OrbSlamRules, BudgetsAreOrbSlamsGeometricSplit) {
    int b[kMaxLevels];
    detail::orbslam_level_budgets(1000, 8, 1.2f, b);
    const int want[8] = {217, 181, 151, 126, 105, 87, 73, 60};  // N (1 - f) / (1 - f^8) f^l rounded, rest last
    for (int l = 0; l < 8; ++l) EXPECT_EQ(b[l], want[l]) << "level " << l;
    detail::orbslam_level_budgets(1000, 1, 1.2f, b);
    EXPECT_EQ(b[0], 1000);
    for (int n : {1, 3, 10, 999, 5000}) {
        detail::orbslam_level_budgets(n, 8, 1.2f, b);
        EXPECT_EQ(std::accumulate(b, b + 8, 0), n);
        for (int l = 0; l < 8; ++l) EXPECT_GE(b[l], 0);
    }
}

TEST(OrbSlamRules, CellsTileTheRegionExactly) {
    for (const Size2 s : {Size2{752, 480}, Size2{333, 217}, Size2{61, 40}, Size2{1000, 39}, Size2{4000, 70}}) {
        for (int cell : {16, 30, 64}) {
            const detail::OrbSlamCells c = detail::orbslam_cells(s.width, s.height, 19, cell);
            if (s.height <= 38) {
                EXPECT_EQ(c.count(), 0);
                continue;
            }
            std::vector<int> hits(static_cast<std::size_t>(s.width) * s.height, 0);
            for (int i = 0; i < c.rows; ++i)
                for (int j = 0; j < c.cols; ++j) {
                    int x0, x1, y0, y1;
                    detail::orbslam_cell_rect(c, j, i, x0, x1, y0, y1);
                    EXPECT_LE(x1 - x0, std::max(cell * 2, c.cw));
                    for (int y = y0; y < y1; ++y)
                        for (int x = x0; x < x1; ++x) ++hits[static_cast<std::size_t>(y) * s.width + x];
                }
            for (int y = 0; y < s.height; ++y)
                for (int x = 0; x < s.width; ++x) {
                    const bool in = x >= 19 && x < s.width - 19 && y >= 19 && y < s.height - 19;
                    ASSERT_EQ(hits[static_cast<std::size_t>(y) * s.width + x], in ? 1 : 0) << x << "," << y;
                }
        }
    }
    const detail::OrbSlamCells c = detail::orbslam_cells(752, 480, 19, 30);
    EXPECT_EQ(c.cols, 23);  // 714 / 30
    EXPECT_EQ(c.cw, 32);    // ceil(714 / 23)
    EXPECT_EQ(c.rows, 14);  // 442 / 30
}

TEST(OrbSlamRules, RootsPartitionTheRegionAndQuadrantsTheirNode) {
    const detail::OrbSlamCells c = detail::orbslam_cells(1001, 300, 19, 30);  // 963 x 262: round(3.68) = 4 roots
    const int n = detail::orbslam_root_count(c);
    EXPECT_EQ(n, 4);
    for (int x = c.b; x < c.b + c.rw; ++x) {
        const int r = detail::orbslam_root_of(c, n, x);
        const detail::QuadRect q = detail::orbslam_root(c, r, n);
        ASSERT_TRUE(x >= q.x0 && x < q.x1) << x;
    }
    const detail::QuadRect r{10, 20, 17, 25};  // 7 x 5: split at x = 14, y = 23
    for (int y = r.y0; y < r.y1; ++y)
        for (int x = r.x0; x < r.x1; ++x) {
            const detail::QuadRect ch = detail::orbslam_child(r, detail::orbslam_quadrant(r, x, y));
            ASSERT_TRUE(x >= ch.x0 && x < ch.x1 && y >= ch.y0 && y < ch.y1);
        }
    EXPECT_EQ(detail::orbslam_child(r, 3).x0, 14);
    EXPECT_EQ(detail::orbslam_child(r, 3).y0, 23);
}

/// The reference on given maps of a w x h one-level image (flat pyramid: LevelHarris reads it).
std::vector<Keypoint> select(const DetectorConfig& cfg, const std::vector<ScoreMap>& maps, int w, int h,
                             const DetectionMasks& masks = {}) {
    const detail::GridGeometry g = detail::grid_geometry("test", w, h, cfg);
    std::vector<HostImage> pyr;
    for (const ScoreMap& m : maps) pyr.emplace_back(m.width, m.height, 100);
    return detail::orbslam_select_reference(g, maps, pyr, cfg, masks.cell_skip, masks.pixel_mask);
}

void put(ScoreMap& m, int x, int y, float s) { m.scores[static_cast<std::size_t>(y) * m.width + x] = s; }

TEST(OrbSlamSelect, FallbackThresholdOnlyWhereTheCellFoundNothing) {
    DetectorConfig cfg = policy(SelectionPolicy::OrbSlam, 100, {1, 2.0f});
    cfg.orbslam.cell = 20;
    cfg.orbslam.border = 10;
    auto maps = test::blank_maps(50, 30, cfg);  // region 30 x 10: one row of cells, cols = 1 (30 / 20)
    put(maps[0], 15, 14, 9.0f);                 // weak corner alone in the only cell: kept by the fallback
    auto kp = select(cfg, maps, 50, 30);
    ASSERT_EQ(kp.size(), 1u);
    EXPECT_EQ(kp[0].x, 15.0f);
    put(maps[0], 30, 15, 25.0f);  // a strong corner in the same cell: the weak one goes
    kp = select(cfg, maps, 50, 30);
    ASSERT_EQ(kp.size(), 1u);
    EXPECT_EQ(kp[0].x, 30.0f);
    EXPECT_EQ(kp[0].score, 25.0f);
    cfg.orbslam.threshold_min = 10;  // 9 is below the fallback threshold too
    put(maps[0], 30, 15, 0.0f);
    EXPECT_TRUE(select(cfg, maps, 50, 30).empty());
}

TEST(OrbSlamSelect, SuppressionWindowIsTheCellForOrbSlamAndTheLevelForLevelHarris) {
    DetectorConfig cfg = policy(SelectionPolicy::OrbSlam, 100, {1, 2.0f});
    cfg.orbslam.cell = 16;
    cfg.orbslam.border = 8;
    auto maps = test::blank_maps(48, 40, cfg);  // region 32 x 24: 2 x 1 cells of 16 x 24, boundary at x = 24
    put(maps[0], 23, 20, 30.0f);
    put(maps[0], 24, 20, 40.0f);  // neighbours across the boundary: both maxima of their cells
    put(maps[0], 12, 12, 50.0f);
    put(maps[0], 13, 12, 50.0f);  // equal neighbours in one cell: neither is strictly larger
    auto kp = select(cfg, maps, 48, 40);
    std::set<std::pair<float, float>> at;
    for (const Keypoint& k : kp) at.insert({k.x, k.y});
    EXPECT_EQ(at, (std::set<std::pair<float, float>>{{23.0f, 20.0f}, {24.0f, 20.0f}}));
    // A raw score below the threshold does not suppress (it is 0 at that threshold).
    put(maps[0], 22, 20, 35.0f);
    cfg.orbslam.threshold_initial = 36;
    cfg.orbslam.threshold_min = 36;
    kp = select(cfg, maps, 48, 40);
    ASSERT_EQ(kp.size(), 1u);
    EXPECT_EQ(kp[0].x, 24.0f);
    EXPECT_EQ(kp[0].y, 20.0f);
}

TEST(OrbSlamSelect, QuadtreeSpreadsTheBudgetOverClusters) {
    DetectorConfig cfg = policy(SelectionPolicy::OrbSlam, 4, {1, 2.0f});
    cfg.orbslam.cell = 16;
    cfg.orbslam.border = 8;
    auto maps = test::blank_maps(136, 136, cfg);  // region 120 x 120: one root
    // Four clusters, one per quadrant of the root; the top-left one holds the 8 strongest corners.
    const int cx[4] = {20, 90, 20, 90}, cy[4] = {20, 20, 90, 90};
    for (int q = 0; q < 4; ++q)
        for (int i = 0; i < 8; ++i) put(maps[0], cx[q] + 3 * (i % 4), cy[q] + 3 * (i / 4), (q == 0 ? 200.0f : 50.0f) + 10.0f * i + q);
    auto kp = select(cfg, maps, 136, 136);
    ASSERT_EQ(kp.size(), 4u);
    std::set<int> quadrants;
    for (const Keypoint& k : kp) {
        quadrants.insert((k.x >= 68 ? 1 : 0) + (k.y >= 68 ? 2 : 0));
        const int q = (k.x >= 68 ? 1 : 0) + (k.y >= 68 ? 2 : 0);
        EXPECT_EQ(k.score, (q == 0 ? 200.0f : 50.0f) + 70.0f + q) << "the strongest of its cluster";
    }
    EXPECT_EQ(quadrants.size(), 4u);
    EXPECT_GE(kp[0].score, kp[3].score);  // best first
    // LevelHarris ranks instead: all four from the strongest cluster... by Harris (flat image: response 0,
    // dropped), so nothing; the grid-free ranking is checked on real images below.
    cfg.selection = SelectionPolicy::LevelHarris;
    EXPECT_TRUE(select(cfg, maps, 136, 136).empty());
    // A budget larger than the candidates keeps every candidate.
    cfg.selection = SelectionPolicy::OrbSlam;
    cfg.max_features = 100;
    EXPECT_EQ(select(cfg, maps, 136, 136).size(), 32u);
}

TEST(OrbSlamSelect, MasksRemoveCandidates) {
    DetectorConfig cfg = policy(SelectionPolicy::OrbSlam, 100, {1, 2.0f});
    cfg.orbslam.cell = 16;
    cfg.orbslam.border = 8;
    auto maps = test::blank_maps(64, 64, cfg);
    put(maps[0], 20, 20, 30.0f);
    put(maps[0], 40, 40, 30.0f);
    HostImage mask(64, 64, 1);
    mask.at(20, 20) = 0;
    DetectionMasks m;
    m.pixel_mask = mask.view();
    auto kp = select(cfg, maps, 64, 64, m);
    ASSERT_EQ(kp.size(), 1u);
    EXPECT_EQ(kp[0].x, 40.0f);
    const Size2 grid = grid_size(64, 64, cfg);  // 2 x 2 cells of 32
    std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width * grid.height), 0);
    skip[3] = 1;  // the cell of (40, 40)
    m.cell_skip = skip.data();
    m.cell_grid = grid;
    EXPECT_TRUE(select(cfg, maps, 64, 64, m).empty());
}

TEST(OrbSlamDetector, RealImagesFillTheBudgetsInOrder) {
    for (const SelectionPolicy s : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris}) {
        for (const std::string& name : {std::string("graf1.png"), std::string("box.png")}) {
            const HostImage img = test::real_image(name);
            const DetectorConfig cfg = policy(s, 1000);
            SCOPED_TRACE(std::string(to_string(s)) + " " + name);
            const auto kp = detect_cpu(img.view(), cfg);
            int budget[kMaxLevels];
            detail::orbslam_level_budgets(1000, 8, 1.2f, budget);
            std::vector<int> per_level(8, 0);
            for (std::size_t i = 0; i < kp.size(); ++i) {
                const Keypoint& k = kp[i];
                ++per_level[static_cast<std::size_t>(k.level)];
                if (i > 0) {
                    ASSERT_GE(k.level, kp[i - 1].level) << "levels in order";
                    if (k.level == kp[i - 1].level) ASSERT_LE(k.score, kp[i - 1].score) << "best first";
                }
                const float s_k = level_scale(cfg.pyramid, k.level);
                const float lx = std::round(k.x / s_k), ly = std::round(k.y / s_k);
                const Size2 lv = pyramid_sizes(img.width(), img.height(), cfg.pyramid)[static_cast<std::size_t>(k.level)];
                EXPECT_TRUE(lx >= 19 && ly >= 19 && lx < lv.width - 19 && ly < lv.height - 19) << test::describe(k);
            }
            for (int l = 0; l < 8; ++l) EXPECT_LE(per_level[static_cast<std::size_t>(l)], budget[l]) << "level " << l;
            EXPECT_GE(static_cast<int>(kp.size()), name == "graf1.png" ? 1000 : 600);
            for (int threads : {1, 2, 3}) {
                DetectorConfig c = cfg;
                c.threads = threads;
                FeatureDetector det(c, Backend::Cpu);
                test::expect_same_keypoints(det.detect(img.view()), kp, "threads " + std::to_string(threads));
            }
        }
    }
}

TEST(OrbSlamDetector, LevelHarrisScoresAreTheHarrisScoreMapsAndBeatTheRest) {
    const HostImage img = test::real_image("graf1.png");
    const DetectorConfig cfg = policy(SelectionPolicy::LevelHarris, 500);
    const auto kp = detect_cpu(img.view(), cfg);
    ASSERT_FALSE(kp.empty());
    const auto pyr = build_pyramid_cpu(img.view(), cfg.pyramid);
    const auto harris = fast_score_maps_cpu(pyr, {20, 9, 16, ScoreType::Harris});
    const auto mt = fast_score_maps_cpu(pyr, {20, 9, 16, ScoreType::MaxThreshold});
    for (const Keypoint& k : kp) {
        const float s_k = level_scale(cfg.pyramid, k.level);
        const int x = static_cast<int>(std::lround(k.x / s_k)), y = static_cast<int>(std::lround(k.y / s_k));
        ASSERT_EQ(k.score, harris[static_cast<std::size_t>(k.level)].at(x, y)) << test::describe(k);
        ASSERT_GT(mt[static_cast<std::size_t>(k.level)].at(x, y), 0.0f) << "a FAST corner at threshold 20";
    }
}

TEST(OrbSlamConfig, InvalidParametersAreRejectedByName) {
    const auto rejects = [](DetectorConfig c, const std::string& param) {
        try {
            validate(c);
            ADD_FAILURE() << param << " accepted";
        } catch (const InvalidArgument& e) {
            EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
        }
    };
    for (const SelectionPolicy s : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris}) {
        const DetectorConfig ok = policy(s, 1000);
        EXPECT_NO_THROW(validate(ok));
        DetectorConfig c = ok;
        c.max_features = 0;
        rejects(c, "max_features");
        c.max_features = 20001;
        rejects(c, "max_features");
        c.max_features = 20000;
        EXPECT_NO_THROW(validate(c));
        c = ok;
        c.orbslam.threshold_initial = 0;
        rejects(c, "orbslam.threshold_initial");
        c = ok;
        c.orbslam.threshold_min = 255;
        rejects(c, "orbslam.threshold_min");
        c = ok;
        c.orbslam.cell = 15;
        rejects(c, "orbslam.cell");
        c = ok;
        c.orbslam.border = 3;
        rejects(c, "orbslam.border");
        c = ok;
        c.fast.arc_max = 12;
        rejects(c, "fast.arc_max");
        c = ok;
        c.fast.score = ScoreType::SadCircle;
        rejects(c, "fast.score");
    }
    DetectorConfig c;
    c.selection = static_cast<SelectionPolicy>(7);
    rejects(c, "selection");
    EXPECT_STREQ(to_string(SelectionPolicy::OrbSlam), "orb-slam");
    EXPECT_STREQ(to_string(SelectionPolicy::LevelHarris), "level-harris");
}

}  // namespace
}  // namespace kestrel
