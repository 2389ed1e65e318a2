// detail::grid_select_cuda: the production grid-NMS kernel (kernels/detect/grid_nms.cu, via DeviceGridSelect) run
// on given host score maps, synchronously, for tests and tools. Not on any per-frame path (it allocates).
#include <cuda_runtime.h>

#include "kernels/common/cuda_check.hpp"
#include "detector_buffers_cuda.hpp"
#include "detector_geometry.hpp"
#include "grid_select_cuda.hpp"
#include "src/core/backend.hpp"
#include "kestrel/device_image.hpp"

namespace kestrel::detail {

std::vector<Keypoint> grid_select_cuda(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                       const DetectionMasks& masks) {
    const char* where = "grid_select_cuda";
    const GridGeometry g = check_grid_select_args(where, maps, cfg, masks);
    require_cuda(where);

    std::vector<DeviceBytes> level_maps;
    kernels::GridLevel levels[kMaxLevels];
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const std::size_t pitch = sizeof(float) * static_cast<std::size_t>(m.width);
        level_maps.push_back(device_bytes(pitch * static_cast<std::size_t>(m.height), where));
        KESTREL_CUDA(cudaMemcpy(level_maps.back().get(), m.scores.data(), pitch * m.height, cudaMemcpyHostToDevice),
                     "grid_select_cuda upload");
        levels[k] = {static_cast<const float*>(level_maps.back().get()), pitch, m.width, m.height, 0.0f};
    }
    DeviceBytes cell_skip;
    DeviceDetectionMasks dm;
    if (masks.cell_skip) {
        cell_skip = device_bytes(static_cast<std::size_t>(g.cells()), where);
        KESTREL_CUDA(cudaMemcpy(cell_skip.get(), masks.cell_skip, static_cast<std::size_t>(g.cells()),
                                cudaMemcpyHostToDevice),
                     "grid_select_cuda upload");
        dm.cell_skip = static_cast<const std::uint8_t*>(cell_skip.get());
        dm.cell_grid = masks.cell_grid;
    }
    DeviceImage pixel_mask;
    if (masks.pixel_mask.data) {
        pixel_mask = upload(masks.pixel_mask);
        dm.pixel_mask = pixel_mask.view();
    }

    DeviceGridSelect select(g.width, g.height, cfg);
    const kernels::GridNmsParams p = GridSelectAccess::params(select, levels, dm);
    kernels::launch_grid_nms(p, nullptr);
    std::vector<unsigned char> host(select.result_bytes());
    KESTREL_CUDA(cudaMemcpy(host.data(), select.device_result(), host.size(), cudaMemcpyDeviceToHost),
                 "grid_select_cuda download");
    unsigned int ticket_after = 1;
    KESTREL_CUDA(cudaMemcpy(&ticket_after, p.ticket, sizeof ticket_after, cudaMemcpyDeviceToHost),
                 "grid_select_cuda download");
    if (ticket_after != 0) throw Error("kestrel: grid_select_cuda: the last block did not reset the ticket");
    const int count = *result_count(host.data());
    if (count < 0 || count > select.capacity()) throw Error("kestrel: grid_select_cuda: count out of range");
    const Keypoint* kp = result_keypoints(host.data());
    return std::vector<Keypoint>(kp, kp + count);
}

}  // namespace kestrel::detail
