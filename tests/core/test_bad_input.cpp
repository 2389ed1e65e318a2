// Bad input at the public entry points that run without a GPU (docs/bad-input.md, one row = one test
// named after the row): each bad call must throw InvalidArgument naming the parameter and stating the
// bound (or StateError for a moved-from object / wrong backend), and the same object must then work on
// good input, checked against the CPU reference. Constructors of device objects validate before they
// touch CUDA, so their bad half runs here too; their good half needs a GPU.
// CUDA-object rows: tests/core/test_bad_input_cuda.cpp; FeatureTracker rows: tests/track/test_bad_input_tracker.cpp.
// Here also the Hamming matcher, the PyCA selection's configuration and MultiCameraTracker.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <vector>

#include "bad_input_util.hpp"
#include "detector_test_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/matcher.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#include "kestrel/pyca_select.hpp"
#include "kestrel/pyramid.hpp"
#include "test_data.hpp"
#include "track_compare.hpp"

namespace kestrel {
namespace {

using test::Case;
using test::invalid;
using test::Row;
using test::state;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

const HostImage& frame() {
    static const HostImage img = test::random_image(160, 120, 7);
    return img;
}

HostView null_view(int w = 64, int h = 48) { return {nullptr, w, h, static_cast<std::size_t>(w)}; }
HostView sized(int w, int h, std::size_t pitch) { return {frame().data(), w, h, pitch}; }

DetectorConfig det_cfg() {
    DetectorConfig c;
    c.pyramid = {2, 2.0f};
    return c;
}

void expect_detects(FeatureDetector& d) {
    const std::vector<Keypoint> want = detect_cpu(frame().view(), d.config());
    ASSERT_FALSE(want.empty());
    test::expect_same_keypoints(d.detect(frame().view()), want, "detect() after the bad call");
    EXPECT_EQ(d.host_count(), static_cast<int>(want.size()));
}

/// A free function: bad and good calls share nothing.
Row fn(std::string id, std::string param, std::string text, std::function<void()> bad, std::function<void()> good,
       bool good_needs_gpu = false) {
    return invalid(std::move(id), std::move(param), std::move(text), [bad, good] { return Case{bad, good}; },
                   good_needs_gpu);
}

/// A bad DetectorConfig given to the FeatureDetector constructor; then a good one works.
Row detector_cfg(std::string id, std::string param, std::string text, std::function<void(DetectorConfig&)> edit) {
    return fn(std::move(id), std::move(param), std::move(text),
              [edit] {
                  DetectorConfig c = det_cfg();
                  edit(c);
                  FeatureDetector d(c, Backend::Cpu);
              },
              [] {
                  FeatureDetector d(det_cfg(), Backend::Cpu);
                  expect_detects(d);
              });
}

/// A bad detect() call on a CPU detector built with `cfg`; then detect() on good input works.
Row detect(std::string id, std::string param, std::string text, DetectorConfig cfg,
           std::function<void(FeatureDetector&)> bad) {
    return invalid(std::move(id), std::move(param), std::move(text), [cfg, bad] {
        auto d = std::make_shared<FeatureDetector>(cfg, Backend::Cpu);
        return Case{[d, bad] { bad(*d); }, [d] { expect_detects(*d); }};
    });
}

// ---- LK: a textured frame and the same frame shifted by (2, 1); three interior points. ---------------
struct LkData {
    LkConfig cfg;
    std::vector<HostImage> ref, cur;
    std::vector<Point2f> pts{{40.0f, 40.0f}, {80.5f, 60.25f}, {120.0f, 75.0f}};
    LkData() {
        const HostImage a = test::random_image(160, 120, 11);
        HostImage b(160, 120);
        for (int y = 0; y < 120; ++y)
            for (int x = 0; x < 160; ++x) b.at(x, y) = a.at(std::max(x - 2, 0), std::max(y - 1, 0));
        ref = build_pyramid_cpu(a.view(), cfg.pyramid);
        cur = build_pyramid_cpu(b.view(), cfg.pyramid);
    }
    /// Good call: every point tracked onto its shifted position.
    void expect_tracks() const {
        const std::vector<LkResult> r = lk_track_cpu(ref, cur, pts, cfg);
        ASSERT_EQ(r.size(), pts.size());
        for (std::size_t i = 0; i < r.size(); ++i) {
            EXPECT_EQ(r[i].status, TrackStatus::Tracked) << "point " << i;
            EXPECT_NEAR(r[i].x, pts[i].x + 2.0f, 0.05f) << "point " << i;
            EXPECT_NEAR(r[i].y, pts[i].y + 1.0f, 0.05f) << "point " << i;
        }
    }
};

const LkData& lk() {
    static const LkData d;
    return d;
}

/// A bad LkConfig field, given to lk_track_cpu (pyramids of the default geometry); then a good call.
Row lk_cfg(std::string id, std::string param, std::string text, std::function<void(LkConfig&)> edit) {
    return fn(std::move(id), std::move(param), std::move(text),
              [edit] {
                  LkConfig c = lk().cfg;
                  edit(c);
                  lk_track_cpu(lk().ref, lk().cur, lk().pts, c);
              },
              [] { lk().expect_tracks(); });
}

/// A bad lk_track_cpu call with the given points / guesses; then a good call.
Row lk_call(std::string id, std::string param, std::string text, std::vector<Point2f> pts,
            std::vector<LkGuess> guesses, bool with_guesses) {
    return fn(std::move(id), std::move(param), std::move(text),
              [pts, guesses, with_guesses] {
                  lk_track_cpu(lk().ref, lk().cur, pts, lk().cfg, with_guesses ? &guesses : nullptr);
              },
              [] { lk().expect_tracks(); });
}

// ---- Hamming matcher: 10 queries, each the copy of a train descriptor with a few bits flipped. ---------------
struct MatchData {
    std::vector<OrbDescriptor> q, t;
    std::vector<Point2f> qp, tp;
    MatchData() {
        std::uint32_t state = 12345;
        const auto next = [&state] { return state = state * 1664525u + 1013904223u; };
        for (int i = 0; i < 12; ++i) {
            OrbDescriptor d;
            for (auto& b : d.bytes) b = static_cast<std::uint8_t>(next() >> 24);
            t.push_back(d);
            tp.push_back({10.0f * i, 5.0f * i});
        }
        for (int i = 0; i < 10; ++i) {
            OrbDescriptor d = t[static_cast<std::size_t>(11 - i)];
            d.bytes[static_cast<std::size_t>(i)] ^= 0x5;  // 2 bits off train 11 - i
            q.push_back(d);
            qp.push_back(tp[static_cast<std::size_t>(11 - i)]);
        }
    }
};

const MatchData& md() {
    static const MatchData d;
    return d;
}

/// Good call (a matcher of capacity >= 12): every query matched to its planted train descriptor at distance 2, as
/// match_cpu says.
void expect_matches(HammingMatcher& m, bool positions) {
    const MatchData& d = md();
    const Point2f* qp = positions ? d.qp.data() : nullptr;
    const Point2f* tp = positions ? d.tp.data() : nullptr;
    const auto got = m.match(d.q.data(), 10, d.t.data(), 12, qp, tp);
    EXPECT_EQ(got, match_cpu(d.q.data(), 10, d.t.data(), 12, m.config(), qp, tp));
    ASSERT_EQ(got.size(), 10u);
    for (int i = 0; i < 10; ++i) {
        EXPECT_EQ(got[static_cast<std::size_t>(i)].train, 11 - i) << "query " << i;
        EXPECT_EQ(got[static_cast<std::size_t>(i)].distance, 2) << "query " << i;
    }
}

/// A bad MatcherConfig field given to the HammingMatcher constructor (and to validate()); then a good matcher works.
Row matcher_cfg(std::string id, std::string param, std::string text, std::function<void(MatcherConfig&)> edit) {
    return fn(std::move(id), std::move(param), std::move(text),
              [edit] {
                  MatcherConfig c;
                  edit(c);
                  HammingMatcher m(c, 16, Backend::Cpu);
              },
              [] {
                  HammingMatcher m(MatcherConfig{}, 16, Backend::Cpu);
                  expect_matches(m, false);
              });
}

/// A bad match() call on a CPU matcher of capacity 16 built with `cfg`; then the same matcher matches good input.
Row match_call(std::string id, std::string param, std::string text, MatcherConfig cfg,
               std::function<void(HammingMatcher&)> bad) {
    return invalid(std::move(id), std::move(param), std::move(text), [cfg, bad] {
        auto m = std::make_shared<HammingMatcher>(cfg, 16, Backend::Cpu);
        const bool positions = cfg.radius > 0 || cfg.epipolar_band >= 0;
        return Case{[m, bad] { bad(*m); }, [m, positions] { expect_matches(*m, positions); }};
    });
}

// ---- MultiCameraTracker: three cameras of different sizes on crops of the random frame. ----------------------
std::vector<CameraConfig> rig_cameras() {
    std::vector<CameraConfig> c(3);
    for (int i = 0; i < 3; ++i) {
        c[static_cast<std::size_t>(i)].width = 120 + 8 * i;
        c[static_cast<std::size_t>(i)].height = 96 - 4 * i;
        c[static_cast<std::size_t>(i)].tracker.target_features = 40;
    }
    return c;
}

/// Frame k of camera i: its crop of the random frame, moved by k px.
std::vector<HostImage> rig_frames(int k) {
    std::vector<HostImage> f;
    for (const CameraConfig& c : rig_cameras()) f.push_back(test::crop(frame(), 4 + k + c.width / 40, 2 + k, c.width, c.height));
    return f;
}

std::vector<HostView> views_of(const std::vector<HostImage>& f) {
    std::vector<HostView> v;
    for (const HostImage& i : f) v.push_back(i.view());
    return v;
}

/// Good call: two frames on `m` give every camera the tracks of a tracker that never saw the bad call, bit for bit
/// (`seen`: frames 0 .. seen - 1 that `m` tracked before, which the reference tracks first too).
void expect_rig_tracks(MultiCameraTracker& m, int seen = 0) {
    MultiCameraTracker ref(rig_cameras(), Backend::Cpu);
    for (int k = 0; k < seen; ++k) ref.track(views_of(rig_frames(k)));
    for (int k = seen; k < seen + 2; ++k) {
        const std::vector<HostImage> f = rig_frames(k);
        m.track(views_of(f));
        ref.track(views_of(f));
    }
    for (int i = 0; i < 3; ++i) {  // two CPU runs: every field by its bits
        ASSERT_FALSE(m.tracks(i).empty()) << "camera " << i;
        test::expect_same_tracks(m.tracks(i), ref.tracks(i), true, "camera " + std::to_string(i));
    }
}

/// A bad rig given to the MultiCameraTracker constructor; then the good rig works.
Row rig_cfg(std::string id, std::string param, std::string text, std::function<void(std::vector<CameraConfig>&)> edit) {
    return fn(std::move(id), std::move(param), std::move(text),
              [edit] {
                  std::vector<CameraConfig> c = rig_cameras();
                  edit(c);
                  MultiCameraTracker m(c, Backend::Cpu);
              },
              [] {
                  MultiCameraTracker m(rig_cameras(), Backend::Cpu);
                  expect_rig_tracks(m);
              });
}

/// A bad call on a CPU MultiCameraTracker of the good rig; then the same tracker tracks good frames.
Row rig_call(std::string id, std::string param, std::string text, std::function<void(MultiCameraTracker&)> bad) {
    return invalid(std::move(id), std::move(param), std::move(text), [bad] {
        auto m = std::make_shared<MultiCameraTracker>(rig_cameras(), Backend::Cpu);
        return Case{[m, bad] { bad(*m); }, [m] { expect_rig_tracks(*m); }};
    });
}

/// A call the tracker cannot take in its state (StateError naming `text`); then good frames work (after `finish()`
/// when the bad call left frame 0 in flight).
Row rig_state(std::string id, std::string text, std::function<void(MultiCameraTracker&)> bad, bool in_flight = false) {
    return state(std::move(id), std::move(text), [bad, in_flight] {
        auto m = std::make_shared<MultiCameraTracker>(rig_cameras(), Backend::Cpu);
        return Case{[m, bad] { bad(*m); }, [m, in_flight] {
                        if (in_flight) m->finish();  // frame 0 completes
                        expect_rig_tracks(*m, in_flight ? 1 : 0);
                    }};
    });
}

std::vector<Row> cpu_rows() {
    std::vector<Row> rows;
    auto add = [&rows](Row r) { rows.push_back(std::move(r)); };
    const auto good_image = [] { EXPECT_EQ(HostImage(16, 8, 3).at(15, 7), 3); };

    // ---- host images ---------------------------------------------------------------------------------
    add(fn("host_image_width_zero", "width", "[1, 16383]", [] { HostImage(0, 10); }, good_image));
    add(fn("host_image_height_negative", "height", "[1, 16383]", [] { HostImage(10, -3); }, good_image));
    add(fn("host_image_width_too_large", "width", "[1, 16383]", [] { HostImage(16384, 1); }, good_image));
    const auto good_copy = [] {
        const HostImage c = HostImage::copy_of(sized(20, 10, 160));
        EXPECT_EQ(c.at(19, 9), frame().at(19, 9));
    };
    add(fn("copy_of_null", "v.data", "must not be null", [] { HostImage::copy_of(null_view()); }, good_copy));
    add(fn("copy_of_pitch_below_width", "v.pitch", "must be >= width (20)",
           [] { HostImage::copy_of(sized(20, 10, 19)); }, good_copy));

    // ---- pyramid -------------------------------------------------------------------------------------
    const auto good_pyr = [] {
        const auto p = build_pyramid_cpu(frame().view(), {3, 2.0f});
        ASSERT_EQ(p.size(), 3u);
        EXPECT_EQ(p[2].width(), 40);
        EXPECT_EQ(p[1].at(0, 0), (frame().at(0, 0) + frame().at(1, 0) + frame().at(0, 1) + frame().at(1, 1) + 2) / 4);
    };
    const auto pyr = [&](std::string id, std::string param, std::string text, PyramidConfig c) {
        add(fn(std::move(id), std::move(param), std::move(text), [c] { build_pyramid_cpu(frame().view(), c); },
               good_pyr));
    };
    pyr("pyramid_levels_zero", "levels", "[1, 8]", {0, 2.0f});
    pyr("pyramid_levels_nine", "levels", "[1, 8]", {9, 2.0f});
    pyr("pyramid_scale_one", "scale", "(1, 2]", {2, 1.0f});
    pyr("pyramid_scale_above_two", "scale", "(1, 2]", {2, 2.5f});
    pyr("pyramid_scale_nan", "scale", "(1, 2]", {2, kNaN});
    pyr("pyramid_scale_infinite", "scale", "(1, 2]", {2, kInf});
    // 40 -> 20 -> 10 -> 5: a fourth level would be below 7x7.
    add(fn("pyramid_too_many_levels_for_image", "levels", "at most 3",
           [] { build_pyramid_cpu(sized(40, 40, 160), {4, 2.0f}); }, good_pyr));
    add(fn("pyramid_image_smaller_than_circle", "width", "[7, 16383]",
           [] { build_pyramid_cpu(sized(6, 40, 160), {1, 2.0f}); }, good_pyr));
    add(fn("pyramid_null_image", "image.data", "must not be null",
           [] { build_pyramid_cpu(null_view(), {2, 2.0f}); }, good_pyr));
    add(fn("pyramid_width_zero", "image.width", "[1, 16383]", [] { build_pyramid_cpu(sized(0, 40, 160), {1, 2.0f}); },
           good_pyr));
    add(fn("pyramid_height_negative", "image.height", "[1, 16383]",
           [] { build_pyramid_cpu(sized(40, -1, 160), {1, 2.0f}); }, good_pyr));
    add(fn("pyramid_pitch_below_width", "image.pitch", "must be >= width (64)",
           [] { build_pyramid_cpu(sized(64, 40, 63), {1, 2.0f}); }, good_pyr));
    add(fn("pyramid_sizes_height_too_large", "height", "[7, 16383]",
           [] { pyramid_sizes(64, 16384, {1, 2.0f}); },
           [] { EXPECT_EQ(pyramid_sizes(640, 480, {3, 2.0f})[2].height, 120); }));
    add(fn("level_scale_level_out_of_range", "level", "[0, 2]", [] { level_scale({3, 2.0f}, 3); },
           [] { EXPECT_EQ(level_scale({3, 2.0f}, 2), 4.0f); }));
    add(fn("device_pyramid_ctor_too_many_levels", "levels", "at most 2", [] { DevicePyramid(20, 20, {3, 2.0f}); },
           [] { EXPECT_EQ(DevicePyramid(20, 20, {2, 2.0f}).levels(), 2); }, true));
    add(state("device_pyramid_empty", "DevicePyramid::build", [] {
        auto p = std::make_shared<DevicePyramid>();
        return Case{[p] { p->build(nullptr); }, [p] {
                        *p = DevicePyramid(64, 48, {2, 2.0f});
                        p->build(nullptr);
                        synchronize(nullptr);
                    }};
    }, true));

    // ---- FAST ----------------------------------------------------------------------------------------
    const auto good_fast = [] {
        const ScoreMap m = fast_score_map_cpu(frame().view(), FastConfig{});
        EXPECT_EQ(m.width, 160);
        EXPECT_EQ(m.at(0, 0), 0.0f);  // border
        EXPECT_GT(*std::max_element(m.scores.begin(), m.scores.end()), 0.0f);
    };
    const auto fast = [&](std::string id, std::string param, std::string text, FastConfig c) {
        add(fn(std::move(id), std::move(param), std::move(text), [c] { fast_score_map_cpu(frame().view(), c); },
               good_fast));
    };
    fast("fast_threshold_negative", "fast.threshold", "[0, 254]", {-1, 9, 16});
    fast("fast_threshold_255", "fast.threshold", "[0, 254]", {255, 9, 16});
    fast("fast_arc_min_zero", "fast.arc_min", "[1, 16]", {10, 0, 16});
    fast("fast_arc_min_17", "fast.arc_min", "[1, 16]", {10, 17, 17});
    fast("fast_arc_max_17", "fast.arc_max", "[9, 16]", {10, 9, 17});
    fast("fast_arc_min_above_max", "fast.arc_max", "[12, 16]", {10, 12, 11});
    fast("fast_score_type_unknown", "fast.score", "[0, 3]", {10, 9, 16, static_cast<ScoreType>(7)});
    add(fn("corner_lut_min_above_max", "arc_max", "[12, 16]", [] { corner_lut(12, 11); },
           [] { EXPECT_EQ(corner_lut(9, 16).size(), 2048u); }));
    add(fn("fast_null_image", "image.data", "must not be null", [] { fast_score_map_cpu(null_view(), {}); },
           good_fast));
    add(fn("fast_width_negative", "image.width", "[1, 16383]", [] { fast_score_map_cpu(sized(-5, 40, 160), {}); },
           good_fast));
    add(fn("fast_pitch_below_width", "image.pitch", "must be >= width (32)",
           [] { fast_score_map_cpu(sized(32, 32, 31), {}); }, good_fast));
    add(fn("fast_maps_empty_pyramid", "pyramid", "at least one level", [] { fast_score_maps_cpu({}, {}); },
           good_fast));
    const auto good_maps = [] {
        DeviceScoreMaps m(pyramid_sizes(64, 48, {2, 2.0f}), FastConfig{});
        EXPECT_EQ(m.levels(), 2);
    };
    add(fn("device_score_maps_no_levels", "level_sizes.size()", "[1, 8]", [] { DeviceScoreMaps({}, FastConfig{}); },
           good_maps, true));
    add(fn("device_score_maps_level_width_zero", "level_sizes[].width", "[1, 16383]",
           [] { DeviceScoreMaps({{0, 5}}, FastConfig{}); }, good_maps, true));
    add(fn("device_score_maps_bad_threshold", "fast.threshold", "[0, 254]",
           [] { DeviceScoreMaps({{64, 48}}, FastConfig{300}); }, good_maps, true));

    // ---- detector configuration (FeatureDetector constructor) ------------------------------------------
    add(detector_cfg("detector_nms_radius_zero", "nms_radius", "[1, 4]", [](DetectorConfig& c) { c.nms_radius = 0; }));
    add(detector_cfg("detector_nms_radius_five", "nms_radius", "[1, 4]", [](DetectorConfig& c) { c.nms_radius = 5; }));
    add(detector_cfg("detector_cell_width_16", "cell_width", "[32, 1024]",
        [](DetectorConfig& c) { c.cell_width = 16; }));
    add(detector_cfg("detector_cell_width_48", "cell_width", "multiple of 32",
        [](DetectorConfig& c) { c.cell_width = 48; }));
    add(detector_cfg("detector_cell_width_1056", "cell_width", "[32, 1024]",
        [](DetectorConfig& c) { c.cell_width = 1056; }));
    add(detector_cfg("detector_cell_height_7", "cell_height", "[8, 1024]",
        [](DetectorConfig& c) { c.cell_height = 7; }));
    add(detector_cfg("detector_per_cell_zero", "per_cell", "[1, 8]", [](DetectorConfig& c) { c.per_cell = 0; }));
    add(detector_cfg("detector_per_cell_nine", "per_cell", "[1, 8]", [](DetectorConfig& c) { c.per_cell = 9; }));
    add(detector_cfg("detector_max_features_negative", "max_features", "[0, 16777216]",
                 [](DetectorConfig& c) { c.max_features = -1; }));
    add(detector_cfg("detector_border_negative", "border", "[0, 64]", [](DetectorConfig& c) { c.border = -1; }));
    add(detector_cfg("detector_border_65", "border", "[0, 64]", [](DetectorConfig& c) { c.border = 65; }));
    add(detector_cfg("detector_threshold_300", "fast.threshold", "[0, 254]",
        [](DetectorConfig& c) { c.fast.threshold = 300; }));
    add(detector_cfg("detector_arc_min_above_max", "fast.arc_max", "[13, 16]", [](DetectorConfig& c) {
        c.fast.arc_min = 13;
        c.fast.arc_max = 10;
    }));
    add(detector_cfg("detector_orbslam_no_budget", "max_features", ">= 1 under selection orb-slam",
        [](DetectorConfig& c) { c.selection = SelectionPolicy::OrbSlam; }));
    add(detector_cfg("detector_orbslam_cell_8", "orbslam.cell", "[16, 256]", [](DetectorConfig& c) {
        c.selection = SelectionPolicy::OrbSlam;
        c.max_features = 1000;
        c.orbslam.cell = 8;
    }));
    add(detector_cfg("detector_orbslam_threshold_min_zero", "orbslam.threshold_min", "[1, 254]", [](DetectorConfig& c) {
        c.selection = SelectionPolicy::OrbSlam;
        c.max_features = 1000;
        c.orbslam.threshold_min = 0;
    }));
    add(detector_cfg("detector_level_harris_sad_score", "fast.score", "must be MaxThreshold", [](DetectorConfig& c) {
        c.selection = SelectionPolicy::LevelHarris;
        c.max_features = 1000;
        c.fast.score = ScoreType::SadCircle;
    }));
    add(detector_cfg("detector_levels_zero", "levels", "[1, 8]", [](DetectorConfig& c) { c.pyramid.levels = 0; }));
    add(detector_cfg("detector_scale_nan", "scale", "(1, 2]", [](DetectorConfig& c) { c.pyramid.scale = kNaN; }));
    add(fn("detector_backend_unknown", "backend", "Backend::Cuda or Backend::Cpu",
           [] { FeatureDetector d(det_cfg(), static_cast<Backend>(7)); },
           [] {
               FeatureDetector d(det_cfg(), Backend::Cpu);
               expect_detects(d);
           }));
    add(fn("grid_size_width_zero", "width", "[1, 16383]", [] { grid_size(0, 10, det_cfg()); },
           [] { EXPECT_EQ(grid_size(160, 120, det_cfg()).width, 5); }));

    // ---- detection (one CPU detector, reused after the bad call) ----------------------------------------
    const DetectorConfig dc = det_cfg();
    rows.push_back(detect("detect_null_image", "image.data", "must not be null", dc,
                          [](FeatureDetector& d) { d.detect(null_view()); }));
    rows.push_back(detect("detect_width_zero", "image.width", "[1, 16383]", dc,
                          [](FeatureDetector& d) { d.detect(sized(0, 40, 160)); }));
    rows.push_back(detect("detect_height_negative", "image.height", "[1, 16383]", dc,
                          [](FeatureDetector& d) { d.detect(sized(40, -7, 160)); }));
    rows.push_back(detect("detect_pitch_below_width", "image.pitch", "must be >= width (160)", dc,
                          [](FeatureDetector& d) { d.detect(sized(160, 120, 100)); }));
    DetectorConfig bordered = dc;
    bordered.border = 20;
    rows.push_back(detect("detect_image_smaller_than_border", "image.width", ">= 2 * border + 7 = 47", bordered,
                          [](FeatureDetector& d) { d.detect(sized(40, 60, 160)); }));
    DetectorConfig deep = dc;
    deep.pyramid.levels = 4;
    rows.push_back(detect("detect_image_too_small_for_levels", "levels", "at most 3", deep,
                          [](FeatureDetector& d) { d.detect(sized(40, 40, 160)); }));
    rows.push_back(detect("detect_cell_mask_wrong_grid", "masks.cell_grid", "must equal the cell grid 5x4", dc,
                          [](FeatureDetector& d) {
                              const std::vector<std::uint8_t> skip(16, 0);
                              d.detect(frame().view(), {skip.data(), {4, 4}, {}});
                          }));
    rows.push_back(detect("detect_pixel_mask_wrong_size", "masks.pixel_mask", "must equal the image size 160x120", dc,
                          [](FeatureDetector& d) {
                              const HostImage mask(80, 60, 1);
                              d.detect(frame().view(), {nullptr, {}, mask.view()});
                          }));
    rows.push_back(detect("detect_pixel_mask_pitch_below_width", "masks.pixel_mask.pitch", "must be >= width (160)",
                          dc, [](FeatureDetector& d) {
                              const HostImage mask(160, 120, 1);
                              d.detect(frame().view(), {nullptr, {}, {mask.data(), 160, 120, 159}});
                          }));
    add(fn("detect_cpu_null_image", "image.data", "must not be null", [] { detect_cpu(null_view(), det_cfg()); },
           [] { EXPECT_FALSE(detect_cpu(frame().view(), det_cfg()).empty()); }));
    add(state("detector_moved_from", "FeatureDetector::detect", [] {
        auto a = std::make_shared<FeatureDetector>(det_cfg(), Backend::Cpu);
        auto b = std::make_shared<FeatureDetector>(std::move(*a));
        return Case{[a] { a->detect(frame().view()); },  // NOLINT(bugprone-use-after-move): on purpose
                    [a, b] {
                        expect_detects(*b);
                        *a = FeatureDetector(det_cfg(), Backend::Cpu);  // a moved-from object can be assigned
                        expect_detects(*a);
                    }};
    }));
    add(state("detector_moved_from_config", "FeatureDetector::config", [] {
        auto a = std::make_shared<FeatureDetector>(det_cfg(), Backend::Cpu);
        auto b = std::make_shared<FeatureDetector>(std::move(*a));
        return Case{[a] { (void)a->config(); }, [b] { expect_detects(*b); }};
    }));
    add(state("detector_cpu_detect_async", "needs Backend::Cuda", [] {
        auto d = std::make_shared<FeatureDetector>(det_cfg(), Backend::Cpu);
        return Case{[d] {
                        const DeviceView v{frame().data(), 160, 120, 160};  // never dereferenced
                        d->detect_async(v, nullptr);
                    },
                    [d] { expect_detects(*d); }};
    }));

    // ---- LK configuration and lk_track_cpu --------------------------------------------------------------
    add(lk_cfg("lk_levels_zero", "pyramid.levels", "[1, 8]", [](LkConfig& c) { c.pyramid.levels = 0; }));
    add(lk_cfg("lk_scale_nan", "pyramid.scale", "(1, 2]", [](LkConfig& c) { c.pyramid.scale = kNaN; }));
    add(lk_cfg("lk_mode_unknown", "mode", "[0, 3]", [](LkConfig& c) { c.mode = static_cast<LkMode>(4); }));
    add(lk_cfg("lk_template_source_unknown", "template_source", "[0, 1]",
           [](LkConfig& c) { c.template_source = static_cast<TemplateSource>(2); }));
    add(lk_cfg("lk_patch_size_3", "patch_size", "[4, 16]", [](LkConfig& c) { c.patch_size = 3; }));
    add(lk_cfg("lk_patch_size_17", "patch_size", "[4, 16]", [](LkConfig& c) { c.patch_size = 17; }));
    add(lk_cfg("lk_coarse_patch_size_20", "coarse_patch_size", "[4, 16]",
        [](LkConfig& c) { c.coarse_patch_size = 20; }));
    add(lk_cfg("lk_coarse_from_level_zero", "coarse_from_level", "[1, 8]",
        [](LkConfig& c) { c.coarse_from_level = 0; }));
    add(lk_cfg("lk_max_iterations_zero", "max_iterations", "[1, 100]", [](LkConfig& c) { c.max_iterations = 0; }));
    add(lk_cfg("lk_min_update_zero", "min_update", "(0, 1]", [](LkConfig& c) { c.min_update = 0.0f; }));
    add(lk_cfg("lk_min_update_nan", "min_update", "(0, 1]", [](LkConfig& c) { c.min_update = kNaN; }));
    add(lk_cfg("lk_max_residual_infinite", "max_residual", "(0, 255]", [](LkConfig& c) { c.max_residual = kInf; }));
    add(lk_cfg("lk_min_eigenvalue_negative", "min_eigenvalue", "[0, 1e+06]",
        [](LkConfig& c) { c.min_eigenvalue = -1.0f; }));
    add(lk_cfg("lk_min_eigenvalue_nan", "min_eigenvalue", "must be finite",
        [](LkConfig& c) { c.min_eigenvalue = kNaN; }));
    add(fn("lk_patch_size_level_out_of_range", "level", "[0, 2]", [] { lk_patch_size(lk().cfg, 3); },
           [] {
               const LkConfig& c = lk().cfg;
               EXPECT_EQ(lk_patch_size(c, 2), 2 < c.coarse_from_level ? c.patch_size : c.coarse_patch_size);
           }));
    add(fn("lk_ref_pyramid_levels", "ref", "has 2 levels",
           [] {
               const auto ref2 = build_pyramid_cpu(frame().view(), {2, 2.0f});
               lk_track_cpu(ref2, lk().cur, lk().pts, lk().cfg);
           },
           [] { lk().expect_tracks(); }));
    add(fn("lk_cur_frame_size", "cur", "must equal ref's 160x120",
           [] {
               const auto small = build_pyramid_cpu(sized(100, 100, 160), lk().cfg.pyramid);
               lk_track_cpu(lk().ref, small, lk().pts, lk().cfg);
           },
           [] { lk().expect_tracks(); }));
    const std::vector<Point2f> p3 = lk().pts;
    auto with = [&p3](std::size_t i, Point2f p) {
        std::vector<Point2f> v = p3;
        v[i] = p;
        return v;
    };
    rows.push_back(lk_call("lk_point_nan", "ref_points", "[1] = (nan, 60.25) must be finite",
                           with(1, {kNaN, 60.25f}), {}, false));
    rows.push_back(lk_call("lk_point_infinite", "ref_points", "must be finite", with(2, {120.0f, -kInf}), {}, false));
    const std::vector<LkGuess> g3{{42, 41, 1, 0}, {82.5f, 61.25f, 1, 0}, {122, 76, 1, 0}};
    rows.push_back(lk_call("lk_guesses_count", "guesses", "one per point", p3, {g3[0], g3[1]}, true));
    std::vector<LkGuess> gnan = g3, ggain = g3, goff = g3;
    gnan[0].y = kNaN;
    ggain[1].gain = 0.0f;
    goff[2].offset = kInf;
    rows.push_back(lk_call("lk_guess_nan", "guesses", "must be finite", p3, gnan, true));
    rows.push_back(lk_call("lk_guess_gain_zero", "guesses", "gain must be finite and > 0", p3, ggain, true));
    rows.push_back(lk_call("lk_guess_offset_infinite", "guesses", "offset finite", p3, goff, true));
    const auto good_lk_tracker = [] { EXPECT_EQ(DeviceLkTracker(LkConfig{}, 16).capacity(), 16); };
    add(fn("device_lk_capacity_zero", "capacity", "[1, 65536]", [] { DeviceLkTracker(LkConfig{}, 0); },
           good_lk_tracker, true));
    add(fn("device_lk_capacity_65537", "capacity", "[1, 65536]", [] { DeviceLkTracker(LkConfig{}, 65537); },
           good_lk_tracker, true));
    add(fn("device_lk_bad_config", "patch_size", "[4, 16]",
           [] {
               LkConfig c;
               c.patch_size = 3;
               DeviceLkTracker(c, 16);
           },
           good_lk_tracker, true));

    // ---- device images: sizes are checked before any CUDA call ------------------------------------------
    const auto good_dev = [] {
        const DeviceImage d = upload(sized(20, 10, 160));
        EXPECT_EQ(download(d.view()).at(19, 9), frame().at(19, 9));
    };
    add(fn("device_image_width_zero", "width", "[1, 16383]", [] { DeviceImage(0, 5); }, good_dev, true));
    add(fn("device_image_height_too_large", "height", "[1, 16383]", [] { DeviceImage(5, 16384); }, good_dev, true));
    add(fn("pinned_image_height_negative", "height", "[1, 16383]", [] { PinnedImage(5, -1); },
           [] { EXPECT_EQ(PinnedImage(5, 5).view().width, 5); }, true));
    add(fn("upload_null", "src.data", "must not be null", [] { upload(null_view()); }, good_dev, true));
    add(fn("upload_pitch_below_width", "src.pitch", "must be >= width (20)", [] { upload(sized(20, 10, 12)); },
           good_dev, true));
    add(fn("download_null", "src.data", "must not be null", [] { download(DeviceView{nullptr, 8, 8, 8}); }, good_dev,
           true));

    // ---- PyCA selection (FeatureDetector constructor; the grid policy ignores these fields) ----------------------
    const auto pyca = [&](std::string id, std::string param, std::string text, std::function<void(DetectorConfig&)> edit) {
        add(detector_cfg(std::move(id), std::move(param), std::move(text), [edit](DetectorConfig& c) {
            c.selection = SelectionPolicy::PyCA;
            c.pyramid = {3, 1.2f};
            edit(c);
        }));
    };
    pyca("pyca_cell_24", "pyca.cell[1]", "= 24 must be a power of two in [8, 128]", [](DetectorConfig& c) { c.pyca.cell[1] = 24; });
    pyca("pyca_cell_4", "pyca.cell[1]", "= 4 must be a power of two in [8, 128]", [](DetectorConfig& c) { c.pyca.cell[1] = 4; });
    pyca("pyca_cell_256", "pyca.cell[2]", "= 256 must be a power of two in [8, 128]",
         [](DetectorConfig& c) { c.pyca.cell[2] = 256; });
    pyca("pyca_q_even", "pyca.q", "= 2 must be odd", [](DetectorConfig& c) { c.pyca.q = 2; });
    pyca("pyca_q_zero", "pyca.q", "= 0 is outside [1, 9]", [](DetectorConfig& c) { c.pyca.q = 0; });
    pyca("pyca_q_11", "pyca.q", "= 11 is outside [1, 9]", [](DetectorConfig& c) { c.pyca.q = 11; });
    // The PyCA stage on score maps (kestrel/pyca_select.hpp): bad maps and masks; then the stage works on good maps.
    const auto pyca3 = [] {
        DetectorConfig c = det_cfg();
        c.selection = SelectionPolicy::PyCA;
        c.pyramid = {3, 1.5f};
        return c;
    };
    const auto good_pyca_stage = [pyca3] {
        const DetectorConfig c = pyca3();
        const auto maps = fast_score_maps_cpu(build_pyramid_cpu(frame().view(), c.pyramid), c.fast);
        const auto k = detail::pyca_select_cpu(maps, c);
        EXPECT_FALSE(k.empty());
        EXPECT_EQ(k.size(), detect_cpu(frame().view(), c).size()) << "the stage is the detector's selection";
    };
    add(fn("pyca_select_grid_policy", "cfg.selection", "must be SelectionPolicy::PyCA",
           [] { detail::pyca_select_cpu(test::blank_maps(64, 64, det_cfg()), det_cfg()); }, good_pyca_stage));
    add(fn("pyca_select_maps_count", "maps.size()", "= 2 is outside [3, 3]",
           [pyca3] {
               auto maps = test::blank_maps(120, 90, pyca3());
               maps.pop_back();
               detail::pyca_select_cpu(maps, pyca3());
           },
           good_pyca_stage));
    add(fn("pyca_cull_maps_count", "maps.size()", "= 2 is outside [3, 3]",
           [pyca3] {
               auto maps = test::blank_maps(120, 90, pyca3());
               maps.pop_back();
               detail::pyca_cull_cpu(maps, pyca3());
           },
           good_pyca_stage));
    add(fn("pyca_select_negative_score", "maps", "level 1 holds a score that is negative or not finite",
           [pyca3] {
               auto maps = test::blank_maps(120, 90, pyca3());
               maps[1].scores[5] = -1.0f;
               detail::pyca_select_cpu(maps, pyca3());
           },
           good_pyca_stage));
    add(fn("pyca_select_mask_grid", "masks.cell_grid", "must equal the cell grid 4x3",
           [pyca3] {
               std::uint8_t skip[4] = {};
               DetectionMasks bad;
               bad.cell_skip = skip;
               bad.cell_grid = {2, 2};
               detail::pyca_select_cpu(test::blank_maps(120, 90, pyca3()), pyca3(), bad);
           },
           good_pyca_stage));
    add(fn("pyca_select_cuda_mask_grid", "masks.cell_grid", "must equal the cell grid 4x3",  // checked before any CUDA call
           [pyca3] {
               std::uint8_t skip[4] = {};
               DetectionMasks bad;
               bad.cell_skip = skip;
               bad.cell_grid = {2, 2};
               detail::pyca_select_cuda(test::blank_maps(120, 90, pyca3()), pyca3(), bad);
           },
           good_pyca_stage));
    add(detector_cfg("detector_selection_unknown", "selection", "must be SelectionPolicy::Grid, SelectionPolicy::PyCA",
                     [](DetectorConfig& c) { c.selection = static_cast<SelectionPolicy>(7); }));

    // ---- Hamming matcher ------------------------------------------------------------------------------------
    add(matcher_cfg("matcher_ratio_zero", "ratio", "= 0 must be in (0, 1]", [](MatcherConfig& c) { c.ratio = 0.0f; }));
    add(matcher_cfg("matcher_ratio_above_one", "ratio", "= 1.5 must be in (0, 1]", [](MatcherConfig& c) { c.ratio = 1.5f; }));
    add(matcher_cfg("matcher_radius_negative", "radius", "= -1 must be finite and >= 0",
                    [](MatcherConfig& c) { c.radius = -1.0f; }));
    add(matcher_cfg("matcher_radius_infinite", "radius", "= inf must be finite and >= 0",
                    [](MatcherConfig& c) { c.radius = kInf; }));
    add(matcher_cfg("matcher_epipolar_band_nan", "epipolar_band", "= nan must be finite",
                    [](MatcherConfig& c) { c.epipolar_band = kNaN; }));
    add(matcher_cfg("matcher_max_distance_257", "max_distance", "= 257 is outside [0, 256]",
                    [](MatcherConfig& c) { c.max_distance = 257; }));
    add(matcher_cfg("matcher_max_distance_negative", "max_distance", "= -1 is outside [0, 256]",
                    [](MatcherConfig& c) { c.max_distance = -1; }));
    add(fn("matcher_validate_ratio_nan", "ratio", "must be in (0, 1]",
           [] {
               MatcherConfig c;
               c.ratio = kNaN;
               validate(c);
           },
           [] { validate(MatcherConfig{}); }));
    const auto good_matcher = [] {
        HammingMatcher m(MatcherConfig{}, 16, Backend::Cpu);
        expect_matches(m, false);
    };
    add(fn("matcher_capacity_zero", "capacity", "= 0 is outside [1, 1048576]",
           [] { HammingMatcher m(MatcherConfig{}, 0, Backend::Cpu); }, good_matcher));
    add(fn("matcher_capacity_too_large", "capacity", "is outside [1, 1048576]",
           [] { HammingMatcher m(MatcherConfig{}, 1 << 30, Backend::Cpu); }, good_matcher));
    const MatcherConfig plain{};
    MatcherConfig radius = plain, band = plain;
    radius.radius = 5.0f;
    band.epipolar_band = 2.0f;
    rows.push_back(match_call("match_n_query_above_capacity", "n_query", "= 17 is outside [0, 16]", plain,
                              [](HammingMatcher& m) { m.match(md().q.data(), 17, md().t.data(), 8); }));
    rows.push_back(match_call("match_n_train_above_capacity", "n_train", "= 17 is outside [0, 16]", plain,
                              [](HammingMatcher& m) { m.match(md().q.data(), 8, md().t.data(), 17); }));
    rows.push_back(match_call("match_n_query_negative", "n_query", "= -1 is outside [0, 16]", plain,
                              [](HammingMatcher& m) { m.match(md().q.data(), -1, md().t.data(), 8); }));
    rows.push_back(match_call("match_query_null", "query", "must not be null when n_query > 0", plain,
                              [](HammingMatcher& m) { m.match(nullptr, 3, md().t.data(), 8); }));
    rows.push_back(match_call("match_train_null", "train", "must not be null when n_train > 0", plain,
                              [](HammingMatcher& m) { m.match(md().q.data(), 3, nullptr, 8); }));
    rows.push_back(match_call("match_radius_without_query_positions", "query_pos",
                              "must not be null: the config has a radius or an epipolar band", radius,
                              [](HammingMatcher& m) { m.match(md().q.data(), 10, md().t.data(), 12); }));
    rows.push_back(match_call("match_radius_without_train_positions", "train_pos",
                              "must not be null: the config has a radius or an epipolar band", radius,
                              [](HammingMatcher& m) { m.match(md().q.data(), 10, md().t.data(), 12, md().qp.data()); }));
    rows.push_back(match_call("match_band_without_query_positions", "query_pos",
                              "must not be null: the config has a radius or an epipolar band", band,
                              [](HammingMatcher& m) { m.match(md().q.data(), 10, md().t.data(), 12); }));
    add(fn("match_cpu_n_query_negative", "n_query", "= -2 is outside [0,",
           [] { match_cpu(md().q.data(), -2, md().t.data(), 3, MatcherConfig{}); },
           [] {
               const auto m = match_cpu(md().q.data(), 10, md().t.data(), 12, MatcherConfig{});
               ASSERT_EQ(m.size(), 10u);
               EXPECT_EQ(m[0].train, 11);
               EXPECT_EQ(m[0].distance, 2);
           }));
    add(state("matcher_cpu_match_async", "needs Backend::Cuda", [] {
        auto m = std::make_shared<HammingMatcher>(MatcherConfig{}, 16, Backend::Cpu);
        return Case{[m] { m->match_async(nullptr, 0, nullptr, 0, nullptr); }, [m] { expect_matches(*m, false); }};
    }));
    add(state("matcher_moved_from", "HammingMatcher::match: object is empty or moved-from", [] {
        auto a = std::make_shared<HammingMatcher>(MatcherConfig{}, 16, Backend::Cpu);
        auto b = std::make_shared<HammingMatcher>(std::move(*a));
        return Case{[a] { a->match(md().q.data(), 3, md().t.data(), 3); },  // NOLINT(bugprone-use-after-move): on purpose
                    [a, b] {
                        expect_matches(*b, false);
                        *a = HammingMatcher(MatcherConfig{}, 16, Backend::Cpu);
                        expect_matches(*a, false);
                    }};
    }));

    // ---- MultiCameraTracker ---------------------------------------------------------------------------------
    add(rig_cfg("multi_camera_no_camera", "cameras.size()", "= 0 is outside [1, 32]",
                [](std::vector<CameraConfig>& c) { c.clear(); }));
    add(rig_cfg("multi_camera_33_cameras", "cameras.size()", "= 33 is outside [1, 32]",
                [](std::vector<CameraConfig>& c) { c.resize(33, c[0]); }));
    add(rig_cfg("multi_camera_width_3", "width", "cameras[1]: parameter 'width' = 3 is outside [7, 16383]",
                [](std::vector<CameraConfig>& c) { c[1].width = 3; }));
    add(rig_cfg("multi_camera_height_zero", "height", "cameras[0]: parameter 'height' = 0 is outside [7, 16383]",
                [](std::vector<CameraConfig>& c) { c[0].height = 0; }));
    add(rig_cfg("multi_camera_tracker_config", "target_features",
                "cameras[2].tracker: parameter 'target_features' = 0 is outside [1, 65536]",
                [](std::vector<CameraConfig>& c) { c[2].tracker.target_features = 0; }));
    add(fn("multi_camera_backend_unknown", "backend", "must be Backend::Cuda or Backend::Cpu",
           [] { MultiCameraTracker m(rig_cameras(), static_cast<Backend>(7)); },
           [] {
               MultiCameraTracker m(rig_cameras(), Backend::Cpu);
               expect_rig_tracks(m);
           }));
    rows.push_back(rig_call("multi_camera_two_frames_for_three", "frames",
                            "has 2 entries, must have one per camera (3)", [](MultiCameraTracker& m) {
                                const auto f = rig_frames(0);
                                auto v = views_of(f);
                                v.pop_back();
                                m.track(v);
                            }));
    rows.push_back(rig_call("multi_camera_frames_swapped", "frames[1]", "is 136x88, camera 1 is 128x92",
                            [](MultiCameraTracker& m) {
                                const auto f = rig_frames(0);
                                auto v = views_of(f);
                                std::swap(v[1], v[2]);
                                m.track(v);
                            }));
    rows.push_back(rig_call("multi_camera_frame_null", "frames[0].data", "must not be null",
                            [](MultiCameraTracker& m) {
                                const auto f = rig_frames(0);
                                auto v = views_of(f);
                                v[0].data = nullptr;
                                m.track(v);
                            }));
    rows.push_back(rig_call("multi_camera_rotation_priors_count", "rotation_priors",
                            "has 2 entries, must have one per camera (3)", [](MultiCameraTracker& m) {
                                const auto f = rig_frames(0);
                                const std::vector<std::array<double, 9>> priors(2);
                                m.track(views_of(f), &priors);
                            }));
    rows.push_back(rig_call("multi_camera_tracks_camera_3", "camera", "= 3 is outside [0, 2]",
                            [](MultiCameraTracker& m) { (void)m.tracks(3); }));
    rows.push_back(rig_call("multi_camera_lost_tracks_camera_negative", "camera", "= -1 is outside [0, 2]",
                            [](MultiCameraTracker& m) { (void)m.lost_tracks(-1); }));
    rows.push_back(rig_call("multi_camera_camera_negative", "camera", "= -1 is outside [0, 2]",
                            [](MultiCameraTracker& m) { (void)m.camera(-1); }));
    add(rig_state("multi_camera_finish_without_frames", "MultiCameraTracker::finish: no frames in flight",
                  [](MultiCameraTracker& m) { m.finish(); }));
    add(rig_state("multi_camera_track_async_in_flight", "the previous frames are still in flight",
                  [](MultiCameraTracker& m) {
                      static const std::vector<HostImage> f = rig_frames(0);
                      m.track_async(views_of(f), nullptr);  // works (CPU: done here)
                      m.track_async(views_of(f), nullptr);  // throws
                  },
                  true));
    add(rig_state("multi_camera_cpu_device_frames", "device frames need Backend::Cuda",
                  [](MultiCameraTracker& m) { m.track_async(std::vector<DeviceView>(3), nullptr); }));
    return rows;
}

class BadInputCpu : public ::testing::TestWithParam<Row> {};

TEST_P(BadInputCpu, ThrowsNamingParameterAndBoundThenWorks) { test::run_row(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Rows, BadInputCpu, ::testing::ValuesIn(cpu_rows()), test::row_name);

// Not an error: features outside the image come back LostOutOfBounds, the others are tracked.
TEST(BadInputCpuStatus, LkPointsOutsideTheImageAreLostOutOfBounds) {
    std::vector<Point2f> pts = lk().pts;
    pts.push_back({-40.0f, 30.0f});
    pts.push_back({1e7f, 60.0f});
    pts.push_back({159.9f, 119.9f});  // inside, but its patch is not
    const std::vector<LkResult> r = lk_track_cpu(lk().ref, lk().cur, pts, lk().cfg);
    ASSERT_EQ(r.size(), pts.size());
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r[i].status, TrackStatus::Tracked) << i;
    for (std::size_t i = 3; i < r.size(); ++i) EXPECT_EQ(r[i].status, TrackStatus::LostOutOfBounds) << i;
    lk().expect_tracks();
}

// Backend::Cuda asked for on a machine without a device: NoDeviceError, nothing half-built.
TEST(BadInputCpuStatus, CudaBackendWithoutDeviceThrowsNoDeviceError) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: this row is about machines without one";
    EXPECT_THROW(FeatureDetector(det_cfg(), Backend::Cuda), NoDeviceError);
    EXPECT_THROW(DeviceLkTracker(LkConfig{}, 16), NoDeviceError);
    FeatureDetector d(det_cfg(), default_backend());
    EXPECT_EQ(d.backend(), Backend::Cpu);
    expect_detects(d);
}

}  // namespace
}  // namespace kestrel
