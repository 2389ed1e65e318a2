// PyCA's GPU stage (src/detect/pyca_cuda.hpp) and detail::pyca_cull_cuda / pyca_select_cuda, which run the
// production kernels (kernels/detect/pyca.cu) on given host score maps, synchronously, for tests and tools
// (they allocate: not on any per-frame path). CPU reference: src/detect/pyca_cpu.cpp.
#include "pyca_cuda.hpp"

#include "grid_select_cuda.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kestrel/device_image.hpp"
#include "src/core/backend.hpp"

namespace kestrel::detail {

PycaStage::PycaStage(const GridGeometry& g, const DetectorConfig& cfg) {
    params_.geo = pyca_geometry(g, cfg);
    kernels::plan_pyca(params_);
    survivors_ = device_bytes(sizeof(unsigned long long) * static_cast<std::size_t>(params_.geo.total),
                              "pyca allocation");
    params_.survivors = static_cast<unsigned long long*>(survivors_.get());
    // The aggregation's level coordinates (geometry only): computed by the rule on the host and uploaded
    // once per image size (a synchronous copy, like the allocations of the first call at a size).
    const std::vector<std::int16_t> coords = pyca_coord_tables(params_.geo);
    coords_ = device_bytes(sizeof(std::int16_t) * coords.size(), "pyca allocation");
    KESTREL_CUDA(cudaMemcpy(coords_.get(), coords.data(), sizeof(std::int16_t) * coords.size(), cudaMemcpyHostToDevice),
                 "pyca coordinate tables");
    params_.coords = static_cast<const std::int16_t*>(coords_.get());
}

void PycaStage::cull(const kernels::GridNmsParams& grid, cudaStream_t stream, PycaReduction reduction) const {
    kernels::PycaParams p = params_;
    p.grid = grid;
    if (reduction == PycaReduction::Tree)
        kernels::launch_pyca_cull_tree(p, stream);
    else
        kernels::launch_pyca_cull(p, stream);
}

void PycaStage::run(const kernels::GridNmsParams& grid, cudaStream_t stream) const {
    kernels::PycaParams p = params_;
    p.grid = grid;
    kernels::launch_pyca_cull(p, stream);
    kernels::launch_pyca_aggregate(p, stream);
}

namespace {

/// Host score maps and masks uploaded for one synchronous call.
struct Uploaded {
    std::vector<DeviceBytes> maps;
    kernels::GridLevel levels[kMaxLevels]{};
    DeviceBytes cell_skip;
    DeviceImage pixel_mask;
    DeviceDetectionMasks masks;
};

void upload_args(Uploaded& u, const GridGeometry& g, const std::vector<ScoreMap>& maps, const DetectionMasks& masks,
                 const char* where) {
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const std::size_t pitch = sizeof(float) * static_cast<std::size_t>(m.width);
        u.maps.push_back(device_bytes(pitch * static_cast<std::size_t>(m.height), where));
        KESTREL_CUDA(cudaMemcpy(u.maps.back().get(), m.scores.data(), pitch * m.height, cudaMemcpyHostToDevice), where);
        u.levels[k] = {static_cast<const float*>(u.maps.back().get()), pitch, m.width, m.height, 0.0f};
    }
    if (masks.cell_skip) {
        u.cell_skip = device_bytes(static_cast<std::size_t>(g.cells()), where);
        KESTREL_CUDA(cudaMemcpy(u.cell_skip.get(), masks.cell_skip, static_cast<std::size_t>(g.cells()),
                                cudaMemcpyHostToDevice),
                     where);
        u.masks.cell_skip = static_cast<const std::uint8_t*>(u.cell_skip.get());
        u.masks.cell_grid = masks.cell_grid;
    }
    if (masks.pixel_mask.data) {
        u.pixel_mask = upload(masks.pixel_mask);
        u.masks.pixel_mask = u.pixel_mask.view();
    }
}

}  // namespace

std::vector<std::uint64_t> pyca_cull_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                          const DetectionMasks& masks, PycaReduction reduction) {
    const char* where = "pyca_cull_cuda";
    const GridGeometry g = check_pyca_args(where, maps, cfg, masks);
    require_cuda(where);
    if (reduction != PycaReduction::Mlpt && reduction != PycaReduction::Tree)
        fail(where, "reduction", "must be PycaReduction::Mlpt or PycaReduction::Tree");
    Uploaded u;
    upload_args(u, g, maps, masks, where);
    DeviceGridSelect select(g.width, g.height, cfg);
    const PycaStage stage(g, cfg);
    // Poison the slots: every one must be written by the culling.
    KESTREL_CUDA(cudaMemset(const_cast<unsigned long long*>(stage.survivors()), 0xFF,
                            sizeof(unsigned long long) * static_cast<std::size_t>(stage.survivor_count())),
                 where);
    stage.cull(GridSelectAccess::params(select, u.levels, u.masks), nullptr, reduction);
    std::vector<std::uint64_t> out(static_cast<std::size_t>(stage.survivor_count()));
    KESTREL_CUDA(cudaMemcpy(out.data(), stage.survivors(), sizeof(std::uint64_t) * out.size(), cudaMemcpyDeviceToHost),
                 "pyca_cull_cuda download");
    return out;
}

std::vector<Keypoint> pyca_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks) {
    const char* where = "pyca_select_cuda";
    const GridGeometry g = check_pyca_args(where, maps, cfg, masks);
    require_cuda(where);
    Uploaded u;
    upload_args(u, g, maps, masks, where);
    DeviceGridSelect select(g.width, g.height, cfg);
    const PycaStage stage(g, cfg);
    const kernels::GridNmsParams p = GridSelectAccess::params(select, u.levels, u.masks);
    stage.run(p, nullptr);
    std::vector<unsigned char> host(select.result_bytes());
    KESTREL_CUDA(cudaMemcpy(host.data(), select.device_result(), host.size(), cudaMemcpyDeviceToHost),
                 "pyca_select_cuda download");
    unsigned int ticket_after = 1;
    KESTREL_CUDA(cudaMemcpy(&ticket_after, p.ticket, sizeof ticket_after, cudaMemcpyDeviceToHost),
                 "pyca_select_cuda download");
    if (ticket_after != 0) throw Error("kestrel: pyca_select_cuda: the last block did not reset the ticket");
    const int count = *result_count(host.data());
    if (count < 0 || count > select.capacity()) throw Error("kestrel: pyca_select_cuda: count out of range");
    const Keypoint* kp = result_keypoints(host.data());
    return std::vector<Keypoint>(kp, kp + count);
}

}  // namespace kestrel::detail
