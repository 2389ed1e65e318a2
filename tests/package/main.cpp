// Package consumer: links kestrel::kestrel from an installed tree and checks a CPU pyramid
// against the documented 2x2 rule, out = (a + b + c + d + 2) >> 2, computed here independently.
// Prints "kestrel consumer: OK ..." and exits 0 on success; exits 1 on any mismatch.
#include <kestrel/device_image.hpp>
#include <kestrel/error.hpp>
#include <kestrel/pyramid.hpp>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int fail(const char* what) {
    std::fprintf(stderr, "kestrel consumer: FAILED: %s\n", what);
    return 1;
}

}  // namespace

int main() {
    const int w = 64, h = 48;
    kestrel::HostImage img(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img.at(x, y) = static_cast<std::uint8_t>((x * 37 + y * 101 + x * y) & 0xFF);

    kestrel::PyramidConfig cfg;
    cfg.levels = 3;
    cfg.scale = 2.0f;
    const std::vector<kestrel::HostImage> pyr = kestrel::build_pyramid_cpu(img.view(), cfg);
    if (pyr.size() != 3) return fail("expected 3 levels");

    long checked = 0;
    for (int k = 1; k < 3; ++k) {
        const kestrel::HostImage& src = pyr[k - 1];
        const kestrel::HostImage& dst = pyr[k];
        if (dst.width() != src.width() / 2 || dst.height() != src.height() / 2) return fail("level size");
        for (int y = 0; y < dst.height(); ++y)
            for (int x = 0; x < dst.width(); ++x) {
                const int sum = src.at(2 * x, 2 * y) + src.at(2 * x + 1, 2 * y) + src.at(2 * x, 2 * y + 1) +
                                src.at(2 * x + 1, 2 * y + 1);
                if (dst.at(x, y) != (sum + 2) >> 2) return fail("pixel differs from the 2x2 rule");
                ++checked;
            }
    }

    // Validation reaches the user as kestrel::InvalidArgument naming the parameter.
    bool threw = false;
    try {
        cfg.levels = 0;
        (void)kestrel::build_pyramid_cpu(img.view(), cfg);
    } catch (const kestrel::InvalidArgument& e) {
        threw = e.parameter().find("levels") != std::string::npos;
    }
    if (!threw) return fail("levels = 0 did not throw InvalidArgument naming 'levels'");

    std::printf("kestrel consumer: OK (%ld pyramid pixels checked, cuda_available=%d)\n", checked,
                kestrel::cuda_available() ? 1 : 0);
    return 0;
}
