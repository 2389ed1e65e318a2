// The backend a build offers: with CUDA (KESTREL_WITH_CUDA=ON) the CUDA backend exists and only a missing
// device stops it; without, every CUDA entry point throws NoDeviceError saying that the library was
// built without CUDA and how to rebuild, and the CPU backend works as always.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/grid_select.hpp"
#include "kestrel/lk_tracker.hpp"
#include "kestrel/pyramid.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

// What the build system configured (tests/CMakeLists.txt), against what the library reports.
TEST(BackendCpu, BuiltWithCudaMatchesTheConfiguration) {
    EXPECT_EQ(built_with_cuda(), KESTREL_TESTS_WITH_CUDA != 0);
    if (!built_with_cuda()) {
        EXPECT_FALSE(cuda_available());
        EXPECT_EQ(default_backend(), Backend::Cpu);
    }
}

// Every way to reach the CUDA backend, each expected to throw NoDeviceError without a usable one.
std::vector<std::pair<const char*, std::function<void()>>> cuda_entry_points() {
    return {
        {"FeatureDetector", [] { FeatureDetector d(DetectorConfig{}, Backend::Cuda); }},
        {"FeatureTracker", [] { FeatureTracker t(64, 48, TrackerConfig{}, Backend::Cuda); }},
        {"DeviceLkTracker", [] { DeviceLkTracker t(LkConfig{}, 8); }},
    };
}

TEST(BackendCpu, CudaRequestWithoutCudaSaysHowToRebuild) {
    if (built_with_cuda()) GTEST_SKIP() << "this build has the CUDA backend (KESTREL_WITH_CUDA=ON)";
    std::vector<std::pair<const char*, std::function<void()>>> calls = cuda_entry_points();
    calls.push_back({"DevicePyramid", [] { DevicePyramid p(64, 48, PyramidConfig{}); }});
    calls.push_back({"DeviceImage", [] { DeviceImage d(64, 48); }});
    calls.push_back({"PinnedImage", [] { PinnedImage p(64, 48); }});
    calls.push_back({"CudaStream", [] { CudaStream s; }});
    calls.push_back({"DeviceScoreMaps", [] { DeviceScoreMaps m({{64, 48}}, FastConfig{}); }});
    calls.push_back({"DeviceGridSelect", [] { detail::DeviceGridSelect s(64, 48, DetectorConfig{}); }});
    calls.push_back({"synchronize", [] { synchronize(nullptr, "synchronize"); }});
    for (const auto& [name, call] : calls) {
        try {
            call();
            ADD_FAILURE() << name << ": expected NoDeviceError";
        } catch (const NoDeviceError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("no CUDA backend"), std::string::npos) << name << ": " << what;
            EXPECT_NE(what.find("-DKESTREL_WITH_CUDA=ON"), std::string::npos) << name << ": " << what;
            EXPECT_NE(what.find("Backend::Cpu"), std::string::npos) << name << ": " << what;
        }
    }
    // As in the CUDA build: arguments are checked first, and an empty object is a StateError.
    EXPECT_THROW(DevicePyramid(64, 48, PyramidConfig{9, 2.0f}), InvalidArgument);
    EXPECT_THROW(DeviceLkTracker(LkConfig{}, 0), InvalidArgument);
    EXPECT_THROW(DevicePyramid().build(nullptr), StateError);
    EXPECT_THROW(DeviceLkTracker().capacity(), StateError);
}

TEST(BackendCpu, CudaRequestWithoutDeviceNamesTheDevice) {
    if (!built_with_cuda()) GTEST_SKIP() << "this build has no CUDA backend: CudaRequestWithoutCudaSaysHowToRebuild";
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: the no-device path cannot be exercised here";
    for (const auto& [name, call] : cuda_entry_points()) {
        try {
            call();
            ADD_FAILURE() << name << ": expected NoDeviceError";
        } catch (const NoDeviceError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("no usable CUDA device"), std::string::npos) << name << ": " << what;
            EXPECT_EQ(what.find("KESTREL_WITH_CUDA"), std::string::npos) << name << ": " << what;
        }
    }
}

// The CPU backend is the same in both builds: the detector equals its reference on a real photo, and the
// tracker follows its features into the next frame.
TEST(BackendCpu, CpuBackendRunsInEveryBuild) {
    const HostImage img = test::real_image("graf1.png");
    FeatureDetector d(DetectorConfig{}, Backend::Cpu);
    const std::vector<Keypoint> kps = d.detect(img.view());
    EXPECT_GT(kps.size(), 100u);
    EXPECT_EQ(kps, detect_cpu(img.view(), DetectorConfig{}));
    FeatureTracker t(img.width(), img.height(), TrackerConfig{}, Backend::Cpu);
    const std::size_t born = t.track(img.view()).size();
    EXPECT_GT(born, 100u);
    EXPECT_EQ(t.track(img.view()).size(), born);  // the same frame again: every track kept
}

}  // namespace
}  // namespace kestrel
