// Internal: RelativePoseEstimator's CUDA backend (src/geometry/relative_pose_cuda.cpp), also the engine of the
// tracker's geometric check on the device (src/track/geo_check_cuda.cpp: a two-point call whose kernel stages its
// own points, kernels/track/geo_check_pose.cu).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "kernels/geometry/ransac.cuh"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel::detail {

struct CudaPinnedFree {
    void operator()(void* p) const noexcept { (void)cudaFreeHost(p); }
};
struct CudaDeviceFree {
    void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using CudaPinnedPtr = std::unique_ptr<void, CudaPinnedFree>;
using CudaDevicePtr = std::unique_ptr<void, CudaDeviceFree>;
/// Pinned host memory / zeroed device memory (at least 1 byte); `what` names the owner in the error.
CudaPinnedPtr cuda_pinned(std::size_t bytes, const char* what);
CudaDevicePtr cuda_device_zeroed(std::size_t bytes, const char* what);

class CudaPoseBackend final : public PoseBackend {
public:
    CudaPoseBackend(int max_points, const RelativePoseConfig& cfg, const std::vector<int>& tables);

    void enqueue(const PoseCall& call, StreamHandle stream) override;
    RelativePoseResult finish(std::uint8_t* mask) override;
    const std::uint8_t* device_mask() const override { return buf_.mask; }
    double* host_staging() override { return static_cast<double*>(h_pts_.get()); }
    const PoseRecord* device_record() const override { return buf_.record; }

    /// Runs the kernel of a call whose points its own kernel stages (prm.prep.mode 3) on `stream`.
    using StagedLaunch = void (*)(const kernels::PoseCallParams& prm, const kernels::PoseBuffers& b, int blocks,
                                  cudaStream_t stream, const void* ctx);
    /// A two-point call (call.method 1, sphere 0; call.n the bound of the count) over points that its own kernel
    /// stages on the device: enqueue's parameters (prep.mode 3, `min_points`) and the two-point grid, handed to
    /// `launch` with `ctx`. The record and the mask stay in device memory (finish() copies them when asked).
    void enqueue_staged(const PoseCall& call, int min_points, StreamHandle stream, StagedLaunch launch,
                        const void* ctx);

private:
    /// The call's parameters from its staging (prep) and its problem.
    kernels::PoseCallParams params(const PoseCall& call, const kernels::PosePrepare& prep, bool scales) const;
    /// The two-point call's grid: the first wave of both passes over one block per SM present (at most one block
    /// per hypothesis of the wave).
    int pose2_blocks(const kernels::PoseCallParams& prm) const;

    RelativePoseConfig cfg_;
    int max_points_;
    int sms_ = 1;
    int per_sm_ = 1;
    std::size_t pts_bytes_;
    CudaPinnedPtr h_pts_;
    CudaDevicePtr d_pts_, d_tables_, d_models_, d_cost_, d_inl_, d_done_, d_state_, d_mask_, d_record_;
    CudaPinnedPtr h_record_, h_mask_;
    kernels::PoseBuffers buf_{};
    StreamHandle stream_ = nullptr;
    int bound_ = 0;
    bool host_copy_ = true;
};

}  // namespace kestrel::detail
