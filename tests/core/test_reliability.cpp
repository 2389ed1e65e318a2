// Concurrency (docs/reliability.md, "Thread-safety contract"): several detectors and trackers driven
// from several host threads at once give exactly the results of a serial run. GPU: two host threads,
// each with its own FeatureDetector and FeatureTracker (different configurations, so that any state
// shared between objects would show) on its own CUDA stream, over real frames in different orders.
// CPU backend: the same with Backend::Cpu (runs everywhere, and under ASan in CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "detector_test_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"
#include "reliability_util.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

constexpr std::size_t kFrames = 24;  // frames per lane; the CPU variant uses the first kCpuFrames
constexpr std::size_t kCpuFrames = 4;

/// One thread's work: a detector and a tracker of its own, frames in its own order.
struct Lane {
    DetectorConfig det;
    TrackerConfig trk;
    std::vector<std::size_t> order;
    // results, one entry per frame of `order`
    std::vector<std::vector<Keypoint>> keypoints;
    std::vector<std::vector<Track>> tracks;
};

std::vector<Lane> make_lanes(std::size_t frames) {
    Lane a, b;
    a.det.pyramid = {3, 2.0f};
    a.trk.target_features = 150;
    b.det.pyramid = {2, 1.5f};
    b.det.fast = {25, 10, 16, ScoreType::Harris};
    b.det.per_cell = 2;
    b.det.cell_width = 64;
    b.det.cell_height = 48;
    b.trk.target_features = 220;
    b.trk.lk.template_source = TemplateSource::FirstFrame;
    b.trk.forward_backward = true;
    b.trk.detector.fast.threshold = 18;
    for (std::size_t i = 0; i < frames; ++i) {
        a.order.push_back(i);
        b.order.push_back(frames - 1 - i);  // the other lane walks the sequence backwards
    }
    return {a, b};
}

/// Serial reference: synchronous calls, one object at a time, on the calling thread.
void run_serial(Lane& l, Backend be) {
    const auto& seq = test::sequence(kFrames);
    FeatureDetector d(l.det, be);
    FeatureTracker t(seq[0].width(), seq[0].height(), l.trk, be);
    for (std::size_t i : l.order) {
        l.keypoints.push_back(d.detect(seq[i].view()));
        l.tracks.push_back(t.track(seq[i].view()));
    }
}

/// The same work through the stream-ordered calls on `stream` (CUDA) or the synchronous ones (CPU).
void run_lane(Lane& l, Backend be, StreamHandle stream) {
    const auto& seq = test::sequence(kFrames);
    const int w = seq[0].width(), h = seq[0].height();
    FeatureDetector d(l.det, be);
    FeatureTracker t(w, h, l.trk, be);
    if (be == Backend::Cpu) {
        for (std::size_t i : l.order) {
            l.keypoints.push_back(d.detect(seq[i].view()));
            l.tracks.push_back(t.track(seq[i].view()));
        }
        return;
    }
    PinnedImage pinned(w, h);
    for (std::size_t i : l.order) {
        std::memcpy(pinned.data(), seq[i].data(), static_cast<std::size_t>(w) * h);
        d.detect_async(pinned.view(), stream);
        t.track_async(pinned.view(), stream);  // same stream: ordered after the detection's upload
        const std::vector<Track>& tracks = t.finish();  // waits for `stream`: the detection is done too
        l.keypoints.emplace_back(d.host_keypoints(), d.host_keypoints() + d.host_count());
        l.tracks.push_back(tracks);
    }
}

void compare(const Lane& got, const Lane& want, const char* lane) {
    ASSERT_EQ(got.keypoints.size(), want.keypoints.size());
    for (std::size_t f = 0; f < got.keypoints.size(); ++f) {
        const std::string what = std::string(lane) + " frame " + std::to_string(got.order[f]);
        test::expect_same_keypoints(got.keypoints[f], want.keypoints[f], what + " keypoints");
        test::expect_same_tracks(got.tracks[f], want.tracks[f], what + " tracks");
    }
}

struct Stream {  // a non-blocking CUDA stream of the test's own (none for the CPU backend)
    std::optional<CudaStream> owned;
    explicit Stream(bool create) {
        if (create) owned.emplace();
    }
    StreamHandle get() const { return owned ? owned->get() : nullptr; }
};

void two_threads_equal_serial(Backend be, std::size_t frames, int rounds) {
    (void)test::sequence(kFrames);  // load on this thread: the cache is not thread-safe
    std::vector<Lane> serial = make_lanes(frames);
    for (Lane& l : serial) run_serial(l, be);
    ASSERT_FALSE(serial[0].keypoints[0].empty());
    ASSERT_FALSE(serial[1].tracks.back().empty());
    for (int r = 0; r < rounds; ++r) {
        std::vector<Lane> lanes = make_lanes(frames);
        Stream s0(be == Backend::Cuda), s1(be == Backend::Cuda);
        test::run_on_threads({[&] { run_lane(lanes[0], be, s0.get()); }, [&] { run_lane(lanes[1], be, s1.get()); }});
        compare(lanes[0], serial[0], "lane 0");
        compare(lanes[1], serial[1], "lane 1");
    }
}

TEST(ReliabilityConcurrency, TwoThreadsTwoStreamsDetectorsAndTrackersEqualSerialRun) {
    KESTREL_REQUIRE_GPU();
    // Under compute-sanitizer (slow) a shorter run: the tools check the accesses, not the interleavings.
    if (test::under_compute_sanitizer()) two_threads_equal_serial(Backend::Cuda, 6, 1);
    else two_threads_equal_serial(Backend::Cuda, kFrames, 3);
}

TEST(ReliabilityConcurrency, CpuBackendTwoThreadsEqualSerialRun) {
    two_threads_equal_serial(Backend::Cpu, kCpuFrames, 1);
}

}  // namespace
}  // namespace kestrel
