// The per-level policies (SelectionPolicy::OrbSlam, LevelHarris) on the CUDA backend == the CPU reference:
// identical keypoint lists (same order) from the whole detector on real images at odd sizes over a parameter
// grid (pyramids 8 x 1.2, 2 x 2, 3 x 1.5 and one level; both thresholds, including a fallback above the initial
// threshold; cells; borders; budgets from 1 to 4000), generated images, repeated frames (the lists and counters
// the kernels reset), the asynchronous API from pinned and device images with masks, with and without the CUDA
// graph, size changes, and the ORB angles and descriptors of the selected keypoints.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

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

std::string describe(const DetectorConfig& c) {
    return test::describe(c) + " policy=" + to_string(c.selection) + " t=" + std::to_string(c.orbslam.threshold_initial) +
           "/" + std::to_string(c.orbslam.threshold_min) + " ocell=" + std::to_string(c.orbslam.cell) +
           " oborder=" + std::to_string(c.orbslam.border);
}

TEST(OrbSlamGpu, MatchesCpuOnRealImagesOverTheParameterGrid) {
    KESTREL_REQUIRE_GPU();
    const auto names = test::real_image_names();
    const Size2 sizes[] = {{752, 480}, {641, 479}, {333, 217}, {799, 67}, {97, 603}, {259, 131}, {768, 576}, {1023, 767}};
    const PyramidConfig pyramids[] = {{8, 1.2f}, {2, 2.0f}, {3, 1.5f}, {1, 2.0f}};
    const int thresholds[][2] = {{20, 7}, {12, 12}, {30, 5}, {7, 20}, {1, 1}};
    const int cells[] = {30, 16, 64, 45};
    const int borders[] = {19, 4, 31, 64};
    const int budgets[] = {1000, 1, 57, 4000, 300};
    const int cases = test::under_compute_sanitizer() ? 10 : 40;
    for (int i = 0; i < cases; ++i) {
        DetectorConfig cfg;
        cfg.selection = i % 2 ? SelectionPolicy::LevelHarris : SelectionPolicy::OrbSlam;
        cfg.pyramid = pyramids[(i / 2) % 4];
        cfg.orbslam.threshold_initial = thresholds[i % 5][0];
        cfg.orbslam.threshold_min = thresholds[i % 5][1];
        cfg.orbslam.cell = cells[(i / 3) % 4];
        cfg.orbslam.border = borders[(i / 5) % 4];
        cfg.max_features = budgets[(i / 2) % 5];
        cfg.border = i % 7 == 3 ? 25 : 0;
        cfg.fast.arc_min = i % 6 == 5 ? 12 : 9;
        const Size2 sz = sizes[i % 8];
        const HostImage full = test::real_image(names[static_cast<std::size_t>(i) % names.size()]);
        const HostImage img = test::crop(full, (i * 13) % 40, (i * 7) % 30, sz.width, sz.height);
        try {
            validate_image_size(img.width(), img.height(), cfg);
        } catch (const InvalidArgument&) {
            cfg.pyramid.levels = 1;  // 8 levels of 1.2 on a 67-row crop
        }
        SCOPED_TRACE(describe(cfg) + " size " + std::to_string(img.width()) + "x" + std::to_string(img.height()));
        const auto ref = detect_cpu(img.view(), cfg);
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), ref, "first run");
        test::expect_same_keypoints(det.detect(img.view()), ref, "second run");
    }
}

TEST(OrbSlamGpu, MatchesCpuOnGeneratedImages) {
    KESTREL_REQUIRE_GPU();
    for (int i = 0; i < 8; ++i) {
        DetectorConfig cfg;
        cfg.selection = i % 2 ? SelectionPolicy::LevelHarris : SelectionPolicy::OrbSlam;
        cfg.pyramid = {i < 4 ? 8 : 3, i < 4 ? 1.2f : 1.5f};
        cfg.max_features = i < 6 ? 1000 : 20000;  // 20000: more budget than corners on every level
        cfg.orbslam.threshold_min = 3 + i;
        const HostImage img = test::random_image(301 + 64 * i, 207 + 40 * i, 1234u + static_cast<std::uint32_t>(i));
        SCOPED_TRACE(describe(cfg) + " size " + std::to_string(img.width()) + "x" + std::to_string(img.height()));
        FeatureDetector det(cfg, Backend::Cuda);
        test::expect_same_keypoints(det.detect(img.view()), detect_cpu(img.view(), cfg), "random image");
    }
}

TEST(OrbSlamGpu, AsyncFromPinnedAndDeviceImagesWithMasksAndGraphs) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::crop(test::real_image("graf1.png"), 3, 5, 701, 451);
    const HostImage other = test::crop(test::real_image("box.png"), 0, 0, 701, 451);
    for (const SelectionPolicy s : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris})
        for (const bool graph : {true, false})
            for (const PyramidConfig pyr : {PyramidConfig{8, 1.2f}, PyramidConfig{2, 2.0f}}) {
                DetectorConfig cfg;
                cfg.selection = s;
                cfg.pyramid = pyr;
                cfg.max_features = 700;
                cfg.cuda_graph = graph;
                SCOPED_TRACE(describe(cfg));
                const Size2 grid = grid_size(img.width(), img.height(), cfg);
                const int cells = grid.width * grid.height;
                std::vector<std::uint8_t> skip(static_cast<std::size_t>(cells));
                for (int i = 0; i < cells; ++i) skip[static_cast<std::size_t>(i)] = i % 3 == 0;
                HostImage mask(img.width(), img.height(), 1);
                for (int y = 100; y < 200; ++y)
                    for (int x = 0; x < img.width(); ++x) mask.at(x, y) = 0;
                DetectionMasks hm;
                hm.cell_skip = skip.data();
                hm.cell_grid = grid;
                hm.pixel_mask = mask.view();

                cudaStream_t stream = nullptr;
                CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
                PinnedImage pinned(img.width(), img.height());
                PinnedImage pinned_other(img.width(), img.height());
                for (int y = 0; y < img.height(); ++y) {
                    std::memcpy(pinned.mut_view().row(y), img.view().row(y), static_cast<std::size_t>(img.width()));
                    std::memcpy(pinned_other.mut_view().row(y), other.view().row(y), static_cast<std::size_t>(img.width()));
                }
                DeviceImage dimg = upload(img.view());
                DeviceImage dmask = upload(mask.view());
                std::uint8_t* dskip = nullptr;
                CUDA_OK(cudaMalloc(&dskip, skip.size()));
                CUDA_OK(cudaMemcpy(dskip, skip.data(), skip.size(), cudaMemcpyHostToDevice));
                DeviceDetectionMasks dm;
                dm.cell_skip = dskip;
                dm.cell_grid = grid;
                dm.pixel_mask = dmask.view();

                const auto plain = detect_cpu(img.view(), cfg);
                const auto masked = detect_cpu(img.view(), cfg, hm);
                const auto plain_other = detect_cpu(other.view(), cfg);
                FeatureDetector det(cfg, Backend::Cuda);
                const int frames = test::under_compute_sanitizer() ? 2 : 3;
                for (int frame = 0; frame < frames; ++frame) {  // graph capture, then replays
                    det.detect_async(pinned.view(), stream);
                    CUDA_OK(cudaStreamSynchronize(stream));
                    test::expect_same_keypoints(host_result(det), plain, "pinned, frame " + std::to_string(frame));
                    EXPECT_EQ(det.uses_cuda_graph(), graph) << "every level in one graph launch, frame " << frame;
                    det.detect_async(pinned_other.view(), stream);
                    CUDA_OK(cudaStreamSynchronize(stream));
                    test::expect_same_keypoints(host_result(det), plain_other, "other image, frame " + std::to_string(frame));
                    det.detect_async(pinned.view(), stream, dm);
                    CUDA_OK(cudaStreamSynchronize(stream));
                    test::expect_same_keypoints(host_result(det), masked, "pinned + masks, frame " + std::to_string(frame));
                    det.detect_async(dimg.view(), stream);
                    CUDA_OK(cudaStreamSynchronize(stream));
                    test::expect_same_keypoints(host_result(det), plain, "device image, frame " + std::to_string(frame));
                    std::vector<Keypoint> dev(static_cast<std::size_t>(det.host_count()));
                    int dcount = -1;
                    CUDA_OK(cudaMemcpy(&dcount, det.device_count(), sizeof dcount, cudaMemcpyDeviceToHost));
                    EXPECT_EQ(dcount, det.host_count());
                    CUDA_OK(cudaMemcpy(dev.data(), det.device_keypoints(), dev.size() * sizeof(Keypoint),
                                       cudaMemcpyDeviceToHost));
                    test::expect_same_keypoints(dev, plain, "device list");
                }
                // A size change reallocates.
                const HostImage small = test::crop(img, 10, 10, 333, 217);
                test::expect_same_keypoints(det.detect(small.view()), detect_cpu(small.view(), cfg), "resized");
                CUDA_OK(cudaFree(dskip));
                CUDA_OK(cudaStreamDestroy(stream));
            }
}

TEST(OrbSlamGpu, DescriptorsOfTheSelectedKeypointsEqualTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    for (const SelectionPolicy s : {SelectionPolicy::OrbSlam, SelectionPolicy::LevelHarris})
        for (const std::string& name : {std::string("graf1.png"), std::string("vtest_000.png")}) {
            DetectorConfig cfg;
            cfg.selection = s;
            cfg.pyramid = {8, 1.2f};
            cfg.max_features = 1000;
            cfg.orb_descriptors = true;
            SCOPED_TRACE(describe(cfg) + " " + name);
            const HostImage img = test::real_image(name);
            FeatureDetector cpu(cfg, Backend::Cpu), gpu(cfg, Backend::Cuda);
            const auto want = cpu.detect(img.view());
            cudaStream_t stream = nullptr;
            CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
            PinnedImage pinned(img.width(), img.height());
            for (int y = 0; y < img.height(); ++y)
                std::memcpy(pinned.mut_view().row(y), img.view().row(y), static_cast<std::size_t>(img.width()));
            for (int frame = 0; frame < 2; ++frame) {
                gpu.detect_async(pinned.view(), stream);
                CUDA_OK(cudaStreamSynchronize(stream));
                test::expect_same_keypoints(host_result(gpu), want, "keypoints");
                ASSERT_EQ(gpu.host_count(), static_cast<int>(want.size()));
                for (std::size_t i = 0; i < want.size(); ++i) {
                    ASSERT_EQ(gpu.host_angles()[i], cpu.host_angles()[i]) << i;
                    ASSERT_EQ(std::memcmp(&gpu.host_descriptors()[i], &cpu.host_descriptors()[i], sizeof(OrbDescriptor)), 0)
                        << i;
                }
            }
            CUDA_OK(cudaStreamDestroy(stream));
        }
}

}  // namespace
}  // namespace kestrel
