// The backend choice: its name, the default (the GPU when one is usable, else the CPU reference), and
// the check that the CUDA backend can run here (src/core/backend.hpp).
#include <string>

#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/keypoint.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

const char* to_string(Backend b) {
    switch (b) {
        case Backend::Cuda: return "cuda";
        case Backend::Cpu: return "cpu";
    }
    return "unknown";
}

Backend default_backend() noexcept { return cuda_available() ? Backend::Cuda : Backend::Cpu; }

namespace detail {

void built_without_cuda(const char* where) {
    throw NoDeviceError(std::string("kestrel: ") + where +
                        ": this build of Kestrel has no CUDA backend (it was configured with KESTREL_WITH_CUDA=OFF "
                        "or without a CUDA toolkit). Use Backend::Cpu (identical results), or install the CUDA "
                        "toolkit (11.4 or newer) and rebuild: cmake -S . -B build -DKESTREL_WITH_CUDA=ON");
}

void require_cuda(const char* where) {
    if (!built_with_cuda()) built_without_cuda(where);
    if (!cuda_available())
        throw NoDeviceError(std::string("kestrel: ") + where +
                            ": Backend::Cuda was requested but no usable CUDA device is present (no GPU, no "
                            "driver, or CUDA_VISIBLE_DEVICES hides it); use Backend::Cpu (identical results) "
                            "or default_backend()");
}

}  // namespace detail
}  // namespace kestrel
