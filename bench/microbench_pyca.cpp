// kestrel_microbench, PyCA rows (CUDA builds): the detector with SelectionPolicy::PyCA beside the grid
// policy on the same pyramid at 752x480 (8 levels of 1.2, ORB-SLAM's pyramid, and 2 levels of 2), end to
// end (pinned upload + frame + results on the host, one synchronization) and device only; and PyCA's
// feature culling alone on the frame's score maps, its MLPT/TEWA kernel against a log2 (tree) reduction of
// the same cells, per cell size (the comparison of the Jetson-SLAM paper's Table I). Each row skips with a
// message on a machine without a CUDA device.
#include "kestrel/device_image.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/pyramid.hpp"
#include "microbench.hpp"
#include "src/detect/detector_geometry.hpp"
#include "src/detect/grid_select_cuda.hpp"
#include "src/detect/pyca_cuda.hpp"

namespace kestrel::bench::micro {

namespace {

struct Pyr {
    const char* tag;
    PyramidConfig pyramid;
};
constexpr Pyr kPyramids[] = {{"8x1.2", {8, 1.2f}}, {"2x2", {2, 2.0f}}};

/// The policies' configurations on one pyramid: 32x32 grid cells, t = 10, MaxThreshold (the tracker's
/// re-detection score); PyCA with 16-pixel culling cells on every level, q = 3, 4 per grid cell.
DetectorConfig policy_config(SelectionPolicy policy, PyramidConfig pyr, int pyca_cell = 16) {
    DetectorConfig c = issue4_detector();
    c.pyramid = pyr;
    c.fast.score = ScoreType::MaxThreshold;
    c.selection = policy;
    c.per_cell = policy == SelectionPolicy::PyCA ? 4 : 1;
    c.pyca.cell.fill(pyca_cell);
    return c;
}

}  // namespace

void register_pyca() {
    const char* sz = "752x480";
    for (const Pyr& pr : kPyramids)
        for (const SelectionPolicy policy : {SelectionPolicy::Grid, SelectionPolicy::PyCA}) {
            const std::string tag = std::string(to_string(policy)) + "/" + sz + "/" + pr.tag;
            add("selection/end-to-end/" + tag, 1000, [sz, pr, policy](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                FeatureDetector det(policy_config(policy, pr.pyramid), Backend::Cuda);
                const PinnedImage p = pinned_copy(g_frame0.at(sz));
                Stream s;
                if (policy == SelectionPolicy::PyCA) st.SetLabel("target: <= 1.2 x the grid row on the same pyramid");
                gpu_wall_loop(st, [&] {
                    det.detect_async(p.view(), s.get());
                    s.sync("selection");
                });
                st.counters["keypoints"] = det.host_count();
            });
            add("selection/device/" + tag, 1000, [sz, pr, policy](benchmark::State& st) {
                if (!g_gpu) return st.SkipWithError(kNoGpu);
                FeatureDetector det(policy_config(policy, pr.pyramid), Backend::Cuda);
                const DeviceImage d = upload(g_frame0.at(sz).view());
                device_loop(st, [&](cudaStream_t s) { det.detect_async(d.view(), s); });
                st.counters["keypoints"] = det.host_count();
            });
        }

    // Culling alone: MLPT + TEWA against a tree reduction of the same cells, on the frame's score maps.
    for (const Pyr& pr : kPyramids)
        for (const int cell : {8, 16, 32, 64})
            for (const auto reduction : {detail::PycaReduction::Mlpt, detail::PycaReduction::Tree}) {
                const std::string name = std::string("pyca-cull/") +
                                         (reduction == detail::PycaReduction::Mlpt ? "mlpt" : "tree") + "/" + sz +
                                         "/" + pr.tag + "/c" + std::to_string(cell);
                add(name, 1000, [sz, pr, cell, reduction](benchmark::State& st) {
                    if (!g_gpu) return st.SkipWithError(kNoGpu);
                    const DetectorConfig cfg = policy_config(SelectionPolicy::PyCA, pr.pyramid, cell);
                    const HostImage& img = g_frame0.at(sz);
                    DevicePyramid pyr(img.width(), img.height(), cfg.pyramid);
                    copy_async(img.view(), pyr.level0(), nullptr);
                    pyr.build(nullptr);
                    DeviceScoreMaps maps(pyramid_sizes(img.width(), img.height(), cfg.pyramid), cfg.fast);
                    maps.compute(pyr, nullptr);
                    const detail::DeviceGridSelect select(img.width(), img.height(), cfg);
                    const kernels::GridNmsParams p = detail::GridSelectAccess::params(select, maps, {});
                    const detail::PycaStage stage(detail::grid_geometry("microbench", img.width(), img.height(), cfg), cfg);
                    st.SetLabel(std::to_string(stage.survivor_count()) + " cells");
                    device_loop(st, [&](cudaStream_t s) { stage.cull(p, s, reduction); });
                });
            }
}

}  // namespace kestrel::bench::micro
