// PyCA on the CUDA backend == the CPU reference: identical keypoint lists (same order) from the whole
// detector on real images over a parameter grid (pyramids 8 x 1.2, 2 x 2, 3 x 1.5 and 1 level; PyCA cells
// 8..128 per level; q = 1, 3, 5; K; caps; borders; all four scores) at odd sizes; repeated runs; the
// asynchronous API from pinned host and device images with device masks that change between frames,
// with and without the CUDA graph; size changes. The stage on score maps (culling by both reductions, aggregation) is compared in
// tests/detect/test_pyca.cpp (Backends/Pyca.*/cuda).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "detector_test_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_detector.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

std::vector<Keypoint> host_result(const FeatureDetector& d) {
    return std::vector<Keypoint>(d.host_keypoints(), d.host_keypoints() + d.host_count());
}

DetectorConfig pyca_config(PyramidConfig pyr, int cell, int q) {
    DetectorConfig c;
    c.selection = SelectionPolicy::PyCA;
    c.pyramid = pyr;
    c.pyca.cell.fill(cell);
    c.pyca.q = q;
    return c;
}

TEST(PycaGpu, MatchesCpuOnRealImagesOverTheParameterGrid) {
    KESTREL_REQUIRE_GPU();
    const auto names = test::real_image_names();
    const Size2 sizes[] = {{752, 480}, {641, 479}, {333, 217}, {799, 67}, {97, 603}, {259, 131}, {768, 576}};
    const PyramidConfig pyramids[] = {{8, 1.2f}, {2, 2.0f}, {3, 1.5f}, {1, 2.0f}};
    const ScoreType scores[] = {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris};
    const int cells[] = {8, 16, 32, 64, 128};
    const int cases = test::under_compute_sanitizer() ? 12 : 48;
    for (int i = 0; i < cases; ++i) {
        DetectorConfig cfg = pyca_config(pyramids[i % 4], 32, 1 + 2 * ((i / 4) % 3));
        for (int k = 0; k < kMaxLevels; ++k) cfg.pyca.cell[static_cast<std::size_t>(k)] = cells[(i + k * (i % 3)) % 5];
        cfg.fast.score = scores[(i / 3) % 4];
        cfg.per_cell = 1 + (i * 5) % 8;
        cfg.cell_width = i % 2 ? 64 : 32;
        cfg.cell_height = i % 3 ? 48 : 32;
        cfg.max_features = i % 5 == 1 ? 150 : 0;
        cfg.border = i % 7 == 3 ? 9 : 0;
        const Size2 sz = sizes[i % 7];
        const HostImage full = test::real_image(names[static_cast<std::size_t>(i) % names.size()]);
        const HostImage img = test::crop(full, (i * 13) % 40, (i * 7) % 30, sz.width, sz.height);
        try {
            validate_image_size(img.width(), img.height(), cfg);
        } catch (const InvalidArgument&) {
            cfg.pyramid.levels = 1;  // 8 levels of 1.2 on a 67-row crop
        }
        SCOPED_TRACE(test::describe(cfg) + " q=" + std::to_string(cfg.pyca.q) + " size " +
                     std::to_string(img.width()) + "x" + std::to_string(img.height()));
        const auto ref = detect_cpu(img.view(), cfg);
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), ref, "first run");
        test::expect_same_keypoints(det.detect(img.view()), ref, "second run");
    }
}

TEST(PycaGpu, AsyncFromPinnedAndDeviceImagesWithChangingMasks) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::crop(test::real_image("graf1.png"), 3, 5, 701, 451);
    for (const PyramidConfig pyr : {PyramidConfig{8, 1.2f}, PyramidConfig{2, 2.0f}}) {
        DetectorConfig cfg = pyca_config(pyr, 16, 3);
        cfg.per_cell = 3;
        cfg.cell_width = 64;
        cfg.cell_height = 48;
        const Size2 grid = grid_size(img.width(), img.height(), cfg);
        const int cells = grid.width * grid.height;
        std::vector<std::uint8_t> skip(static_cast<std::size_t>(cells));
        for (int i = 0; i < cells; ++i) skip[static_cast<std::size_t>(i)] = i % 3 == 0;
        HostImage mask(img.width(), img.height(), 1);
        for (int y = 0; y < img.height(); ++y)
            for (int x = 0; x < img.width() / 3; ++x) mask.at(x, y) = 0;
        void* d_skip = nullptr;
        CUDA_OK(cudaMalloc(&d_skip, static_cast<std::size_t>(cells)));
        CUDA_OK(cudaMemcpy(d_skip, skip.data(), static_cast<std::size_t>(cells), cudaMemcpyHostToDevice));
        const DeviceImage d_mask = upload(mask.view());
        const DeviceImage d_img = upload(img.view());
        PinnedImage pinned(img.width(), img.height());
        for (int y = 0; y < img.height(); ++y)
            std::copy(img.data() + static_cast<std::size_t>(y) * img.pitch(),
                      img.data() + static_cast<std::size_t>(y) * img.pitch() + img.width(),
                      pinned.data() + static_cast<std::size_t>(y) * pinned.pitch());
        DetectionMasks hm;
        hm.cell_skip = skip.data();
        hm.cell_grid = grid;
        hm.pixel_mask = mask.view();
        DeviceDetectionMasks dm;
        dm.cell_skip = static_cast<const std::uint8_t*>(d_skip);
        dm.cell_grid = grid;
        dm.pixel_mask = d_mask.view();
        const auto ref_none = detect_cpu(img.view(), cfg), ref_m = detect_cpu(img.view(), cfg, hm);
        ASSERT_NE(ref_none.size(), ref_m.size());
        cudaStream_t s = nullptr;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        for (const bool graph : {true, false}) {
            cfg.cuda_graph = graph;
            const std::string what = std::string(graph ? "graph on, " : "graph off, ") + std::to_string(pyr.levels) + " levels: ";
            FeatureDetector det(cfg, Backend::Cuda);
            for (int round = 0; round < 2; ++round) {
                // The graph is captured with the first frame's masks (none): frames with other mask
                // pointers run as direct launches, later frames without masks replay the graph.
                det.detect_async(pinned.view(), s);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_none, what + "pinned");
                EXPECT_EQ(det.uses_cuda_graph(), graph) << what;
                det.detect_async(d_img.view(), s, dm);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_m, what + "device image, masks");
                det.detect_async(pinned.view(), s, dm);
                synchronize(s);
                test::expect_same_keypoints(host_result(det), ref_m, what + "pinned, masks");
                EXPECT_FALSE(det.uses_cuda_graph()) << what;
                test::expect_same_keypoints(det.detect(img.view(), hm), ref_m, what + "sync with host masks");
                test::expect_same_keypoints(det.detect(img.view()), ref_none, what + "sync without masks");
            }
            // A size change reallocates.
            const HostImage small = test::crop(img, 0, 0, 333, 217);
            test::expect_same_keypoints(det.detect(small.view()), detect_cpu(small.view(), cfg), what + "resized");
        }
        (void)cudaStreamDestroy(s);
        (void)cudaFree(d_skip);
    }
}

}  // namespace
}  // namespace kestrel
