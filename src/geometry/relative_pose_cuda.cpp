// RelativePoseEstimator's CUDA backend (kernels/geometry/ransac.cu). Per call, all on the caller's stream:
// host entries: one H2D copy of the staged points (3-vectors and scales, one pinned block); the device entry:
// nothing copied (the kernel reads the caller's arrays and count). Then one launch: the staging, both passes
// with the adaptive stop, and the finish (mask, decomposition, cheirality, refinement, rotation-only model,
// choice) writing the record and the mask in device memory; host entries also copy both to pinned memory.
// finish() waits (the one synchronization) and converts the record. Everything is allocated in the
// constructor; the grid is sized from the SMs available when the estimator is made.
#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "kernels/common/cuda_check.hpp"
#include "kernels/common/sm_count.cuh"
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
    KESTREL_CUDA(cudaMemset(p, 0, bytes > 0 ? bytes : 1), kAlloc);
    return DevicePtr(p);
}

class CudaPoseBackend final : public PoseBackend {
public:
    CudaPoseBackend(int max_points, const RelativePoseConfig& cfg, const std::vector<int>& tables)
        : cfg_(cfg), max_points_(max_points),
          pts_bytes_(7 * sizeof(double) * static_cast<std::size_t>(max_points)),
          h_pts_(pinned(pts_bytes_)), d_pts_(device(pts_bytes_)),
          d_tables_(device(sizeof(int) * tables.size())),
          d_models_(device(sizeof(double) * 9 * 2 * kernels::kPoseRing)),
          d_cost_(device(sizeof(double) * 2 * kernels::kPoseRing)),
          d_inl_(device(sizeof(int) * 4 * kernels::kPoseRing)),  // the inlier counts, then the stop counts
          d_done_(device(sizeof(int) * 2 * kernels::kPoseRing)),
          d_state_(device(sizeof(kernels::PoseDeviceState))),
          d_mask_(device(static_cast<std::size_t>(max_points))),
          d_record_(device(sizeof(PoseRecord))),
          h_record_(pinned(sizeof(PoseRecord))),
          h_mask_(pinned(static_cast<std::size_t>(max_points))) {
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

    void enqueue(const PoseCall& call, StreamHandle stream) override {
        stream_ = stream;
        cudaStream_t s = stream;
        const int bound = call.n;
        bound_ = bound;
        host_copy_ = call.device == nullptr;
        double* d = static_cast<double*>(d_pts_.get());
        const std::size_t nb = static_cast<std::size_t>(bound);
        double* dx1 = d;
        double* dx2 = d + 3 * nb;
        double* ds = d + 6 * nb;
        kernels::PosePrepare prep{};
        prep.bound = bound;
        prep.x1 = dx1;
        prep.x2 = dx2;
        prep.min_points = call.method == 0 ? 5 : 2;
        prep.rotation_pass = cfg_.rotation_only ? 1 : 0;
        bool scales = false;
        if (call.track) {  // the tracker's check: staged by the kernel (mode 3)
            prep.mode = 3;
            prep.track = *call.track;
            prep.min_points = call.track->min_tracks;
            host_copy_ = false;
        } else if (call.device) {
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
        prep.s = scales ? ds : nullptr;
        kernels::PoseCallParams prm{};
        prm.prep = prep;
        PoseProblem rot{};
        pose_setup(call, cfg_, dx1, dx2, scales ? ds : nullptr, bound, bound, prm.fp, rot);
        prm.problem[0] = prm.fp.pe;
        prm.problem[1] = rot;
        prm.cap[0] = cfg_.max_hypotheses;
        prm.cap[1] = cfg_.rotation_only ? pose_rotation_max(cfg_) : 0;
        prm.table[0] = buf_.tables + (call.method == 0 ? 0 : kPoseStopBins + 1);
        prm.table[1] = buf_.tables + (kPoseStopBins + 1);
        if (call.method == 0) {
            // The grid: as many blocks as can be resident; the kernel spreads in_flight hypotheses over them (a
            // call that needs the five-point cap of the tracker's check, 512, is one wave).
            prm.in_flight = 512;
            int blocks = sms_ * per_sm_;
            const int most = prm.in_flight < prm.cap[0] + prm.cap[1] ? prm.in_flight : prm.cap[0] + prm.cap[1];
            blocks = blocks < most ? blocks : most;
            kernels::launch_pose_call(prm, buf_, blocks > 0 ? blocks : 1, s);
        } else {
            // Two-point: the first wave of both passes spread over one block per SM present (at most one block
            // per hypothesis of the wave).
            const int w0 = prm.cap[0] < kernels::kPose2Wave0 ? prm.cap[0] : kernels::kPose2Wave0;
            const int w1 = prm.cap[1] < kernels::kPose2Wave1 ? prm.cap[1] : kernels::kPose2Wave1;
            const int most = w0 + w1;
            const int blocks = sms_ < most ? sms_ : most;
            if (host_copy_) {  // the kernel writes the record and the mask to pinned memory itself
                prm.host_record = static_cast<PoseRecord*>(h_record_.get());
                prm.host_mask = static_cast<std::uint8_t*>(h_mask_.get());
            }
            kernels::launch_pose2_call(prm, buf_, blocks > 0 ? blocks : 1, s);
        }
        if (host_copy_ && call.method == 0) {
            KESTREL_CUDA(cudaMemcpyAsync(h_record_.get(), buf_.record, sizeof(PoseRecord), cudaMemcpyDeviceToHost, s),
                         "RelativePoseEstimator download");
            if (bound > 0)
                KESTREL_CUDA(cudaMemcpyAsync(h_mask_.get(), buf_.mask, nb, cudaMemcpyDeviceToHost, s),
                             "RelativePoseEstimator download");
        }
    }

    RelativePoseResult finish(std::uint8_t* mask) override {
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

    const std::uint8_t* device_mask() const override { return buf_.mask; }
    double* host_staging() override { return static_cast<double*>(h_pts_.get()); }
    const PoseRecord* device_record() const override { return buf_.record; }

private:
    RelativePoseConfig cfg_;
    int max_points_;
    int sms_ = 1;
    int per_sm_ = 1;
    std::size_t pts_bytes_;
    PinnedPtr h_pts_;
    DevicePtr d_pts_, d_tables_, d_models_, d_cost_, d_inl_, d_done_, d_state_, d_mask_, d_record_;
    PinnedPtr h_record_, h_mask_;
    kernels::PoseBuffers buf_{};
    StreamHandle stream_ = nullptr;
    int bound_ = 0;
    bool host_copy_ = true;
};

class CudaGeoCheck final : public GeoDeviceCheck {
public:
    CudaGeoCheck(int capacity, const RelativePoseConfig& cfg, const CameraSetup& cam, int min_tracks)
        : cam_(cam), min_tracks_(min_tracks),
          outlier_(pinned(static_cast<std::size_t>(capacity))), bases_(pinned(sizeof(Point2f) * capacity)),
          out_(pinned(2 * sizeof(GeoDeviceOut))), index_(device(sizeof(int) * static_cast<std::size_t>(capacity))),
          verdicts_(device(sizeof(TrackVerdict) * static_cast<std::size_t>(capacity))),
          flags_(device(static_cast<std::size_t>(capacity))) {
        pose_stop_tables(cfg.confidence, cfg.max_hypotheses, tables_);
        pose_ = std::make_unique<CudaPoseBackend>(capacity, cfg, tables_);
        std::memset(out_.get(), 0, 2 * sizeof(GeoDeviceOut));
    }
    Point2f* bases() override { return static_cast<Point2f*>(bases_.get()); }
    const std::uint8_t* outlier() const override { return static_cast<const std::uint8_t*>(outlier_.get()); }
    const GeoDeviceOut& out(int test) const override { return static_cast<const GeoDeviceOut*>(out_.get())[test]; }

    void enqueue(const GeoTrackInputs& in, const double* R, const double* R_base, StreamHandle stream) override {
        std::memset(outlier_.get(), 0, static_cast<std::size_t>(in.tracks));  // the kernels set the ended ones
        GeoDeviceOut* out = static_cast<GeoDeviceOut*>(out_.get());
        PoseTrackStage g{};
        g.results = in.results;
        g.back = in.back;
        g.anchors = in.anchors;
        g.origins = in.origins;
        g.from = in.origins;
        g.rule = in.rule;
        g.cam = cam_;
        g.tracks = in.tracks;
        g.min_tracks = min_tracks_;
        g.outlier = static_cast<std::uint8_t*>(outlier_.get());
        g.index = static_cast<int*>(index_.get());
        g.out = out;
        g.first = 1;
        g.verdicts = static_cast<TrackVerdict*>(verdicts_.get());
        g.flags = static_cast<std::uint8_t*>(flags_.get());
        PoseCall call;
        call.n = in.tracks;
        call.sphere = 0;
        call.method = 1;
        for (int j = 0; j < 9; ++j) call.R[j] = R[j];
        call.track = &g;
        pose_->enqueue(call, stream);
        if (R_base) {  // the baseline test: after the frame pair's (stream order), over the tracks it kept
            g.from = bases();
            g.out = out + 1;
            g.first = 0;
            for (int j = 0; j < 9; ++j) call.R[j] = R_base[j];
            pose_->enqueue(call, stream);
        }
    }

private:
    CameraSetup cam_;
    int min_tracks_;
    std::vector<int> tables_;
    PinnedPtr outlier_, bases_, out_;
    DevicePtr index_, verdicts_, flags_;
    std::unique_ptr<CudaPoseBackend> pose_;
};

}  // namespace

std::unique_ptr<GeoDeviceCheck> make_cuda_geo_check(int capacity, const RelativePoseConfig& cfg, const CameraSetup& cam,
                                                    int min_tracks) {
    return std::make_unique<CudaGeoCheck>(capacity, cfg, cam, min_tracks);
}

std::unique_ptr<PoseBackend> make_cuda_pose_backend(int max_points, const RelativePoseConfig& cfg,
                                                    const std::vector<int>& tables) {
    return std::make_unique<CudaPoseBackend>(max_points, cfg, tables);
}

}  // namespace kestrel::detail
