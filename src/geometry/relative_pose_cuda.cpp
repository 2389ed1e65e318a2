// RelativePoseEstimator's CUDA backend (kernels/geometry/ransac.cu). Per call, all on the caller's stream:
// host entries: one H2D copy of the staged points (3-vectors and scales, one pinned block); the device entry:
// nothing copied (the kernel reads the caller's arrays and count). Then one launch: the staging, both passes
// with the adaptive stop, and the finish (mask, decomposition, cheirality, refinement, rotation-only model,
// choice) writing the record and the mask in device memory; for host entries the kernel also writes both to
// pinned memory (no copy after it).
// finish() waits (the one synchronization) and converts the record. Everything is allocated in the
// constructor; the grid is sized from the SMs available when the estimator is made.
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "src/geometry/relative_pose_cuda.hpp"

#include "kernels/common/cuda_check.hpp"
#include "kernels/common/sm_count.cuh"
#include "kestrel/device_image.hpp"

namespace kestrel::detail {
namespace {
constexpr const char* kAlloc = "RelativePoseEstimator allocation";
}  // namespace

CudaPinnedPtr cuda_pinned(std::size_t bytes, const char* what) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMallocHost(&p, bytes > 0 ? bytes : 1), what);
    return CudaPinnedPtr(p);
}
CudaDevicePtr cuda_device_zeroed(std::size_t bytes, const char* what) {
    void* p = nullptr;
    KESTREL_CUDA(cudaMalloc(&p, bytes > 0 ? bytes : 1), what);
    KESTREL_CUDA(cudaMemset(p, 0, bytes > 0 ? bytes : 1), what);
    return CudaDevicePtr(p);
}

CudaPoseBackend::CudaPoseBackend(int max_points, const RelativePoseConfig& cfg, const std::vector<int>& tables)
    : cfg_(cfg), max_points_(max_points), pts_bytes_(7 * sizeof(double) * static_cast<std::size_t>(max_points)),
      h_pts_(cuda_pinned(pts_bytes_, kAlloc)), d_pts_(cuda_device_zeroed(pts_bytes_, kAlloc)),
      d_tables_(cuda_device_zeroed(sizeof(int) * tables.size(), kAlloc)),
      d_models_(cuda_device_zeroed(sizeof(double) * 9 * 2 * kernels::kPoseRing, kAlloc)),
      d_cost_(cuda_device_zeroed(sizeof(double) * 2 * kernels::kPoseRing, kAlloc)),
      d_inl_(cuda_device_zeroed(sizeof(int) * 4 * kernels::kPoseRing, kAlloc)),  // the inlier counts, the stop counts
      d_done_(cuda_device_zeroed(sizeof(int) * 2 * kernels::kPoseRing, kAlloc)),
      d_state_(cuda_device_zeroed(sizeof(kernels::PoseDeviceState), kAlloc)),
      d_mask_(cuda_device_zeroed(static_cast<std::size_t>(max_points), kAlloc)),
      d_record_(cuda_device_zeroed(sizeof(PoseRecord), kAlloc)), h_record_(cuda_pinned(sizeof(PoseRecord), kAlloc)),
      h_mask_(cuda_pinned(static_cast<std::size_t>(max_points), kAlloc)) {
    KESTREL_CUDA(cudaMemcpy(d_tables_.get(), tables.data(), sizeof(int) * tables.size(), cudaMemcpyHostToDevice),
                 kAlloc);
    kernels::PoseDeviceState st{};  // the scans' "no best yet" (the finish leaves this state for the next call)
    for (int q = 0; q < 2; ++q) st.scan[q] = PoseScan{};
    KESTREL_CUDA(cudaMemcpy(d_state_.get(), &st, sizeof st, cudaMemcpyHostToDevice), kAlloc);
    sms_ = kernels::sms_available();
    per_sm_ = kernels::pose_blocks_per_sm();
    std::memset(h_record_.get(), 0, sizeof(PoseRecord));
    buf_.tables = static_cast<int*>(d_tables_.get());
    buf_.hmodel = static_cast<double*>(d_models_.get());
    buf_.hcost = static_cast<double*>(d_cost_.get());
    buf_.hinliers = static_cast<int*>(d_inl_.get());
    buf_.hreq = buf_.hinliers + 2 * kernels::kPoseRing;
    buf_.done = static_cast<int*>(d_done_.get());
    buf_.state = static_cast<kernels::PoseDeviceState*>(d_state_.get());
    buf_.mask = static_cast<std::uint8_t*>(d_mask_.get());
    buf_.record = static_cast<PoseRecord*>(d_record_.get());
}

kernels::PoseCallParams CudaPoseBackend::params(const PoseCall& call, const kernels::PosePrepare& prep,
                                                bool scales) const {
    kernels::PoseCallParams prm{};
    prm.prep = prep;
    PoseProblem rot{};
    pose_setup(call, cfg_, prep.x1, prep.x2, scales ? prep.s : nullptr, prep.bound, prep.bound, prm.fp, rot);
    prm.problem[0] = prm.fp.pe;
    prm.problem[1] = rot;
    prm.cap[0] = cfg_.max_hypotheses;
    prm.cap[1] = cfg_.rotation_only ? pose_rotation_max(cfg_) : 0;
    prm.table[0] = buf_.tables + (call.method == 0 ? 0 : kPoseStopBins + 1);
    prm.table[1] = buf_.tables + (kPoseStopBins + 1);
    return prm;
}

int CudaPoseBackend::pose2_blocks(const kernels::PoseCallParams& prm) const {
    const int w0 = prm.cap[0] < kernels::kPose2Wave0 ? prm.cap[0] : kernels::kPose2Wave0;
    const int w1 = prm.cap[1] < kernels::kPose2Wave1 ? prm.cap[1] : kernels::kPose2Wave1;
    const int most = w0 + w1;
    const int blocks = sms_ < most ? sms_ : most;
    return blocks > 0 ? blocks : 1;
}

void CudaPoseBackend::enqueue(const PoseCall& call, StreamHandle stream) {
    stream_ = stream;
    cudaStream_t s = stream;
    const int bound = call.n;
    bound_ = bound;
    host_copy_ = call.device == nullptr;
    double* d = static_cast<double*>(d_pts_.get());
    const std::size_t nb = static_cast<std::size_t>(bound);
    kernels::PosePrepare prep{};
    prep.bound = bound;
    prep.x1 = d;
    prep.x2 = d + 3 * nb;
    prep.min_points = call.method == 0 ? 5 : 2;
    prep.rotation_pass = cfg_.rotation_only ? 1 : 0;
    bool scales = false;
    if (call.device) {
        const PoseDeviceInput& in = *call.device;
        prep.device_count = in.device_count;
        if (in.bearings1) {
            prep.mode = 1;
            prep.b1 = in.bearings1;
            prep.b2 = in.bearings2;
            prep.ppr = in.pixels_per_radian;
            scales = in.pixels_per_radian != nullptr;
        } else {
            prep.mode = 2;
            prep.n1 = in.normalized1;
            prep.n2 = in.normalized2;
        }
    } else {
        prep.mode = 0;
        scales = call.s != nullptr;
        double* h = static_cast<double*>(h_pts_.get());
        if (call.x1 != h) std::memcpy(h, call.x1, sizeof(double) * 3 * nb);  // unless staged there
        if (call.x2 != h + 3 * nb) std::memcpy(h + 3 * nb, call.x2, sizeof(double) * 3 * nb);
        if (scales && call.s != h + 6 * nb) std::memcpy(h + 6 * nb, call.s, sizeof(double) * nb);
        if (bound > 0)
            KESTREL_CUDA(cudaMemcpyAsync(d, h, sizeof(double) * (scales ? 7 : 6) * nb, cudaMemcpyHostToDevice, s),
                         "RelativePoseEstimator upload");
    }
    prep.s = scales ? d + 6 * nb : nullptr;
    kernels::PoseCallParams prm = params(call, prep, scales);
    if (host_copy_) {  // the kernel writes the record and the mask to pinned memory itself
        prm.host_record = static_cast<PoseRecord*>(h_record_.get());
        prm.host_mask = static_cast<std::uint8_t*>(h_mask_.get());
    }
    if (call.method == 0) {
        // The grid: as many blocks as can be resident; the kernel spreads in_flight hypotheses over them (a
        // call that needs the five-point cap of the tracker's check, 512, is one wave).
        prm.in_flight = 512;
        int blocks = sms_ * per_sm_;
        const int most = prm.in_flight < prm.cap[0] + prm.cap[1] ? prm.in_flight : prm.cap[0] + prm.cap[1];
        blocks = blocks < most ? blocks : most;
        kernels::launch_pose_call(prm, buf_, blocks > 0 ? blocks : 1, s);
    } else {
        kernels::launch_pose2_call(prm, buf_, pose2_blocks(prm), s);
    }
}

void CudaPoseBackend::enqueue_staged(const PoseCall& call, int min_points, StreamHandle stream, StagedLaunch launch,
                                     const void* ctx) {
    stream_ = stream;
    bound_ = call.n;
    host_copy_ = false;
    double* d = static_cast<double*>(d_pts_.get());
    kernels::PosePrepare prep{};
    prep.mode = 3;
    prep.bound = call.n;
    prep.x1 = d;
    prep.x2 = d + 3 * static_cast<std::size_t>(call.n);
    prep.min_points = min_points;
    prep.rotation_pass = cfg_.rotation_only ? 1 : 0;
    const kernels::PoseCallParams prm = params(call, prep, false);
    launch(prm, buf_, pose2_blocks(prm), static_cast<cudaStream_t>(stream), ctx);
}

RelativePoseResult CudaPoseBackend::finish(std::uint8_t* mask) {
    synchronize(stream_, "RelativePoseEstimator::finish");
    if (!host_copy_) {  // the device entry: the host copy only now, when asked for
        cudaStream_t s = stream_;
        KESTREL_CUDA(cudaMemcpyAsync(h_record_.get(), buf_.record, sizeof(PoseRecord), cudaMemcpyDeviceToHost, s),
                     "RelativePoseEstimator::finish download");
        if (bound_ > 0)
            KESTREL_CUDA(cudaMemcpyAsync(h_mask_.get(), buf_.mask, static_cast<std::size_t>(bound_),
                                         cudaMemcpyDeviceToHost, s),
                         "RelativePoseEstimator::finish download");
        synchronize(stream_, "RelativePoseEstimator::finish");
    }
    PoseRecord rec;
    std::memcpy(&rec, h_record_.get(), sizeof rec);
    if (mask) std::memcpy(mask, h_mask_.get(), static_cast<std::size_t>(host_copy_ ? rec.count : bound_));
    return pose_result(rec);
}

std::unique_ptr<PoseBackend> make_cuda_pose_backend(int max_points, const RelativePoseConfig& cfg,
                                                    const std::vector<int>& tables) {
    return std::make_unique<CudaPoseBackend>(max_points, cfg, tables);
}

}  // namespace kestrel::detail
