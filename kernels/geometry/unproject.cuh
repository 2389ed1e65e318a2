// Internal launch interface of kernels/geometry/unproject.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include "kestrel/detail/camera_rules.hpp"

namespace kestrel::kernels {

/// Everything one launch needs, passed by value (no __constant__ or global state).
struct UnprojectLaunch {
    detail::CameraSetup setup;
    const float* xy;           // 2 * count floats: pixel (xy[2i], xy[2i+1]); device memory
    Point2d* normalized;       // count points; device memory
    UnprojectStatus* status;   // count statuses; device memory
    int count;
};

/// normalized[i], status[i] = detail::unproject_pixel(setup, xy[2i], xy[2i+1]) for i in [0, count).
void launch_unproject(const UnprojectLaunch& p, cudaStream_t stream);

}  // namespace kestrel::kernels
