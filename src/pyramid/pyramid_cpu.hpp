// Internal: the CPU pyramid into reused images, its rows spread over a thread pool (src/core/thread_pool.hpp).
// build_pyramid_cpu() is this with one thread and fresh images.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/detail/pyramid_rules.hpp"
#include "kestrel/pyramid.hpp"
#include "src/core/thread_pool.hpp"

namespace kestrel::detail {

/// Per-object scratch of the CPU pyramid (the source taps of every output column and row, and one row of
/// vertical blends per task).
struct PyramidScratch {
    std::vector<Tap> tx, ty;
    std::vector<std::int32_t> i0, w1;     // tx split into its first column and weight
    std::vector<std::uint32_t> columns;
};

/// The pyramid of `image` into `out` (levels resized only when the geometry changes: no allocation per
/// frame at a fixed size); level 0 is a copy of the image. pool may be null (one thread).
void build_pyramid_into(HostView image, const PyramidConfig& cfg, std::vector<HostImage>& out, PyramidScratch& scratch,
                        ThreadPool* pool);

}  // namespace kestrel::detail
