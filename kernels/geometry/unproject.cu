// Batch unprojection of pixels to normalized coordinates, one thread per point.
// CPU reference it must match: kestrel::unproject_cpu (src/geometry/camera_cpu.cpp); both run
// detail::unproject_pixel (include/kestrel/detail/camera_rules.hpp), which holds every formula.
//
// Model (docs/geometry.md): pixel (u, v) -> distorted normalized xd = (u - cx) / fx, yd = (v - cy) / fy ->
// undistorted (x, y) by Newton's method on the camera's distortion map: the pinhole model (none), the
// radial-tangential model (k1, k2, p1, p2, k3; 2x2 Newton with the exact Jacobian) or the equidistant
// fisheye (k1..k4; Newton on theta, then x = xd tan(theta) / |xd|). A point is Ok only when the residual in
// the distorted normalized plane is <= UndistortConfig::tolerance within max_iterations; otherwise the
// status says why and the coordinates are NaN.
// Arithmetic: double precision, every operation through detail::dmul/dadd/dsub/ddiv/dfma/dsqrt (__dmul_rn &
// co., never contracted), the same IEEE operations in the same order as on the CPU: bit-identical for the
// pinhole and radtan models; the fisheye model also calls the CUDA math library's tan/atan (<= 2 ulp), so it
// agrees with the CPU to a few ulp. Threads do not interact; control flow per thread follows the CPU's.
#include "kernels/common/cuda_check.hpp"
#include "unproject.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kThreads = 128;

__global__ void unproject_kernel(const UnprojectLaunch p) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= p.count) return;
    const float2 px = reinterpret_cast<const float2*>(p.xy)[i];
    Point2d out;
    const UnprojectStatus st =
        detail::unproject_pixel(p.setup, static_cast<double>(px.x), static_cast<double>(px.y), out);
    p.normalized[i] = out;
    p.status[i] = st;
}

}  // namespace

void launch_unproject(const UnprojectLaunch& p, cudaStream_t stream) {
    if (p.count <= 0) return;
    const unsigned blocks = static_cast<unsigned>((p.count + kThreads - 1) / kThreads);
    unproject_kernel<<<blocks, kThreads, 0, stream>>>(p);
    KESTREL_CUDA_LAUNCH("unproject");
}

}  // namespace kestrel::kernels
