// Plain data of FAST: the score types and the configuration. No class; the rules headers (detail/)
// and the kernels include this header, never fast.hpp.
#pragma once

namespace kestrel {

enum class ScoreType {
    SadCircle = 0,     ///< SAD-B: sum of |p_i - c| over the 16 circle pixels (vilib)
    SadArc = 1,        ///< SAD-A: sum of (|p_i - c| - t) over the corner's arc (Rosten's score on the arc)
    MaxThreshold = 2,  ///< MT: largest threshold at which the pixel is still a corner (OpenCV's response)
    Harris = 3,        ///< Harris, k = 0.04, Sobel 3x3 over a 7x7 window
};

const char* to_string(ScoreType t);

struct FastConfig {
    int threshold = 10;  ///< t in [0, 254]: bright p > c + t, dark p < c - t
    int arc_min = 9;     ///< shortest accepted arc, [1, 16] (9..12 usual)
    int arc_max = 16;    ///< longest accepted arc, [arc_min, 16]; 16 = classic FAST
    ScoreType score = ScoreType::SadCircle;
};

}  // namespace kestrel
