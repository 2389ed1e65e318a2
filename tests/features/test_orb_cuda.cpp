// GPU == CPU reference for the features area, bit for bit: DeviceOrb's smoothed levels, angles and
// descriptors against orb_compute_cpu on real images over pyramids (8 levels of 1.2, 3 of 2, 5 of 1.5)
// at odd sizes, with detector keypoints and keypoints at and beyond the borders (clamped); both count
// forms; HammingMatcher against match_cpu over the configuration grid (ratio, cross-check, radius, band)
// at sizes around the 256-descriptor tile, synchronous and stream-ordered; FeatureDetector with
// orb_descriptors against the CPU backend, with and without CUDA graphs.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <random>

#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/matcher.hpp"
#include "kestrel/orb.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

template <typename T>
struct DeviceArray {
    T* p = nullptr;
    explicit DeviceArray(const std::vector<T>& v) {
        EXPECT_EQ(cudaMalloc(&p, sizeof(T) * (v.empty() ? 1 : v.size())), cudaSuccess);
        if (!v.empty()) EXPECT_EQ(cudaMemcpy(p, v.data(), sizeof(T) * v.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~DeviceArray() { (void)cudaFree(p); }
};

// Keypoints of the detector, plus keypoints at the level borders and beyond (their samples are clamped).
std::vector<Keypoint> keypoints_for(const HostImage& img, const PyramidConfig& pc) {
    DetectorConfig cfg;
    cfg.pyramid = pc;
    cfg.per_cell = 3;
    std::vector<Keypoint> kps = detect_cpu(img.view(), cfg);
    const std::vector<Size2> sizes = pyramid_sizes(img.width(), img.height(), pc);
    for (int k = 0; k < pc.levels; ++k) {
        const float s = level_scale(pc, k);
        const Size2 z = sizes[static_cast<std::size_t>(k)];
        for (const auto& [u, v] : {std::pair{0, 0}, {z.width - 1, z.height - 1}, {2, z.height / 2}, {z.width / 2, 1},
                                   {z.width - 3, 5}})
            kps.push_back({static_cast<float>(u) * s, static_cast<float>(v) * s, 1.0f, k});
    }
    return kps;
}

void expect_orb_equal(const HostImage& img, const PyramidConfig& pc, const std::string& what) {
    const std::vector<Keypoint> kps = keypoints_for(img, pc);
    const std::vector<HostImage> pyr_cpu = build_pyramid_cpu(img.view(), pc);
    const OrbFeatures ref = orb_compute_cpu(pyr_cpu, pc, kps);

    DevicePyramid pyr(img.width(), img.height(), pc);
    copy_async(img.view(), pyr.level0(), nullptr);
    pyr.build(nullptr);
    DeviceOrb orb(img.width(), img.height(), pc, static_cast<int>(kps.size()) + 7);
    DeviceArray<Keypoint> dk(kps);
    const int n = static_cast<int>(kps.size());
    DeviceArray<int> dn(std::vector<int>{n});
    for (const bool device_count : {false, true}) {
        if (device_count) orb.compute_async(pyr, dk.p, dn.p, nullptr);
        else orb.compute_async(pyr, dk.p, n, nullptr);
        synchronize(nullptr, "test");
        for (int k = 0; k < pc.levels; ++k) {
            const HostImage got = download(orb.smoothed_level(k));
            const HostImage want = orb_smooth_cpu(pyr_cpu[static_cast<std::size_t>(k)].view());
            ASSERT_EQ(got.width(), want.width());
            for (int y = 0; y < want.height(); ++y)
                for (int x = 0; x < want.width(); ++x)
                    ASSERT_EQ(got.at(x, y), want.at(x, y)) << what << " level " << k << " at " << x << "," << y;
        }
        for (int i = 0; i < n; ++i) {
            ASSERT_EQ(orb.host_angles()[i], ref.angles[static_cast<std::size_t>(i)]) << what << " keypoint " << i;
            ASSERT_EQ(orb.host_descriptors()[i], ref.descriptors[static_cast<std::size_t>(i)]) << what << " keypoint " << i;
        }
        std::vector<float> dev_angles(static_cast<std::size_t>(n));
        CUDA_OK(cudaMemcpy(dev_angles.data(), orb.device_angles(), sizeof(float) * dev_angles.size(), cudaMemcpyDeviceToHost));
        EXPECT_EQ(dev_angles, ref.angles) << what;
    }
}

TEST(OrbGpu, MatchesCpuOnRealImagesOverPyramids) {
    KESTREL_REQUIRE_GPU();
    const auto names = test::real_image_names();
    const PyramidConfig pyramids[] = {{8, 1.2f}, {3, 2.0f}, {5, 1.5f}, {1, 2.0f}};
    const Size2 sizes[] = {{752, 480}, {641, 479}, {333, 217}, {259, 131}};
    int i = 0;
    for (const PyramidConfig& pc : pyramids)
        for (const Size2 sz : sizes) {
            const HostImage img = test::crop(test::real_image(names[static_cast<std::size_t>(i) % names.size()]),
                                             (i * 13) % 40, (i * 29) % 40, sz.width, sz.height);
            expect_orb_equal(img, pc, "pyramid " + std::to_string(pc.levels) + "x" + std::to_string(pc.scale) + " size " +
                                          std::to_string(sz.width) + "x" + std::to_string(sz.height));
            ++i;
        }
}

TEST(OrbGpu, RandomImagesAndTinyLevels) {
    KESTREL_REQUIRE_GPU();
    expect_orb_equal(test::random_image(97, 61, 3), {4, 1.3f}, "random 97x61");
    expect_orb_equal(test::random_image(33, 29, 4), {2, 2.0f}, "random 33x29");
}

TEST(OrbGpu, RejectsAWrongPyramidAndCounts) {
    KESTREL_REQUIRE_GPU();
    DeviceOrb orb(200, 100, {3, 2.0f}, 10);
    DevicePyramid other(201, 100, {3, 2.0f});
    EXPECT_THROW(orb.compute_async(other, nullptr, 0, nullptr), InvalidArgument);
    DevicePyramid same(200, 100, {3, 2.0f});
    const HostImage img = test::random_image(200, 100, 9);
    copy_async(img.view(), same.level0(), nullptr);
    same.build(nullptr);
    EXPECT_THROW(orb.compute_async(same, nullptr, 11, nullptr), InvalidArgument);
    EXPECT_THROW(orb.compute_async(same, nullptr, 3, nullptr), InvalidArgument);
    EXPECT_NO_THROW(orb.compute_async(same, nullptr, 0, nullptr));
    synchronize(nullptr, "test");
}

OrbDescriptor random_descriptor(std::mt19937& rng) {
    OrbDescriptor d;
    for (auto& b : d.bytes) b = static_cast<std::uint8_t>(rng() & 0xFF);
    return d;
}

TEST(MatcherGpu, MatchesCpuOverTheConfigurationGrid) {
    KESTREL_REQUIRE_GPU();
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> pos(0.0f, 752.0f);
    for (const auto& [nq, nt] : {std::pair{0, 10}, {10, 0}, {1, 1}, {37, 255}, {300, 256}, {257, 513}, {1000, 1000}}) {
        std::vector<OrbDescriptor> q, t;
        std::vector<Point2f> qp, tp;
        for (int j = 0; j < nt; ++j) {
            t.push_back(random_descriptor(rng));
            tp.push_back({pos(rng), pos(rng) * 0.6f});
        }
        for (int j = 0; j + 1 < nt && j < 10; j += 2) t[static_cast<std::size_t>(j + 1)] = t[static_cast<std::size_t>(j)];  // ties
        for (int i = 0; i < nq; ++i) {
            OrbDescriptor d = nt > 0 && i % 3 ? t[static_cast<std::size_t>(rng() % static_cast<unsigned>(nt))] : random_descriptor(rng);
            for (int b = 0; b < static_cast<int>(rng() % 30); ++b) d.bytes[rng() % 32] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            q.push_back(d);
            qp.push_back({pos(rng), pos(rng) * 0.6f});
        }
        DeviceArray<OrbDescriptor> dq(q), dt(t);
        DeviceArray<Point2f> dqp(qp), dtp(tp);
        for (const float ratio : {1.0f, 0.8f})
            for (const bool cross : {false, true})
                for (const int lim : {0, 1, 2}) {
                    MatcherConfig cfg;
                    cfg.ratio = ratio;
                    cfg.cross_check = cross;
                    if (lim == 1) cfg.radius = 120.0f;
                    if (lim == 2) cfg.epipolar_band = 3.0f;
                    const std::string what = std::to_string(nq) + "x" + std::to_string(nt) + " ratio " +
                                             std::to_string(ratio) + " cross " + std::to_string(cross) + " lim " +
                                             std::to_string(lim);
                    const auto ref = match_cpu(q.data(), nq, t.data(), nt, cfg, qp.data(), tp.data());
                    HammingMatcher m(cfg, 1000, Backend::Cuda);
                    EXPECT_EQ(m.match(q.data(), nq, t.data(), nt, qp.data(), tp.data()), ref) << what;
                    CudaStream s;
                    m.match_async(dq.p, nq, dt.p, nt, s.get(), dqp.p, dtp.p);
                    synchronize(s.get(), "test");
                    const std::vector<Match> got(m.host_matches(), m.host_matches() + nq);
                    EXPECT_EQ(got, ref) << what << " (async)";
                }
    }
}

TEST(FeatureDetectorOrb, CudaEqualsCpuWithAndWithoutGraphs) {
    KESTREL_REQUIRE_GPU();
    for (const bool graph : {false, true})
        for (const PyramidConfig pc : {PyramidConfig{8, 1.2f}, PyramidConfig{2, 2.0f}}) {
            DetectorConfig cfg;
            cfg.pyramid = pc;
            cfg.fast.threshold = 15;
            cfg.per_cell = 2;
            cfg.max_features = 1000;
            cfg.cuda_graph = graph;
            cfg.orb_descriptors = true;
            const HostImage img = test::crop(test::real_image("graf1.png"), 7, 3, 752, 480);
            FeatureDetector cpu(cfg, Backend::Cpu), gpu(cfg, Backend::Cuda);
            const auto kc = cpu.detect(img.view());
            const auto kg = gpu.detect(img.view());
            ASSERT_EQ(kc, kg);
            ASSERT_GT(kc.size(), 100u);
            for (std::size_t i = 0; i < kc.size(); ++i) {
                ASSERT_EQ(gpu.host_angles()[i], cpu.host_angles()[i]) << i;
                ASSERT_EQ(gpu.host_descriptors()[i], cpu.host_descriptors()[i]) << i;
            }
            // Stream-ordered from pinned memory and from a device image, repeatedly (graph replays).
            CudaStream s;
            PinnedImage pinned(img.width(), img.height());
            for (int y = 0; y < img.height(); ++y)
                std::copy(img.data() + static_cast<std::size_t>(y) * img.pitch(),
                          img.data() + static_cast<std::size_t>(y) * img.pitch() + img.width(),
                          pinned.data() + static_cast<std::size_t>(y) * pinned.pitch());
            const DeviceImage dev = upload(img.view());
            for (int r = 0; r < 3; ++r) {
                if (r == 1) gpu.detect_async(dev.view(), s.get());
                else gpu.detect_async(pinned.view(), s.get());
                synchronize(s.get(), "test");
                ASSERT_EQ(gpu.host_count(), static_cast<int>(kc.size()));
                for (std::size_t i = 0; i < kc.size(); ++i) {
                    ASSERT_EQ(gpu.host_descriptors()[i], cpu.host_descriptors()[i]) << "run " << r << " keypoint " << i;
                    ASSERT_EQ(gpu.host_angles()[i], cpu.host_angles()[i]);
                }
            }
            EXPECT_NE(gpu.device_descriptors(), nullptr);
            EXPECT_EQ(cpu.device_descriptors(), nullptr);
        }
}

}  // namespace
}  // namespace kestrel
