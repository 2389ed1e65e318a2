// StereoTracker on Backend::Cuda against the CPU reference on the generated scenes of test_stereo_scenes.cpp:
// the same tracks in the same order with the same ids and statuses (temporal and stereo), positions, right
// positions and disparities within 1e-3 px, depths within 1e-3 relative. Skips loudly without a device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kestrel/stereo_tracker.hpp"
#include "stereo_scenes.hpp"
#include "stereo_scene_util.hpp"
#include "test_data.hpp"

namespace kestrel::test {
namespace {

StereoConfig scene_config(int levels = 5) {
    StereoConfig cfg;
    cfg.match.lk.pyramid.levels = levels;  // the temporal tracking keeps its own (3) on the shared pyramid
    return cfg;
}

void expect_gpu_equals_cpu(const std::vector<StereoScene>& frames, const StereoConfig& cfg, const std::string& what) {
    const auto cpu = run_stereo(frames, cfg, Backend::Cpu);
    const auto gpu = run_stereo(frames, cfg, Backend::Cuda);
    ASSERT_EQ(cpu.size(), gpu.size());
    std::size_t compared = 0;  // tracks with a right position (every status but NoMatch)
    for (std::size_t k = 0; k < cpu.size(); ++k) {
        expect_same_stereo_tracks(cpu[k], gpu[k], what + ", frame " + std::to_string(k));
        for (const StereoTrack& t : cpu[k]) compared += t.status != StereoStatus::NoMatch;
    }
    EXPECT_GT(compared, 0u) << what << ": every track NoMatch: the comparison of right positions would be empty";
}

TEST(StereoScenesCuda, FrontalAndSlantedEqualCpu) {
    KESTREL_REQUIRE_GPU();
    expect_gpu_equals_cpu({frontal_scene(752, 480, 12.37)}, scene_config(), "frontal 752x480");
    expect_gpu_equals_cpu({slanted_scene(641, 479, 18.0, 0.02, -0.01)}, scene_config(), "slanted 641x479");
    expect_gpu_equals_cpu({frontal_scene(333, 257, 0.43, 590)}, scene_config(), "near zero 333x257");
    expect_gpu_equals_cpu({frontal_scene(752, 480, 61.3, 1232)}, scene_config(), "61.3 px");
    expect_gpu_equals_cpu({frontal_scene(333, 257, 7.81, 590)}, scene_config(3), "333x257, 3 levels");
}

TEST(StereoScenesCuda, StatusesEqualCpu) {
    KESTREL_REQUIRE_GPU();
    {  // OutOfRange
        StereoConfig cfg = scene_config();
        cfg.match.min_disparity = 14.0f;
        cfg.match.max_disparity = 21.0f;
        expect_gpu_equals_cpu({slanted_scene(641, 479, 18.0, 0.02, -0.01)}, cfg, "disparity range 14..21");
    }
    {  // OffEpipolar
        StereoScene s = frontal_scene(641, 479, 10.4, 5);
        s.right_cam.cy += 3.0;
        render(s);
        StereoConfig cfg = scene_config();
        expect_gpu_equals_cpu({s}, cfg, "right image 3 px lower, tolerance 1 px");
    }
    {  // exposure
        StereoScene s = frontal_scene(641, 479, 9.73, 11);
        render(s, 1.15, -12.0);
        expect_gpu_equals_cpu({s}, scene_config(), "right gain 1.15, offset -12");
    }
}

TEST(StereoScenesCuda, RawRigEqualsCpu) {
    KESTREL_REQUIRE_GPU();
    StereoConfig cfg = scene_config();
    cfg.match.min_disparity = -200.0f;
    cfg.match.max_disparity = 400.0f;
    expect_gpu_equals_cpu({raw_scene(752, 480, 3.0, true)}, cfg, "raw, distorted, 3 deg");
    expect_gpu_equals_cpu({raw_scene(641, 479, 4.0, false)}, cfg, "raw, pinhole, 4 deg");
}

TEST(StereoScenesCuda, MovingRigSequenceEqualsCpu) {
    KESTREL_REQUIRE_GPU();
    const auto frames = stereo_sequence(slanted_scene(641, 479, 16.0, 0.015, 0.008, 9), 5, {{0.006, -0.003, 0.04}}, 0.25);
    expect_gpu_equals_cpu(frames, scene_config(), "moving rig, 5 frames");
    StereoConfig cfg = scene_config();
    cfg.track_right = true;  // the right image's own tracks beside: the left matches must not change
    expect_gpu_equals_cpu(frames, cfg, "moving rig, track_right");
}

}  // namespace
}  // namespace kestrel::test
