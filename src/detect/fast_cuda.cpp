// Host side of the GPU score stage: owns the per-level float maps and the device lookup table.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include "kernels/detect/fast_score.cuh"
#include "kernels/common/cuda_check.hpp"
#include "src/core/backend.hpp"
#include "detector_buffers_cuda.hpp"
#include "detector_geometry.hpp"
#include "score_levels_cuda.hpp"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"

namespace kestrel {

struct DeviceScoreMaps::Impl {
    FastConfig cfg;
    std::vector<Size2> sizes;
    std::vector<float*> maps;
    std::vector<std::size_t> pitches;
    detail::DeviceBytes lut;
    kernels::ScoreDesc desc{};

    ~Impl() {
        for (float* m : maps) (void)cudaFree(m);
    }
};

DeviceScoreMaps::DeviceScoreMaps() = default;
DeviceScoreMaps::DeviceScoreMaps(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps& DeviceScoreMaps::operator=(DeviceScoreMaps&&) noexcept = default;
DeviceScoreMaps::~DeviceScoreMaps() = default;

DeviceScoreMaps::DeviceScoreMaps(const std::vector<Size2>& sizes, const FastConfig& cfg) {
    detail::check_score_maps_args("DeviceScoreMaps", sizes, cfg);
    auto m = std::make_unique<Impl>();
    m->cfg = cfg;
    m->sizes = sizes;
    m->lut = detail::device_corner_lut(cfg.arc_min, cfg.arc_max, "score maps lookup table");
    m->desc.levels = static_cast<int>(sizes.size());
    m->desc.threshold = cfg.threshold;
    m->desc.arc_min = cfg.arc_min;
    m->desc.arc_max = cfg.arc_max;
    m->desc.lut = static_cast<const std::uint32_t*>(m->lut.get());
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
    m->desc.bit_sliced = detail::use_bit_sliced_scores(m->desc, cfg.score);
    kernels::plan_score_blocks(m->desc, cfg.score);
    impl_ = std::move(m);
}

DeviceScoreMaps::Impl& DeviceScoreMaps::impl(const char* where) const {
    if (!impl_) detail::empty_object("DeviceScoreMaps", where);
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
const std::uint32_t* DeviceScoreMaps::lut() const { return static_cast<const std::uint32_t*>(impl("lut").lut.get()); }

namespace {
void check_pyramid(const char* where, const std::vector<Size2>& sizes, const DevicePyramid& pyramid) {
    if (pyramid.levels() != static_cast<int>(sizes.size()))
        detail::fail(where, "pyramid",
                     "has " + detail::to_text(pyramid.levels()) + " levels, expected " + detail::to_text(sizes.size()));
    for (int k = 0; k < pyramid.levels(); ++k) {
        const DeviceView v = pyramid.level(k);
        if (v.width != sizes[k].width || v.height != sizes[k].height)
            detail::fail(where, "pyramid", "level " + detail::to_text(k) + " size differs from the size the maps were made for");
    }
}

bool aligned(const void* p, std::size_t pitch, std::size_t a) {
    return reinterpret_cast<std::uintptr_t>(p) % a == 0 && pitch % a == 0;
}

void set_image(kernels::ScoreLevel& L, DeviceView v) {
    L.image = v.data;
    L.pitch = v.pitch;
    L.aligned4 = aligned(v.data, v.pitch, 4);
    L.parent = nullptr;
    L.parent_pitch = 0;
    L.parent_aligned8 = false;
    L.build_out = nullptr;
}
}  // namespace

namespace detail {
// Measured on an H200 (docs/detector.md): the bit-sliced kernel is faster with 28 and more SIMD-lane blocks per SM
// (752x480 on 16 SMs; every policy's frame on 8 and 16 SMs) and slower with 19.5 and fewer (1920x1080 and every
// 752x480 configuration on 132 SMs).
constexpr double kBitSlicedBlocksPerSm = 24.0;

bool use_bit_sliced_scores(const kernels::ScoreDesc& d, ScoreType type) {
    if (type == ScoreType::Harris) return false;
    const char* forced = std::getenv("KESTREL_SCORE_KERNEL");
    const std::string v = forced ? forced : "";
    if (v == "bit-sliced") return true;
    if (v == "simd") return false;
    if (!v.empty())
        throw InvalidArgument("KESTREL_SCORE_KERNEL", "kestrel: environment variable KESTREL_SCORE_KERNEL = '" + v +
                                                          "' must be bit-sliced or simd (or unset)");
    return kernels::swar_score_blocks_per_sm(d) > kBitSlicedBlocksPerSm;
}

void set_score_levels(kernels::ScoreDesc& d, DeviceView level0, DevicePyramid& pyramid, bool derive_level1,
                      StreamHandle stream) {
    if (!derive_level1) {
        if (level0.data != pyramid.level(0).data) copy_async(level0, pyramid.level0(), stream);
        pyramid.build(stream);
        for (int k = 0; k < pyramid.levels(); ++k) set_image(d.level[k], pyramid.level(k));
        return;
    }
    set_image(d.level[0], level0);
    // Level 1 is written by the score kernel: the pyramid owns it (the const view is its own buffer).
    const DeviceView l1 = pyramid.level(1);
    kernels::ScoreLevel& L1 = d.level[1];
    set_image(L1, l1);
    L1.parent = level0.data;
    L1.parent_pitch = level0.pitch;
    L1.parent_aligned8 = aligned(level0.data, level0.pitch, 8);
    L1.build_out = const_cast<std::uint8_t*>(l1.data);
}
}  // namespace detail

void DeviceScoreMaps::compute(const DevicePyramid& pyramid, StreamHandle stream) {
    Impl& m = impl("compute");
    check_pyramid("DeviceScoreMaps::compute", m.sizes, pyramid);
    for (int k = 0; k < pyramid.levels(); ++k) set_image(m.desc.level[k], pyramid.level(k));
    kernels::launch_fast_score(m.desc, m.cfg.score, stream);
}

bool DeviceScoreMaps::fuses(const DevicePyramid& pyramid) const {
    const Impl& m = impl("fuses");
    return m.cfg.score != ScoreType::Harris && m.sizes.size() == 2 && pyramid.levels() == 2 &&
           pyramid.config().scale == 2.0f;
}

void DeviceScoreMaps::compute_fused(DeviceView level0, DevicePyramid& pyramid, StreamHandle stream) {
    const char* where = "DeviceScoreMaps::compute_fused";
    Impl& m = impl("compute_fused");
    check_pyramid(where, m.sizes, pyramid);
    detail::check(level0.data != nullptr, where, "level0.data", "must not be null");
    if (level0.width != m.sizes[0].width || level0.height != m.sizes[0].height)
        detail::fail(where, "level0", "is " + detail::to_text(level0.width) + "x" + detail::to_text(level0.height) +
                                          ", the maps were made for " + detail::to_text(m.sizes[0].width) + "x" +
                                          detail::to_text(m.sizes[0].height));
    detail::set_score_levels(m.desc, level0, pyramid, fuses(pyramid), stream);
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
