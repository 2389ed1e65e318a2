#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNM
#include <stb_image.h>

#include <stdexcept>

#include "image_io.hpp"

namespace kestrel::test {

HostImage load_grey(const std::string& path) {
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1);
    if (!px) throw std::runtime_error("cannot read image '" + path + "': " + stbi_failure_reason());
    HostImage img(w, h);
    std::copy(px, px + static_cast<std::size_t>(w) * h, img.data());
    stbi_image_free(px);
    return img;
}

}  // namespace kestrel::test
