// The CPU detector (src/detect/detector_cpu.hpp): the CPU reference of the whole detector with reused memory
// and threads. Same results as the stages run one after the other on fresh memory (detect_cpu's definition).
#include "detector_cpu.hpp"

#include "orbslam_geometry.hpp"
#include "pyca_geometry.hpp"

namespace kestrel::detail {

CpuDetector::CpuDetector(const DetectorConfig& cfg, ThreadPool* pool)
    : cfg_(cfg), fast_(score_config(cfg)), pool_(pool), lut_(corner_lut(cfg.fast.arc_min, cfg.fast.arc_max)) {
    const int workers = pool ? pool->size() : 1;
    rows_.resize(static_cast<std::size_t>(workers));
    corners_.parts = pool && workers > 1 ? workers * 4 : 1;
}

void CpuDetector::prepare(const char* where, int width, int height) {
    if (geometry_.width == width && geometry_.height == height) return;
    geometry_ = grid_geometry(where, width, height, cfg_);
    maps_.assign(static_cast<std::size_t>(geometry_.levels), ScoreMap{});
    for (int k = 0; k < geometry_.levels; ++k) {
        ScoreMap& m = maps_[static_cast<std::size_t>(k)];
        m.width = geometry_.level_size[k].width;
        m.height = geometry_.level_size[k].height;
        m.scores.assign(static_cast<std::size_t>(m.width) * m.height, 0.0f);
    }
    corners_.lists.assign(static_cast<std::size_t>(geometry_.levels * corners_.parts), {});
}

void CpuDetector::detect(const char* where, HostView image, const DetectionMasks& masks, std::vector<Keypoint>& out) {
    validate_view(where, "image", image);
    prepare(where, image.width, image.height);
    check_cell_mask(where, geometry_, masks.cell_skip, masks.cell_grid);
    check_pixel_mask(where, geometry_, masks.pixel_mask);
    build_pyramid_into(image, cfg_.pyramid, pyramid_, pyramid_scratch_, pool_);

    // Score maps: the maps hold zeros except at the last frame's corners, which are cleared first (instead
    // of clearing whole maps); then each task scores one row range of one level and lists its corners.
    const int parts = corners_.parts, levels = geometry_.levels;
    auto score = [&](int task, int worker) {
        const int k = task / parts, p = task % parts;
        ScoreMap& m = maps_[static_cast<std::size_t>(k)];
        std::vector<std::uint32_t>& list = corners_.lists[static_cast<std::size_t>(task)];
        for (std::uint32_t c : list) m.scores[static_cast<std::size_t>(c >> 16) * m.width + (c & 0xFFFFu)] = 0.0f;
        list.clear();
        fast_score_rows(pyramid_[static_cast<std::size_t>(k)].view(), fast_, lut_.data(), m.scores.data(),
                        split_begin(m.height, parts, p), split_begin(m.height, parts, p + 1),
                        rows_[static_cast<std::size_t>(worker)], &list);
    };
    if (pool_)
        pool_->run(levels * parts, score);
    else
        for (int t = 0; t < levels * parts; ++t) score(t, 0);
    if (per_level_policy(cfg_))
        out = orbslam_select_reference(geometry_, maps_, pyramid_, cfg_, masks.cell_skip, masks.pixel_mask);
    else if (cfg_.selection == SelectionPolicy::PyCA)
        out = pyca_select_reference(geometry_, maps_, cfg_, masks.cell_skip, masks.pixel_mask);
    else
        grid_select_into(geometry_, maps_, cfg_, masks.cell_skip, masks.pixel_mask, &corners_, grid_, out);
}

}  // namespace kestrel::detail
