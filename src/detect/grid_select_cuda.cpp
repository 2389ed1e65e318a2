// DeviceGridSelect: owns the selection scratch (slots, ticket) and the result block of one image size and
// launches kernels/detect/grid_nms.cu. CPU reference: src/detect/grid_select_cpu.cpp.
#include <cuda_runtime.h>

#include "kernels/common/cuda_check.hpp"
#include "src/core/backend.hpp"
#include "detector_buffers_cuda.hpp"
#include "detector_geometry.hpp"
#include "grid_select_cuda.hpp"

namespace kestrel::detail {

struct DeviceGridSelect::Impl {
    GridGeometry g;
    DetectorConfig cfg;
    DeviceBytes cell_keys, ticket, result;
    std::size_t result_size = 0;
    kernels::GridNmsParams base{};  // everything but the score maps and masks
};

DeviceGridSelect::DeviceGridSelect() = default;
DeviceGridSelect::DeviceGridSelect(DeviceGridSelect&&) noexcept = default;
DeviceGridSelect& DeviceGridSelect::operator=(DeviceGridSelect&&) noexcept = default;
DeviceGridSelect::~DeviceGridSelect() = default;

DeviceGridSelect::DeviceGridSelect(int width, int height, const DetectorConfig& cfg) {
    const char* where = "DeviceGridSelect";
    auto m = std::make_unique<Impl>();
    m->g = grid_geometry(where, width, height, cfg);
    m->cfg = cfg;
    const GridGeometry& g = m->g;
    const std::size_t slots = static_cast<std::size_t>(g.cells()) * cfg.per_cell;
    m->cell_keys = device_bytes(slots * sizeof(unsigned long long), "grid select allocation");
    m->ticket = device_bytes(sizeof(unsigned int), "grid select allocation");
    m->result_size = detail::result_bytes(g.capacity);
    m->result = device_bytes(m->result_size, "grid select allocation");
    KESTREL_CUDA(cudaMemset(m->ticket.get(), 0, sizeof(unsigned int)), "grid select allocation");
    KESTREL_CUDA(cudaMemset(m->result.get(), 0, m->result_size), "grid select allocation");  // copied whole
    KESTREL_CUDA(cudaStreamSynchronize(nullptr), "grid select allocation");  // before any stream uses them

    kernels::GridNmsParams& p = m->base;
    p.levels = g.levels;
    p.image_width = g.width;
    p.image_height = g.height;
    p.cell_width = cfg.cell_width;
    p.cell_height = cfg.cell_height;
    p.cols = g.cols;
    p.rows = g.rows;
    p.nms_radius = cfg.nms_radius;
    p.per_cell = cfg.per_cell;
    p.max_features = cfg.max_features;
    p.border = cfg.border;
    p.cell_keys = static_cast<unsigned long long*>(m->cell_keys.get());
    p.ticket = static_cast<unsigned int*>(m->ticket.get());
    p.count = result_count(m->result.get());
    p.keypoints = result_keypoints(m->result.get());
    impl_ = std::move(m);
}

DeviceGridSelect::Impl& DeviceGridSelect::impl(const char* where) const {
    if (!impl_) detail::empty_object("DeviceGridSelect", where);
    return *impl_;
}

kernels::GridNmsParams GridSelectAccess::params(const DeviceGridSelect& s, const kernels::GridLevel* levels,
                                                const DeviceDetectionMasks& masks) {
    const char* where = "DeviceGridSelect::run";
    const DeviceGridSelect::Impl& m = s.impl("run");
    check_cell_mask(where, m.g, masks.cell_skip, masks.cell_grid);
    check_pixel_mask(where, m.g, masks.pixel_mask);
    kernels::GridNmsParams p = m.base;
    for (int k = 0; k < m.g.levels; ++k) {
        p.level[k] = levels[k];
        p.level[k].scale = m.g.scale[k];
    }
    p.cell_skip = masks.cell_skip;
    p.pixel_mask = masks.pixel_mask.data;
    p.mask_pitch = masks.pixel_mask.data ? masks.pixel_mask.pitch : 0;
    return p;
}

kernels::GridNmsParams GridSelectAccess::params(const DeviceGridSelect& s, const DeviceScoreMaps& scores,
                                                const DeviceDetectionMasks& masks) {
    const char* where = "DeviceGridSelect::run";
    const DeviceGridSelect::Impl& m = s.impl("run");
    if (scores.levels() != m.g.levels)
        fail(where, "scores", "has " + to_text(scores.levels()) + " levels, expected " + to_text(m.g.levels));
    kernels::GridLevel levels[kMaxLevels];
    for (int k = 0; k < m.g.levels; ++k) {
        const Size2 sz = scores.level_size(k);
        if (sz.width != m.g.level_size[k].width || sz.height != m.g.level_size[k].height)
            fail(where, "scores", "level " + to_text(k) + " is " + to_text(sz.width) + "x" + to_text(sz.height) +
                                      ", expected " + to_text(m.g.level_size[k].width) + "x" +
                                      to_text(m.g.level_size[k].height));
        levels[k] = {scores.level_data(k), scores.level_pitch(k), sz.width, sz.height, 0.0f};
    }
    return params(s, levels, masks);
}

void DeviceGridSelect::run(const DeviceScoreMaps& scores, StreamHandle stream, const DeviceDetectionMasks& masks) {
    kernels::launch_grid_nms(GridSelectAccess::params(*this, scores, masks), stream);
}

int DeviceGridSelect::capacity() const { return impl("capacity").g.capacity; }
const Keypoint* DeviceGridSelect::device_keypoints() const { return result_keypoints(impl("device_keypoints").result.get()); }
const int* DeviceGridSelect::device_count() const { return result_count(impl("device_count").result.get()); }
const void* DeviceGridSelect::device_result() const { return impl("device_result").result.get(); }
std::size_t DeviceGridSelect::result_bytes() const { return impl("result_bytes").result_size; }

}  // namespace kestrel::detail
