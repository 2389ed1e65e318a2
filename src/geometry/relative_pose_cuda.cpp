// RelativePoseEstimator's CUDA backend. Per call: one H2D copy (points and the stop table, packed in one
// pinned block), a reset launch, then per round of hypotheses two launches (score in parallel, scan in order;
// rounds after the stop return at once, so nothing waits between them), one D2H copy of the scan state and the
// winning model, and one wait in finish(). The winner's finish (mask, decomposition with cheirality,
// refinement) runs on the host in finish() through detail::pose_finish, the same code as the CPU backend.
// Everything is allocated in the constructor.
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/ransac.cuh"
#include "kestrel/device_image.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel::detail {
namespace {

constexpr const char* kAlloc = "RelativePoseEstimator allocation";

struct PinnedFree {
    void operator()(void* p) const noexcept { (void)cudaFreeHost(p); }
};
struct DeviceFree {
    void operator()(void* p) const noexcept { (void)cudaFree(p); }
};
using PinnedPtr = std::unique_ptr<void, PinnedFree>;
using DevicePtr = std::unique_ptr<void, DeviceFree>;

PinnedPtr pinned(std::size_t bytes) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, bytes > 0 ? bytes : 1), kAlloc);
    return PinnedPtr(p);
}
DevicePtr device(std::size_t bytes) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMalloc(&p, bytes > 0 ? bytes : 1), kAlloc);
    return DevicePtr(p);
}

/// The scan state and the winning model: what comes back.
struct PoseOut {
    PoseScan scan;
    double E[9];
};

/// GPU rounds: independent of cfg.batch (the result does not depend on the round size).
constexpr int kGpuRound = 1024;

class CudaPoseBackend final : public PoseBackend {
public:
    CudaPoseBackend(int max_points, const RelativePoseConfig& cfg)
        : cfg_(cfg), max_points_(max_points), round_(cfg.max_hypotheses < kGpuRound ? cfg.max_hypotheses : kGpuRound),
          in_bytes_(4 * sizeof(double) * static_cast<std::size_t>(max_points) +
                    sizeof(int) * (static_cast<std::size_t>(max_points) + 1)),
          h_in_(pinned(in_bytes_)), d_in_(device(in_bytes_)), h_out_(pinned(sizeof(PoseOut))),
          d_out_(device(sizeof(PoseOut))), d_cost_(device(sizeof(double) * round_)),
          d_inl_(device(sizeof(int) * round_)), d_E_(device(sizeof(double) * 9 * round_)),
          mask_(static_cast<std::size_t>(max_points)) {
        // The result block is copied down whole every call; a model-less call leaves E unwritten, so it
        // starts defined (zero) instead of reading uninitialized device memory.
        KESTREL_CUDA(cudaMemset(d_out_.get(), 0, sizeof(PoseOut)), kAlloc);
    }

    void enqueue(const PoseCall& call, StreamHandle stream) override {
        call_ = call;
        stream_ = stream;
        const int n = call.n;
        const std::size_t pts = 2 * static_cast<std::size_t>(n);
        double* hx = static_cast<double*>(h_in_.get());
        int* htab = reinterpret_cast<int*>(hx + 2 * pts);
        char* d = static_cast<char*>(d_in_.get());
        const double* dx1 = reinterpret_cast<const double*>(d);
        const double* dx2 = dx1 + pts;
        int* dtab = reinterpret_cast<int*>(d + 2 * pts * sizeof(double));
        std::memcpy(htab, call.required, sizeof(int) * (static_cast<std::size_t>(n) + 1));
        cudaStream_t s = stream;
        if (call.device_points) {
            // Points stay where they are; only the table goes up. They come down for the host finish.
            dx1 = call.x1;
            dx2 = call.x2;
            KESTREL_CUDA(cudaMemcpyAsync(dtab, htab, sizeof(int) * (static_cast<std::size_t>(n) + 1),
                                         cudaMemcpyHostToDevice, s),
                         "RelativePoseEstimator upload");
        } else {
            std::memcpy(hx, call.x1, sizeof(double) * pts);
            std::memcpy(hx + pts, call.x2, sizeof(double) * pts);
            KESTREL_CUDA(cudaMemcpyAsync(d, hx, 2 * pts * sizeof(double) + sizeof(int) * (static_cast<std::size_t>(n) + 1),
                                         cudaMemcpyHostToDevice, s),
                         "RelativePoseEstimator upload");
        }
        PoseOut* dout = static_cast<PoseOut*>(d_out_.get());
        kernels::launch_pose_reset(&dout->scan, s);
        kernels::PoseRound r{};
        r.problem.x1 = dx1;
        r.problem.x2 = dx2;
        r.problem.n = n;
        r.problem.f2 = cfg_.focal_px * cfg_.focal_px;
        r.problem.thr2 = cfg_.threshold_px * cfg_.threshold_px;
        r.problem.seed = cfg_.seed;
        r.problem.method = cfg_.method == PoseMethod::FivePoint ? 0 : 1;
        for (int j = 0; j < 9; ++j) r.problem.R[j] = call.R[j];
        r.required = dtab;
        r.max_hypotheses = cfg_.max_hypotheses;
        r.cost = static_cast<double*>(d_cost_.get());
        r.inliers = static_cast<int*>(d_inl_.get());
        r.E = static_cast<double*>(d_E_.get());
        r.scan = &dout->scan;
        r.best_E = dout->E;
        for (int first = 0; first < cfg_.max_hypotheses; first += round_) {
            r.first = first;
            r.count = first + round_ <= cfg_.max_hypotheses ? round_ : cfg_.max_hypotheses - first;
            kernels::launch_pose_hypotheses(r, s);
            kernels::launch_pose_scan(r, s);
        }
        KESTREL_CUDA(cudaMemcpyAsync(h_out_.get(), dout, sizeof(PoseOut), cudaMemcpyDeviceToHost, s),
                     "RelativePoseEstimator download");
        if (call.device_points) {
            KESTREL_CUDA(cudaMemcpyAsync(hx, call.x1, sizeof(double) * pts, cudaMemcpyDeviceToHost, s),
                         "RelativePoseEstimator download");
            KESTREL_CUDA(cudaMemcpyAsync(hx + pts, call.x2, sizeof(double) * pts, cudaMemcpyDeviceToHost, s),
                         "RelativePoseEstimator download");
        }
    }

    RelativePoseResult finish(std::uint8_t* mask) override {
        synchronize(stream_, "RelativePoseEstimator::finish");
        const PoseOut* out = static_cast<const PoseOut*>(h_out_.get());
        const double* hx = static_cast<const double*>(h_in_.get());
        const std::size_t pts = 2 * static_cast<std::size_t>(call_.n);
        const RelativePoseResult res = pose_finish(call_, cfg_, hx, hx + pts, out->E, out->scan, mask_.data());
        if (mask) std::memcpy(mask, mask_.data(), static_cast<std::size_t>(call_.n));
        return res;
    }

private:
    RelativePoseConfig cfg_;
    int max_points_;
    int round_;
    std::size_t in_bytes_;
    PinnedPtr h_in_;
    DevicePtr d_in_;
    PinnedPtr h_out_;
    DevicePtr d_out_;
    DevicePtr d_cost_, d_inl_, d_E_;
    std::vector<std::uint8_t> mask_;
    PoseCall call_;
    StreamHandle stream_ = nullptr;
};

}  // namespace

std::unique_ptr<PoseBackend> make_cuda_pose_backend(int max_points, const RelativePoseConfig& cfg) {
    return std::make_unique<CudaPoseBackend>(max_points, cfg);
}

}  // namespace kestrel::detail
