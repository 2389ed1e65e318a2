// Writes test images for the examples' ctest cases (no OpenCV needed):
//   make_image OUT.png WIDTH HEIGHT BITS CHANNELS [--from IMAGE DX DY]
// BITS 8 or 16; CHANNELS 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA). The content is a pattern,
// or with --from the grey IMAGE (read by load_grey) shifted by (DX, DY) pixels, borders clamped; in
// 16-bit files a sample is v * 256 plus a varying low byte (which v >> 8 drops). Colour channels
// are the grey value, nudged apart.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/image_io.hpp"
#include "png_raw.hpp"

int main(int argc, char** argv) {
    if (argc != 6 && !(argc == 10 && std::string(argv[6]) == "--from")) {
        std::fprintf(stderr, "usage: make_image OUT.png WIDTH HEIGHT BITS CHANNELS [--from IMAGE DX DY]\n");
        return 2;
    }
    const std::string out = argv[1];
    const int w = std::atoi(argv[2]), h = std::atoi(argv[3]), bits = std::atoi(argv[4]), ch = std::atoi(argv[5]);
    if (w < 1 || h < 1 || (bits != 8 && bits != 16) || ch < 1 || ch > 4) {
        std::fprintf(stderr, "make_image: bad size, bit depth or channel count\n");
        return 2;
    }
    kestrel::HostImage src;
    int dx = 0, dy = 0;
    try {
        if (argc == 10) {
            src = kestrel_examples::load_grey(argv[7]);
            dx = std::atoi(argv[8]);
            dy = std::atoi(argv[9]);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_image: %s\n", e.what());
        return 1;
    }
    static const int kColourType[5] = {0, 0, 4, 2, 6};
    std::vector<std::vector<std::uint8_t>> rows(h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int v = (x * 5 + y * 3) & 255;
            if (!src.empty())
                v = src.at(std::clamp(x + dx, 0, src.width() - 1), std::clamp(y + dy, 0, src.height() - 1));
            const int c[4] = {v, std::min(255, v + 9), std::max(0, v - 7), 255 - (x & 127)};
            const int order[4][4] = {{0}, {0, 3}, {0, 1, 2}, {0, 1, 2, 3}};
            for (int k = 0; k < ch; ++k) {
                const int s = c[order[ch - 1][k]];
                if (bits == 8) {
                    rows[y].push_back(static_cast<std::uint8_t>(s));
                } else {
                    rows[y].push_back(static_cast<std::uint8_t>(s));                  // high byte
                    rows[y].push_back(static_cast<std::uint8_t>((x * 37 + y * 11) & 255));  // low byte
                }
            }
        }
    kestrel_examples::png_raw::write_png_raw(out, w, h, bits, kColourType[ch], rows, {});
    return 0;
}
