// Test support: image loading (stb_image; PNG, JPEG, PGM) without OpenCV.
#pragma once
#include <string>

#include "kestrel/image.hpp"

namespace kestrel::test {

/// Loads any PNG/JPEG/PGM file as 8-bit grey; throws std::runtime_error when unreadable.
HostImage load_grey(const std::string& path);

}  // namespace kestrel::test
