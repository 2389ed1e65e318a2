// Host and device: the level-0 cell index of a pixel without a division instruction, for the selection
// kernels' index arithmetic. The rule itself is detail::grid_rules.hpp's (X0 / cell_width); this is an
// exact way to compute it, checked against the division for every value it is used with
// (tests/detect/test_grid_tile.cpp).
#pragma once
#include <cstdint>

#include "kestrel/detail/hd.hpp"

namespace kestrel::kernels {

/// Exact v / d for v >= 0, d >= 1 and v d < 2^31 (level-0 pixels and cell sizes: v < 2^16, d < 2^15; block
/// indices and tiles per row): q = floor(2v m / 2^32) with m = div_magic(d) = floor((2^31 - 1) / d) + 1.
/// Writing m = 2^31 / d + e (0 <= e <= 1), 2v m / 2^32 = v / d + v e / 2^31 and v e / 2^31 < 1 / d
/// (v d < 2^31), so the fraction never reaches the next integer.
KESTREL_HD std::uint32_t div_magic(int d) { return 0x7FFFFFFFu / static_cast<std::uint32_t>(d) + 1u; }
KESTREL_HD int div_by_magic(int v, std::uint32_t m) {
#if defined(__CUDA_ARCH__)
    return static_cast<int>(__umulhi(2u * static_cast<std::uint32_t>(v), m));
#else
    return static_cast<int>((2ull * static_cast<std::uint64_t>(v) * m) >> 32);
#endif
}

}  // namespace kestrel::kernels
