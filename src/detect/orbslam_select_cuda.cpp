// The per-level policies' GPU stage (src/detect/orbslam_select_cuda.hpp). CPU reference:
// src/detect/orbslam_select_cpu.cpp.
#include "orbslam_select_cuda.hpp"

#include "kernels/common/cuda_check.hpp"

namespace kestrel::detail {

OrbSlamStage::OrbSlamStage(const GridGeometry& g, const DetectorConfig& cfg) {
    const OrbSlamGeometry o = orbslam_geometry(g, cfg);
    kernels::OrbSlamParams& p = params_;
    p.levels = g.levels;
    p.total_cells = o.cell_offset[g.levels];
    p.threshold_initial = cfg.orbslam.threshold_initial;
    p.threshold_min = cfg.orbslam.threshold_min;
    p.harris = o.harris;
    std::size_t cand = 0, nodes = 0;
    for (int k = 0; k < g.levels; ++k) {
        cand += static_cast<std::size_t>(o.cand_capacity[k]);
        nodes += static_cast<std::size_t>(o.node_capacity[k]);
    }
    const char* stage = "orbslam allocation";
    const auto alloc = [&](std::size_t bytes) {
        buffers_.push_back(device_bytes(bytes, stage));
        return buffers_.back().get();
    };
    auto* cand_keys = static_cast<unsigned long long*>(alloc(8 * cand));
    auto* node_of = static_cast<int*>(alloc(4 * cand));
    auto* quad = static_cast<unsigned char*>(alloc(cand));
    auto* rect = static_cast<int4*>(alloc(sizeof(int4) * nodes));
    auto* count = static_cast<int*>(alloc(4 * nodes));
    auto* child = static_cast<int*>(alloc(16 * nodes));
    auto* order = static_cast<int*>(alloc(4 * nodes));
    auto* stamp = static_cast<int*>(alloc(4 * nodes));
    auto* best = static_cast<unsigned long long*>(alloc(8 * nodes));
    auto* cand_count = static_cast<int*>(alloc(4 * kMaxLevels));
    p.level_keys = static_cast<unsigned long long*>(alloc(8 * static_cast<std::size_t>(cfg.max_features)));
    p.level_count = static_cast<int*>(alloc(4 * kMaxLevels));
    KESTREL_CUDA(cudaMemset(cand_count, 0, 4 * kMaxLevels), stage);  // then reset by every frame's last kernel
    KESTREL_CUDA(cudaStreamSynchronize(nullptr), stage);  // before any (non-blocking) stream uses them
    std::size_t c = 0, n = 0;
    for (int k = 0; k < g.levels; ++k) {
        kernels::OrbSlamLevel& L = p.lv[k];
        L.width = g.level_size[k].width;
        L.height = g.level_size[k].height;
        L.scale = g.scale[k];
        L.cells = o.cells[k];
        L.cell_offset = o.cell_offset[k];
        L.budget = o.budget[k];
        L.out_offset = o.out_offset[k];
        L.roots = o.roots[k];
        L.node_capacity = o.node_capacity[k];
        L.cand = cand_keys + c;
        L.node_of = node_of + c;
        L.quad = quad + c;
        L.cand_count = cand_count + k;
        L.rect = rect + n;
        L.count = count + n;
        L.child = child + 4 * n;
        L.order = order + n;
        L.stamp = stamp + n;
        L.best = best + n;
        c += static_cast<std::size_t>(o.cand_capacity[k]);
        n += static_cast<std::size_t>(o.node_capacity[k]);
    }
}

void OrbSlamStage::run(const kernels::GridNmsParams& grid, const DeviceScoreMaps& scores, const DevicePyramid& pyramid,
                       DeviceView level0, cudaStream_t stream) const {
    kernels::OrbSlamParams p = params_;
    p.grid = grid;
    for (int k = 0; k < p.levels; ++k) {
        const DeviceView v = k == 0 ? level0 : pyramid.level(k);
        p.lv[k].scores = scores.level_data(k);
        p.lv[k].pitch = scores.level_pitch(k);
        p.lv[k].image = v.data;
        p.lv[k].image_pitch = v.pitch;
    }
    kernels::launch_orbslam_select(p, stream);
}

}  // namespace kestrel::detail
