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

/// ScoreType::MaxThreshold of a corner with arc_max = 16 (the segment test holds at the threshold t), the rules'
/// closed form (detail::score_max_threshold) restated for the CPU: with d_i = p_i - c, the pixel is a bright corner at t' exactly when some window W of
/// arc_min consecutive circle pixels has min_W d_i > t', a dark one when some W has min_W (-d_i) > t'; so the
/// largest t' at which it is a corner is M - 1, M the largest such window minimum over both polarities
/// (M - 1 >= t, and M <= 255 keeps it within [t, 254]). Equal to the definition,
/// detail::score_max_threshold_search, for every corner (tests/detect/test_fast_cpu_restated.cpp).
/// p: the 16 circle values (0..255). max_threshold_full_arc runs the score stage's own function (on x86 the
/// windows in SSE2 registers); max_threshold_full_arc_portable is the plain C++ form every other CPU runs
/// (both are tested on x86).
int max_threshold_full_arc(const int* p, int c, int arc_min);
int max_threshold_full_arc_portable(const int* p, int c, int arc_min);

/// Scores rows [y0, y1) of `image` into `scores` (image.width floats per row, row-major, the whole level),
/// writing ONLY the corners' scores: every other pixel of the rows must already be 0. Appends each corner
/// (y << 16 | x, raster order) to `corners` when it is not null. lut: corner_lut(cfg.arc_min, cfg.arc_max).
void fast_score_rows(HostView image, const FastConfig& cfg, const std::uint32_t* lut, float* scores, int y0, int y1,
                     FastRowScratch& scratch, std::vector<std::uint32_t>* corners);

}  // namespace kestrel::detail
