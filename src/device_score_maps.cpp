// Host side of the GPU score stage: owns the per-level float maps and the device lookup table.
#include <utility>

#include "../kernels/fast_score.cuh"
#include "cuda_check.hpp"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"

namespace kestrel {

struct DeviceScoreMaps::Impl {
    FastConfig cfg;
    std::vector<Size2> sizes;
    std::vector<float*> maps;
    std::vector<std::size_t> pitches;
    std::uint32_t* lut = nullptr;
    kernels::ScoreDesc desc{};

    ~Impl() {
        for (float* m : maps) (void)cudaFree(m);
        if (lut) (void)cudaFree(lut);
    }
};

DeviceScoreMaps::DeviceScoreMaps() = default;
DeviceScoreMaps::DeviceScoreMaps(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps& DeviceScoreMaps::operator=(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps::~DeviceScoreMaps() = default;

DeviceScoreMaps::DeviceScoreMaps(const std::vector<Size2>& sizes, const FastConfig& cfg) {
    const char* where = "DeviceScoreMaps";
    validate(cfg, where);
    detail::check_range(where, "level_sizes.size()", static_cast<int>(sizes.size()), 1, kMaxLevels);
    for (const Size2& s : sizes) {
        detail::check_range(where, "level_sizes[].width", s.width, 1, kMaxImageSide);
        detail::check_range(where, "level_sizes[].height", s.height, 1, kMaxImageSide);
    }
    auto m = std::make_unique<Impl>();
    m->cfg = cfg;
    m->sizes = sizes;
    const auto lut = corner_lut(cfg.arc_min, cfg.arc_max);
    KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->lut), lut.size() * sizeof(std::uint32_t)), "score maps allocation");
    KESTREL_CUDA(cudaMemcpy(m->lut, lut.data(), lut.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice),
                 "score maps LUT upload");
    m->desc.levels = static_cast<int>(sizes.size());
    m->desc.threshold = cfg.threshold;
    m->desc.arc_max_is_16 = cfg.arc_max == 16;
    m->desc.arc_min = cfg.arc_min;
    m->desc.lut = m->lut;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        void* p = nullptr;
        std::size_t pitch = 0;
        KESTREL_CUDA(cudaMallocPitch(&p, &pitch, sizeof(float) * static_cast<std::size_t>(sizes[k].width),
                                     static_cast<std::size_t>(sizes[k].height)),
                     "score maps allocation");
        m->maps.push_back(static_cast<float*>(p));
        m->pitches.push_back(pitch);
        m->desc.level[k].width = sizes[k].width;
        m->desc.level[k].height = sizes[k].height;
        m->desc.level[k].scores = static_cast<float*>(p);
        m->desc.level[k].score_pitch = pitch;
    }
    kernels::plan_score_blocks(m->desc);
    impl_ = std::move(m);
}

DeviceScoreMaps::Impl& DeviceScoreMaps::impl(const char* where) const {
    if (!impl_) throw StateError(std::string("kestrel: DeviceScoreMaps::") + where + ": object is empty or moved-from");
    return *impl_;
}

const FastConfig& DeviceScoreMaps::config() const { return impl("config").cfg; }
int DeviceScoreMaps::levels() const { return static_cast<int>(impl("levels").sizes.size()); }

const float* DeviceScoreMaps::level_data(int k) const {
    const Impl& m = impl("level_data");
    detail::check_range("DeviceScoreMaps::level_data", "k", k, 0, static_cast<int>(m.sizes.size()) - 1);
    return m.maps[static_cast<std::size_t>(k)];
}
std::size_t DeviceScoreMaps::level_pitch(int k) const {
    const Impl& m = impl("level_pitch");
    detail::check_range("DeviceScoreMaps::level_pitch", "k", k, 0, static_cast<int>(m.sizes.size()) - 1);
    return m.pitches[static_cast<std::size_t>(k)];
}
Size2 DeviceScoreMaps::level_size(int k) const {
    const Impl& m = impl("level_size");
    detail::check_range("DeviceScoreMaps::level_size", "k", k, 0, static_cast<int>(m.sizes.size()) - 1);
    return m.sizes[static_cast<std::size_t>(k)];
}
const std::uint32_t* DeviceScoreMaps::lut() const { return impl("lut").lut; }

void DeviceScoreMaps::compute(const DevicePyramid& pyramid, StreamHandle stream) {
    Impl& m = impl("compute");
    if (pyramid.levels() != static_cast<int>(m.sizes.size()))
        detail::fail("DeviceScoreMaps::compute", "pyramid",
                     "has " + detail::to_text(pyramid.levels()) + " levels, expected " + detail::to_text(m.sizes.size()));
    for (int k = 0; k < pyramid.levels(); ++k) {
        const DeviceView v = pyramid.level(k);
        if (v.width != m.sizes[k].width || v.height != m.sizes[k].height)
            detail::fail("DeviceScoreMaps::compute", "pyramid",
                         "level " + detail::to_text(k) + " size differs from the size the maps were made for");
        m.desc.level[k].image = v.data;
        m.desc.level[k].pitch = v.pitch;
        m.desc.level[k].aligned4 = (reinterpret_cast<std::uintptr_t>(v.data) % 4 == 0) && (v.pitch % 4 == 0);
    }
    kernels::launch_fast_score(m.desc, m.cfg.score, stream);
}

ScoreMap DeviceScoreMaps::download(int k) const {
    const Impl& m = impl("download");
    detail::check_range("DeviceScoreMaps::download", "k", k, 0, static_cast<int>(m.sizes.size()) - 1);
    ScoreMap out;
    out.width = m.sizes[k].width;
    out.height = m.sizes[k].height;
    out.scores.resize(static_cast<std::size_t>(out.width) * out.height);
    KESTREL_CUDA(cudaMemcpy2D(out.scores.data(), sizeof(float) * out.width, m.maps[k], m.pitches[k],
                              sizeof(float) * out.width, out.height, cudaMemcpyDeviceToHost),
                 "score map download");
    return out;
}

}  // namespace kestrel
