// Faults (docs/reliability.md, "Faults"): a CUDA error inside the pipeline surfaces as kestrel::CudaError
// naming the stage, leaves the runtime's last error clean, and the next frame works again (the CUDA
// context survives these errors). Injected faults: a destroyed stream handle, and device memory
// exhausted by the test (every allocation fails until it is given back). GPU tests.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "detector_test_util.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"
#include "reliability_util.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

DetectorConfig det_cfg() {
    DetectorConfig c;
    c.pyramid = {3, 2.0f};
    return c;
}

TrackerConfig trk_cfg() {
    TrackerConfig c;
    c.target_features = 150;
    return c;
}

/// Checks a CudaError: a stage is named and the message states it; the runtime's last error is clean.
void expect_cuda_error(const CudaError& e, const char* what) {
    const std::string msg = e.what();
    EXPECT_FALSE(e.stage().empty()) << what << ": " << msg;
    EXPECT_NE(msg.find("stage '" + e.stage() + "'"), std::string::npos) << what << ": " << msg;
    EXPECT_NE(e.code(), 0) << what;
    EXPECT_FALSE(e.call().empty()) << what;
    EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << what << ": the failure left the last error set";
    std::cout << "[ info     ] " << what << ": " << msg << "\n";
}

/// Every device allocation fails while this holds (nearly) all free device memory.
class MemoryHog {
public:
    MemoryHog() {
        const std::size_t one = 1;
        for (std::size_t chunk : {one << 30, one << 26, one << 22, one << 18}) {
            void* p = nullptr;
            while (cudaMalloc(&p, chunk) == cudaSuccess) blocks_.push_back(p);
        }
        (void)cudaGetLastError();  // the test's own failed cudaMalloc calls
        std::size_t free = 0, total = 0;
        EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
        std::cout << "[ info     ] memory hog: " << blocks_.size() << " blocks, " << free / 1024 << " KiB left free of "
                  << total / (1024 * 1024) << " MiB\n";
    }
    ~MemoryHog() { release(); }
    void release() {
        for (void* p : blocks_) EXPECT_EQ(cudaFree(p), cudaSuccess);
        blocks_.clear();
    }

private:
    std::vector<void*> blocks_;
};

/// The faults below are CUDA API errors on purpose: compute-sanitizer would count them as errors.
#define SKIP_UNDER_COMPUTE_SANITIZER()                                                                     \
    do {                                                                                                   \
        if (test::under_compute_sanitizer())                                                               \
            GTEST_SKIP() << "provokes CUDA API errors on purpose: runs in the plain pass, not under "      \
                            "compute-sanitizer";                                                           \
    } while (0)

cudaStream_t destroyed_stream() {
    cudaStream_t s = nullptr;
    EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
    return s;
}

TEST(ReliabilityFaults, DetectorOnDestroyedStreamThrowsCudaErrorThenNextFrameWorks) {
    KESTREL_REQUIRE_GPU();
    SKIP_UNDER_COMPUTE_SANITIZER();
    const auto& seq = test::sequence(3);
    const int w = seq[0].width(), h = seq[0].height();
    FeatureDetector d(det_cfg(), Backend::Cuda);
    PinnedImage pinned(w, h);
    cudaStream_t good = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&good, cudaStreamNonBlocking), cudaSuccess);
    const auto detect_on = [&](std::size_t i, cudaStream_t s) {
        std::memcpy(pinned.data(), seq[i].data(), static_cast<std::size_t>(w) * h);
        d.detect_async(pinned.view(), s);
        synchronize(s, "test");
        return std::vector<Keypoint>(d.host_keypoints(), d.host_keypoints() + d.host_count());
    };
    test::expect_same_keypoints(detect_on(0, good), detect_cpu(seq[0].view(), det_cfg()), "frame 0");
    const cudaStream_t dead = destroyed_stream();
    try {
        detect_on(1, dead);
        ADD_FAILURE() << "a destroyed stream was accepted";
    } catch (const CudaError& e) {
        expect_cuda_error(e, "detect_async on a destroyed stream");
    }
    test::expect_same_keypoints(detect_on(1, good), detect_cpu(seq[1].view(), det_cfg()), "frame 1 after the fault");
    test::expect_same_keypoints(d.detect(seq[2].view()), detect_cpu(seq[2].view(), det_cfg()), "frame 2, detect()");
    EXPECT_EQ(cudaStreamDestroy(good), cudaSuccess);
}

TEST(ReliabilityFaults, TrackerOnDestroyedStreamThrowsCudaErrorThenNextFrameWorks) {
    KESTREL_REQUIRE_GPU();
    SKIP_UNDER_COMPUTE_SANITIZER();
    const auto& seq = test::sequence(4);
    const int w = seq[0].width(), h = seq[0].height();
    FeatureTracker a(w, h, trk_cfg(), Backend::Cuda), b(w, h, trk_cfg(), Backend::Cuda);
    test::expect_same_tracks(a.track(seq[0].view()), b.track(seq[0].view()), "frame 0");
    try {
        a.track_async(seq[1].view(), destroyed_stream());
        a.finish();
        ADD_FAILURE() << "a destroyed stream was accepted";
    } catch (const CudaError& e) {
        expect_cuda_error(e, "track_async on a destroyed stream");
    }
    for (std::size_t f = 1; f < 4; ++f) {
        const std::vector<Track> ta = a.track(seq[f].view());
        ASSERT_FALSE(ta.empty());
        test::expect_same_tracks(ta, b.track(seq[f].view()), "frame " + std::to_string(f) + " after the fault");
    }
}

TEST(ReliabilityFaults, FailedAllocationThrowsCudaErrorThenNextFrameWorks) {
    KESTREL_REQUIRE_GPU();
    SKIP_UNDER_COMPUTE_SANITIZER();
    const auto& seq = test::sequence(2);
    const int w = seq[0].width(), h = seq[0].height();
    FeatureDetector d(det_cfg(), Backend::Cuda);  // allocates at its first frame
    {
        MemoryHog hog;
        try {
            d.detect(seq[0].view());
            ADD_FAILURE() << "detection allocated its buffers in exhausted device memory";
        } catch (const CudaError& e) {
            expect_cuda_error(e, "first detect() without device memory");
            EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation)) << e.what();
        }
        try {
            FeatureTracker t(w, h, trk_cfg(), Backend::Cuda);
            t.track(seq[0].view());
            ADD_FAILURE() << "a tracker was built and ran in exhausted device memory";
        } catch (const CudaError& e) {
            expect_cuda_error(e, "FeatureTracker without device memory");
            EXPECT_EQ(e.code(), static_cast<int>(cudaErrorMemoryAllocation)) << e.what();
        }
    }  // memory given back
    for (std::size_t f = 0; f < 2; ++f)
        test::expect_same_keypoints(d.detect(seq[f].view()), detect_cpu(seq[f].view(), det_cfg()),
                                    "frame " + std::to_string(f) + " after the failed allocation");
    FeatureTracker t(w, h, trk_cfg(), Backend::Cuda);
    EXPECT_FALSE(t.track(seq[0].view()).empty());
    EXPECT_FALSE(t.track(seq[1].view()).empty());
}

// "No allocation on the per-frame path after the first call": once a detector and a tracker have run
// one frame, they keep working with every other byte of device memory taken.
TEST(ReliabilityFaults, NoDeviceAllocationAfterTheFirstFrame) {
    KESTREL_REQUIRE_GPU();
    SKIP_UNDER_COMPUTE_SANITIZER();
    const auto& seq = test::sequence(4);
    const int w = seq[0].width(), h = seq[0].height();
    FeatureDetector d(det_cfg(), Backend::Cuda);
    FeatureTracker a(w, h, trk_cfg(), Backend::Cuda), b(w, h, trk_cfg(), Backend::Cuda);
    (void)d.detect(seq[0].view());
    test::expect_same_tracks(a.track(seq[0].view()), b.track(seq[0].view()), "frame 0");
    std::vector<std::vector<Track>> under_hog;
    {
        MemoryHog hog;
        for (std::size_t f = 1; f < 4; ++f) {
            test::expect_same_keypoints(d.detect(seq[f].view()), detect_cpu(seq[f].view(), det_cfg()),
                                        "detect() with device memory exhausted, frame " + std::to_string(f));
            under_hog.push_back(a.track(seq[f].view()));
        }
    }
    for (std::size_t f = 1; f < 4; ++f)
        test::expect_same_tracks(under_hog[f - 1], b.track(seq[f].view()),
                                 "tracker with device memory exhausted, frame " + std::to_string(f));
}

}  // namespace
}  // namespace kestrel
