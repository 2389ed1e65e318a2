// Internal: points a score launch's levels (kernels::ScoreDesc) at a pyramid's images, for DeviceScoreMaps and
// the detector's corner-list path alike (src/detect/fast_cuda.cpp defines it).
#pragma once
#include "kernels/detect/fast_score.cuh"
#include "kestrel/device_image.hpp"
#include "kestrel/pyramid.hpp"
#include "kestrel/stream.hpp"

namespace kestrel::detail {

/// With `derive_level1` (a 2-level factor-2 pyramid, DeviceScoreMaps::fuses): level 0 is `level0` and the score
/// kernel writes level 1 of `pyramid` while scoring. Otherwise `level0` is copied into the pyramid's level 0
/// (unless it is that level already), the pyramid is built on `stream`, and every level is read from it.
/// The FAST score kernel for SAD-B, SAD-A and MT (Harris has its own): true = bit-sliced (32 centres per thread),
/// false = SIMD lanes (4 centres per thread, compass pre-test). The environment variable KESTREL_SCORE_KERNEL =
/// bit-sliced | simd forces one (docs/detector.md); unset or empty: bit-sliced where the SIMD-lane kernel would run
/// more than 24 of its blocks per SM present (kernels::swar_score_blocks_per_sm: a small GPU such as 8 or 16 SMs),
/// SIMD lanes otherwise (a large GPU, where its many short blocks finish first: the bit-sliced kernel executes
/// fewer instructions, but its blocks are longer). Any other value: InvalidArgument naming the variable.
bool use_bit_sliced_scores(const kernels::ScoreDesc& d, ScoreType type);

void set_score_levels(kernels::ScoreDesc& d, DeviceView level0, DevicePyramid& pyramid, bool derive_level1,
                      StreamHandle stream);

}  // namespace kestrel::detail
