// Host side of the GPU pyramid: owns the levels, fills the kernel descriptor once.
#include "kernels/pyramid/pyramid.cuh"
#include "kernels/common/cuda_check.hpp"
#include "src/core/backend.hpp"
#include "kestrel/detail/pyramid_rules.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel {

struct DevicePyramid::Impl {
    PyramidConfig cfg;
    std::vector<DeviceImage> levels;
    kernels::PyramidDesc desc{};
};

DevicePyramid::DevicePyramid(int width, int height, const PyramidConfig& cfg) : impl_(std::make_unique<Impl>()) {
    const auto sizes = pyramid_sizes(width, height, cfg);
    impl_->cfg = cfg;
    impl_->desc.levels = cfg.levels;
    impl_->desc.scale_q16 = detail::scale_q16(cfg.scale);
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        impl_->levels.emplace_back(sizes[k].width, sizes[k].height);
        DeviceMutView v = impl_->levels.back().mut_view();
        impl_->desc.level[k] = {v.data, v.width, v.height, v.pitch};
        // Rows are read in aligned 4-byte words by the LK kernel (kernels/track/lk_track.cu, load_words): a word
        // may cross a row's end into its padding, which is therefore zeroed once here (no kernel ever
        // writes it) so that those bytes are defined.
        KESTREL_CUDA(cudaMemset2D(v.data, v.pitch, 0, v.pitch, static_cast<std::size_t>(v.height)),
                     "DevicePyramid: clearing the levels");
    }
    // The clear is ordered before any later work on any stream, including non-blocking ones.
    KESTREL_CUDA(cudaStreamSynchronize(cudaStreamLegacy), "DevicePyramid: clearing the levels");
}

DevicePyramid::DevicePyramid() = default;
DevicePyramid::DevicePyramid(DevicePyramid&&) noexcept = default;
DevicePyramid& DevicePyramid::operator=(DevicePyramid&&) noexcept = default;
DevicePyramid::~DevicePyramid() = default;

DevicePyramid::Impl& DevicePyramid::impl(const char* where) const {
    if (!impl_) detail::empty_object("DevicePyramid", where);
    return *impl_;
}

int DevicePyramid::levels() const { return impl("levels").cfg.levels; }
const PyramidConfig& DevicePyramid::config() const { return impl("config").cfg; }

DeviceView DevicePyramid::level(int k) const {
    const Impl& m = impl("level");
    detail::check_range("DevicePyramid::level", "k", k, 0, m.cfg.levels - 1);
    return m.levels[static_cast<std::size_t>(k)].view();
}

DeviceMutView DevicePyramid::level0() { return impl("level0").levels[0].mut_view(); }

void DevicePyramid::build(StreamHandle stream) { kernels::launch_pyramid(impl("build").desc, stream); }

void DevicePyramid::build(DeviceView image, StreamHandle stream) {
    Impl& m = impl("build");
    validate_view("DevicePyramid::build", "image", image);
    const DeviceView l0 = m.levels[0].view();
    if (image.width != l0.width || image.height != l0.height)
        detail::fail("DevicePyramid::build", "image",
                     "size " + detail::to_text(image.width) + "x" + detail::to_text(image.height) +
                         " must equal level 0's " + detail::to_text(l0.width) + "x" + detail::to_text(l0.height));
    copy_async(image, m.levels[0].mut_view(), stream);
    kernels::launch_pyramid(m.desc, stream);
}

void DevicePyramid::build_pair(DevicePyramid& a, DevicePyramid& b, StreamHandle stream) {
    const char* where = "DevicePyramid::build_pair";
    Impl& ma = a.impl("build_pair");
    Impl& mb = b.impl("build_pair");
    if (&ma == &mb) detail::fail(where, "b", "must be another pyramid than a");
    const DeviceView la = ma.levels[0].view(), lb = mb.levels[0].view();
    if (la.width != lb.width || la.height != lb.height)
        detail::fail(where, "b", "level 0 is " + detail::to_text(lb.width) + "x" + detail::to_text(lb.height) +
                                     ", must equal a's " + detail::to_text(la.width) + "x" + detail::to_text(la.height));
    if (ma.cfg.levels != mb.cfg.levels || ma.desc.scale_q16 != mb.desc.scale_q16)
        detail::fail(where, "b", "must have a's levels and scale");
    kernels::launch_pyramid_pair(ma.desc, mb.desc, stream);
}

}  // namespace kestrel
