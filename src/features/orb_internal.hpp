// Internal: the argument checks that DeviceOrb runs in both builds (src/features/orb_config.cpp).
#pragma once
#include "kestrel/pyramid_types.hpp"

namespace kestrel::detail {

/// InvalidArgument naming the parameter: capacity in [1, 2^20], the pyramid config valid and its levels
/// fitting a width x height image.
void check_orb_args(const char* where, int width, int height, const PyramidConfig& cfg, int capacity);

}  // namespace kestrel::detail
