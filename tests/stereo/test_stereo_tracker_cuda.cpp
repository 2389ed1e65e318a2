// StereoTracker on the CUDA backend equals the CPU reference: every track's id, position, status, right
// position, disparity and depth, every field of the left tracks, of the lost ones and (track_right) of the right
// image's own tracks and its lost ones, bit for bit, frame after frame (rectified and raw rigs, track_right, odd
// sizes, host and device frames, the stream-ordered form); and DevicePyramid::build_pair equals build_pyramid_cpu on both images.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kestrel/device_image.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/detail/stereo_rules.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "src/stereo/stereo_matcher.hpp"
#include "stereo_test_util.hpp"

namespace kestrel {
namespace {

void expect_same(const std::vector<StereoTrack>& g, const std::vector<StereoTrack>& c, const std::string& what) {
    ASSERT_EQ(g.size(), c.size()) << what;
    int bad = 0;
    const auto same = [](float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; };
    for (std::size_t i = 0; i < g.size(); ++i) {
        const bool ok = g[i].left.id == c[i].left.id && g[i].left.x == c[i].left.x && g[i].left.y == c[i].left.y &&
                        g[i].status == c[i].status && same(g[i].right_x, c[i].right_x) &&
                        same(g[i].right_y, c[i].right_y) && same(g[i].disparity, c[i].disparity) &&
                        same(g[i].depth, c[i].depth);
        if (!ok && ++bad <= 5)
            ADD_FAILURE() << what << " track " << i << " id " << g[i].left.id << ": gpu (" << g[i].right_x << ", "
                          << g[i].right_y << ") " << to_string(g[i].status) << " vs cpu (" << c[i].right_x << ", "
                          << c[i].right_y << ") " << to_string(c[i].status);
    }
    EXPECT_EQ(bad, 0) << what;
}

void run_sequence(const StereoRig& rig, const StereoConfig& cfg, int w, int h, const std::string& what,
                  bool device_frames, int frames = 6, int step = 2, bool flat_right_last = false) {
    auto pairs = test::panning_pairs("graf1.png", frames, w, h, 17, step);
    if (flat_right_last) pairs.back().right = HostImage(w, h, 128);  // every right track is lost there
    StereoTracker gpu(w, h, rig, cfg, Backend::Cuda), cpu(w, h, rig, cfg, Backend::Cpu);
    CudaStream stream;
    int matched = 0, right = 0, right_lost = 0;
    for (std::size_t f = 0; f < pairs.size(); ++f) {
        const std::string at = what + " frame " + std::to_string(f);
        if (device_frames) {
            const DeviceImage l = upload(pairs[f].left.view()), r = upload(pairs[f].right.view());
            gpu.track_async(l.view(), r.view(), stream.get());
            gpu.finish();
        } else {
            PinnedImage l(w, h), r(w, h);
            std::copy(pairs[f].left.data(), pairs[f].left.data() + w * h, l.data());
            std::copy(pairs[f].right.data(), pairs[f].right.data() + w * h, r.data());
            gpu.track_async(l.view(), r.view(), stream.get());
            gpu.finish();
        }
        const auto& c = cpu.track(pairs[f].left.view(), pairs[f].right.view());
        expect_same(gpu.tracks(), c, at);
        // Every field of the left tracks (age, prev_x, gain, offset, residual, score, level too), of the left tracks
        // lost this frame, and with track_right of the right image's own tracks and of those it lost.
        std::vector<Track> gl, cl;
        for (const StereoTrack& s : gpu.tracks()) gl.push_back(s.left);
        for (const StereoTrack& s : c) cl.push_back(s.left);
        test::expect_same_tracks(gl, cl, at + " left tracks", "gpu", "cpu");
        test::expect_same_tracks(gpu.lost_tracks(), cpu.lost_tracks(), at + " lost_tracks()", "gpu", "cpu");
        test::expect_same_tracks(gpu.right_tracks(), cpu.right_tracks(), at + " right_tracks()", "gpu", "cpu");
        test::expect_same_tracks(gpu.right_lost_tracks(), cpu.right_lost_tracks(), at + " right_lost_tracks()", "gpu",
                                 "cpu");
        EXPECT_EQ(gpu.redetected(), cpu.redetected()) << at;
        const bool flat = flat_right_last && f + 1 == pairs.size();  // nothing to track or detect on the right
        EXPECT_EQ(cpu.right_tracks().empty(), !cfg.track_right || flat) << at;
        for (std::size_t i = 0; i < c.size(); ++i) matched += c[i].status == StereoStatus::Matched;
        right += static_cast<int>(cpu.right_tracks().size());
        right_lost += static_cast<int>(cpu.right_lost_tracks().size());
    }
    EXPECT_GT(matched, 100) << what << ": the comparison covers matches";
    if (cfg.track_right) {
        EXPECT_GT(right, 300) << what << ": the comparison covers right tracks";
        if (flat_right_last) EXPECT_GT(right_lost, 60) << what << ": the comparison covers right_lost_tracks()";
    }
}

TEST(StereoTrackerGpu, RectifiedSequenceEqualsTheCpu) {
    KESTREL_REQUIRE_GPU();
    run_sequence(rectified_rig(450, 240, 160, 0.1), test::small_stereo_config(), 480, 320, "rectified", false);
}

TEST(StereoTrackerGpu, OddSizeDeviceFramesAndTrackRightEqualTheCpu) {
    KESTREL_REQUIRE_GPU();
    StereoConfig cfg = test::small_stereo_config();
    cfg.track_right = true;
    run_sequence(rectified_rig(450, 240, 160, 0.1), cfg, 481, 319, "track_right 481x319", true);
    // Nine frames panning 4 px a frame, host frames, the last right image flat grey: every right track ends there
    // (right_lost_tracks()).
    run_sequence(rectified_rig(450, 240, 160, 0.1), cfg, 480, 320, "track_right, 9 frames of 4 px, flat right last",
                 false, 9, 4, true);
    cfg.track_right = false;
    cfg.tracker.lk.pyramid = {4, 1.5f};  // the per-level pyramid launches
    cfg.match.lk.pyramid = {4, 1.5f};
    run_sequence(rectified_rig(450, 240, 160, 0.1), cfg, 481, 319, "scale 1.5, device frames", true);
}

// The CUDA backend matches the tracks live before a frame in the frame's stream, from the position the tracker's
// rule gives them: every policy of that rule (forward-backward, anchoring on and off, losing instead of
// re-anchoring, first-frame templates) must give the CPU's result.
TEST(StereoTrackerGpu, EveryTrackerPolicyEqualsTheCpu) {
    KESTREL_REQUIRE_GPU();
    const StereoRig rig = rectified_rig(450, 240, 160, 0.1);
    StereoConfig cfg = test::small_stereo_config();
    cfg.tracker.forward_backward = true;
    run_sequence(rig, cfg, 480, 320, "forward-backward", false);
    cfg.tracker.anchor.enabled = false;
    run_sequence(rig, cfg, 480, 320, "forward-backward, no anchoring", false);
    cfg = test::small_stereo_config();
    cfg.tracker.anchor.reanchor = false;
    cfg.tracker.anchor.max_residual = 4.0f;  // some fits fail: those tracks are lost
    run_sequence(rig, cfg, 480, 320, "anchor failures lose tracks", false);
    cfg = test::small_stereo_config();
    cfg.tracker.lk.template_source = TemplateSource::FirstFrame;
    cfg.match.refine_levels = 0;
    run_sequence(rig, cfg, 480, 320, "first-frame templates, no refine levels", true);
}

TEST(StereoTrackerGpu, RawRigWithDistortionEqualsTheCpu) {
    KESTREL_REQUIRE_GPU();
    Camera cam;
    cam.model = CameraModel::PinholeRadtan;
    cam.width = 480;
    cam.height = 320;
    cam.fx = cam.fy = 450;
    cam.cx = 240;
    cam.cy = 160;
    cam.d[0] = -0.05;
    cam.d[1] = 0.01;
    StereoRig rig;
    rig.type = RigType::Raw;
    rig.left = rig.right = cam;
    const double a = 0.01;  // a small rotation about y
    rig.R_rl = {std::cos(a), 0, std::sin(a), 0, 1, 0, -std::sin(a), 0, std::cos(a)};
    rig.t_rl = {-0.1, 0.001, 0};
    StereoConfig cfg = test::small_stereo_config();
    cfg.match.epipolar_tolerance = 3.0f;
    run_sequence(rig, cfg, 480, 320, "raw radtan", false);
}

// The round-trip kernel applies detail::round_trip_needed as the CPU matcher does: every seed class, seeds at the
// match and 2 px off it (the way back skipped, and run), trust_distance 0.5 and 0: forward and backward results
// bit for bit.
TEST(StereoTrackerGpu, RoundTripKernelSkipsTheWayBackAsTheCpu) {
    KESTREL_REQUIRE_GPU();
    constexpr int kW = 480, kH = 320, kD = 9;
    const test::StereoPair p = test::shifted_pair(test::real_image("graf1.png"), 100, 120, kW, kH, kD);
    StereoConfig cfg = test::small_stereo_config();
    StereoTracker st(kW, kH, rectified_rig(500, 240, 160, 0.2), cfg, Backend::Cpu);
    const std::vector<StereoTrack> t = st.track(p.left.view(), p.right.view());
    const int n = static_cast<int>(t.size());
    ASSERT_GT(n, 60);
    const auto lp = build_pyramid_cpu(p.left.view(), cfg.match.lk.pyramid);
    const auto rp = build_pyramid_cpu(p.right.view(), cfg.match.lk.pyramid);
    DevicePyramid dl(kW, kH, cfg.match.lk.pyramid), dr(kW, kH, cfg.match.lk.pyramid);
    copy_async(p.left.view(), dl.level0(), nullptr);
    copy_async(p.right.view(), dr.level0(), nullptr);
    DevicePyramid::build_pair(dl, dr, nullptr);
    CudaStream stream;
    int skipped = 0, back = 0;
    for (const float trust : {0.5f, 0.0f}) {
        cfg.match.trust_distance = trust;
        auto cpu = detail::make_cpu_stereo_matcher(cfg, n, 2);
        auto gpu = detail::make_cuda_stereo_matcher(cfg, n);
        for (int i = 0; i < n; ++i) {
            const StereoTrack& s = t[static_cast<std::size_t>(i)];
            const float off = (i % 2 == 0) ? 0.0f : 2.0f;
            const std::int32_t seed = static_cast<std::int32_t>(i % 3);  // kSeedSearch, kSeedCarried, kSeedTrusted
            for (detail::StereoMatcher* m : {cpu.get(), gpu.get()}) {
                m->points()[i] = {s.left.x, s.left.y};
                m->seeds()[i] = {s.left.x - kD + off, s.left.y, 1.0f, 0.0f};
                m->refine()[i] = seed;
            }
        }
        cpu->match(lp, rp, n);
        gpu->match(dl, dr, n, stream.get());
        int bad = 0;
        for (int i = 0; i < n; ++i) {
            const LkResult &cf = cpu->forward()[i], &gf = gpu->forward()[i];
            const LkResult &cb = cpu->backward()[i], &gb = gpu->backward()[i];
            const bool same = cf.x == gf.x && cf.y == gf.y && cf.status == gf.status && cf.residual == gf.residual &&
                              cb.x == gb.x && cb.y == gb.y && cb.status == gb.status && cb.iterations == gb.iterations &&
                              cb.residual == gb.residual;
            if (!same && ++bad <= 5)
                ADD_FAILURE() << "trust " << trust << " track " << i << ": gpu fwd (" << gf.x << ", " << gf.y
                              << ") back (" << gb.x << ", " << gb.y << ") vs cpu fwd (" << cf.x << ", " << cf.y
                              << ") back (" << cb.x << ", " << cb.y << ")";
            const bool skip = !detail::round_trip_needed(cpu->refine()[i], cf.status, cf.x, cf.y, cpu->seeds()[i].x,
                                                         cpu->seeds()[i].y, trust);
            skipped += skip;
            back += !skip && cb.iterations > 0;
            if (trust == 0.0f) EXPECT_FALSE(skip) << i;
        }
        EXPECT_EQ(bad, 0) << "trust " << trust;
    }
    EXPECT_GT(skipped, 10) << "the comparison covers skipped ways back";
    EXPECT_GT(back, 60) << "and ways back that ran";
}

TEST(StereoTrackerGpu, BuildPairEqualsTheCpuPyramids) {
    KESTREL_REQUIRE_GPU();
    const HostImage a = test::crop(test::real_image("graf1.png"), 3, 5, 333, 257);
    const HostImage b = test::crop(test::real_image("aloeL.png"), 1, 2, 333, 257);
    for (const PyramidConfig cfg : {PyramidConfig{5, 2.0f}, PyramidConfig{8, 2.0f}, PyramidConfig{3, 1.2f}}) {
        if (cfg.levels == 8) continue;  // 257 px allows 6 levels of 2
        DevicePyramid pa(333, 257, cfg), pb(333, 257, cfg);
        copy_async(a.view(), pa.level0(), nullptr);
        copy_async(b.view(), pb.level0(), nullptr);
        DevicePyramid::build_pair(pa, pb, nullptr);
        synchronize(nullptr);
        const auto ca = build_pyramid_cpu(a.view(), cfg), cb = build_pyramid_cpu(b.view(), cfg);
        for (int k = 0; k < cfg.levels; ++k) {
            const HostImage ga = download(pa.level(k)), gb = download(pb.level(k));
            ASSERT_EQ(ga.width(), ca[static_cast<std::size_t>(k)].width());
            EXPECT_TRUE(std::equal(ga.data(), ga.data() + ga.width() * ga.height(), ca[static_cast<std::size_t>(k)].data()))
                << "a level " << k << " scale " << cfg.scale;
            EXPECT_TRUE(std::equal(gb.data(), gb.data() + gb.width() * gb.height(), cb[static_cast<std::size_t>(k)].data()))
                << "b level " << k << " scale " << cfg.scale;
        }
    }
    DevicePyramid p1(333, 257, {3, 2.0f}), p2(334, 257, {3, 2.0f});
    EXPECT_THROW(DevicePyramid::build_pair(p1, p2, nullptr), InvalidArgument);
    EXPECT_THROW(DevicePyramid::build_pair(p1, p1, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace kestrel
