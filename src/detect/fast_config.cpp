// FAST configuration: validation, names, the lookup table.
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"
#include "detector_geometry.hpp"

namespace kestrel {

const char* to_string(ScoreType t) {
    switch (t) {
        case ScoreType::SadCircle: return "sad_circle";
        case ScoreType::SadArc: return "sad_arc";
        case ScoreType::MaxThreshold: return "max_threshold";
        case ScoreType::Harris: return "harris";
    }
    return "unknown";
}

void validate(const FastConfig& cfg, const char* where) {
    detail::check_range(where, "fast.threshold", cfg.threshold, 0, 254);
    detail::check_range(where, "fast.arc_min", cfg.arc_min, 1, 16);
    detail::check_range(where, "fast.arc_max", cfg.arc_max, cfg.arc_min, 16);
    const int s = static_cast<int>(cfg.score);
    detail::check_range(where, "fast.score", s, 0, 3);
}

int score_border(ScoreType t) { return detail::score_border_px(t == ScoreType::Harris); }

std::vector<std::uint32_t> corner_lut(int arc_min, int arc_max) {
    detail::check_range("corner_lut", "arc_min", arc_min, 1, 16);
    detail::check_range("corner_lut", "arc_max", arc_max, arc_min, 16);
    std::vector<std::uint32_t> lut(detail::kLutWords);
    detail::build_corner_lut(arc_min, arc_max, lut.data());
    return lut;
}

namespace detail {

void check_score_maps_args(const char* where, const std::vector<Size2>& sizes, const FastConfig& cfg) {
    validate(cfg, where);
    check_range(where, "level_sizes.size()", static_cast<int>(sizes.size()), 1, kMaxLevels);
    for (const Size2& s : sizes) {
        check_range(where, "level_sizes[].width", s.width, 1, kMaxImageSide);
        check_range(where, "level_sizes[].height", s.height, 1, kMaxImageSide);
    }
}

}  // namespace detail
}  // namespace kestrel
