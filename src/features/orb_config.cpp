// Argument checks of the ORB stage, shared by the builds with and without CUDA.
#include "kestrel/detail/validate.hpp"
#include "kestrel/pyramid.hpp"
#include "src/features/orb_internal.hpp"

namespace kestrel::detail {

void check_orb_args(const char* where, int width, int height, const PyramidConfig& cfg, int capacity) {
    validate(cfg, where);
    check_range(where, "width", width, 1, kMaxImageSide);
    check_range(where, "height", height, 1, kMaxImageSide);
    (void)pyramid_sizes(width, height, cfg);  // names 'levels' when the image is too small
    check_range(where, "capacity", capacity, 1, 1 << 20);
}

}  // namespace kestrel::detail
