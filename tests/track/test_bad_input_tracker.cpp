// Bad input at the FeatureTracker entry points (docs/bad-input.md, rows "tracker_*"), for both
// backends: the CPU rows run everywhere, the CUDA rows need a GPU (KESTREL_REQUIRE_GPU). Each bad call
// must throw InvalidArgument naming the parameter and the bound (StateError for state misuse) and
// change nothing: afterwards tracker A (which saw the bad call) and tracker B (which did not) track
// the next frames of a real sequence to identical results.
#include <cmath>
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "bad_input_util.hpp"
#include "reliability_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_tracker.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using test::Case;
using test::invalid;
using test::Row;
using test::state;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// Three 320x240 crops of consecutive vtest.avi frames (real motion).
const std::vector<HostImage>& frames() {
    static const std::vector<HostImage> f = [] {
        std::vector<HostImage> v;
        const auto names = test::sequence_frame_names();
        for (std::size_t i = 0; i < 3; ++i) v.push_back(test::crop(test::real_image(names.at(i)), 200, 150, 320, 240));
        return v;
    }();
    return f;
}

TrackerConfig cfg() {
    TrackerConfig c;
    c.target_features = 120;
    c.detector.fast.threshold = 15;
    return c;
}

void expect_same(const std::vector<Track>& a, const std::vector<Track>& b, const char* what) {
    test::expect_same_tracks(a, b, what);
}

/// Tracker A gets the bad call between frames 0 and 1; B does not. Frames 1 and 2 must agree.
struct Pair {
    FeatureTracker a, b;
    explicit Pair(Backend be) : a(320, 240, cfg(), be), b(320, 240, cfg(), be) {
        a.track(frames()[0].view());
        b.track(frames()[0].view());
    }
    void expect_recovers() {
        for (std::size_t f = 1; f < 3; ++f) {
            const std::vector<Track> ta = a.track(frames()[f].view());
            const std::vector<Track>& tb = b.track(frames()[f].view());
            ASSERT_FALSE(tb.empty());
            expect_same(ta, tb, "tracker after the bad call vs one that never saw it");
            EXPECT_EQ(a.frame_count(), b.frame_count());
        }
    }
};

Row object_row(Backend be, std::string id, std::string param, std::string text,
               std::function<void(FeatureTracker&)> bad) {
    auto make = [be, bad] {
        auto p = std::make_shared<Pair>(be);
        return Case{[p, bad] { bad(p->a); }, [p] { p->expect_recovers(); }};
    };
    return param.empty() ? state(std::move(id), std::move(text), make)
                         : invalid(std::move(id), std::move(param), std::move(text), make);
}

/// A bad constructor argument; then a good tracker of the same backend tracks three frames.
Row ctor_row(Backend be, std::string id, std::string param, std::string text, int w, int h,
             std::function<void(TrackerConfig&)> edit) {
    return invalid(std::move(id), std::move(param), std::move(text), [be, w, h, edit] {
        return Case{[be, w, h, edit] {
                        TrackerConfig c = cfg();
                        edit(c);
                        FeatureTracker t(w, h, c, be);
                    },
                    [be] { Pair(be).expect_recovers(); }};
    });
}

std::vector<Row> tracker_rows(Backend be) {
    std::vector<Row> r;
    const auto none = [](TrackerConfig&) {};
    r.push_back(ctor_row(be, "tracker_target_features_zero", "target_features", "[1, 65536]", 320, 240,
                         [](TrackerConfig& c) { c.target_features = 0; }));
    r.push_back(ctor_row(be, "tracker_target_features_65537", "target_features", "[1, 65536]", 320, 240,
                         [](TrackerConfig& c) { c.target_features = 65537; }));
    r.push_back(ctor_row(be, "tracker_redetect_fraction_above_one", "redetect_fraction", "[0, 1]", 320, 240,
                         [](TrackerConfig& c) { c.redetect_fraction = 1.5f; }));
    r.push_back(ctor_row(be, "tracker_redetect_fraction_nan", "redetect_fraction", "must be finite", 320, 240,
                         [](TrackerConfig& c) { c.redetect_fraction = kNaN; }));
    r.push_back(ctor_row(be, "tracker_fb_max_error_zero", "fb_max_error", "(0, 100]", 320, 240,
                         [](TrackerConfig& c) { c.fb_max_error = 0.0f; }));
    r.push_back(ctor_row(be, "tracker_fb_max_error_infinite", "fb_max_error", "(0, 100]", 320, 240,
                         [](TrackerConfig& c) { c.fb_max_error = kInf; }));
    r.push_back(ctor_row(be, "tracker_anchor_iterations_zero", "anchor.max_iterations", "[1, 100]", 320, 240,
                         [](TrackerConfig& c) { c.anchor.max_iterations = 0; }));
    r.push_back(ctor_row(be, "tracker_anchor_residual_nan", "anchor.max_residual", "(0, 255]", 320, 240,
                         [](TrackerConfig& c) { c.anchor.max_residual = std::nanf(""); }));
    r.push_back(ctor_row(be, "tracker_anchor_distance_zero", "anchor.max_distance", "(0, 100]", 320, 240,
                         [](TrackerConfig& c) { c.anchor.max_distance = 0.0f; }));
    r.push_back(ctor_row(be, "tracker_anchor_interval_zero", "anchor.interval", "[1, 64]", 320, 240,
                         [](TrackerConfig& c) { c.anchor.interval = 0; }));
    r.push_back(ctor_row(be, "tracker_anchor_interval_65", "anchor.interval", "[1, 64]", 320, 240,
                         [](TrackerConfig& c) { c.anchor.interval = 65; }));
    r.push_back(ctor_row(be, "tracker_motion_level_reach_negative", "motion.level_reach", "(0, 1000]", 320, 240,
                         [](TrackerConfig& c) { c.motion.level_reach = -1.0f; }));
    r.push_back(ctor_row(be, "tracker_lk_patch_size_2", "patch_size", "[4, 16]", 320, 240,
                         [](TrackerConfig& c) { c.lk.patch_size = 2; }));
    r.push_back(ctor_row(be, "tracker_detector_cell_width_40", "cell_width", "multiple of 32", 320, 240,
                         [](TrackerConfig& c) { c.detector.cell_width = 40; }));
    r.push_back(ctor_row(be, "tracker_detector_threshold_255", "fast.threshold", "[0, 254]", 320, 240,
                         [](TrackerConfig& c) { c.detector.fast.threshold = 255; }));
    r.push_back(ctor_row(be, "tracker_width_6", "width", "[7, 16383]", 6, 240, none));
    r.push_back(ctor_row(be, "tracker_height_16384", "height", "[7, 16383]", 320, 16384, none));
    r.push_back(ctor_row(be, "tracker_lk_levels_too_many_for_frame", "levels", "at most 3", 40, 40,
                         [](TrackerConfig& c) { c.lk.pyramid.levels = 4; }));
    // A frame that cannot hold the detector's border: must be refused here, not at the first frame.
    r.push_back(ctor_row(be, "tracker_frame_smaller_than_detector_border", "width", "border", 20, 40,
                         [](TrackerConfig& c) {
                             c.detector.border = 10;
                             c.lk.pyramid.levels = 1;
                             c.detector.pyramid.levels = 1;
                         }));
    r.push_back(invalid("tracker_backend_unknown", "backend", "Backend::Cuda or Backend::Cpu", [be] {
        return Case{[] { FeatureTracker t(320, 240, cfg(), static_cast<Backend>(9)); },
                    [be] { Pair(be).expect_recovers(); }};
    }));

    // The frames are loaded when a row runs, never while the tests are listed.
    const auto f1 = [] { return frames()[1].view(); };
    r.push_back(object_row(be, "tracker_frame_other_size", "frame", "the tracker was made for 320x240",
                           [](FeatureTracker& t) {
                               const HostImage other(321, 240, 9);
                               t.track(other.view());
                           }));
    r.push_back(object_row(be, "tracker_frame_null", "frame.data", "must not be null",
                           [](FeatureTracker& t) { t.track(HostView{nullptr, 320, 240, 320}); }));
    r.push_back(object_row(be, "tracker_frame_width_zero", "frame.width", "[1, 16383]",
                           [f1](FeatureTracker& t) { t.track(HostView{f1().data, 0, 240, 320}); }));
    r.push_back(object_row(be, "tracker_frame_pitch_below_width", "frame.pitch", "must be >= width (320)",
                           [f1](FeatureTracker& t) { t.track(HostView{f1().data, 320, 240, 300}); }));
    r.push_back(object_row(be, "tracker_predictions_count", "predictions", "one per live track",
                           [f1](FeatureTracker& t) {
                               const std::vector<Point2f> p(t.tracks().size() + 1);
                               t.track(f1(), &p);
                           }));
    r.push_back(object_row(be, "tracker_predictions_nan", "predictions", "must be finite", [f1](FeatureTracker& t) {
        std::vector<Point2f> p;
        for (const Track& k : t.tracks()) p.push_back({k.x, k.y});
        p.at(p.size() / 2).x = kNaN;
        t.track(f1(), &p);
    }));
    r.push_back(object_row(be, "tracker_predictions_infinite", "predictions", "must be finite",
                           [f1](FeatureTracker& t) {
                               std::vector<Point2f> p;
                               for (const Track& k : t.tracks()) p.push_back({k.x, k.y});
                               p.back().y = -kInf;
                               t.track(f1(), &p);
                           }));
    r.push_back(object_row(be, "tracker_finish_without_frame", "", "no frame in flight",
                           [](FeatureTracker& t) { t.finish(); }));
    r.push_back(object_row(be, "tracker_moved_from", "", "FeatureTracker::track_async", [f1](FeatureTracker& t) {
        FeatureTracker keep(std::move(t));
        try {
            t.track(f1());  // NOLINT(bugprone-use-after-move): on purpose
        } catch (...) {
            t = std::move(keep);  // a moved-from tracker can be assigned; restore A for the good half
            throw;
        }
        t = std::move(keep);
    }));
    if (be == Backend::Cpu) {
        r.push_back(object_row(be, "tracker_cpu_device_frame", "", "needs Backend::Cuda", [f1](FeatureTracker& t) {
            t.track_async(DeviceView{f1().data, 320, 240, 320}, nullptr);  // never dereferenced
        }));
    }
    for (Row& row : r) row.id = std::string(be == Backend::Cpu ? "cpu_" : "cuda_") + row.id;
    return r;
}

class BadInputTrackerCpu : public ::testing::TestWithParam<Row> {};
TEST_P(BadInputTrackerCpu, ThrowsNamingParameterAndBoundThenWorks) { test::run_row(GetParam()); }
INSTANTIATE_TEST_SUITE_P(Rows, BadInputTrackerCpu, ::testing::ValuesIn(tracker_rows(Backend::Cpu)), test::row_name);

class BadInputTrackerCuda : public ::testing::TestWithParam<Row> {};
TEST_P(BadInputTrackerCuda, ThrowsNamingParameterAndBoundThenWorks) {
    KESTREL_REQUIRE_GPU();
    test::run_row(GetParam());
}
INSTANTIATE_TEST_SUITE_P(Rows, BadInputTrackerCuda, ::testing::ValuesIn(tracker_rows(Backend::Cuda)), test::row_name);

// A second track_async before finish(): StateError, and the frame in flight completes normally.
TEST(BadInputTrackerState, TrackAsyncWhileInFlightThenFinishWorks) {
    for (Backend be : {Backend::Cpu, Backend::Cuda}) {
        if (be == Backend::Cuda && !cuda_available()) continue;  // covered on the GPU machine
        Pair p(be);
        p.a.track_async(frames()[1].view(), nullptr);
        EXPECT_THROW(p.a.track_async(frames()[2].view(), nullptr), StateError);
        EXPECT_THROW(p.a.reset(), StateError);
        const std::vector<Track> ta = p.a.finish();
        expect_same(ta, p.b.track(frames()[1].view()), "frame in flight after the refused call");
        expect_same(p.a.track(frames()[2].view()), p.b.track(frames()[2].view()), "next frame");
    }
}

}  // namespace
}  // namespace kestrel
