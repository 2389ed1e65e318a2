#include <cstring>

#include "kestrel/image.hpp"

namespace kestrel {

HostImage::HostImage(int width, int height, std::uint8_t fill) {
    detail::check_range("HostImage", "width", width, 1, kMaxImageSide);
    detail::check_range("HostImage", "height", height, 1, kMaxImageSide);
    width_ = width;
    height_ = height;
    pixels_.assign(static_cast<std::size_t>(width) * height, fill);
}

HostImage HostImage::copy_of(HostView v) {
    validate_view("HostImage::copy_of", "v", v);
    HostImage out(v.width, v.height);
    for (int y = 0; y < v.height; ++y) std::memcpy(out.data() + static_cast<std::size_t>(y) * v.width, v.row(y), v.width);
    return out;
}

}  // namespace kestrel
