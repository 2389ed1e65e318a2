// Test support: where the real test images are, generated images with known content, GPU gating.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/image.hpp"

namespace kestrel::test {

/// Folder of prepared test images: $KESTREL_TEST_DATA, else the build tree's testdata/.
std::string data_dir();
/// Loads data_dir()/name as grey; fails the test (throws) when missing: real data is required.
HostImage real_image(const std::string& name);
/// Real images used across suites: opencv-doc photos and vtest.avi frames.
std::vector<std::string> real_image_names();
/// vtest.avi frames prepared in data_dir() (vtest_000.png ...), in order.
std::vector<std::string> sequence_frame_names();

/// Deterministic pseudo-random image (xorshift), smooth-ish with texture so FAST finds corners.
HostImage random_image(int width, int height, std::uint32_t seed);
/// Crop of a real image (clamped), used for odd sizes with real content.
HostImage crop(const HostImage& img, int x0, int y0, int width, int height);

/// True when this process runs under compute-sanitizer (its libraries are mapped into it). The
/// heaviest parameter grids sample fewer cases then: the sanitizers check code paths, and each case
/// of a grid runs the same kernels.
bool under_compute_sanitizer();

/// True when the GPU tests must run (a device is present). When no device is present and
/// KESTREL_REQUIRE_GPU=1 is set, this fails the test instead, so a GPU run can never skip silently.
bool gpu_present_or_required();

}  // namespace kestrel::test

/// Skips loudly (with the reason) on a machine without a CUDA device.
#define KESTREL_REQUIRE_GPU()                                                                          \
    do {                                                                                               \
        if (!::kestrel::test::gpu_present_or_required())                                               \
            GTEST_SKIP() << "SKIPPED (no CUDA device on this machine): this GPU test runs on the GPU " \
                            "machine through scripts/gpu_run.sh (docs/gpu-check.md)";                                    \
    } while (0)
