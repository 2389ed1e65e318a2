// Internal: what the builds with and without CUDA share about the backend: the check before any CUDA
// object is made, the answer of a build without CUDA, and the argument checks that every device entry
// point runs first in both builds (so that bad arguments get the same InvalidArgument either way).
#pragma once
#include <string>

#include "kestrel/error.hpp"
#include "kestrel/image.hpp"

namespace kestrel::detail {

/// Throws NoDeviceError naming `where` unless the CUDA backend can run in this process: when the
/// library was built without CUDA the message says so and how to rebuild; otherwise, when no device is
/// usable, it says that and points to Backend::Cpu.
void require_cuda(const char* where);

/// Throws NoDeviceError: `where` needs the CUDA backend, which this build of the library does not have
/// (every CUDA entry point of a build without CUDA ends here: src/<area>/<area>_nocuda.cpp).
[[noreturn]] void built_without_cuda(const char* where);

/// Throws StateError: `cls`::`where` was called on an empty or moved-from object.
[[noreturn]] inline void empty_object(const char* cls, const char* where) {
    throw StateError(std::string("kestrel: ") + cls + "::" + where + ": object is empty or moved-from");
}

/// The size checks of DeviceImage and PinnedImage.
inline void check_image_size(const char* where, int width, int height) {
    check_range(where, "width", width, 1, kMaxImageSide);
    check_range(where, "height", height, 1, kMaxImageSide);
}

/// The argument checks of a 2-D copy: both views usable, sizes equal.
template <typename Src, typename Dst>
void check_copy(const char* where, const Src& src, const Dst& dst) {
    validate_view(where, "src", src);
    validate_view(where, "dst", dst);
    if (src.width != dst.width || src.height != dst.height)
        fail(where, "dst",
             "size " + to_text(dst.width) + "x" + to_text(dst.height) + " must equal src size " + to_text(src.width) +
                 "x" + to_text(src.height));
}

}  // namespace kestrel::detail
