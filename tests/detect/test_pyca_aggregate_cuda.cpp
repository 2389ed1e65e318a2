// PyCA's aggregation kernel against the CPU reference where its work is split most: q = 7 and 9 (several
// evaluation rounds per list: 256 / q^2 survivors at a time), grid cells of up to 1024 x 1024 with 8-pixel
// culling cells (several list rounds of 256 culling cells per block), narrow 32 x 8 grid cells, odd image
// sizes down to a few culling cells, 1 to 8 levels; on the stage (pyca_select_cuda on the CPU's score maps)
// and through the whole detector, with masks.
#include <gtest/gtest.h>

#include "detector_test_util.hpp"
#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyca_select.hpp"
#include "kestrel/pyramid.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TEST(PycaGpu, AggregationMatchesCpuAcrossRoundsAndOddSizes) {
    KESTREL_REQUIRE_GPU();
    struct Case {
        PyramidConfig pyr;
        int cell, q, cw, ch, K, max_features;
        Size2 size;
    };
    const Case cases[] = {
        {{8, 1.2f}, 16, 9, 32, 32, 4, 0, {752, 480}},    {{8, 1.2f}, 8, 7, 1024, 1024, 8, 0, {799, 601}},
        {{2, 2.0f}, 8, 9, 512, 256, 3, 200, {641, 479}}, {{3, 1.5f}, 16, 7, 32, 8, 2, 0, {333, 217}},
        {{2, 2.0f}, 16, 3, 32, 32, 4, 0, {257, 129}},    {{1, 2.0f}, 8, 9, 1024, 1024, 8, 0, {97, 61}},
        {{5, 1.25f}, 32, 5, 96, 40, 6, 100, {259, 131}}, {{8, 1.2f}, 128, 9, 64, 48, 1, 0, {768, 576}},
    };
    int i = 0;
    for (const Case& c : cases) {
        DetectorConfig cfg;
        cfg.selection = SelectionPolicy::PyCA;
        cfg.pyramid = c.pyr;
        cfg.pyca.cell.fill(c.cell);
        cfg.pyca.q = c.q;
        cfg.cell_width = c.cw;
        cfg.cell_height = c.ch;
        cfg.per_cell = c.K;
        cfg.max_features = c.max_features;
        cfg.fast.threshold = 8;
        const HostImage img = test::crop(test::real_image(i % 2 ? "graf1.png" : "vtest_000.png"), 0, 0, c.size.width,
                                         c.size.height);
        ++i;
        SCOPED_TRACE(test::describe(cfg) + " q=" + std::to_string(c.q) + " size " + std::to_string(img.width()) + "x" +
                     std::to_string(img.height()));
        const Size2 grid = grid_size(img.width(), img.height(), cfg);
        std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width) * grid.height);
        for (std::size_t j = 0; j < skip.size(); ++j) skip[j] = j % 4 == 1;
        DetectionMasks masks;
        masks.cell_skip = skip.data();
        masks.cell_grid = grid;
        const std::vector<ScoreMap> maps = fast_score_maps_cpu(build_pyramid_cpu(img.view(), cfg.pyramid), cfg.fast);
        const auto want = detail::pyca_select_cpu(maps, cfg);
        ASSERT_FALSE(want.empty());
        test::expect_same_keypoints(detail::pyca_select_cuda(maps, cfg), want, "stage");
        test::expect_same_keypoints(detail::pyca_select_cuda(maps, cfg, masks), detail::pyca_select_cpu(maps, cfg, masks),
                                    "stage, cell mask");
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), detect_cpu(img.view(), cfg), "detector");
        test::expect_same_keypoints(det.detect(img.view(), masks), detect_cpu(img.view(), cfg, masks), "detector, mask");
    }
}

}  // namespace
}  // namespace kestrel
