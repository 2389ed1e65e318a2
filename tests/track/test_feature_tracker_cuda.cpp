// FeatureTracker, CUDA backend against the CPU backend on a real sequence: the same live and lost tracks in
// every field (id, position, prev_x/prev_y, age, gain, offset, residual, status, score, level; bit-identical on
// x86-64 hosts, tests/support/track_compare.hpp) and the same re-detections, for both template sources, with
// and without the forward-backward check; the synchronous, pinned asynchronous and device-frame forms;
// predictions.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "kestrel/feature_tracker.hpp"
#include "src/track/feature_tracker_backend.hpp"
#include "test_data.hpp"
#include "scoped_env.hpp"
#include "track_compare.hpp"

namespace kestrel {
namespace {

void expect_same_tracks(const std::vector<Track>& g, const std::vector<Track>& c, const std::string& what) {
    const int bad = test::count_mismatches(
        g, c, [](const Track& x, const Track& y) { return test::track_diff(x, y); },
        [&](const std::string& m) { ADD_FAILURE() << what << ": GPU vs CPU " << m; });
    EXPECT_EQ(bad, 0) << what;
}

enum class Form { Sync, PinnedAsync, DeviceAsync };

void compare_backends(TrackerConfig cfg, Form form, int frames, const std::string& what) {
    const auto names = test::sequence_frame_names();
    ASSERT_GE(names.size(), static_cast<std::size_t>(frames));
    const HostImage first = test::real_image(names[0]);
    const int w = first.width(), h = first.height();
    FeatureTracker gpu(w, h, cfg, Backend::Cuda), cpu(w, h, cfg, Backend::Cpu);
    cudaStream_t streams[2];
    ASSERT_EQ(cudaStreamCreate(&streams[0]), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&streams[1]), cudaSuccess);
    PinnedImage pinned(w, h);
    DeviceImage dev(w, h);
    for (int f = 0; f < frames; ++f) {
        const HostImage img = test::real_image(names[static_cast<std::size_t>(f)]);
        // The asynchronous forms alternate between two streams (the tracker must order itself).
        cudaStream_t stream = streams[f % 2];
        // Predictions on every third frame: the previous position nudged by a constant.
        std::vector<Point2f> pred;
        const bool predict = f % 3 == 2;
        if (predict)
            for (const Track& t : cpu.tracks()) pred.push_back({t.x + 0.5f, t.y - 0.25f});
        const std::vector<Track> c = cpu.track(img.view(), predict ? &pred : nullptr);
        std::vector<Track> g;
        switch (form) {
            case Form::Sync: g = gpu.track(img.view(), predict ? &pred : nullptr); break;
            case Form::PinnedAsync:
                std::copy(img.data(), img.data() + static_cast<std::size_t>(w) * h, pinned.data());
                gpu.track_async(pinned.view(), stream, predict ? &pred : nullptr);
                g = gpu.finish();
                break;
            case Form::DeviceAsync:
                copy_async(img.view(), dev.mut_view(), stream);  // ordered before the tracker's work on `stream`
                gpu.track_async(dev.view(), stream, predict ? &pred : nullptr);
                g = gpu.finish();
                break;
        }
        EXPECT_EQ(gpu.redetected(), cpu.redetected()) << what << " frame " << f;
        expect_same_tracks(g, c, what + " frame " + std::to_string(f));
        expect_same_tracks(gpu.lost_tracks(), cpu.lost_tracks(), what + " lost, frame " + std::to_string(f));
    }
    cudaStreamDestroy(streams[0]);
    cudaStreamDestroy(streams[1]);
}

TEST(FeatureTrackerGpu, MatchesCpuBackendPreviousFrameTemplates) {
    KESTREL_REQUIRE_GPU();
    TrackerConfig cfg;
    cfg.target_features = 200;
    cfg.redetect_fraction = 0.8f;
    compare_backends(cfg, Form::Sync, 12, "previous-frame sync");
}

TEST(FeatureTrackerGpu, MatchesCpuBackendWithPycaRedetection) {
    KESTREL_REQUIRE_GPU();
    TrackerConfig cfg;
    cfg.target_features = 200;
    cfg.redetect_fraction = 0.8f;
    cfg.detector.selection = SelectionPolicy::PyCA;
    cfg.detector.pyramid = {8, 1.2f};
    cfg.detector.pyca.cell.fill(16);
    cfg.detector.per_cell = 2;
    compare_backends(cfg, Form::PinnedAsync, 12, "PyCA re-detection, pinned-async");
    cfg.detector.pyramid = {2, 2.0f};
    compare_backends(cfg, Form::DeviceAsync, 12, "PyCA re-detection, device-async");
}

TEST(FeatureTrackerGpu, MatchesCpuBackendFirstFrameTemplatesForwardBackward) {
    KESTREL_REQUIRE_GPU();
    TrackerConfig cfg;
    cfg.target_features = 150;
    cfg.redetect_fraction = 0.8f;
    cfg.lk.template_source = TemplateSource::FirstFrame;
    cfg.forward_backward = true;
    compare_backends(cfg, Form::PinnedAsync, 12, "first-frame fb pinned-async");
}

TEST(FeatureTrackerGpu, MatchesCpuBackendEveryModeDeviceFrames) {
    KESTREL_REQUIRE_GPU();
    for (LkMode mode : {LkMode::Translation, LkMode::TranslationOffset, LkMode::TranslationGain}) {
        TrackerConfig cfg;
        cfg.target_features = 100;
        cfg.lk.mode = mode;
        cfg.forward_backward = mode == LkMode::TranslationOffset;
        compare_backends(cfg, Form::DeviceAsync, 6, std::string("device-async ") + to_string(mode));
    }
}

TEST(FeatureTrackerGpu, MatchesCpuBackendAnchorPolicies) {
    KESTREL_REQUIRE_GPU();
    // Anchoring (the default) against its variants: off, losing instead of re-anchoring, re-anchoring often
    // (a tight residual bound), and a 12x12 patch (lanes with partly filled pixel slots).
    struct Row {
        const char* what;
        bool enabled, reanchor;
        float max_residual;
        int patch;
    };
    for (const Row& r : {Row{"anchor off", false, true, 20.0f, 16}, Row{"anchor lose", true, false, 6.0f, 16},
                         Row{"anchor re-anchor often", true, true, 3.0f, 16}, Row{"anchor 12x12", true, true, 20.0f, 12}}) {
        TrackerConfig cfg;
        cfg.target_features = 150;
        cfg.redetect_fraction = 0.8f;
        cfg.anchor.enabled = r.enabled;
        cfg.anchor.reanchor = r.reanchor;
        cfg.anchor.max_residual = r.max_residual;
        cfg.lk.patch_size = r.patch;
        compare_backends(cfg, Form::PinnedAsync, 10, r.what);
    }
}

// The fit schedule (AnchorConfig::interval): each frame fits the due tracks and those whose LK result calls for a fit,
// the others take the frame-to-frame estimate; the GPU decides after LK in the launch by the same rules as the CPU
// (detail::anchor_fit_wanted), with re-anchoring often, losing instead, and a 12 x 12 patch (the general instance).
// The device's anchor results also agree with the CPU's after every frame: which tracks fitted (iterations > 0), and
// some are skipped.
TEST(FeatureTrackerGpu, MatchesCpuBackendAnchorInterval) {
    KESTREL_REQUIRE_GPU();
    struct Row {
        const char* what;
        int interval;
        bool reanchor;
        float max_residual;
        int patch;
        Form form;
    };
    for (const Row& r : {Row{"interval 2", 2, true, 20.0f, 16, Form::Sync},
                         Row{"interval 3, re-anchor often", 3, true, 3.0f, 16, Form::PinnedAsync},
                         Row{"interval 4, lose", 4, false, 6.0f, 16, Form::DeviceAsync},
                         Row{"interval 3, 12x12", 3, true, 20.0f, 12, Form::Sync}}) {
        TrackerConfig cfg;
        cfg.target_features = 150;
        cfg.redetect_fraction = 0.8f;
        cfg.anchor.interval = r.interval;
        cfg.anchor.reanchor = r.reanchor;
        cfg.anchor.max_residual = r.max_residual;
        cfg.lk.patch_size = r.patch;
        compare_backends(cfg, r.form, 10, r.what);
    }
    // The fits themselves, frame by frame: the same tracks fit (and skip) on both backends, with the same results.
    const auto names = test::sequence_frame_names();
    const HostImage first = test::real_image(names[0]);
    TrackerConfig cfg;
    cfg.target_features = 150;
    cfg.anchor.interval = 3;
    FeatureTracker gpu(first.width(), first.height(), cfg, Backend::Cuda),
        cpu(first.width(), first.height(), cfg, Backend::Cpu);
    int skipped = 0, fitted = 0;
    for (int f = 0; f < 8; ++f) {
        const HostImage img = test::real_image(names[static_cast<std::size_t>(f)]);
        const int n = static_cast<int>(cpu.tracks().size());
        ASSERT_EQ(gpu.tracks().size(), cpu.tracks().size());
        gpu.track(img.view());
        cpu.track(img.view());
        const detail::AnchorResult* ga = detail::TrackerAccess::backend(gpu).anchor_results();
        const detail::AnchorResult* ca = detail::TrackerAccess::backend(cpu).anchor_results();
        const LkResult* lk = detail::TrackerAccess::backend(cpu).results();
        for (int i = 0; i < n; ++i) {
            if (lk[i].status != TrackStatus::Tracked && lk[i].status != TrackStatus::NotConverged) continue;
            EXPECT_EQ(ga[i].iterations, ca[i].iterations) << "frame " << f << " track " << i;
            EXPECT_EQ(ga[i].status, ca[i].status) << "frame " << f << " track " << i;
            EXPECT_EQ(ga[i].state.x, ca[i].state.x) << "frame " << f << " track " << i;
            EXPECT_EQ(ga[i].state.y, ca[i].state.y) << "frame " << f << " track " << i;
            EXPECT_EQ(ga[i].state.a00, ca[i].state.a00) << "frame " << f << " track " << i;
            EXPECT_EQ(ga[i].state.gain, ca[i].state.gain) << "frame " << f << " track " << i;
            const bool skip = ca[i].status == TrackStatus::Tracked && ca[i].iterations == 0;
            skipped += skip ? 1 : 0;
            fitted += skip ? 0 : 1;
        }
    }
    EXPECT_GT(skipped, 100);
    EXPECT_GT(fitted, 100);
}

// The tracking kernels' 16 x 16 instances run a track on 32 or 16 lanes (KESTREL_LK_LANES; unset: the library's
// choice, 32), the same sums in the same order: each gives the CPU backend's tracks bit for bit, with anchoring (the
// default: stored patches, the fit in the LK launch, re-anchoring often with a tight residual bound) and with
// first-frame templates and the forward-backward check.
TEST(FeatureTrackerGpu, MatchesCpuBackendWithEveryLanesPerTrack) {
    KESTREL_REQUIRE_GPU();
    const test::ScopedEnv restore("KESTREL_LK_LANES");
    for (const char* lanes : {"32", "16"}) {
        setenv("KESTREL_LK_LANES", lanes, 1);
        const std::string what = std::string(lanes) + " lanes per track";
        TrackerConfig cfg;
        cfg.target_features = 200;
        cfg.redetect_fraction = 0.8f;
        compare_backends(cfg, Form::Sync, 12, what + ", anchoring");
        cfg.anchor.max_residual = 3.0f;
        compare_backends(cfg, Form::DeviceAsync, 8, what + ", re-anchoring often");
        TrackerConfig ff;
        ff.target_features = 150;
        ff.redetect_fraction = 0.8f;
        ff.lk.template_source = TemplateSource::FirstFrame;
        ff.forward_backward = true;
        compare_backends(ff, Form::PinnedAsync, 8, what + ", first-frame fb");
    }
}

}  // namespace
}  // namespace kestrel
