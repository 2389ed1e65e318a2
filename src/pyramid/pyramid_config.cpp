// PyramidConfig validation and the level geometry (sizes, scale factors) that both backends use.
#include <cmath>

#include "kestrel/detail/pyramid_rules.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel {

void validate(const PyramidConfig& cfg, const char* where) {
    detail::check_range(where, "levels", cfg.levels, 1, kMaxLevels);
    detail::check(std::isfinite(cfg.scale) && cfg.scale > 1.0f && cfg.scale <= 2.0f, where, "scale",
                  "= " + detail::to_text(cfg.scale) + " must be in (1, 2]");
}

std::vector<Size2> pyramid_sizes(int width, int height, const PyramidConfig& cfg) {
    validate(cfg, "pyramid_sizes");
    detail::check_range("pyramid_sizes", "width", width, kMinLevelSide, kMaxImageSide);
    detail::check_range("pyramid_sizes", "height", height, kMinLevelSide, kMaxImageSide);
    const std::int32_t sq = detail::scale_q16(cfg.scale);
    std::vector<Size2> sizes{{width, height}};
    for (int k = 1; k < cfg.levels; ++k) {
        const Size2 prev = sizes.back();
        const Size2 next{detail::next_level_size(prev.width, sq), detail::next_level_size(prev.height, sq)};
        if (next.width < kMinLevelSide || next.height < kMinLevelSide)
            detail::fail("pyramid_sizes", "levels",
                         "= " + detail::to_text(cfg.levels) + " is more than a " + detail::to_text(width) + "x" +
                             detail::to_text(height) + " image allows at scale " + detail::to_text(cfg.scale) +
                             ": at most " + detail::to_text(k) + " (every level must be at least " +
                             detail::to_text(kMinLevelSide) + "x" + detail::to_text(kMinLevelSide) + ")");
        sizes.push_back(next);
    }
    return sizes;
}

float level_scale(const PyramidConfig& cfg, int level) {
    validate(cfg, "level_scale");
    detail::check_range("level_scale", "level", level, 0, cfg.levels - 1);
    const double s = static_cast<double>(detail::scale_q16(cfg.scale)) / 65536.0;
    return static_cast<float>(std::pow(s, level));
}

}  // namespace kestrel
