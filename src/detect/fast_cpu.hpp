// Internal: the CPU FAST score stage by row ranges, for the CPU detector (src/detect/detector_cpu.cpp) and
// fast_score_map_cpu(). Semantics: include/kestrel/detail/fast_rules.hpp, nothing else.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/fast.hpp"

namespace kestrel::detail {

/// Per-worker scratch of one row (the compass pre-test's flags).
struct FastRowScratch {
    std::vector<std::uint8_t> flag;
};

/// Scores rows [y0, y1) of `image` into `scores` (image.width floats per row, row-major, the whole level),
/// writing ONLY the corners' scores: every other pixel of the rows must already be 0. Appends each corner
/// (y << 16 | x, raster order) to `corners` when it is not null. lut: corner_lut(cfg.arc_min, cfg.arc_max).
void fast_score_rows(HostView image, const FastConfig& cfg, const std::uint32_t* lut, float* scores, int y0, int y1,
                     FastRowScratch& scratch, std::vector<std::uint32_t>* corners);

}  // namespace kestrel::detail
