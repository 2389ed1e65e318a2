#include "test_data.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "image_io.hpp"

namespace kestrel::test {

std::string data_dir() {
    if (const char* env = std::getenv("KESTREL_TEST_DATA"); env && *env) return env;
    return KESTREL_TEST_DATA_DIR;
}

HostImage real_image(const std::string& name) {
    const std::string path = data_dir() + "/" + name;
    if (!std::filesystem::exists(path))
        throw std::runtime_error("test data missing: " + path +
                                 " (build the 'kestrel_testdata' target; it needs Debian's opencv-doc)");
    return load_grey(path);
}

std::vector<std::string> real_image_names() {
    return {"graf1.png", "aloeL.png", "box.png", "chessboard.png", "vtest_000.png", "vtest_050.png"};
}

std::vector<std::string> sequence_frame_names() {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(data_dir())) {
        const std::string n = e.path().filename().string();
        if (n.rfind("vtest_", 0) == 0 && n.size() > 4 && n.substr(n.size() - 4) == ".png") names.push_back(n);
    }
    std::sort(names.begin(), names.end());
    return names;
}

HostImage random_image(int width, int height, std::uint32_t seed) {
    HostImage img(width, height);
    std::uint32_t s = seed * 2654435761u + 1u;
    auto next = [&s] {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    };
    // Blocks of random grey (corners at block corners) plus per-pixel noise.
    const int b = 5;
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            std::uint32_t h = static_cast<std::uint32_t>(x / b) * 73856093u ^ static_cast<std::uint32_t>(y / b) * 19349663u ^ seed;
            h = (h ^ (h >> 13)) * 0x5bd1e995u;
            const int base = static_cast<int>((h >> 8) & 0xFF);
            const int noise = static_cast<int>(next() % 9) - 4;
            img.at(x, y) = static_cast<std::uint8_t>(std::clamp(base + noise, 0, 255));
        }
    return img;
}

HostImage crop(const HostImage& img, int x0, int y0, int width, int height) {
    HostImage out(width, height);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            out.at(x, y) = img.at(std::min(x0 + x, img.width() - 1), std::min(y0 + y, img.height() - 1));
    return out;
}

bool under_compute_sanitizer() {
    static const bool under = [] {
        std::ifstream maps("/proc/self/maps");
        std::string line;
        while (std::getline(maps, line))
            if (line.find("compute-sanitizer") != std::string::npos || line.find("libsanitizer-") != std::string::npos ||
                line.find("TreeLauncher") != std::string::npos)
                return true;
        return false;
    }();
    return under;
}

bool gpu_present_or_required() {
    if (cuda_available()) return true;
    if (const char* env = std::getenv("KESTREL_REQUIRE_GPU"); env && std::string(env) == "1") {
        ADD_FAILURE() << "KESTREL_REQUIRE_GPU=1 but no CUDA device is usable";
        return false;
    }
    return false;
}

}  // namespace kestrel::test
