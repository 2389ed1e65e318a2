// RelativePoseEstimator on the CUDA backend against the CPU reference (relative_pose_cpu), bit for bit: the
// same chosen hypothesis, hypotheses used, inlier mask, E, R, t and cost (memcmp), over generated scenes
// (N, outlier ratio, seed, both methods), the stream-ordered form on a private stream, device-array input,
// several estimators on several streams, and bad input. The test prints how many calls were bit-identical.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/relative_pose.hpp"
#include "pose_test_util.hpp"
#include "test_data.hpp"

namespace kestrel::test {
namespace {

void expect_identical(const RelativePoseResult& g, const RelativePoseResult& c, const std::vector<std::uint8_t>& mg,
                      const std::vector<std::uint8_t>& mc, const char* what) {
    EXPECT_EQ(g.status, c.status) << what;
    EXPECT_EQ(g.best_hypothesis, c.best_hypothesis) << what;
    EXPECT_EQ(g.hypotheses, c.hypotheses) << what;
    EXPECT_EQ(g.inliers, c.inliers) << what;
    EXPECT_EQ(g.cheirality_inliers, c.cheirality_inliers) << what;
    EXPECT_EQ(std::memcmp(g.E.data(), c.E.data(), sizeof(double) * 9), 0) << what;
    EXPECT_EQ(std::memcmp(g.R.data(), c.R.data(), sizeof(double) * 9), 0) << what;
    EXPECT_EQ(std::memcmp(g.t.data(), c.t.data(), sizeof(double) * 3), 0) << what;
    EXPECT_EQ(std::memcmp(&g.cost, &c.cost, sizeof(double)), 0) << what;
    EXPECT_EQ(mg, mc) << what;
}

TEST(RelativePoseCuda, MatchesCpuBitForBit) {
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(31);
    int calls = 0, identical = 0;
    for (PoseMethod method : {PoseMethod::FivePoint, PoseMethod::TwoPointWithRotation}) {
        for (int n : {5, 50, 200, 1000}) {
            for (double outl : {0.0, 0.5, 0.7}) {
                for (std::uint64_t seed : {0ULL, 7ULL}) {
                    RelativePoseConfig cfg;
                    cfg.method = method;
                    cfg.seed = seed;
                    RelativePoseEstimator gpu(n, cfg, Backend::Cuda), cpu(n, cfg, Backend::Cpu);
                    SceneOptions o;
                    o.n = n;
                    o.outlier_ratio = outl;
                    o.noise_px = 0.5;
                    const PoseScene sc = make_scene(rng, o);
                    std::vector<std::uint8_t> mg(n, 7), mc(n, 9);
                    const RelativePoseResult g = gpu.estimate(sc.x1.data(), sc.x2.data(), n, mg.data(), sc.R.data());
                    const RelativePoseResult c = cpu.estimate(sc.x1.data(), sc.x2.data(), n, mc.data(), sc.R.data());
                    const std::string what = std::string(to_string(method)) + " n " + std::to_string(n) + " outliers " +
                                             std::to_string(outl) + " seed " + std::to_string(seed);
                    expect_identical(g, c, mg, mc, what.c_str());
                    ++calls;
                    identical += g.best_hypothesis == c.best_hypothesis && mg == mc &&
                                 std::memcmp(g.E.data(), c.E.data(), sizeof(double) * 9) == 0;
                }
            }
        }
    }
    std::printf("[relative-pose cuda] %d of %d calls bit-identical to the CPU reference\n", identical, calls);
}

TEST(RelativePoseCuda, CapsConfidenceAndFloatInputMatchCpu) {
    // Hypothesis caps below, at and across the GPU's 1024-hypothesis rounds; a lower confidence; no refinement;
    // float input: still the CPU's bits.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(53);
    SceneOptions o;
    o.n = 300;
    o.outlier_ratio = 0.7;
    o.noise_px = 0.5;
    const PoseScene sc = make_scene(rng, o);
    const std::vector<float> f1(sc.x1.begin(), sc.x1.end()), f2(sc.x2.begin(), sc.x2.end());
    for (int cap : {1, 100, 1024, 1025, 2500}) {
        for (double conf : {0.999, 0.9}) {
            RelativePoseConfig cfg;
            cfg.max_hypotheses = cap;
            cfg.confidence = conf;
            cfg.refine = cap != 100;
            RelativePoseEstimator gpu(o.n, cfg, Backend::Cuda), cpu(o.n, cfg, Backend::Cpu);
            std::vector<std::uint8_t> mg(o.n), mc(o.n);
            const RelativePoseResult g = gpu.estimate(f1.data(), f2.data(), o.n, mg.data());
            const RelativePoseResult c = cpu.estimate(f1.data(), f2.data(), o.n, mc.data());
            const std::string what = "cap " + std::to_string(cap) + " confidence " + std::to_string(conf);
            expect_identical(g, c, mg, mc, what.c_str());
        }
    }
}

TEST(RelativePoseCuda, StreamOrderedDeviceArraysAndSeveralStreams) {
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(41);
    const int n = 400;
    SceneOptions o;
    o.n = n;
    o.outlier_ratio = 0.5;
    o.noise_px = 0.5;
    const PoseScene a = make_scene(rng, o), b = make_scene(rng, o);
    RelativePoseEstimator cpu(n, {}, Backend::Cpu);
    std::vector<std::uint8_t> ma(n), mb(n), ga(n), gb(n), gd(n);
    const RelativePoseResult ca = cpu.estimate(a.x1.data(), a.x2.data(), n, ma.data());
    const RelativePoseResult cb = cpu.estimate(b.x1.data(), b.x2.data(), n, mb.data());
    CudaStream s1, s2;
    RelativePoseEstimator g1(n, {}, Backend::Cuda), g2(n, {}, Backend::Cuda);
    g1.estimate_async(a.x1.data(), a.x2.data(), n, s1.get());
    g2.estimate_async(b.x1.data(), b.x2.data(), n, s2.get());
    const RelativePoseResult ra = g1.finish(ga.data());
    const RelativePoseResult rb = g2.finish(gb.data());
    expect_identical(ra, ca, ga, ma, "stream 1");
    expect_identical(rb, cb, gb, mb, "stream 2");
    // device arrays
    double *d1 = nullptr, *d2 = nullptr;
    ASSERT_EQ(cudaMalloc(&d1, sizeof(double) * 2 * n), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d2, sizeof(double) * 2 * n), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d1, a.x1.data(), sizeof(double) * 2 * n, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d2, a.x2.data(), sizeof(double) * 2 * n, cudaMemcpyHostToDevice), cudaSuccess);
    g1.estimate_device_async(d1, d2, n, s1.get());
    const RelativePoseResult rd = g1.finish(gd.data());
    expect_identical(rd, ca, gd, ma, "device arrays");
    cudaFree(d1);
    cudaFree(d2);
}

TEST(RelativePoseCuda, BadInputAndStatus) {
    KESTREL_REQUIRE_GPU();
    RelativePoseEstimator g(10, {}, Backend::Cuda);
    double x[40] = {0};
    try {
        g.estimate(x, x, 11);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "n");
    }
    EXPECT_EQ(g.estimate(x, x, 3).status, PoseStatus::TooFewPoints);
    EXPECT_EQ(g.estimate(x, x, 10).status, PoseStatus::NoModel);  // all points equal: every sample degenerate
    EXPECT_THROW(g.finish(), StateError);  // no pending call
}

}  // namespace
}  // namespace kestrel::test
