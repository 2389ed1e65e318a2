// GPU LK tracker against the CPU reference, every field of every result (x, y, gain, offset, residual,
// iterations, status): bit-identical on x86-64 hosts (the stated tolerance elsewhere: tests/support/
// track_compare.hpp), in every mode, from device and pinned buffers, with stored (first-frame) templates,
// several trackers on several streams, every patch layout on odd sizes, and the GPU-side validation.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "kestrel/lk_tracker.hpp"
#include "lk_test_util.hpp"
#include "test_data.hpp"
#include "scoped_env.hpp"
#include "track_compare.hpp"

namespace kestrel {
namespace {

template <typename T>
struct DevBuf {
    T* p = nullptr;
    explicit DevBuf(std::size_t n) { EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p), n * sizeof(T) + 1), cudaSuccess); }
    DevBuf(const std::vector<T>& v) : DevBuf(v.size()) {
        EXPECT_EQ(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
    }
    ~DevBuf() { cudaFree(p); }
    std::vector<T> get(std::size_t n) const {
        std::vector<T> v(n);
        EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
        return v;
    }
};

DevicePyramid device_pyramid(const HostImage& img, const PyramidConfig& cfg) {
    DevicePyramid p(img.width(), img.height(), cfg);
    const DeviceImage d = upload(img.view());
    p.build(d.view(), nullptr);
    synchronize(nullptr);
    return p;
}

// Compares GPU and CPU results field by field (tests/support/track_compare.hpp); every mismatch fails the test.
// Returns the number of results equal in every field (all of them, when the test passes).
int expect_match(const std::vector<LkResult>& gpu, const std::vector<LkResult>& cpu, const std::string& what) {
    const int bad = test::count_mismatches(
        gpu, cpu, [](const LkResult& g, const LkResult& c) { return test::lk_result_diff(g, c); },
        [&](const std::string& m) { ADD_FAILURE() << what << ": GPU vs CPU " << m; });
    EXPECT_EQ(bad, 0) << what;
    return static_cast<int>(cpu.size()) - bad;
}

struct Case {
    const char* image;
    double dx, dy, gain, offset;
};

const Case kCases[] = {{"graf1.png", 2.3, -1.4, 1.0, 0.0},
                       {"vtest_000.png", -5.2, 3.9, 1.3, -20.0},
                       {"aloeL.png", 0.6, 7.1, 0.75, 25.0}};

std::vector<Point2f> points_with_lost_cases(const HostImage& ref) {
    auto pts = test::textured_points(ref, 20, 30);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    pts.push_back({-50.0f, 10.0f});                                            // outside
    pts.push_back({static_cast<float>(ref.width()) - 3.0f, 100.0f});          // template does not fit
    pts.push_back({nan, 10.0f});                                              // NaN in device memory
    pts.push_back({static_cast<float>(ref.width()) / 2, 4.0f});               // near the top border
    return pts;
}

TEST(LkGpu, MatchesCpuReferenceInEveryMode) {
    KESTREL_REQUIRE_GPU();
    for (const Case& c : kCases) {
        const test::FloatImage g = test::blurred(test::real_image(c.image), 1.0);
        const HostImage ref = test::moved(g, 0, 0), cur = test::moved(g, c.dx, c.dy, c.gain, c.offset);
        const auto pts = points_with_lost_cases(ref);
        std::vector<LkGuess> guesses;
        for (std::size_t i = 0; i < pts.size(); ++i)
            guesses.push_back({pts[i].x + static_cast<float>(c.dx) * (i % 2 ? 0.8f : 0.0f),
                               pts[i].y + static_cast<float>(c.dy) * (i % 2 ? 0.8f : 0.0f), i % 3 ? 1.0f : 1.1f,
                               i % 3 ? 0.0f : 4.0f});
        // The CPU reference rejects a NaN point (InvalidArgument); the GPU reports it LostOutOfBounds.
        const std::size_t nan_index = pts.size() - 2;
        std::vector<Point2f> cpu_pts = pts;
        std::vector<LkGuess> cpu_guesses = guesses;
        cpu_pts.erase(cpu_pts.begin() + static_cast<long>(nan_index));
        cpu_guesses.erase(cpu_guesses.begin() + static_cast<long>(nan_index));
        for (LkMode mode : {LkMode::Translation, LkMode::TranslationOffset, LkMode::TranslationGain,
                            LkMode::TranslationGainOffset}) {
            LkConfig cfg;
            cfg.mode = mode;
            const auto rp = build_pyramid_cpu(ref.view(), cfg.pyramid), cp = build_pyramid_cpu(cur.view(), cfg.pyramid);
            const DevicePyramid dr = device_pyramid(ref, cfg.pyramid), dc = device_pyramid(cur, cfg.pyramid);
            const int n = static_cast<int>(pts.size());
            DeviceLkTracker lk(cfg, n);
            DevBuf<Point2f> dpts(pts);
            DevBuf<LkGuess> dguess(guesses);
            DevBuf<LkResult> dres(pts.size());
            const std::string what = std::string(c.image) + " " + to_string(mode);
            int same = 0;
            for (bool with_guesses : {false, true}) {
                lk.track_async(dr, dc, dpts.p, with_guesses ? dguess.p : nullptr, dres.p, n, nullptr);
                synchronize(nullptr);
                auto gpu = dres.get(pts.size());
                EXPECT_EQ(gpu[nan_index].status, TrackStatus::LostOutOfBounds) << what << ": NaN point";
                gpu.erase(gpu.begin() + static_cast<long>(nan_index));
                const auto cpu = lk_track_cpu(rp, cp, cpu_pts, cfg, with_guesses ? &cpu_guesses : nullptr);
                same += expect_match(gpu, cpu, what + (with_guesses ? " (guesses)" : " (no guesses)"));
            }
            std::printf("[lk gpu] %-32s %zu features x 2: %d equal to the CPU reference in every field%s\n",
                        what.c_str(), cpu_pts.size(), same, test::kBitExactHost ? " (bits)" : "");
        }
    }
}

TEST(LkGpu, PinnedHostBuffersWorkLikeDeviceBuffers) {
    KESTREL_REQUIRE_GPU();
    const test::FloatImage g = test::blurred(test::real_image("graf1.png"), 1.0);
    const HostImage ref = test::moved(g, 0, 0), cur = test::moved(g, -1.7, 2.2, 1.1, 5.0);
    const auto pts = test::textured_points(ref, 24, 30);
    const LkConfig cfg;
    const auto cpu = lk_track_cpu(build_pyramid_cpu(ref.view(), cfg.pyramid), build_pyramid_cpu(cur.view(), cfg.pyramid),
                                  pts, cfg);
    Point2f* hp = nullptr;
    LkResult* hr = nullptr;
    ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&hp), pts.size() * sizeof(Point2f)), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&hr), pts.size() * sizeof(LkResult)), cudaSuccess);
    std::copy(pts.begin(), pts.end(), hp);
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    const DevicePyramid dr = device_pyramid(ref, cfg.pyramid), dc = device_pyramid(cur, cfg.pyramid);
    DeviceLkTracker lk(cfg, static_cast<int>(pts.size()));
    lk.track_async(dr, dc, hp, nullptr, hr, static_cast<int>(pts.size()), s);
    synchronize(s);
    expect_match(std::vector<LkResult>(hr, hr + pts.size()), cpu, "pinned");
    cudaStreamDestroy(s);
    cudaFreeHost(hp);
    cudaFreeHost(hr);
}

TEST(LkGpu, StoredTemplatesMatchTheReference) {
    KESTREL_REQUIRE_GPU();
    const test::FloatImage g = test::blurred(test::real_image("vtest_000.png"), 1.0);
    const HostImage ref = test::moved(g, 0, 0);
    LkConfig cfg;
    cfg.template_source = TemplateSource::FirstFrame;
    const auto pts = test::textured_points(ref, 20, 30);
    const int n = static_cast<int>(pts.size());
    std::vector<std::int32_t> slots(pts.size());
    for (int i = 0; i < n; ++i) slots[static_cast<std::size_t>(i)] = (i * 7 + 3) % n;  // a permutation (n not a multiple of 7)
    ASSERT_NE(n % 7, 0);
    DeviceLkTracker lk(cfg, n);
    const DevicePyramid dr = device_pyramid(ref, cfg.pyramid);
    DevBuf<Point2f> dpts(pts);
    DevBuf<std::int32_t> dslots(slots);
    lk.store_templates_async(dr, dpts.p, dslots.p, n, nullptr);
    // Two later frames tracked against the stored templates, each equal to a CPU pair (ref, frame).
    for (const Case& c : kCases) {
        const HostImage cur = test::moved(g, c.dx, c.dy, c.gain, c.offset);
        std::vector<LkGuess> guesses;
        for (const auto& p : pts) guesses.push_back({p.x, p.y, 1.0f, 0.0f});
        const auto cpu = lk_track_cpu(build_pyramid_cpu(ref.view(), cfg.pyramid),
                                      build_pyramid_cpu(cur.view(), cfg.pyramid), pts, cfg, &guesses);
        const DevicePyramid dc = device_pyramid(cur, cfg.pyramid);
        DevBuf<LkGuess> dg(guesses);
        DevBuf<LkResult> dres(pts.size());
        lk.track_stored_async(dc, dslots.p, dg.p, dres.p, n, nullptr);
        synchronize(nullptr);
        expect_match(dres.get(pts.size()), cpu, std::string("stored ") + c.image);
    }
}

// The 16 x 16 instances of the tracking kernels run a track on 32 or 16 lanes (KESTREL_LK_LANES; unset: the
// library's choice, 32): lane l of a group of 16 does the work of the warp's lanes l and l + 16 and keeps their
// partial sums apart until the butterfly's first stage, so both choices sum in the warp's order and equal the CPU
// reference in every field, live and stored templates, with and without guesses (two tracks per warp: neighbours
// in a warp that end at different iterations, levels and statuses, as the lost cases make them).
TEST(LkGpu, EveryLanesPerTrackMatchesTheCpuReference) {
    KESTREL_REQUIRE_GPU();
    const test::ScopedEnv restore("KESTREL_LK_LANES");
    const test::FloatImage g = test::blurred(test::real_image("vtest_000.png"), 1.0);
    const HostImage ref = test::moved(g, 0, 0), cur = test::moved(g, -5.2, 3.9, 1.3, -20.0);
    LkConfig cfg;
    cfg.template_source = TemplateSource::FirstFrame;
    const auto rp = build_pyramid_cpu(ref.view(), cfg.pyramid), cp = build_pyramid_cpu(cur.view(), cfg.pyramid);
    const DevicePyramid dr = device_pyramid(ref, cfg.pyramid), dc = device_pyramid(cur, cfg.pyramid);
    auto pts = test::textured_points(ref, 20, 30);
    pts.push_back({-50.0f, 10.0f});                                    // outside
    pts.push_back({static_cast<float>(ref.width()) - 3.0f, 100.0f});  // template does not fit
    const int n = static_cast<int>(pts.size());
    std::vector<LkGuess> guesses;
    for (std::size_t i = 0; i < pts.size(); ++i)
        guesses.push_back({pts[i].x - 5.2f * (i % 2 ? 0.8f : 0.0f), pts[i].y + 3.9f * (i % 2 ? 0.8f : 0.0f),
                           i % 3 ? 1.0f : 1.1f, i % 3 ? 0.0f : 4.0f});
    std::vector<std::int32_t> slots(pts.size());
    for (int i = 0; i < n; ++i) slots[static_cast<std::size_t>(i)] = i;
    const auto cpu_live = lk_track_cpu(rp, cp, pts, cfg, &guesses);
    DevBuf<Point2f> dpts(pts);
    DevBuf<LkGuess> dguess(guesses);
    DevBuf<std::int32_t> dslots(slots);
    DevBuf<LkResult> dres(pts.size());
    for (const char* lanes : {"32", "16"}) {
        setenv("KESTREL_LK_LANES", lanes, 1);
        DeviceLkTracker lk(cfg, n);
        lk.track_async(dr, dc, dpts.p, dguess.p, dres.p, n, nullptr);
        synchronize(nullptr);
        const int live = expect_match(dres.get(pts.size()), cpu_live, std::string("live, lanes ") + lanes);
        lk.store_templates_async(dr, dpts.p, dslots.p, n, nullptr);
        lk.track_stored_async(dc, dslots.p, dguess.p, dres.p, n, nullptr);
        synchronize(nullptr);
        const auto gpu_stored = dres.get(pts.size());
        // The stored templates are the reference pyramid's: the CPU's pair (ref, cur) from the guesses (the points
        // whose template does not fit are lost either way).
        const int stored = expect_match(gpu_stored, cpu_live, std::string("stored, lanes ") + lanes);
        std::printf("[lk gpu] %s lanes per track: %d + %d of %d features equal to the CPU reference in every field\n",
                    lanes, live, stored, n);
    }
    // Anything else is refused, naming the variable.
    setenv("KESTREL_LK_LANES", "12", 1);
    DeviceLkTracker lk(cfg, n);
    try {
        lk.track_async(dr, dc, dpts.p, dguess.p, dres.p, n, nullptr);
        ADD_FAILURE() << "KESTREL_LK_LANES=12 accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "KESTREL_LK_LANES");
    }
    synchronize(nullptr);
}

TEST(LkGpu, SeveralTrackersOnSeveralStreamsAgree) {
    KESTREL_REQUIRE_GPU();
    const test::FloatImage g = test::blurred(test::real_image("aloeL.png"), 1.0);
    const HostImage ref = test::moved(g, 0, 0), cur = test::moved(g, 3.1, -2.6, 0.9, 8.0);
    const auto pts = test::textured_points(ref, 16, 30);
    const int n = static_cast<int>(pts.size());
    LkConfig a, b;
    b.mode = LkMode::Translation;
    b.patch_size = 12;
    const auto cpu_a = lk_track_cpu(build_pyramid_cpu(ref.view(), a.pyramid), build_pyramid_cpu(cur.view(), a.pyramid), pts, a);
    const auto cpu_b = lk_track_cpu(build_pyramid_cpu(ref.view(), b.pyramid), build_pyramid_cpu(cur.view(), b.pyramid), pts, b);
    const DevicePyramid dr = device_pyramid(ref, a.pyramid), dc = device_pyramid(cur, a.pyramid);
    DeviceLkTracker la(a, n), lb(b, n);
    DevBuf<Point2f> dpts(pts);
    DevBuf<LkResult> ra(pts.size()), rb(pts.size());
    cudaStream_t s1, s2;
    ASSERT_EQ(cudaStreamCreate(&s1), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&s2), cudaSuccess);
    for (int rep = 0; rep < 3; ++rep) {
        la.track_async(dr, dc, dpts.p, nullptr, ra.p, n, s1);
        lb.track_async(dr, dc, dpts.p, nullptr, rb.p, n, s2);
    }
    synchronize(s1);
    synchronize(s2);
    expect_match(ra.get(pts.size()), cpu_a, "stream 1");
    expect_match(rb.get(pts.size()), cpu_b, "stream 2");
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
}

// The kernel has one instance for 16 x 16 patches on every level and a general one for every other
// layout; windows start at 4-aligned columns and are clamped at the image edges. Both instances against
// the CPU reference on odd sizes (widths that are not multiples of 4, levels narrower than a 32-px
// window), with points next to every edge and motion large enough to re-stage windows within a level.
TEST(LkGpu, MatchesCpuForEveryPatchLayoutAndOddSize) {
    KESTREL_REQUIRE_GPU();
    struct Layout {
        int patch, coarse, from;
    };
    const Layout layouts[] = {{16, 16, 3}, {16, 8, 1}, {12, 12, 3}, {5, 7, 2}, {8, 8, 3}, {16, 4, 2}};
    const HostImage full = test::real_image("vtest_000.png");
    const int sizes[][2] = {{101, 77}, {203, 151}, {62, 45}, {333, 219}};
    int total = 0, same = 0;
    for (const auto& sz : sizes) {
        const test::FloatImage g = test::blurred(test::crop(full, 37, 21, sz[0], sz[1]), 1.0);
        for (const double shift : {1.3, 6.7}) {
            const HostImage ref = test::moved(g, 0, 0), cur = test::moved(g, shift, -0.6 * shift, 1.1, -6.0);
            std::vector<Point2f> pts = test::textured_points(ref, 9, 8, 10.0);
            const float w = static_cast<float>(sz[0]), h = static_cast<float>(sz[1]);
            for (float e : {9.3f, 10.6f, 12.2f}) {  // next to every edge
                pts.push_back({w - e, h / 2});
                pts.push_back({e, h / 2});
                pts.push_back({w / 2, h - e});
                pts.push_back({w / 2, e});
                pts.push_back({w - e, h - e});
            }
            for (const Layout& l : layouts) {
                LkConfig cfg;
                cfg.patch_size = l.patch;
                cfg.coarse_patch_size = l.coarse;
                cfg.coarse_from_level = l.from;
                const auto cpu = lk_track_cpu(build_pyramid_cpu(ref.view(), cfg.pyramid),
                                              build_pyramid_cpu(cur.view(), cfg.pyramid), pts, cfg);
                const DevicePyramid dr = device_pyramid(ref, cfg.pyramid), dc = device_pyramid(cur, cfg.pyramid);
                const int n = static_cast<int>(pts.size());
                DeviceLkTracker lk(cfg, n);
                DevBuf<Point2f> dpts(pts);
                DevBuf<LkResult> dres(pts.size());
                lk.track_async(dr, dc, dpts.p, nullptr, dres.p, n, nullptr);
                synchronize(nullptr);
                const std::string what = std::to_string(sz[0]) + "x" + std::to_string(sz[1]) + " shift " +
                                         std::to_string(shift) + " patch " + std::to_string(l.patch) + "/" +
                                         std::to_string(l.coarse) + " from " + std::to_string(l.from);
                same += expect_match(dres.get(pts.size()), cpu, what);
                total += n;
            }
        }
    }
    std::printf("[lk gpu] patch layouts x odd sizes: %d of %d results equal to the CPU reference in every field%s\n",
                same, total, test::kBitExactHost ? " (bits)" : "");
    EXPECT_GT(total, 1000);
}

TEST(LkGpu, Validation) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::real_image("graf1.png");
    LkConfig cfg;
    const DevicePyramid p = device_pyramid(img, cfg.pyramid);
    DeviceLkTracker lk(cfg, 8);
    EXPECT_EQ(lk.capacity(), 8);
    DevBuf<Point2f> pts(8);
    DevBuf<LkResult> res(8);
    auto param_of = [](const std::function<void()>& f) -> std::string {
        try {
            f();
        } catch (const InvalidArgument& e) {
            return e.parameter();
        }
        return "(no exception)";
    };
    EXPECT_EQ(param_of([&] { lk.track_async(p, p, pts.p, nullptr, res.p, 9, nullptr); }), "count");
    EXPECT_EQ(param_of([&] { lk.track_async(p, p, pts.p, nullptr, res.p, -1, nullptr); }), "count");
    EXPECT_EQ(param_of([&] { lk.track_async(p, p, nullptr, nullptr, res.p, 2, nullptr); }), "ref_points");
    EXPECT_EQ(param_of([&] { lk.track_async(p, p, pts.p, nullptr, nullptr, 2, nullptr); }), "results");
    EXPECT_NO_THROW(lk.track_async(p, p, nullptr, nullptr, nullptr, 0, nullptr));
    const DevicePyramid two = device_pyramid(img, {2, 2.0f});
    EXPECT_EQ(param_of([&] { lk.track_async(two, p, pts.p, nullptr, res.p, 2, nullptr); }), "ref");
    EXPECT_EQ(param_of([&] { lk.track_async(p, two, pts.p, nullptr, res.p, 2, nullptr); }), "cur");
    const DevicePyramid small = device_pyramid(test::crop(img, 0, 0, 320, 240), cfg.pyramid);
    EXPECT_EQ(param_of([&] { lk.track_async(p, small, pts.p, nullptr, res.p, 2, nullptr); }), "cur");
    // Stored-template calls need TemplateSource::FirstFrame.
    EXPECT_THROW(lk.store_templates_async(p, pts.p, nullptr, 0, nullptr), StateError);
    EXPECT_THROW(lk.track_stored_async(p, nullptr, nullptr, res.p, 0, nullptr), StateError);
    LkConfig ff = cfg;
    ff.template_source = TemplateSource::FirstFrame;
    DeviceLkTracker lf(ff, 8);
    DevBuf<std::int32_t> slots(8);
    EXPECT_EQ(param_of([&] { lf.store_templates_async(p, pts.p, nullptr, 2, nullptr); }), "slots");
    EXPECT_EQ(param_of([&] { lf.track_stored_async(p, slots.p, nullptr, res.p, 2, nullptr); }), "guesses");
    // Moved-from.
    DeviceLkTracker moved(std::move(lf));
    EXPECT_THROW(lf.track_stored_async(p, slots.p, nullptr, res.p, 0, nullptr), StateError);
    EXPECT_EQ(moved.capacity(), 8);
    synchronize(nullptr);
}

}  // namespace
}  // namespace kestrel
