// Test-binary environment: at exit, destroy the CUDA context (when a device is present) so that
// compute-sanitizer's leak check sees every device allocation the tests leaked, and nothing else.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "kestrel/device_image.hpp"

namespace {

class CudaContextEnvironment : public ::testing::Environment {
public:
    void TearDown() override {
        if (kestrel::cuda_available()) (void)cudaDeviceReset();
    }
};

const auto* const kRegistered = ::testing::AddGlobalTestEnvironment(new CudaContextEnvironment);

}  // namespace
