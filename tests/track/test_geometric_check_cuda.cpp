// The geometric check on the CUDA backend against the CPU backend, whole tracker runs with the check on, bit for
// bit: the same live and lost tracks (ids, statuses with Outlier, ages, positions by their bits) and the same
// check result (model, pose status, R, t, counts) every frame. On the generated moving-camera sequences with
// moving cards (translating, rotating, static camera; with and without the rotation prior, with which the CUDA
// tracker checks on the device on a z = 1 plane camera; forward-backward; a fisheye, whose estimate runs on bearings), on the real vtest frames, the stream-ordered form on two streams, MultiCameraTracker (each camera) and
// StereoTracker's left tracks.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>

#include "kestrel/feature_tracker.hpp"
#include "kestrel/multi_camera_tracker.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "motion_scenes.hpp"
#include "stereo_scenes.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const std::vector<Track>& g, const std::vector<Track>& c, const std::string& what) {
    ASSERT_EQ(g.size(), c.size()) << what;
    int bad = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const bool ok = g[i].id == c[i].id && g[i].status == c[i].status && g[i].age == c[i].age &&
                        same_bits(g[i].x, c[i].x) && same_bits(g[i].y, c[i].y) && same_bits(g[i].prev_x, c[i].prev_x) &&
                        same_bits(g[i].prev_y, c[i].prev_y);
        if (!ok && ++bad <= 5)
            ADD_FAILURE() << what << " track " << i << ": GPU id " << g[i].id << " " << to_string(g[i].status) << " ("
                          << g[i].x << ", " << g[i].y << ") vs CPU id " << c[i].id << " " << to_string(c[i].status)
                          << " (" << c[i].x << ", " << c[i].y << ")";
    }
    EXPECT_EQ(bad, 0) << what;
}

void expect_same(const GeometricCheckResult& g, const GeometricCheckResult& c, const std::string& what) {
    EXPECT_EQ(g.model, c.model) << what;
    EXPECT_EQ(g.pose_status, c.pose_status) << what;
    EXPECT_EQ(g.checked, c.checked) << what;
    EXPECT_EQ(g.outliers, c.outliers) << what;
    EXPECT_EQ(g.hypotheses, c.hypotheses) << what;
    EXPECT_EQ(std::memcmp(g.R.data(), c.R.data(), sizeof(double) * 9), 0) << what;
    EXPECT_EQ(std::memcmp(g.t.data(), c.t.data(), sizeof(double) * 3), 0) << what;
    EXPECT_EQ(g.inliers, c.inliers) << what;
}

/// Both backends over the frames; `async`: the CUDA tracker through pinned memory on two alternating streams.
/// Returns the number of tracks ended as Outlier (so that a run that rejects nothing is noticed).
int compare(const std::vector<HostImage>& frames, const TrackerConfig& cfg, const std::vector<std::array<double, 9>>* priors,
            bool async, const std::string& what) {
    const int w = frames[0].width(), h = frames[0].height();
    FeatureTracker gpu(w, h, cfg, Backend::Cuda), cpu(w, h, cfg, Backend::Cpu);
    cudaStream_t streams[2];
    EXPECT_EQ(cudaStreamCreate(&streams[0]), cudaSuccess);
    EXPECT_EQ(cudaStreamCreate(&streams[1]), cudaSuccess);
    PinnedImage pinned(w, h);
    int outliers = 0;
    for (std::size_t f = 0; f < frames.size(); ++f) {
        const std::array<double, 9>* prior = priors && f > 0 ? &(*priors)[f] : nullptr;
        const std::vector<Track> c = cpu.track(frames[f].view(), nullptr, prior);
        std::vector<Track> g;
        if (async) {
            std::memcpy(pinned.data(), frames[f].data(), static_cast<std::size_t>(w) * h);
            gpu.track_async(pinned.view(), streams[f % 2], nullptr, prior);
            g = gpu.finish();
        } else {
            g = gpu.track(frames[f].view(), nullptr, prior);
        }
        const std::string at = what + " frame " + std::to_string(f);
        expect_same(g, c, at + " live");
        expect_same(gpu.lost_tracks(), cpu.lost_tracks(), at + " lost");
        expect_same(gpu.geometric_check(), cpu.geometric_check(), at + " check");
        for (const Track& t : cpu.lost_tracks()) outliers += t.status == TrackStatus::Outlier ? 1 : 0;
    }
    cudaStreamDestroy(streams[0]);
    cudaStreamDestroy(streams[1]);
    return outliers;
}

std::vector<HostImage> render_all(const test::MotionScene& s) {
    std::vector<HostImage> v;
    for (int k = 0; k < s.frames; ++k) v.push_back(s.render(k));
    return v;
}

std::vector<std::array<double, 9>> true_rotations(const test::MotionScene& s) {
    std::vector<std::array<double, 9>> r(static_cast<std::size_t>(s.frames));
    for (int k = 1; k < s.frames; ++k) {
        test::MVec3 t{};
        s.relative_pose(k, &r[static_cast<std::size_t>(k)], &t);
    }
    return r;
}

TrackerConfig check_on(const Camera& cam) {
    TrackerConfig c;
    c.target_features = 150;
    c.geometric_check.enabled = true;
    c.geometric_check.camera = cam;
    return c;
}

TEST(GeometricCheckGpu, GeneratedSequencesMatchTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    for (const char* motion : {"translate", "rotate", "static"}) {
        test::MotionScene s = test::motion_scene_small();
        if (std::string(motion) == "rotate") {
            s.step = {{0, 0, 0}};
            s.yaw_deg = 0.4;
        } else if (std::string(motion) == "static") {
            s.step = {{0, 0, 0}};
            s.yaw_deg = 0;
        }
        const std::vector<HostImage> frames = render_all(s);
        const auto priors = true_rotations(s);
        TrackerConfig cfg = check_on(s.camera);
        EXPECT_GT(compare(frames, cfg, nullptr, false, std::string(motion) + " five-point"), 0);
        EXPECT_GT(compare(frames, cfg, &priors, true, std::string(motion) + " prior, async"), 0);
        cfg.forward_backward = true;
        cfg.geometric_check.threshold_px = 0.7;
        cfg.geometric_check.seed = 42;
        compare(frames, cfg, nullptr, true, std::string(motion) + " forward-backward, 0.7 px, seed 42");
    }
}

TEST(GeometricCheckGpu, DistortedCameraMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    test::MotionScene s = test::motion_scene_euroc(12);  // 752x480, EuRoC cam0's radial-tangential model
    const std::vector<HostImage> frames = render_all(s);
    EXPECT_GE(compare(frames, check_on(s.camera), nullptr, false, "euroc radtan"), 0);
    // With the prior the CUDA tracker checks on the device (the kernel stages the tracks through the camera's
    // undistortion): forward-backward, and without anchoring, both tests every frame from the third on.
    const auto priors = true_rotations(s);
    TrackerConfig cfg = check_on(s.camera);
    cfg.forward_backward = true;
    EXPECT_GE(compare(frames, cfg, &priors, true, "euroc radtan prior, forward-backward"), 0);
    cfg.forward_backward = false;
    cfg.anchor.enabled = false;
    cfg.geometric_check.baseline_frames = 5;
    EXPECT_GE(compare(frames, cfg, &priors, false, "euroc radtan prior, no anchor, baseline 5"), 0);
}

TEST(GeometricCheckGpu, FisheyeMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    // The small layout through an equidistant fisheye: the check's estimate on bearings, each threshold by its
    // pixels per radian.
    test::MotionScene s = test::motion_scene_small();
    s.camera.model = CameraModel::Fisheye;
    s.camera.fx = s.camera.fy = 150.0;
    s.camera.d[0] = 0.0035;
    s.camera.d[1] = 0.0007;
    s.camera.d[2] = -0.002;
    s.camera.d[3] = 0.0002;
    s.camera.d[4] = 0.0;
    const std::vector<HostImage> frames = render_all(s);
    const auto priors = true_rotations(s);
    EXPECT_GT(compare(frames, check_on(s.camera), nullptr, false, "fisheye five-point"), 0);
    EXPECT_GE(compare(frames, check_on(s.camera), &priors, true, "fisheye prior, async"), 0);
}

TEST(GeometricCheckGpu, RealSequenceMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    const auto names = test::sequence_frame_names();
    std::vector<HostImage> frames;
    for (std::size_t i = 0; i < 20 && i < names.size(); ++i) frames.push_back(test::real_image(names[i]));
    Camera cam;  // vtest: a fixed camera watching people walk (a pinhole guess of its calibration)
    cam.width = frames[0].width();
    cam.height = frames[0].height();
    cam.fx = cam.fy = 700.0;
    cam.cx = 0.5 * (cam.width - 1);
    cam.cy = 0.5 * (cam.height - 1);
    compare(frames, check_on(cam), nullptr, false, "vtest");
    compare(frames, check_on(cam), nullptr, true, "vtest async");
}

TEST(GeometricCheckGpu, MultiCameraTrackerMatchesTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    test::MotionScene a = test::motion_scene_small(), b = test::motion_scene_small();
    b.yaw_deg = -0.3;
    const std::vector<HostImage> fa = render_all(a), fb = render_all(b);
    std::vector<CameraConfig> cams{{a.camera.width, a.camera.height, check_on(a.camera)},
                                   {b.camera.width, b.camera.height, check_on(b.camera)}};
    MultiCameraTracker gpu(cams, Backend::Cuda), cpu(cams, Backend::Cpu);
    const auto pa = true_rotations(a), pb = true_rotations(b);
    for (int f = 0; f < a.frames; ++f) {
        const std::vector<HostView> views{fa[static_cast<std::size_t>(f)].view(), fb[static_cast<std::size_t>(f)].view()};
        std::vector<std::array<double, 9>> priors{pa[static_cast<std::size_t>(f)], pb[static_cast<std::size_t>(f)]};
        const bool with_prior = f > 0 && f % 2 == 0;
        gpu.track(views, with_prior ? &priors : nullptr);
        cpu.track(views, with_prior ? &priors : nullptr);
        for (int c = 0; c < 2; ++c) {
            const std::string at = "camera " + std::to_string(c) + " frame " + std::to_string(f);
            expect_same(gpu.tracks(c), cpu.tracks(c), at);
            expect_same(gpu.lost_tracks(c), cpu.lost_tracks(c), at + " lost");
            expect_same(gpu.camera(c).geometric_check(), cpu.camera(c).geometric_check(), at);
        }
    }
}

TEST(GeometricCheckGpu, StereoLeftTracksMatchTheCpuBackend) {
    KESTREL_REQUIRE_GPU();
    const auto frames =
        test::stereo_sequence(test::raw_scene(752, 480, 3.0, true), 6, {{0.02, -0.004, 0.03}}, 0.3);
    StereoConfig cfg;
    cfg.tracker = check_on(frames[0].rig.left);
    StereoTracker gpu(752, 480, frames[0].rig, cfg, Backend::Cuda), cpu(752, 480, frames[0].rig, cfg, Backend::Cpu);
    for (std::size_t f = 0; f < frames.size(); ++f) {
        const auto& g = gpu.track(frames[f].left.view(), frames[f].right.view());
        const auto& c = cpu.track(frames[f].left.view(), frames[f].right.view());
        ASSERT_EQ(g.size(), c.size()) << "frame " << f;
        for (std::size_t i = 0; i < g.size(); ++i) {
            EXPECT_EQ(g[i].left.id, c[i].left.id);
            EXPECT_TRUE(same_bits(g[i].left.x, c[i].left.x) && same_bits(g[i].left.y, c[i].left.y));
        }
        expect_same(gpu.lost_tracks(), cpu.lost_tracks(), "stereo frame " + std::to_string(f) + " lost");
    }
}

}  // namespace
}  // namespace kestrel
