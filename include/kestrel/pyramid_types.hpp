// Plain data of the pyramid: the level limits, the configuration and a size. No class; the rules
// headers (detail/) and the kernels include this header, never pyramid.hpp.
#pragma once

namespace kestrel {

constexpr int kMaxLevels = 8;    ///< most pyramid levels supported
constexpr int kMinLevelSide = 7; ///< every level must be at least 7x7 (one FAST circle)

struct PyramidConfig {
    int levels = 1;      ///< number of levels, 1..kMaxLevels (level 0 is the input)
    float scale = 2.0f;  ///< factor between levels, in (1, 2]; 2 = 2x2 average, else bilinear
};

struct Size2 {
    int width = 0, height = 0;
};

}  // namespace kestrel
