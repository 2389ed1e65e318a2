// FeatureTracker's re-detection plan on the device (kernels/track/redetect_plan.cu) against the host rules
// (include/kestrel/detail/redetect_rules.hpp): the live count, the decision and the cell mask, on generated
// verdict inputs (every status, forward-backward, anchoring with and without re-anchoring, positions at the
// frame's edges and the grid's last cells) and on hand-made cases with known answers. Then whole tracker runs
// (CUDA against CPU, bit for bit) that count the frames whose detection the plan ran in the frame's stream and the
// tracker used, and the frames where the host re-detected after the wait instead (the geometric check ending
// more tracks than the plan saw).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>

#include "examples/common/synthetic.hpp"
#include "kernels/track/redetect_plan.cuh"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#include "motion_scenes.hpp"
#include "scoped_env.hpp"
#include "src/track/feature_tracker_backend.hpp"
#include "test_data.hpp"
#include "track_compare.hpp"

namespace kestrel {
namespace {

struct Plan {
    std::vector<std::uint8_t> mask;
    int live = 0;
    int redetect = 0;
};

struct Inputs {
    std::vector<LkResult> f, b;
    std::vector<Point2f> o;
    std::vector<detail::AnchorResult> a;
};

/// The host's plan: the rules applied track by track (what FeatureTracker's bookkeeping does without the
/// geometric check).
Plan host_plan(const Inputs& in, const detail::RedetectRule& r, int count) {
    Plan p;
    p.mask.assign(static_cast<std::size_t>(r.cols * r.rows), 0);
    for (int i = 0; i < count; ++i) {
        float x = 0, y = 0;
        const std::size_t k = static_cast<std::size_t>(i);
        if (detail::redetect_track_live(in.f[k], r.verdict.forward_backward ? &in.b[k] : nullptr, in.o[k].x, in.o[k].y,
                                        r.verdict.anchor ? &in.a[k] : nullptr, r, &x, &y)) {
            ++p.live;
            p.mask[static_cast<std::size_t>(
                detail::redetect_cell(x, y, r.cell_width, r.cell_height, r.cols, r.rows))] = 1;
        }
    }
    p.redetect = detail::redetect_wanted(p.live, r.fraction, r.target) ? 1 : 0;
    return p;
}

/// The kernel's plan of the same inputs (pinned buffers, as the tracker's).
Plan device_plan(const Inputs& in, const detail::RedetectRule& r, int count) {
    const std::size_t n = std::max<std::size_t>(in.f.size(), 1), cells = static_cast<std::size_t>(r.cols * r.rows);
    LkResult *f = nullptr, *b = nullptr;
    Point2f* o = nullptr;
    detail::AnchorResult* a = nullptr;
    std::uint8_t *mask = nullptr, *host_mask = nullptr;
    int* out = nullptr;
    EXPECT_EQ(cudaMallocHost(&f, n * sizeof(LkResult)), cudaSuccess);
    EXPECT_EQ(cudaMallocHost(&b, n * sizeof(LkResult)), cudaSuccess);
    EXPECT_EQ(cudaMallocHost(&o, n * sizeof(Point2f)), cudaSuccess);
    EXPECT_EQ(cudaMallocHost(&a, n * sizeof(detail::AnchorResult)), cudaSuccess);
    EXPECT_EQ(cudaMalloc(&mask, cells), cudaSuccess);
    EXPECT_EQ(cudaMallocHost(&host_mask, cells), cudaSuccess);
    EXPECT_EQ(cudaMallocHost(&out, 2 * sizeof(int)), cudaSuccess);
    std::copy(in.f.begin(), in.f.end(), f);
    std::copy(in.b.begin(), in.b.end(), b);
    std::copy(in.o.begin(), in.o.end(), o);
    std::copy(in.a.begin(), in.a.end(), a);
    EXPECT_EQ(cudaMemset(mask, 0xAB, cells), cudaSuccess);  // stale bytes: the plan clears every cell
    std::memset(host_mask, 0xCD, cells);
    out[0] = out[1] = -1;
    kernels::RedetectPlanLaunch p{};
    p.results = f;
    p.back = r.verdict.forward_backward ? b : nullptr;
    p.origins = o;
    p.anchors = r.verdict.anchor ? a : nullptr;
    p.rule = r;
    p.count = count;
    p.mask = mask;
    p.host_mask = host_mask;
    p.out = out;
    kernels::launch_redetect_plan(p, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    Plan d;
    d.mask.assign(host_mask, host_mask + cells);
    std::vector<std::uint8_t> dev(cells);
    EXPECT_EQ(cudaMemcpy(dev.data(), mask, cells, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(dev, d.mask) << "the device mask and its mapped copy differ";
    d.redetect = out[0];
    d.live = out[1];
    cudaFreeHost(f);
    cudaFreeHost(b);
    cudaFreeHost(o);
    cudaFreeHost(a);
    cudaFree(mask);
    cudaFreeHost(host_mask);
    cudaFreeHost(out);
    return d;
}

/// Differences between two plans, as text (empty: the same).
std::string plan_diff(const Plan& d, const Plan& h) {
    std::string s;
    if (d.live != h.live) s += " live " + std::to_string(d.live) + " vs " + std::to_string(h.live) + ";";
    if (d.redetect != h.redetect) s += " redetect " + std::to_string(d.redetect) + " vs " + std::to_string(h.redetect) + ";";
    if (d.mask.size() != h.mask.size()) return s + " mask sizes differ";
    for (std::size_t c = 0; c < d.mask.size(); ++c)
        if (d.mask[c] != h.mask[c]) {
            s += " cell " + std::to_string(c) + ": " + std::to_string(d.mask[c]) + " vs " + std::to_string(h.mask[c]) + ";";
            break;
        }
    return s;
}

detail::RedetectRule rule_752x480(bool fb, bool anchor, bool reanchor, float fraction, int target) {
    detail::RedetectRule r{};
    r.verdict = {fb ? 1 : 0, 1.0f, anchor ? 1 : 0, reanchor ? 1 : 0, 20.0f, 2.0f};
    r.reanchor_test = anchor && reanchor ? 1 : 0;
    r.template_side = 16;
    r.width = 752;
    r.height = 480;
    r.cell_width = 32;
    r.cell_height = 32;
    r.cols = (752 + 31) / 32;
    r.rows = 480 / 32;
    r.fraction = fraction;
    r.target = target;
    return r;
}

/// Random verdict inputs: every status, positions across the frame and past its edges, backward ends near and far
/// from the origin, anchor fits near and far, good and bad.
Inputs generated(int n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> ux(-20.0f, 772.0f), uy(-20.0f, 500.0f), near(-1.5f, 1.5f), far(-4.0f, 4.0f),
        res(0.0f, 30.0f);
    std::uniform_int_distribution<int> st(0, 6), coin(0, 3);
    const TrackStatus statuses[] = {TrackStatus::Tracked, TrackStatus::Tracked, TrackStatus::NotConverged,
                                    TrackStatus::LostOutOfBounds, TrackStatus::LostResidual, TrackStatus::LostSingular,
                                    TrackStatus::Tracked};
    Inputs in;
    for (int i = 0; i < n; ++i) {
        Point2f o{ux(rng), uy(rng)};
        if (coin(rng) == 0) o = {static_cast<float>(coin(rng) * 250), 479.9f};  // the last row of cells, edges
        LkResult f;
        f.status = statuses[st(rng)];
        f.x = o.x + near(rng);
        f.y = o.y + near(rng);
        LkResult b;
        b.status = coin(rng) == 0 ? TrackStatus::LostResidual : (coin(rng) == 0 ? TrackStatus::NotConverged : TrackStatus::Tracked);
        b.x = o.x + (coin(rng) == 0 ? far(rng) : near(rng) * 0.5f);
        b.y = o.y + near(rng) * 0.5f;
        detail::AnchorResult a;
        a.status = coin(rng) == 0 ? TrackStatus::LostAnchor : TrackStatus::Tracked;
        a.residual = res(rng);
        a.state.x = f.x + (coin(rng) == 0 ? far(rng) : near(rng));
        a.state.y = f.y + near(rng);
        in.f.push_back(f);
        in.b.push_back(b);
        in.o.push_back(o);
        in.a.push_back(a);
    }
    return in;
}

TEST(RedetectPlanGpu, GeneratedVerdictsMatchTheHostRules) {
    KESTREL_REQUIRE_GPU();
    int live_total = 0, redetects = 0, cases = 0;
    for (int n : {0, 1, 37, 256, 300, 1000, 5000}) {
        const Inputs in = generated(n, 1234u + static_cast<std::uint32_t>(n));
        for (int mode = 0; mode < 5; ++mode) {
            const bool fb = mode == 1 || mode == 4, anchor = mode >= 2, reanchor = mode != 3;
            for (float fraction : {0.5f, 0.8f, 1.0f}) {
                const detail::RedetectRule r = rule_752x480(fb, anchor, reanchor, fraction, std::max(n / 2, 1));
                const Plan h = host_plan(in, r, n), d = device_plan(in, r, n);
                EXPECT_EQ(plan_diff(d, h), "") << "n " << n << " mode " << mode << " fraction " << fraction;
                live_total += h.live;
                redetects += h.redetect;
                ++cases;
            }
        }
    }
    EXPECT_GT(live_total, 0);
    EXPECT_GT(redetects, 0);
    EXPECT_LT(redetects, cases);  // both decisions occur
}

TEST(RedetectPlanGpu, KnownAnswers) {
    KESTREL_REQUIRE_GPU();
    // Three tracks, no forward-backward, no anchoring: Tracked at (5, 5) (cell 0), NotConverged at (100.7, 40.2)
    // (kept: cell row 1, column 3 = 24 + 3), lost at (300, 300). Grid 24 x 15 of 32 px.
    Inputs in;
    in.o = {{5, 5}, {100, 40}, {300, 300}};
    in.f.resize(3);
    in.f[0].x = 5.0f, in.f[0].y = 5.0f;
    in.f[1].x = 100.7f, in.f[1].y = 40.2f, in.f[1].status = TrackStatus::NotConverged;
    in.f[2].x = 300.0f, in.f[2].y = 300.0f, in.f[2].status = TrackStatus::LostResidual;
    in.b = in.f;
    in.a.resize(3);
    detail::RedetectRule r = rule_752x480(false, false, false, 0.5f, 10);
    Plan d = device_plan(in, r, 3);
    EXPECT_EQ(d.live, 2);
    EXPECT_EQ(d.redetect, 1);  // 2 < 0.5 * 10
    std::vector<std::uint8_t> want(static_cast<std::size_t>(24 * 15), 0);
    want[0] = 1;
    want[27] = 1;
    EXPECT_EQ(d.mask, want);
    r.target = 3;  // 2 >= 0.5 * 3: no re-detection
    d = device_plan(in, r, 3);
    EXPECT_EQ(d.redetect, 0);
    r.target = 2;  // live == target: never
    r.fraction = 1.0f;
    EXPECT_EQ(device_plan(in, r, 3).redetect, 0);
    // A position past the last column and row is clamped into the grid's last cell; x = 751.9 is column 23.
    in.f[0].x = 760.0f, in.f[0].y = 490.0f;
    in.o[0] = {760.0f, 490.0f};
    d = device_plan(in, rule_752x480(false, false, false, 0.5f, 10), 3);
    EXPECT_EQ(d.mask[static_cast<std::size_t>(14 * 24 + 23)], 1);
    EXPECT_EQ(d.mask[0], 0);
    // Re-anchoring at the frame's edge ends the track: an anchor fit that failed, the template past x = 1.
    Inputs e;
    e.o = {{8.0f, 200.0f}, {300.0f, 200.0f}};
    e.f.resize(2);
    e.f[0].x = 8.2f, e.f[0].y = 200.0f;  // 8.2 - 7.5 = 0.7 < 1: the template reads the clamped edge
    e.f[1].x = 300.2f, e.f[1].y = 200.0f;
    e.b = e.f;
    e.a.resize(2);
    for (auto& a : e.a) a.status = TrackStatus::LostAnchor;  // both re-anchor
    d = device_plan(e, rule_752x480(false, true, true, 0.5f, 10), 2);
    EXPECT_EQ(d.live, 1);
    // Without re-anchoring both are lost.
    EXPECT_EQ(device_plan(e, rule_752x480(false, true, false, 0.5f, 10), 2).live, 0);
}

TEST(RedetectPlanGpu, TheComparisonCanFail) {
    // plan_diff reports a changed count, decision or cell (host only: no GPU needed).
    Plan a;
    a.mask.assign(10, 0);
    a.mask[3] = 1;
    a.live = 4;
    a.redetect = 1;
    EXPECT_EQ(plan_diff(a, a), "");
    Plan b = a;
    b.mask[4] = 1;
    EXPECT_NE(plan_diff(b, a), "");
    b = a;
    b.live = 5;
    EXPECT_NE(plan_diff(b, a), "");
    b = a;
    b.redetect = 0;
    EXPECT_NE(plan_diff(b, a), "");
}

/// A CUDA tracker made with KESTREL_REDETECT_PLAN = mode (null: unset, the default).
FeatureTracker cuda_tracker(int w, int h, const TrackerConfig& cfg, const char* mode) {
    const test::ScopedEnv restore("KESTREL_REDETECT_PLAN");
    if (mode) setenv("KESTREL_REDETECT_PLAN", mode, 1);
    else unsetenv("KESTREL_REDETECT_PLAN");
    return FeatureTracker(w, h, cfg, Backend::Cuda);
}

/// GPU (the plan's mode: KESTREL_REDETECT_PLAN, null = the default) against CPU over the frames, every track bit for
/// bit; returns the GPU backend's counts.
detail::TrackerBackend::RedetectCounts run_both(const std::vector<HostImage>& frames, const TrackerConfig& cfg,
                                                const char* mode, const std::string& what, int* redetections) {
    const int w = frames[0].width(), h = frames[0].height();
    FeatureTracker gpu = cuda_tracker(w, h, cfg, mode);
    FeatureTracker cpu(w, h, cfg, Backend::Cpu);
    cudaStream_t stream;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    PinnedImage pinned(w, h);
    *redetections = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        const std::vector<Track> c = cpu.track(frames[f].view());
        std::vector<Track> g;
        if (f % 2 == 0) {
            g = gpu.track(frames[f].view());  // the legacy default stream
        } else {
            std::memcpy(pinned.data(), frames[f].data(), static_cast<std::size_t>(w) * h);
            gpu.track_async(pinned.view(), stream);
            g = gpu.finish();
        }
        const std::string at = what + " frame " + std::to_string(f);
        EXPECT_EQ(gpu.redetected(), cpu.redetected()) << at;
        *redetections += cpu.redetected() ? 1 : 0;
        const int bad = test::count_mismatches(
            g, c, [](const Track& x, const Track& y) { return test::track_diff(x, y); },
            [&](const std::string& m) { ADD_FAILURE() << at << ": GPU vs CPU " << m; });
        EXPECT_EQ(bad, 0) << at;
    }
    cudaStreamDestroy(stream);
    return detail::TrackerAccess::backend(gpu).redetect_counts();
}

std::vector<HostImage> sequence(int n) {
    const auto names = test::sequence_frame_names();
    std::vector<HostImage> v;
    for (int f = 0; f < n && f < static_cast<int>(names.size()); ++f) v.push_back(test::real_image(names[static_cast<std::size_t>(f)]));
    return v;
}

TEST(RedetectPlanGpu, TrackerUsesThePlannedDetection) {
    KESTREL_REQUIRE_GPU();
    const std::vector<HostImage> frames = sequence(16);
    ASSERT_GE(frames.size(), 12u);
    for (const char* mode : {static_cast<const char*>(nullptr), "likely"})
        for (float fraction : {0.8f, 0.95f}) {
            TrackerConfig cfg;
            cfg.target_features = 200;
            cfg.redetect_fraction = fraction;
            int redetections = 0;
            const std::string what = std::string(mode ? mode : "default") + ", fraction " + std::to_string(fraction);
            const auto n = run_both(frames, cfg, mode, what, &redetections);
            std::printf("[ counts   ] %s: %d re-detections, %lld planned (%lld conditional), %lld used, %lld after "
                        "the wait\n",
                        what.c_str(), redetections, n.planned, n.conditional, n.used, n.enqueued_after);
            if (n.graph_failure) std::printf("[ counts   ] the conditional graph was not built: %s\n", n.graph_failure);
            // Without the geometric check the plan sees what the host sees: every planned frame that re-detects uses
            // the planned detection; the first frame (no track) is always planned.
            EXPECT_GE(n.used, 1) << what;
            EXPECT_EQ(n.used + n.enqueued_after, redetections) << what;
            if (!mode) {
                EXPECT_EQ(n.conditional, 0) << what;  // the default plans the frames certain to re-detect only
                EXPECT_EQ(n.used, n.planned) << what;
            }
#if CUDART_VERSION >= 12040
            int driver = 0;
            if (mode && fraction > 0.9f && cudaDriverGetVersion(&driver) == cudaSuccess && driver >= 12040)
                EXPECT_GT(n.conditional, 0) << what << ": no frame planned through the conditional graph";
#endif
        }
}

TEST(RedetectPlanGpu, AnUnknownModeIsRefusedNamingTheVariable) {
    KESTREL_REQUIRE_GPU();
    const test::ScopedEnv restore("KESTREL_REDETECT_PLAN");
    setenv("KESTREL_REDETECT_PLAN", "sometimes", 1);
    try {
        FeatureTracker bad(320, 240, TrackerConfig{}, Backend::Cuda);
        ADD_FAILURE() << "KESTREL_REDETECT_PLAN=sometimes accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("KESTREL_REDETECT_PLAN"), std::string::npos) << e.what();
    }
    unsetenv("KESTREL_REDETECT_PLAN");
    FeatureTracker good(320, 240, TrackerConfig{}, Backend::Cuda);
}

TEST(RedetectPlanGpu, GeometricCheckFallsBackWhereTheHostEndsMore) {
    KESTREL_REQUIRE_GPU();
    test::MotionScene s = test::motion_scene_small();
    std::vector<HostImage> frames;
    for (int k = 0; k < s.frames; ++k) frames.push_back(s.render(k));
    TrackerConfig cfg;
    cfg.target_features = 150;
    cfg.redetect_fraction = 0.95f;
    cfg.geometric_check.enabled = true;
    cfg.geometric_check.camera = s.camera;
    int redetections = 0;
    const auto n = run_both(frames, cfg, "likely", "geometric check", &redetections);
    std::printf("[ counts   ] geometric check: %d re-detections, %lld planned (%lld conditional), %lld used, %lld after "
                "the wait\n",
                redetections, n.planned, n.conditional, n.used, n.enqueued_after);
    // The first frame's plan is used; later re-detections whose mask the check changed are detected after the wait
    // (and the tracks are still the CPU backend's: run_both).
    EXPECT_GE(n.used, 1);
    EXPECT_GE(n.enqueued_after, 1);
    EXPECT_EQ(n.used + n.enqueued_after, redetections);
}

double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The demo's moving camera (kestrel_bench's default input: 752x480, graf1.png magnified 2x, 200-frame period), the
// default configuration, on a stream, two CUDA trackers frame by frame: the plan on (KESTREL_REDETECT_PLAN=likely:
// the frames that may re-detect too), and off.
// The same tracks every frame; with the plan every re-detection comes from the frame's one wait. The halves of each
// frame are timed (median over the frames with and without re-detection, printed).
TEST(RedetectPlanGpu, DemoSequenceSameTracksWithThePlanOnAndOff) {
    KESTREL_REQUIRE_GPU();
    const kestrel_examples::SyntheticSequence syn(test::real_image("graf1.png"), 200, 752, 480,
                                                  kestrel_examples::SyntheticMotion{2.0, 16.0, 10.0});
    const int w = syn.width(), h = syn.height();
    FeatureTracker off = cuda_tracker(w, h, TrackerConfig{}, "off");
    FeatureTracker on = cuda_tracker(w, h, TrackerConfig{}, "likely");
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    PinnedImage pinned(w, h);
    // [tracker][re-detected][phase]: track_async, finish_begin, finish_end, whole frame (us)
    std::vector<double> t[2][2][4];
    int redetections = 0;
    using clock = std::chrono::steady_clock;
    const auto us = [](clock::time_point a, clock::time_point b) {
        return std::chrono::duration<double, std::micro>(b - a).count();
    };
    for (int f = 0; f < 240; ++f) {
        const HostImage img = syn.render(f);
        std::memcpy(pinned.data(), img.data(), static_cast<std::size_t>(w) * h);
        for (int k = 0; k < 2; ++k) {
            FeatureTracker& tr = (k + f) % 2 == 0 ? on : off;  // the order alternates frame by frame
            const int which = &tr == &on ? 0 : 1;
            const clock::time_point t0 = clock::now();
            tr.track_async(pinned.view(), stream);
            const clock::time_point t1 = clock::now();
            detail::TrackerAccess::finish_begin(tr);
            const clock::time_point t2 = clock::now();
            (void)detail::TrackerAccess::finish_end(tr);
            const clock::time_point t3 = clock::now();
            if (f < 20) continue;  // warm-up
            const int r = tr.redetected() ? 1 : 0;
            t[which][r][0].push_back(us(t0, t1));
            t[which][r][1].push_back(us(t1, t2));
            t[which][r][2].push_back(us(t2, t3));
            t[which][r][3].push_back(us(t0, t3));
        }
        const std::string at = "frame " + std::to_string(f);
        ASSERT_EQ(on.redetected(), off.redetected()) << at;
        redetections += on.redetected() ? 1 : 0;
        const int bad = test::count_mismatches(
            on.tracks(), off.tracks(), [](const Track& x, const Track& y) { return test::track_diff(x, y); },
            [&](const std::string& m) { ADD_FAILURE() << at << ": plan on vs off " << m; });
        ASSERT_EQ(bad, 0) << at;
    }
    cudaStreamDestroy(stream);
    const auto n_on = detail::TrackerAccess::backend(on).redetect_counts();
    const auto n_off = detail::TrackerAccess::backend(off).redetect_counts();
    std::printf("[ counts   ] demo sequence, 240 frames: %d re-detections; plan on: %lld planned (%lld conditional), %lld "
                "used, %lld after the wait%s%s; plan off: %lld planned, %lld after the wait\n",
                redetections, n_on.planned, n_on.conditional, n_on.used, n_on.enqueued_after,
                n_on.graph_failure ? "; graph not built: " : "", n_on.graph_failure ? n_on.graph_failure : "",
                n_off.planned, n_off.enqueued_after);
    for (int r = 0; r < 2; ++r)
        for (int which = 0; which < 2; ++which)
            std::printf("[ timing   ] plan %-3s frames %s re-detection (%zu): track_async %.1f, finish_begin %.1f, "
                        "finish_end %.1f, frame %.1f us (medians)\n",
                        which == 0 ? "on" : "off", r ? "with" : "without", t[which][r][3].size(), median(t[which][r][0]),
                        median(t[which][r][1]), median(t[which][r][2]), median(t[which][r][3]));
    EXPECT_GT(redetections, 0);
    EXPECT_EQ(n_off.planned, 0);
    EXPECT_EQ(n_off.enqueued_after, redetections);
    EXPECT_EQ(n_on.used + n_on.enqueued_after, redetections);
}

TEST(RedetectPlanGpu, MultiCameraMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    const std::vector<HostImage> frames = sequence(10);
    ASSERT_GE(frames.size(), 8u);
    TrackerConfig cfg;
    cfg.target_features = 150;
    cfg.redetect_fraction = 0.9f;
    const int w = frames[0].width(), h = frames[0].height();
    const std::vector<CameraConfig> cams = {{w, h, cfg}, {w, h, cfg}};
    setenv("KESTREL_REDETECT_PLAN", "likely", 1);  // the frames that may re-detect too, each camera on its stream
    MultiCameraTracker gpu(cams, Backend::Cuda);
    unsetenv("KESTREL_REDETECT_PLAN");
    MultiCameraTracker cpu(cams, Backend::Cpu);
    for (std::size_t f = 0; f + 1 < frames.size(); ++f) {
        const std::vector<HostView> views = {frames[f].view(), frames[f + 1].view()};
        gpu.track(views);
        cpu.track(views);
        for (int c = 0; c < 2; ++c) {
            const std::string at = "camera " + std::to_string(c) + " frame " + std::to_string(f);
            EXPECT_EQ(gpu.camera(c).redetected(), cpu.camera(c).redetected()) << at;
            const int bad = test::count_mismatches(
                gpu.camera(c).tracks(), cpu.camera(c).tracks(),
                [](const Track& x, const Track& y) { return test::track_diff(x, y); },
                [&](const std::string& m) { ADD_FAILURE() << at << ": GPU vs CPU " << m; });
            EXPECT_EQ(bad, 0) << at;
        }
    }
}

}  // namespace
}  // namespace kestrel
