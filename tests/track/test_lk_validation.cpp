// Error paths of the LK tracker and the FeatureTracker: every LkConfig and TrackerConfig field, NaN
// positions, points outside the image, frames and pyramids of the wrong size, calls out of order,
// moved-from objects and the CUDA backend without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "kestrel/feature_tracker.hpp"
#include "kestrel/lk_tracker.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

// Expects InvalidArgument naming `param` (and the message naming it too).
void expect_invalid(const std::function<void()>& f, const std::string& param) {
    try {
        f();
        ADD_FAILURE() << "no exception; expected InvalidArgument for '" << param << "'";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), param) << e.what();
        EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
    }
}

void expect_lk_invalid(const std::function<void(LkConfig&)>& edit, const std::string& param) {
    LkConfig c;
    edit(c);
    expect_invalid([&] { validate(c); }, param);
    expect_invalid([&] { DeviceLkTracker t(c, 10); }, param);  // validated before any device use
    TrackerConfig tc;
    tc.lk = c;
    expect_invalid([&] { validate(tc); }, param);
    expect_invalid([&] { FeatureTracker t(640, 480, tc, Backend::Cpu); }, param);
}

TEST(LkValidation, EveryLkConfigField) {
    EXPECT_NO_THROW(validate(LkConfig{}));
    expect_lk_invalid([](LkConfig& c) { c.pyramid.levels = 0; }, "pyramid.levels");
    expect_lk_invalid([](LkConfig& c) { c.pyramid.levels = kMaxLevels + 1; }, "pyramid.levels");
    expect_lk_invalid([](LkConfig& c) { c.pyramid.scale = 1.0f; }, "pyramid.scale");
    expect_lk_invalid([](LkConfig& c) { c.pyramid.scale = 2.5f; }, "pyramid.scale");
    expect_lk_invalid([](LkConfig& c) { c.pyramid.scale = kNaN; }, "pyramid.scale");
    expect_lk_invalid([](LkConfig& c) { c.mode = static_cast<LkMode>(4); }, "mode");
    expect_lk_invalid([](LkConfig& c) { c.mode = static_cast<LkMode>(-1); }, "mode");
    expect_lk_invalid([](LkConfig& c) { c.template_source = static_cast<TemplateSource>(2); }, "template_source");
    expect_lk_invalid([](LkConfig& c) { c.patch_size = 3; }, "patch_size");
    expect_lk_invalid([](LkConfig& c) { c.patch_size = 17; }, "patch_size");
    expect_lk_invalid([](LkConfig& c) { c.coarse_patch_size = 3; }, "coarse_patch_size");
    expect_lk_invalid([](LkConfig& c) { c.coarse_patch_size = 32; }, "coarse_patch_size");
    expect_lk_invalid([](LkConfig& c) { c.coarse_from_level = 0; }, "coarse_from_level");
    expect_lk_invalid([](LkConfig& c) { c.coarse_from_level = kMaxLevels + 1; }, "coarse_from_level");
    expect_lk_invalid([](LkConfig& c) { c.max_iterations = 0; }, "max_iterations");
    expect_lk_invalid([](LkConfig& c) { c.max_iterations = 101; }, "max_iterations");
    expect_lk_invalid([](LkConfig& c) { c.coarse_max_iterations = 0; }, "coarse_max_iterations");
    expect_lk_invalid([](LkConfig& c) { c.coarse_max_iterations = 101; }, "coarse_max_iterations");
    expect_lk_invalid([](LkConfig& c) { c.min_update = 0.0f; }, "min_update");
    expect_lk_invalid([](LkConfig& c) { c.min_update = 1.5f; }, "min_update");
    expect_lk_invalid([](LkConfig& c) { c.min_update = kNaN; }, "min_update");
    expect_lk_invalid([](LkConfig& c) { c.max_residual = 0.0f; }, "max_residual");
    expect_lk_invalid([](LkConfig& c) { c.max_residual = 256.0f; }, "max_residual");
    expect_lk_invalid([](LkConfig& c) { c.max_residual = kInf; }, "max_residual");
    expect_lk_invalid([](LkConfig& c) { c.min_eigenvalue = -1.0f; }, "min_eigenvalue");
    expect_lk_invalid([](LkConfig& c) { c.min_eigenvalue = 2e6f; }, "min_eigenvalue");
    expect_lk_invalid([](LkConfig& c) { c.min_eigenvalue = kNaN; }, "min_eigenvalue");
    // Bounds themselves are valid.
    LkConfig edge;
    edge.patch_size = 4;
    edge.coarse_patch_size = 16;
    edge.max_iterations = 100;
    edge.min_update = 1.0f;
    edge.max_residual = 255.0f;
    edge.min_eigenvalue = 0.0f;
    EXPECT_NO_THROW(validate(edge));
    EXPECT_EQ(lk_patch_size(LkConfig{}, 0), 16);
    EXPECT_EQ(lk_patch_size(LkConfig{}, 2), 16);
    LkConfig deep;
    deep.pyramid.levels = 4;
    deep.coarse_from_level = 2;
    EXPECT_EQ(lk_patch_size(deep, 1), 16);
    EXPECT_EQ(lk_patch_size(deep, 2), 8);
    EXPECT_EQ(lk_patch_size(deep, 3), 8);
    expect_invalid([] { lk_patch_size(LkConfig{}, 3); }, "level");
}

TEST(LkValidation, EveryTrackerConfigField) {
    auto expect_tc = [](const std::function<void(TrackerConfig&)>& edit, const std::string& param) {
        TrackerConfig c;
        edit(c);
        expect_invalid([&] { validate(c); }, param);
        expect_invalid([&] { FeatureTracker t(640, 480, c, Backend::Cpu); }, param);
    };
    EXPECT_NO_THROW(validate(TrackerConfig{}));
    expect_tc([](TrackerConfig& c) { c.target_features = 0; }, "target_features");
    expect_tc([](TrackerConfig& c) { c.target_features = 65537; }, "target_features");
    expect_tc([](TrackerConfig& c) { c.redetect_fraction = -0.1f; }, "redetect_fraction");
    expect_tc([](TrackerConfig& c) { c.redetect_fraction = 1.5f; }, "redetect_fraction");
    expect_tc([](TrackerConfig& c) { c.redetect_fraction = kNaN; }, "redetect_fraction");
    expect_tc([](TrackerConfig& c) { c.fb_max_error = 0.0f; }, "fb_max_error");
    expect_tc([](TrackerConfig& c) { c.fb_max_error = 101.0f; }, "fb_max_error");
    expect_tc([](TrackerConfig& c) { c.fb_max_error = kNaN; }, "fb_max_error");
    expect_tc([](TrackerConfig& c) { c.motion.level_reach = 0.0f; }, "motion.level_reach");
    expect_tc([](TrackerConfig& c) { c.motion.level_reach = 1001.0f; }, "motion.level_reach");
    expect_tc([](TrackerConfig& c) { c.motion.level_reach = kNaN; }, "motion.level_reach");
    // The detector part is the detector's validation.
    TrackerConfig bad_det;
    bad_det.detector.nms_radius = 0;
    EXPECT_THROW(validate(bad_det), InvalidArgument);
    EXPECT_THROW(FeatureTracker(640, 480, bad_det, Backend::Cpu), InvalidArgument);
    // Frame geometry.
    expect_invalid([] { FeatureTracker t(0, 480, TrackerConfig{}, Backend::Cpu); }, "width");
    expect_invalid([] { FeatureTracker t(640, kMaxImageSide + 1, TrackerConfig{}, Backend::Cpu); }, "height");
    TrackerConfig deep;
    deep.lk.pyramid.levels = 8;
    expect_invalid([&] { FeatureTracker t(64, 48, deep, Backend::Cpu); }, "levels");
    expect_invalid([] { FeatureTracker t(640, 480, TrackerConfig{}, static_cast<Backend>(7)); }, "backend");
}

TEST(LkValidation, CpuReferenceInputs) {
    const HostImage img = test::real_image("graf1.png");
    LkConfig cfg;
    const auto p = build_pyramid_cpu(img.view(), cfg.pyramid);
    expect_invalid([&] { lk_track_cpu(p, p, {{10.0f, kNaN}}, cfg); }, "ref_points");
    expect_invalid([&] { lk_track_cpu(p, p, {{kInf, 10.0f}}, cfg); }, "ref_points");
    const std::vector<LkGuess> one{{1.0f, 2.0f, 1.0f, 0.0f}};
    expect_invalid([&] { lk_track_cpu(p, p, {{10.0f, 10.0f}, {20.0f, 20.0f}}, cfg, &one); }, "guesses");
    const std::vector<LkGuess> nan_guess{{kNaN, 2.0f, 1.0f, 0.0f}};
    expect_invalid([&] { lk_track_cpu(p, p, {{10.0f, 10.0f}}, cfg, &nan_guess); }, "guesses");
    const std::vector<LkGuess> bad_gain{{1.0f, 2.0f, 0.0f, 0.0f}};
    expect_invalid([&] { lk_track_cpu(p, p, {{10.0f, 10.0f}}, cfg, &bad_gain); }, "guesses");
    // Pyramids of the wrong depth or size.
    LkConfig two = cfg;
    two.pyramid.levels = 2;
    expect_invalid([&] { lk_track_cpu(build_pyramid_cpu(img.view(), two.pyramid), p, {}, cfg); }, "ref");
    expect_invalid([&] { lk_track_cpu(p, build_pyramid_cpu(img.view(), two.pyramid), {}, cfg); }, "cur");
    const HostImage small = test::crop(img, 0, 0, 320, 240);
    expect_invalid([&] { lk_track_cpu(p, build_pyramid_cpu(small.view(), cfg.pyramid), {}, cfg); }, "cur");
    auto hacked = p;
    hacked[1] = HostImage(10, 10);
    expect_invalid([&] { lk_track_cpu(hacked, p, {}, cfg); }, "ref");
    expect_invalid([&] { lk_track_cpu({}, p, {}, cfg); }, "ref");
    // Points outside the image are not errors: they are lost (a point on the edge is tracked: the border rule).
    const auto res = lk_track_cpu(p, p, {{-100.0f, 5.0f}, {1e9f, 1e9f}, {-0.5f, 3.0f}}, cfg);
    for (const auto& r : res) EXPECT_EQ(r.status, TrackStatus::LostOutOfBounds);
    EXPECT_TRUE(lk_track_cpu(p, p, {}, cfg).empty());
    const auto edge = lk_track_cpu(p, p, {{0.0f, 3.0f}, {static_cast<float>(img.width() - 1), 200.0f}}, cfg);
    for (const auto& r : edge) EXPECT_NE(r.status, TrackStatus::LostOutOfBounds);
}

TEST(LkValidation, FeatureTrackerCallsAndFrames) {
    const HostImage img = test::real_image("graf1.png");
    FeatureTracker t(img.width(), img.height(), TrackerConfig{}, Backend::Cpu);
    EXPECT_THROW(t.finish(), StateError);
    const HostImage small = test::crop(img, 0, 0, 320, 240);
    expect_invalid([&] { t.track(small.view()); }, "frame");
    expect_invalid([&] { t.track(HostView{}); }, "frame.data");
    HostView bad_pitch = img.view();
    bad_pitch.pitch = 10;
    expect_invalid([&] { t.track(bad_pitch); }, "frame.pitch");
    const auto& tracks = t.track(img.view());
    ASSERT_FALSE(tracks.empty());
    std::vector<Point2f> pred(tracks.size() + 1);
    expect_invalid([&] { t.track(img.view(), &pred); }, "predictions");
    pred.resize(tracks.size());
    for (std::size_t i = 0; i < pred.size(); ++i) pred[i] = {tracks[i].x, tracks[i].y};
    pred[0].y = kNaN;
    expect_invalid([&] { t.track(img.view(), &pred); }, "predictions");
    pred[0].y = tracks[0].y;
    EXPECT_NO_THROW(t.track(img.view(), &pred));
    // Out of order: a second track_async before finish.
    t.track_async(img.view(), nullptr);
    EXPECT_THROW(t.track_async(img.view(), nullptr), StateError);
    EXPECT_THROW(t.reset(), StateError);
    EXPECT_NO_THROW(t.finish());
    EXPECT_THROW(t.finish(), StateError);
    // A device frame needs the CUDA backend.
    DeviceView dv{img.data(), img.width(), img.height(), img.pitch()};
    EXPECT_THROW(t.track_async(dv, nullptr), StateError);
}

TEST(LkValidation, MovedFromObjects) {
    const HostImage img = test::real_image("box.png");
    FeatureTracker a(img.width(), img.height(), TrackerConfig{}, Backend::Cpu);
    FeatureTracker b(std::move(a));
    EXPECT_THROW(a.track(img.view()), StateError);
    EXPECT_THROW(a.tracks(), StateError);
    EXPECT_THROW(a.config(), StateError);
    EXPECT_THROW(a.finish(), StateError);
    EXPECT_THROW(a.reset(), StateError);
    EXPECT_NO_THROW(b.track(img.view()));
    a = std::move(b);
    EXPECT_NO_THROW(a.track(img.view()));
    EXPECT_THROW(b.frame_count(), StateError);

    DeviceLkTracker empty;
    EXPECT_THROW(empty.config(), StateError);
    EXPECT_THROW(empty.capacity(), StateError);
    EXPECT_THROW(empty.track_async(DevicePyramid(), DevicePyramid(), nullptr, nullptr, nullptr, 0, nullptr), StateError);
    EXPECT_THROW(empty.store_templates_async(DevicePyramid(), nullptr, nullptr, 0, nullptr), StateError);
    EXPECT_THROW(empty.track_stored_async(DevicePyramid(), nullptr, nullptr, nullptr, 0, nullptr), StateError);
}

TEST(LkValidation, CudaBackendWithoutDeviceSaysSo) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: covered by the GPU suite";
    EXPECT_THROW(DeviceLkTracker(LkConfig{}, 100), NoDeviceError);
    EXPECT_THROW(FeatureTracker(640, 480, TrackerConfig{}, Backend::Cuda), NoDeviceError);
    expect_invalid([] { DeviceLkTracker t(LkConfig{}, 0); }, "capacity");  // arguments before the device
}

}  // namespace
}  // namespace kestrel
