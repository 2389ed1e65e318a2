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

// No "destroyed stream" fault: using a destroyed stream handle is undefined behaviour in CUDA (on the
// H100 it crashed the process rather than returning an error), so it is no valid fault injection.
// The injected faults are failing device allocations, which CUDA reports as defined errors.

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
