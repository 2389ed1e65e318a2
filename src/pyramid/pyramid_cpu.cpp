// CPU reference of the pyramid: the definition kernels/pyramid/pyramid.cu must match bit for bit.
#include <cmath>

#include "kestrel/detail/pyramid_rules.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel {

std::vector<HostImage> build_pyramid_cpu(HostView image, const PyramidConfig& cfg) {
    validate_view("build_pyramid_cpu", "image", image);
    const auto sizes = pyramid_sizes(image.width, image.height, cfg);
    const std::int32_t sq = detail::scale_q16(cfg.scale);
    std::vector<HostImage> out;
    out.push_back(HostImage::copy_of(image));
    for (std::size_t k = 1; k < sizes.size(); ++k) {
        const HostImage& src = out.back();
        HostImage dst(sizes[k].width, sizes[k].height);
        for (int y = 0; y < dst.height(); ++y) {
            const detail::Tap ty = detail::source_tap(y, sq, src.height());
            for (int x = 0; x < dst.width(); ++x) {
                const detail::Tap tx = detail::source_tap(x, sq, src.width());
                dst.at(x, y) = detail::blend(src.at(tx.i0, ty.i0), src.at(tx.i1, ty.i0), src.at(tx.i0, ty.i1),
                                             src.at(tx.i1, ty.i1), tx.w1, ty.w1);
            }
        }
        out.push_back(std::move(dst));
    }
    return out;
}

}  // namespace kestrel
