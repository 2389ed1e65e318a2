// FeatureTracker's geometric check on the device (src/track/geometric_check.hpp, GeoDeviceCheck): per test one
// two-point RelativePoseEstimator call on the frame's stream (src/geometry/relative_pose_cuda.hpp) whose kernel
// stages the frame's checked tracks itself and writes the verdicts to pinned memory
// (kernels/track/geo_check_pose.cu): the frame pair's test, then with R_base the baseline test over the tracks it
// kept. Everything is allocated in the constructor.
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/track/geo_check_pose.cuh"
#include "src/geometry/relative_pose_cuda.hpp"
#include "src/track/geometric_check.hpp"

namespace kestrel::detail {
namespace {

constexpr const char* kAlloc = "FeatureTracker geometric check allocation";

class CudaGeoCheck final : public GeoDeviceCheck {
public:
    CudaGeoCheck(int capacity, const RelativePoseConfig& cfg, const CameraSetup& cam, int min_tracks)
        : cam_(cam), min_tracks_(min_tracks),
          outlier_(cuda_pinned(static_cast<std::size_t>(capacity), kAlloc)),
          bases_(cuda_pinned(sizeof(Point2f) * static_cast<std::size_t>(capacity), kAlloc)),
          out_(cuda_pinned(2 * sizeof(GeoDeviceOut), kAlloc)),
          index_(cuda_device_zeroed(sizeof(int) * static_cast<std::size_t>(capacity), kAlloc)),
          verdicts_(cuda_device_zeroed(sizeof(TrackVerdict) * static_cast<std::size_t>(capacity), kAlloc)),
          flags_(cuda_device_zeroed(static_cast<std::size_t>(capacity), kAlloc)) {
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
        pose_->enqueue_staged(call, min_tracks_, stream, launch, &g);
        if (R_base) {  // the baseline test: after the frame pair's (stream order), over the tracks it kept
            g.from = bases();
            g.out = out + 1;
            g.first = 0;
            for (int j = 0; j < 9; ++j) call.R[j] = R_base[j];
            pose_->enqueue_staged(call, min_tracks_, stream, launch, &g);
        }
    }

private:
    static void launch(const kernels::PoseCallParams& prm, const kernels::PoseBuffers& b, int blocks,
                       cudaStream_t stream, const void* ctx) {
        kernels::launch_geo_check_pose2(prm, b, *static_cast<const PoseTrackStage*>(ctx), blocks, stream);
    }

    CameraSetup cam_;
    int min_tracks_;
    std::vector<int> tables_;
    CudaPinnedPtr outlier_, bases_, out_;
    CudaDevicePtr index_, verdicts_, flags_;
    std::unique_ptr<CudaPoseBackend> pose_;
};

}  // namespace

std::unique_ptr<GeoDeviceCheck> make_cuda_geo_check(int capacity, const RelativePoseConfig& cfg, const CameraSetup& cam,
                                                    int min_tracks) {
    return std::make_unique<CudaGeoCheck>(capacity, cfg, cam, min_tracks);
}

}  // namespace kestrel::detail
