// Grid selection on hand-built score maps with known answers (plateaus and ties, ties across levels,
// cells across level boundaries, K per cell, cap by score, NMS radius, border, masks), on the CPU
// reference and on the CUDA kernel; both also against the independent oracle on random maps full of
// ties. Plus the geometry rules themselves (cell_begin, key packing).
#include <gtest/gtest.h>

#include <cstdint>

#include "detector_test_util.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/grid_select.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using test::blank_maps;
using test::random_maps;
using test::set_score;

DetectorConfig base_config(int levels = 1, float scale = 2.0f) {
    DetectorConfig c;
    c.pyramid = {levels, scale};
    c.cell_width = 32;
    c.cell_height = 32;
    c.nms_radius = 1;
    c.per_cell = 1;
    return c;
}

Keypoint kp(float x, float y, float score, int level) { return {x, y, score, level}; }

class Select : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override {
        if (GetParam() == Backend::Cuda) KESTREL_REQUIRE_GPU();
    }
    /// Runs the backend under test and checks it against the oracle as well.
    std::vector<Keypoint> run(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                              const DetectionMasks& masks = {}) {
        auto out = GetParam() == Backend::Cuda ? detail::grid_select_cuda(maps, cfg, masks)
                                               : detail::grid_select_cpu(maps, cfg, masks);
        test::expect_same_keypoints(out, test::oracle_select(maps, cfg, masks), "vs oracle, " + test::describe(cfg));
        return out;
    }
};

TEST_P(Select, EmptyMapsGiveNothing) {
    const auto cfg = base_config(3);
    EXPECT_TRUE(run(blank_maps(100, 70, cfg), cfg).empty());
}

TEST_P(Select, PlateauKeepsItsFirstPixelInRasterOrder) {
    auto cfg = base_config();
    cfg.per_cell = 4;
    auto maps = blank_maps(96, 64, cfg);
    for (int y = 10; y < 12; ++y)
        for (int x = 10; x < 12; ++x) set_score(maps[0], x, y, 50.0f);  // 2x2 plateau -> (10, 10)
    for (int x = 35; x < 40; ++x) set_score(maps[0], x, 20, 30.0f);    // 1x5 plateau wider than n -> (35, 20)
    set_score(maps[0], 70, 10, 25.0f);                                  // diagonal pair: the upper one wins
    set_score(maps[0], 69, 11, 25.0f);
    const auto out = run(maps, cfg);
    test::expect_same_keypoints(out, {kp(10, 10, 50, 0), kp(35, 20, 30, 0), kp(70, 10, 25, 0)}, "plateaus");
}

TEST_P(Select, TiesPreferLowerLevelThenLowerYThenLowerX) {
    auto cfg = base_config(2, 2.0f);
    cfg.cell_width = 64;
    cfg.cell_height = 64;
    auto maps = blank_maps(256, 64, cfg);
    // Cell 0: equal scores on level 0 (10, 10) and level 1 (20, 20) -> level 0.
    set_score(maps[0], 10, 10, 40.0f);
    set_score(maps[1], 20, 20, 40.0f);
    // Cell 1: level 1 (40, 5) is higher in the image than level 0 (100, 50), but level 0 wins the tie.
    set_score(maps[1], 40, 5, 40.0f);
    set_score(maps[0], 100, 50, 40.0f);
    // Cell 2: same level, same score: lower y wins.
    set_score(maps[0], 140, 30, 33.0f);
    set_score(maps[0], 180, 12, 33.0f);
    // Cell 3: same level, score and y: lower x wins.
    set_score(maps[0], 230, 40, 21.0f);
    set_score(maps[0], 200, 40, 21.0f);
    test::expect_same_keypoints(run(maps, cfg),
                                {kp(10, 10, 40, 0), kp(100, 50, 40, 0), kp(180, 12, 33, 0), kp(200, 40, 21, 0)}, "K=1");
    cfg.per_cell = 2;
    test::expect_same_keypoints(run(maps, cfg),
                                {kp(10, 10, 40, 0), kp(40, 40, 40, 1), kp(100, 50, 40, 0), kp(80, 10, 40, 1),
                                 kp(180, 12, 33, 0), kp(140, 30, 33, 0), kp(200, 40, 21, 0), kp(230, 40, 21, 0)},
                                "K=2");
}

TEST_P(Select, CellsAreVirtuallyScaledOnEveryLevel) {
    // Factor 2: level-1 x = 15 -> level 0 x = 30 (cell 0), x = 16 -> 32 (cell 1).
    auto cfg = base_config(2, 2.0f);
    auto maps = blank_maps(128, 64, cfg);
    set_score(maps[1], 15, 3, 10.0f);
    set_score(maps[1], 16, 9, 20.0f);
    test::expect_same_keypoints(run(maps, cfg), {kp(30, 6, 10, 1), kp(32, 18, 20, 1)}, "factor 2");

    // Factor 1.2: s_1 = level_scale = 78643 / 65536; 26 * s_1 = 31.2 (cell 0), 27 * s_1 = 32.4 (cell 1).
    cfg = base_config(2, 1.2f);
    maps = blank_maps(100, 60, cfg);
    const float s1 = level_scale(cfg.pyramid, 1);
    set_score(maps[1], 26, 5, 10.0f);
    set_score(maps[1], 27, 20, 20.0f);
    set_score(maps[0], 31, 40, 15.0f);  // level 0, cell (0, 1)
    const auto out = run(maps, cfg);
    test::expect_same_keypoints(out, {kp(26 * s1, 5 * s1, 10, 1), kp(27 * s1, 20 * s1, 20, 1), kp(31, 40, 15, 0)},
                                "factor 1.2");
}

TEST_P(Select, KeepsTheBestKPerCellInRankOrder) {
    auto cfg = base_config();
    cfg.cell_width = 64;
    cfg.cell_height = 64;
    auto maps = blank_maps(128, 64, cfg);
    const int xs[] = {5, 20, 40, 8, 50}, ys[] = {5, 30, 10, 50, 55};
    const float scores[] = {10, 50, 30, 40, 20};
    for (int i = 0; i < 5; ++i) set_score(maps[0], xs[i], ys[i], scores[i]);
    set_score(maps[0], 100, 30, 7.0f);  // cell 1
    for (int K = 1; K <= 8; ++K) {
        cfg.per_cell = K;
        const auto out = run(maps, cfg);
        ASSERT_EQ(out.size(), static_cast<std::size_t>(std::min(K, 5) + 1)) << "K=" << K;
        for (int r = 0; r + 1 < std::min(K, 5); ++r) EXPECT_GT(out[r].score, out[r + 1].score) << "rank order, K=" << K;
        EXPECT_EQ(out[0].score, 50.0f);
        EXPECT_EQ(out.back().score, 7.0f);
    }
}

TEST_P(Select, CapKeepsTheBestByScoreInCellOrder) {
    auto cfg = base_config();
    auto maps = blank_maps(128, 32, cfg);  // 4 cells in a row
    set_score(maps[0], 10, 10, 30.0f);
    set_score(maps[0], 40, 10, 10.0f);
    set_score(maps[0], 70, 10, 40.0f);
    set_score(maps[0], 100, 10, 20.0f);
    cfg.max_features = 2;
    test::expect_same_keypoints(run(maps, cfg), {kp(10, 10, 30, 0), kp(70, 10, 40, 0)}, "cap 2");
    cfg.max_features = 4;
    EXPECT_EQ(run(maps, cfg).size(), 4u);
    cfg.max_features = 100;
    EXPECT_EQ(run(maps, cfg).size(), 4u);
    // Equal scores: the cap follows the same tie rule (lower y first).
    auto ties = blank_maps(128, 32, cfg);
    set_score(ties[0], 10, 20, 20.0f);
    set_score(ties[0], 40, 5, 20.0f);
    set_score(ties[0], 70, 10, 20.0f);
    cfg.max_features = 2;
    test::expect_same_keypoints(run(ties, cfg), {kp(40, 5, 20, 0), kp(70, 10, 20, 0)}, "cap with ties");
}

TEST_P(Select, NmsRadius) {
    auto cfg = base_config();
    cfg.per_cell = 4;
    auto maps = blank_maps(64, 64, cfg);
    set_score(maps[0], 20, 20, 60.0f);
    set_score(maps[0], 22, 20, 50.0f);
    set_score(maps[0], 20, 24, 55.0f);
    cfg.nms_radius = 1;
    EXPECT_EQ(run(maps, cfg).size(), 3u);
    cfg.nms_radius = 2;
    EXPECT_EQ(run(maps, cfg).size(), 2u);
    cfg.nms_radius = 4;
    test::expect_same_keypoints(run(maps, cfg), {kp(20, 20, 60, 0)}, "n=4");
}

TEST_P(Select, BorderIsInLevelZeroPixels) {
    auto cfg = base_config(2, 2.0f);
    cfg.border = 5;
    cfg.per_cell = 8;
    auto maps = blank_maps(64, 64, cfg);
    set_score(maps[0], 4, 20, 10.0f);   // dropped
    set_score(maps[0], 5, 30, 11.0f);   // kept
    set_score(maps[0], 58, 20, 12.0f);  // 58 = W - 1 - border: kept
    set_score(maps[0], 59, 30, 13.0f);  // dropped
    set_score(maps[1], 2, 5, 14.0f);    // level 0 x = 4: dropped
    set_score(maps[1], 3, 10, 15.0f);   // level 0 x = 6: kept
    const auto out = run(maps, cfg);
    test::expect_same_keypoints(out, {kp(6, 20, 15, 1), kp(5, 30, 11, 0), kp(58, 20, 12, 0)}, "border");
}

TEST_P(Select, MasksRemoveCandidatesButNotTheirSuppression) {
    auto cfg = base_config();
    auto maps = blank_maps(96, 64, cfg);  // 3 x 2 cells
    set_score(maps[0], 32, 10, 50.0f);    // cell 1 (skipped) still suppresses its neighbour in cell 0
    set_score(maps[0], 31, 10, 40.0f);
    set_score(maps[0], 70, 40, 30.0f);    // cell 5, pixel-masked
    set_score(maps[0], 80, 50, 20.0f);    // cell 5, allowed
    set_score(maps[0], 10, 40, 10.0f);    // cell 3
    std::uint8_t skip[6] = {0, 1, 0, 0, 0, 0};
    HostImage mask(96, 64, 1);
    mask.at(70, 40) = 0;
    DetectionMasks m;
    m.cell_skip = skip;
    m.cell_grid = {3, 2};
    m.pixel_mask = mask.view();
    test::expect_same_keypoints(run(maps, cfg, m), {kp(10, 40, 10, 0), kp(80, 50, 20, 0)}, "masks");
    skip[1] = 0;
    test::expect_same_keypoints(run(maps, cfg, m), {kp(32, 10, 50, 0), kp(10, 40, 10, 0), kp(80, 50, 20, 0)},
                                "cell 1 back");
}


TEST_P(Select, RandomTiedMapsMatchTheOracle) {
    int trial = 0;
    for (const int levels : {1, 2, 3, 4})
        for (const float scale : {2.0f, 1.2f, 1.5f})
            for (const int K : {1, 3, 8}) {
                DetectorConfig cfg = base_config(levels, scale);
                cfg.per_cell = K;
                cfg.nms_radius = 1 + trial % 4;
                cfg.cell_width = trial % 2 ? 64 : 32;
                cfg.cell_height = trial % 3 ? 48 : 8;
                cfg.max_features = trial % 4 == 1 ? 37 : (trial % 4 == 3 ? 400 : 0);
                cfg.border = trial % 5;
                const int w = 97 + 13 * (trial % 7), h = 61 + 11 * (trial % 5);
                const auto maps = random_maps(w, h, cfg, static_cast<std::uint32_t>(trial + 1), 0.3f);
                SCOPED_TRACE(test::describe(cfg) + " size " + std::to_string(w) + "x" + std::to_string(h));
                run(maps, cfg);
                ++trial;
            }
}

TEST_P(Select, LargeCapSelectionOverManySlots) {
    // Many cells, K = 8 and a cap in the middle: exercises the radix select over thousands of slots.
    DetectorConfig cfg = base_config(2, 2.0f);
    cfg.per_cell = 8;
    cfg.cell_height = 8;
    for (const int cap : {1, 999, 2500}) {
        cfg.max_features = cap;
        const auto maps = random_maps(640, 360, cfg, 99u, 0.5f);
        const auto out = run(maps, cfg);
        EXPECT_EQ(out.size(), static_cast<std::size_t>(cap)) << cap;
    }
}

TEST_P(Select, LargeTallAndWideCellsMatchTheOracle) {
    // Cells whose tiles only partly fit (or not at all) in the kernel's shared memory, cells shorter
    // than the kernel has warps, and levels whose cell rectangles are thin or empty.
    const int shapes[][2] = {{1024, 1024}, {32, 1024}, {1024, 8}, {96, 200}, {128, 128}, {64, 64}, {32, 8}, {480, 40}};
    int trial = 0;
    for (const auto& shape : shapes)
        for (const int levels : {1, 3}) {
            DetectorConfig cfg = base_config(levels, trial % 2 ? 1.2f : 2.0f);
            cfg.cell_width = shape[0];
            cfg.cell_height = shape[1];
            cfg.per_cell = 1 + (trial * 5) % 8;
            cfg.nms_radius = 1 + trial % 4;
            cfg.max_features = trial % 3 == 2 ? 23 : 0;
            cfg.border = trial % 3;
            const int w = 150 + 37 * (trial % 5), h = 90 + 29 * (trial % 4);
            const auto maps = random_maps(w, h, cfg, static_cast<std::uint32_t>(1000 + trial), 0.4f);
            SCOPED_TRACE(test::describe(cfg) + " size " + std::to_string(w) + "x" + std::to_string(h));
            run(maps, cfg);
            ++trial;
        }
}

INSTANTIATE_TEST_SUITE_P(Backends, Select, ::testing::Values(Backend::Cpu, Backend::Cuda),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(GridRules, CellBeginMatchesThePerPixelCell) {
    for (const float factor : {2.0f, 1.2f, 1.5f, 1.7f, 1.05f})
        for (int k = 0; k < 5; ++k) {
            const float s = level_scale({kMaxLevels, factor}, k);
            for (const int cell : {8, 32, 48, 64, 96}) {
                const int W = 731, len = static_cast<int>(W / s);
                const int cols = (W + cell - 1) / cell;
                for (int c = 0; c <= cols; ++c) {
                    int expected = 0;
                    while (expected < len && detail::level0_pixel(expected, s, W) / cell < c) ++expected;
                    ASSERT_EQ(detail::cell_begin(c, cell, s, len, W), expected)
                        << "factor " << factor << " level " << k << " cell " << cell << " c " << c;
                }
            }
        }
}

TEST(GridRules, KeyRoundTripAndOrder) {
    for (const float s : {0.5f, 1.0f, 37.0f, 4080.0f})
        for (const int level : {0, 3, 7})
            for (const int y : {0, 5, 16383})
                for (const int x : {0, 9, 16383}) {
                    const auto key = detail::keypoint_key(s, level, x, y);
                    EXPECT_EQ(detail::key_score(key), s);
                    EXPECT_EQ(detail::key_level(key), level);
                    EXPECT_EQ(detail::key_x(key), x);
                    EXPECT_EQ(detail::key_y(key), y);
                }
    EXPECT_GT(detail::keypoint_key(2.0f, 7, 9999, 9999), detail::keypoint_key(1.0f, 0, 0, 0));
    EXPECT_GT(detail::keypoint_key(1.0f, 0, 50, 50), detail::keypoint_key(1.0f, 1, 0, 0));
    EXPECT_GT(detail::keypoint_key(1.0f, 1, 50, 3), detail::keypoint_key(1.0f, 1, 0, 4));
    EXPECT_GT(detail::keypoint_key(1.0f, 1, 3, 4), detail::keypoint_key(1.0f, 1, 4, 4));
}

TEST(GridRules, TopKInsertKeepsTheBestSorted) {
    std::uint64_t top[4] = {0, 0, 0, 0};
    for (std::uint64_t v : {5u, 9u, 1u, 7u, 3u, 11u, 2u}) detail::topk_insert(top, v);
    EXPECT_EQ(top[0], 11u);
    EXPECT_EQ(top[1], 9u);
    EXPECT_EQ(top[2], 7u);
    EXPECT_EQ(top[3], 5u);
    detail::topk_pop(top);
    EXPECT_EQ(top[0], 9u);
    EXPECT_EQ(top[3], 0u);
}

}  // namespace
}  // namespace kestrel
