// RelativePoseEstimator on the CUDA backend against the CPU reference (relative_pose_cpu), bit for bit: the
// same chosen hypothesis, hypotheses used, model (five-point, two-point, rotation only), inlier mask, E, R, t
// and cost (memcmp), over generated scenes (N, outlier ratio, seed, both methods; hypothesis caps below and
// above the hypotheses in flight; a wide fisheye's bearings with per-point scales; static and purely rotating
// cameras; a second call of the same estimator), the
// stream-ordered form on a private stream, device-array input, the tracker's device entry (float bearings or
// normalized points on the device, the count on the device, the rotation prior, the device mask and record,
// calls in a row without finish()), several estimators on several streams, and bad input. The tests print how
// many calls were bit-identical.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/relative_pose.hpp"
#include "bearing_test_util.hpp"
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
    EXPECT_EQ(g.model, c.model) << what;
    EXPECT_EQ(g.rotation_inliers, c.rotation_inliers) << what;
    EXPECT_EQ(mg, mc) << what;
}

bool identical(const RelativePoseResult& g, const RelativePoseResult& c, const std::vector<std::uint8_t>& mg,
               const std::vector<std::uint8_t>& mc) {
    return g.status == c.status && g.model == c.model && g.best_hypothesis == c.best_hypothesis &&
           g.hypotheses == c.hypotheses && g.inliers == c.inliers && g.rotation_inliers == c.rotation_inliers &&
           std::memcmp(g.E.data(), c.E.data(), sizeof(double) * 9) == 0 &&
           std::memcmp(g.R.data(), c.R.data(), sizeof(double) * 9) == 0 &&
           std::memcmp(g.t.data(), c.t.data(), sizeof(double) * 3) == 0 && std::memcmp(&g.cost, &c.cost, 8) == 0 &&
           mg == mc;
}

/// Device copies of host arrays (freed by the destructor).
template <typename T>
struct DeviceArray {
    T* p = nullptr;
    explicit DeviceArray(const std::vector<T>& h) {
        EXPECT_EQ(cudaMalloc(&p, sizeof(T) * (h.empty() ? 1 : h.size())), cudaSuccess);
        if (!h.empty()) EXPECT_EQ(cudaMemcpy(p, h.data(), sizeof(T) * h.size(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~DeviceArray() { cudaFree(p); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
};

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
                    // A second call of the same estimator (the state the first call left): the same result.
                    std::vector<std::uint8_t> mg2(n, 5);
                    const RelativePoseResult g2 = gpu.estimate(sc.x1.data(), sc.x2.data(), n, mg2.data(), sc.R.data());
                    expect_identical(g2, c, mg2, mc, (what + " (second call)").c_str());
                }
            }
        }
    }
    std::printf("[relative-pose cuda] %d of %d calls bit-identical to the CPU reference\n", identical, calls);
}

TEST(RelativePoseCuda, CapsConfidenceAndFloatInputMatchCpu) {
    // Hypothesis caps below, at and above the hypotheses in flight (512); a lower confidence; no refinement;
    // float input: still the CPU's bits.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(53);
    SceneOptions o;
    o.n = 300;
    o.outlier_ratio = 0.7;
    o.noise_px = 0.5;
    const PoseScene sc = make_scene(rng, o);
    const std::vector<float> f1(sc.x1.begin(), sc.x1.end()), f2(sc.x2.begin(), sc.x2.end());
    for (int cap : {1, 100, 512, 513, 2048, 2049, 2500}) {
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

TEST(RelativePoseCuda, HypothesesBeyondTheRingMatchCpu) {
    // A threshold that only a sample's own points meet (1e-3 px): both passes run to their caps, beyond the
    // kernel's ring of 4096 results (its slots are reused once scanned). 200 points: 2 or 3 inliers of 200 ask
    // the two-point stop for more than 6000 hypotheses (of 60, 3 inliers stopped it at 2782).
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(57);
    SceneOptions o;
    o.n = 200;
    o.outlier_ratio = 0.5;
    o.noise_px = 0.5;
    const PoseScene sc = make_scene(rng, o);
    for (PoseMethod method : {PoseMethod::FivePoint, PoseMethod::TwoPointWithRotation}) {
        RelativePoseConfig cfg;
        cfg.method = method;
        cfg.threshold_px = 1e-3;
        cfg.max_hypotheses = 6000;
        RelativePoseEstimator gpu(o.n, cfg, Backend::Cuda), cpu(o.n, cfg, Backend::Cpu);
        std::vector<std::uint8_t> mg(o.n), mc(o.n);
        const RelativePoseResult g = gpu.estimate(sc.x1.data(), sc.x2.data(), o.n, mg.data(), sc.R.data());
        const RelativePoseResult c = cpu.estimate(sc.x1.data(), sc.x2.data(), o.n, mc.data(), sc.R.data());
        expect_identical(g, c, mg, mc, to_string(method));
        EXPECT_EQ(c.hypotheses, 6000) << to_string(method);
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

TEST(RelativePoseCuda, BearingsAndRotationOnlyMatchCpu) {
    // The host bearing entry on both backends: a wide fisheye (with and without per-point scales), static and
    // purely rotating cameras (the rotation-only model decides), both methods.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(606);
    const Camera cam = wide_fisheye_848x800();
    int calls = 0, same = 0;
    for (int kind = 0; kind < 3; ++kind) {
        for (double outl : {0.1, 0.3}) {
            BearingSceneOptions o;
            o.n = 400;
            o.outlier_ratio = outl;
            o.static_camera = kind == 1;
            o.pure_rotation = kind == 2;
            const BearingScene sc = make_bearing_scene(rng, cam, o);
            for (PoseMethod method : {PoseMethod::FivePoint, PoseMethod::TwoPointWithRotation}) {
                for (bool scales : {true, false}) {
                    RelativePoseConfig cfg;
                    cfg.focal_px = 286.0;
                    cfg.method = method;
                    RelativePoseEstimator gpu(o.n, cfg, Backend::Cuda), cpu(o.n, cfg, Backend::Cpu);
                    std::vector<std::uint8_t> mg(o.n, 7), mc(o.n, 9);
                    const double* ppr = scales ? sc.ppr.data() : nullptr;
                    const RelativePoseResult g = gpu.estimate_bearings(sc.b1.data(), sc.b2.data(), o.n, mg.data(),
                                                                       sc.R.data(), ppr);
                    const RelativePoseResult c = cpu.estimate_bearings(sc.b1.data(), sc.b2.data(), o.n, mc.data(),
                                                                       sc.R.data(), ppr);
                    const std::string what = "kind " + std::to_string(kind) + " outliers " + std::to_string(outl) +
                                             " " + to_string(method) + (scales ? " scales" : "");
                    expect_identical(g, c, mg, mc, what.c_str());
                    if (kind > 0) EXPECT_EQ(c.model, PoseModel::RotationOnly) << what;
                    ++calls;
                    same += identical(g, c, mg, mc);
                }
            }
        }
    }
    std::printf("[relative-pose cuda] bearings: %d of %d calls bit-identical to the CPU reference\n", same, calls);
}

TEST(RelativePoseCuda, DeviceEntryMatchesCpu) {
    // The tracker's entry: float bearings (and float pixels per radian) in device memory, the count on the device
    // (below, at and beyond the bound, and below the minimum), with and without the rotation prior; the record
    // and the mask read from device memory before finish(), then finish()'s host copy. The CPU reference gets
    // the same float values as doubles.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(707);
    const Camera cam = wide_fisheye_848x800();
    const int bound = 500;
    int calls = 0, same = 0;
    for (int kind = 0; kind < 2; ++kind) {
        BearingSceneOptions o;
        o.n = bound;
        o.outlier_ratio = 0.3;
        o.pure_rotation = kind == 1;
        const BearingScene sc = make_bearing_scene(rng, cam, o);
        const std::vector<float> fb1(sc.b1.begin(), sc.b1.end()), fb2(sc.b2.begin(), sc.b2.end()),
            fppr(sc.ppr.begin(), sc.ppr.end());
        const std::vector<double> db1(fb1.begin(), fb1.end()), db2(fb2.begin(), fb2.end()),
            dppr(fppr.begin(), fppr.end());
        DeviceArray<float> d1(fb1), d2(fb2), dp(fppr);
        DeviceArray<int> dcount(std::vector<int>{0});
        CudaStream stream;
        for (bool prior : {false, true}) {
            RelativePoseConfig cfg;
            cfg.focal_px = 286.0;
            RelativePoseConfig ccfg = cfg;
            ccfg.method = prior ? PoseMethod::TwoPointWithRotation : PoseMethod::FivePoint;
            RelativePoseEstimator gpu(bound, cfg, Backend::Cuda), cpu(bound, ccfg, Backend::Cpu);
            for (int count : {bound, 437, 9999, 5, 3, -4}) {
                for (bool scales : {true, false}) {
                    const int used = count < 0 ? 0 : (count > bound ? bound : count);
                    ASSERT_EQ(cudaMemcpy(dcount.p, &count, sizeof(int), cudaMemcpyHostToDevice), cudaSuccess);
                    PoseDeviceInput in;
                    in.bearings1 = d1.p;
                    in.bearings2 = d2.p;
                    in.count = bound;
                    in.device_count = dcount.p;
                    in.pixels_per_radian = scales ? dp.p : nullptr;
                    in.rotation_prior = prior ? sc.R.data() : nullptr;
                    gpu.estimate_device_async(in, stream.get());
                    PoseRecord rec{};
                    std::vector<std::uint8_t> dmask(bound, 5), mg(bound, 7), mc(used, 9);
                    ASSERT_EQ(cudaMemcpyAsync(&rec, gpu.device_record(), sizeof rec, cudaMemcpyDeviceToHost, stream.get()),
                              cudaSuccess);
                    ASSERT_EQ(cudaMemcpyAsync(dmask.data(), gpu.device_mask(), bound, cudaMemcpyDeviceToHost, stream.get()),
                              cudaSuccess);
                    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
                    const RelativePoseResult g = gpu.finish(mg.data());
                    const RelativePoseResult c = cpu.estimate_bearings(db1.data(), db2.data(), used, mc.data(),
                                                                       sc.R.data(), scales ? dppr.data() : nullptr);
                    const std::string what = std::string(kind ? "rotating" : "moving") + (prior ? " prior" : "") +
                                             " count " + std::to_string(count) + (scales ? " scales" : "");
                    std::vector<std::uint8_t> head(mg.begin(), mg.begin() + used);
                    expect_identical(g, c, head, mc, what.c_str());
                    for (int i = used; i < bound; ++i) {
                        ASSERT_EQ(mg[i], 0) << what << " index " << i;
                        ASSERT_EQ(dmask[i], 0) << what << " index " << i;
                    }
                    EXPECT_EQ(dmask, mg) << what;
                    EXPECT_EQ(rec.count, used) << what;
                    EXPECT_EQ(rec.status, static_cast<int>(g.status)) << what;
                    EXPECT_EQ(rec.model, static_cast<int>(g.model)) << what;
                    EXPECT_EQ(rec.inliers, g.inliers) << what;
                    EXPECT_EQ(std::memcmp(rec.R, g.R.data(), sizeof rec.R), 0) << what;
                    EXPECT_EQ(std::memcmp(rec.t, g.t.data(), sizeof rec.t), 0) << what;
                    ++calls;
                    same += identical(g, c, head, mc);
                }
            }
        }
    }
    std::printf("[relative-pose cuda] device entry: %d of %d calls bit-identical to the CPU reference\n", same, calls);
}

TEST(RelativePoseCuda, DeviceEntryNormalizedPointsAndCallsInARow) {
    // Normalized points (doubles, z = 1) on the device; three frames enqueued in a row on one stream with no
    // finish() between them (the tracker's pattern): each frame's device record is copied on the stream, and
    // every one equals the CPU reference of its frame.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(808);
    const int n = 300;
    std::vector<PoseScene> scenes;
    for (int f = 0; f < 3; ++f) {
        SceneOptions o;
        o.n = n;
        o.outlier_ratio = 0.4;
        o.noise_px = 0.5;
        o.pure_rotation = f == 1;
        if (f == 1) o.noise_px = 0.3;
        scenes.push_back(make_scene(rng, o));
    }
    std::vector<DeviceArray<double>*> arrays;
    RelativePoseEstimator gpu(n, {}, Backend::Cuda), cpu(n, {}, Backend::Cpu);
    CudaStream stream;
    std::vector<PoseRecord> recs(3);
    std::vector<std::vector<std::uint8_t>> masks(3, std::vector<std::uint8_t>(n));
    for (int f = 0; f < 3; ++f) {
        arrays.push_back(new DeviceArray<double>(scenes[f].x1));
        arrays.push_back(new DeviceArray<double>(scenes[f].x2));
        PoseDeviceInput in;
        in.normalized1 = arrays[2 * f]->p;
        in.normalized2 = arrays[2 * f + 1]->p;
        in.count = n;
        gpu.estimate_device_async(in, stream.get());
        ASSERT_EQ(cudaMemcpyAsync(&recs[f], gpu.device_record(), sizeof(PoseRecord), cudaMemcpyDeviceToHost, stream.get()),
                  cudaSuccess);
        ASSERT_EQ(cudaMemcpyAsync(masks[f].data(), gpu.device_mask(), n, cudaMemcpyDeviceToHost, stream.get()),
                  cudaSuccess);
    }
    std::vector<std::uint8_t> last(n);
    const RelativePoseResult g = gpu.finish(last.data());
    for (int f = 0; f < 3; ++f) {
        std::vector<std::uint8_t> mc(n);
        const RelativePoseResult c = cpu.estimate(scenes[f].x1.data(), scenes[f].x2.data(), n, mc.data());
        const std::string what = "frame " + std::to_string(f);
        EXPECT_EQ(recs[f].status, static_cast<int>(c.status)) << what;
        EXPECT_EQ(recs[f].model, static_cast<int>(c.model)) << what;
        EXPECT_EQ(recs[f].hypotheses, c.hypotheses) << what;
        EXPECT_EQ(recs[f].best_hypothesis, c.best_hypothesis) << what;
        EXPECT_EQ(recs[f].inliers, c.inliers) << what;
        EXPECT_EQ(std::memcmp(recs[f].R, c.R.data(), sizeof(double) * 9), 0) << what;
        EXPECT_EQ(std::memcmp(recs[f].t, c.t.data(), sizeof(double) * 3), 0) << what;
        EXPECT_EQ(std::memcmp(recs[f].E, c.E.data(), sizeof(double) * 9), 0) << what;
        EXPECT_EQ(masks[f], mc) << what;
        if (f == 1) EXPECT_EQ(c.model, PoseModel::RotationOnly);
        if (f == 2) expect_identical(g, c, last, mc, "finish after three frames");
    }
    for (DeviceArray<double>* a : arrays) delete a;
}

TEST(RelativePoseCuda, TwoPointCallMatchesCpu) {
    // The two-point call's kernel alone (small enough for the sanitizers): a translating, a purely rotating and a
    // static camera, and an inlier fraction (25 %) whose passes run past the first wave, from the host entry and
    // from the device entry with the count on the device.
    KESTREL_REQUIRE_GPU();
    std::mt19937_64 rng(4141);
    int same = 0, calls = 0;
    for (int f = 0; f < 4; ++f) {
        SceneOptions o;
        o.n = 240;
        o.noise_px = 0.5;
        o.outlier_ratio = f == 3 ? 0.75 : 0.3;
        o.pure_rotation = f == 1;
        if (f == 2) o.max_angle = 0.0;
        PoseScene sc = make_scene(rng, o);
        if (f == 2) {  // static: the second view is the first plus noise
            sc.x2 = sc.x1;
            for (std::size_t i = 0; i < sc.x2.size(); ++i) sc.x2[i] += 0.5 / 500.0 * std::sin(1.7 * static_cast<double>(i));
        }
        RelativePoseConfig cfg;
        cfg.method = PoseMethod::TwoPointWithRotation;
        RelativePoseEstimator gpu(o.n, cfg, Backend::Cuda), cpu(o.n, cfg, Backend::Cpu);
        std::vector<std::uint8_t> mg(o.n), mc(o.n);
        const RelativePoseResult g = gpu.estimate(sc.x1.data(), sc.x2.data(), o.n, mg.data(), sc.R.data());
        const RelativePoseResult c = cpu.estimate(sc.x1.data(), sc.x2.data(), o.n, mc.data(), sc.R.data());
        const std::string what = "scene " + std::to_string(f);
        expect_identical(g, c, mg, mc, what.c_str());
        same += identical(g, c, mg, mc) ? 1 : 0;
        ++calls;
        if (f == 3) EXPECT_GT(c.hypotheses, 64) << "past the first wave";
        // The device entry, the count on the device (all but the last 7 points).
        DeviceArray<double> d1(sc.x1), d2(sc.x2);
        DeviceArray<int> dc(std::vector<int>{o.n - 7});
        PoseDeviceInput in;
        in.normalized1 = d1.p;
        in.normalized2 = d2.p;
        in.count = o.n;
        in.device_count = dc.p;
        in.rotation_prior = sc.R.data();
        gpu.estimate_device_async(in, nullptr);
        std::vector<std::uint8_t> mg2(o.n), mc2(o.n - 7);
        const RelativePoseResult g2 = gpu.finish(mg2.data());
        const RelativePoseResult c2 = cpu.estimate(sc.x1.data(), sc.x2.data(), o.n - 7, mc2.data(), sc.R.data());
        mg2.resize(static_cast<std::size_t>(o.n - 7));
        expect_identical(g2, c2, mg2, mc2, (what + " device entry").c_str());
        same += identical(g2, c2, mg2, mc2) ? 1 : 0;
        ++calls;
    }
    std::printf("[ two-point call ] %d of %d calls bit-identical\n", same, calls);
}

/// Point counts around and well past the finish's block of 256 threads (a thread with one point more than
/// another, 4 and 36 points per thread; odd counts), from the host entry and from the device entry with the count
/// on the device (two fewer points), a purely rotating camera at 2305 points.
void counts_match_cpu(PoseMethod method, std::initializer_list<int> counts, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    int same = 0, calls = 0;
    for (int n : counts) {
        SceneOptions o;
        o.n = n;
        o.noise_px = 0.5;
        o.outlier_ratio = 0.4;
        o.pure_rotation = n == 2305;
        const PoseScene sc = make_scene(rng, o);
        RelativePoseConfig cfg;
        cfg.method = method;
        RelativePoseEstimator gpu(n, cfg, Backend::Cuda), cpu(n, cfg, Backend::Cpu);
        std::vector<std::uint8_t> mg(n, 3), mc(n, 4);
        const RelativePoseResult g = gpu.estimate(sc.x1.data(), sc.x2.data(), n, mg.data(), sc.R.data());
        const RelativePoseResult c = cpu.estimate(sc.x1.data(), sc.x2.data(), n, mc.data(), sc.R.data());
        const std::string what = std::string(to_string(method)) + " n " + std::to_string(n);
        expect_identical(g, c, mg, mc, what.c_str());
        EXPECT_EQ(c.status, PoseStatus::Ok) << what;
        same += identical(g, c, mg, mc) ? 1 : 0;
        ++calls;
        DeviceArray<double> d1(sc.x1), d2(sc.x2);
        const int m = n - 2;
        DeviceArray<int> dc(std::vector<int>{m});
        PoseDeviceInput in;
        in.normalized1 = d1.p;
        in.normalized2 = d2.p;
        in.count = n;
        in.device_count = dc.p;
        in.rotation_prior = method == PoseMethod::FivePoint ? nullptr : sc.R.data();  // a prior: two-point
        gpu.estimate_device_async(in, nullptr);
        std::vector<std::uint8_t> mg2(n), mc2(m);
        const RelativePoseResult g2 = gpu.finish(mg2.data());
        const RelativePoseResult c2 = cpu.estimate(sc.x1.data(), sc.x2.data(), m, mc2.data(), sc.R.data());
        mg2.resize(static_cast<std::size_t>(m));
        expect_identical(g2, c2, mg2, mc2, (what + " device entry").c_str());
        same += identical(g2, c2, mg2, mc2) ? 1 : 0;
        ++calls;
    }
    std::printf("[ point counts ] %s: %d of %d calls bit-identical\n", to_string(method), same, calls);
}

TEST(RelativePoseCuda, PointCountsTwoPointMatchCpu) {
    KESTREL_REQUIRE_GPU();
    counts_match_cpu(PoseMethod::TwoPointWithRotation, {256, 257, 1001, 2305, 4097, 9001}, 4142);
}

TEST(RelativePoseCuda, PointCountsFivePointMatchCpu) {
    KESTREL_REQUIRE_GPU();
    counts_match_cpu(PoseMethod::FivePoint, {257, 1001, 4097}, 4143);
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
    PoseDeviceInput in;
    in.count = 11;
    try {
        g.estimate_device_async(in, nullptr);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "count");
    }
    in.count = 5;
    try {
        g.estimate_device_async(in, nullptr);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "bearings1");
    }
    // The device entry checks its rotation prior as the host entries do (a reflection: det -1).
    const double mirror[9] = {1, 0, 0, 0, 1, 0, 0, 0, -1};
    PoseDeviceInput no_rotation;
    no_rotation.rotation_prior = mirror;
    try {
        g.estimate_device_async(no_rotation, nullptr);
        ADD_FAILURE() << "no exception";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "rotation_prior");
        EXPECT_NE(std::string(e.what()).find("must be +1"), std::string::npos) << e.what();
    }
    EXPECT_NE(g.device_mask(), nullptr);
    EXPECT_NE(g.device_record(), nullptr);
}

}  // namespace
}  // namespace kestrel::test
