// Bit-sliced FAST (kernels/detect/fast_bits.cuh, the corner-list score kernel's segment test), run on the
// host: the bit-plane transpose, and the corner bits of 32 centres against the reference's segment test and
// lookup table (include/kestrel/detail/fast_rules.hpp) for every threshold class and arc bound.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/detect/fast_bits.cuh"
#include "kestrel/detail/fast_rules.hpp"

namespace kestrel {
namespace {

using kernels::bits::u32;

void planes_of(const std::uint8_t* px, u32 (&planes)[8]) {
    u32 w[8];
    for (int k = 0; k < 8; ++k)
        w[k] = px[4 * k] | (u32(px[4 * k + 1]) << 8) | (u32(px[4 * k + 2]) << 16) | (u32(px[4 * k + 3]) << 24);
    kernels::bits::to_planes(w, planes);
}

TEST(FastBits, PlanesHoldEveryBitOfEveryPixel) {
    std::mt19937 rng(7);
    for (int trial = 0; trial < 2000; ++trial) {
        std::uint8_t px[32];
        for (auto& v : px) v = static_cast<std::uint8_t>(rng());
        u32 planes[8];
        planes_of(px, planes);
        for (int j = 0; j < 32; ++j) {
            ASSERT_EQ(kernels::bits::pixel_of(planes, j), px[j]) << "pixel " << j;
            for (int b = 0; b < 8; ++b) ASSERT_EQ((planes[b] >> j) & 1u, (px[j] >> b) & 1u);
        }
    }
}

// Rows of 96 pixels (three segments), the centres are pixels 32..63 of row 3.
struct Patch {
    std::uint8_t px[7][96];
};

u32 reference_corners(const Patch& p, const std::vector<std::uint32_t>& lut, int t) {
    u32 bits = 0;
    for (int j = 0; j < 32; ++j) {
        const int x = 32 + j, c = p.px[3][x];
        int circle[16];
        for (int i = 0; i < 16; ++i) circle[i] = p.px[3 + detail::circle_dy(i)][x + detail::circle_dx(i)];
        if (detail::is_corner(lut.data(), circle, c, t)) bits |= 1u << j;
    }
    return bits;
}

struct PatchRows {
    u32 planes[7][3][8];
    void load(int r, u32 (&out)[3][8]) const {
        for (int s = 0; s < 3; ++s)
            for (int b = 0; b < 8; ++b) out[s][b] = planes[r][s][b];
    }
};

u32 bit_sliced_corners(const Patch& p, int t, int arc_min, int arc_max) {
    PatchRows rows;
    for (int r = 0; r < 7; ++r)
        for (int s = 0; s < 3; ++s) planes_of(&p.px[r][32 * s], rows.planes[r][s]);
    const u32 general = kernels::bits::segment_corners(rows, t, arc_min, arc_max);
    if (arc_min == 9 && arc_max == 16) EXPECT_EQ(kernels::bits::segment_corners<true>(rows, t, 9, 16), general);
    return general;
}

// Patches of several textures: uniform noise, few grey levels (long arcs, ties at c +- t), a bright or dark
// blob on a flat ground (corners of every arc length), values near 0 and 255 (saturated thresholds).
Patch make_patch(std::mt19937& rng, int kind) {
    Patch p{};
    std::uniform_int_distribution<int> any(0, 255);
    const int base = any(rng), other = any(rng);
    for (int r = 0; r < 7; ++r)
        for (int x = 0; x < 96; ++x) {
            int v = 0;
            switch (kind) {
                case 0: v = any(rng); break;
                case 1: v = (rng() % 3) * 100 + (rng() % 3); break;
                case 2: v = (rng() % 4 == 0) ? other : base; break;
                case 3: v = (rng() & 1) ? 255 - static_cast<int>(rng() % 8) : static_cast<int>(rng() % 8); break;
                default: v = base + static_cast<int>(rng() % 41) - 20; break;
            }
            p.px[r][x] = static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    return p;
}

TEST(FastBits, CornersMatchTheReferenceForEveryArcBoundAndThreshold) {
    std::mt19937 rng(11);
    long corners = 0, centres = 0;
    for (int arc_min = 1; arc_min <= 16; ++arc_min)
        for (int arc_max : {arc_min, (arc_min + 16) / 2, 16}) {
            std::vector<std::uint32_t> lut(detail::kLutWords);
            detail::build_corner_lut(arc_min, arc_max, lut.data());
            for (int trial = 0; trial < 150; ++trial) {
                const Patch p = make_patch(rng, trial % 5);
                for (int t : {0, 1, 5, 10, 40, 128, 254}) {
                    const u32 want = reference_corners(p, lut, t);
                    ASSERT_EQ(bit_sliced_corners(p, t, arc_min, arc_max), want)
                        << "arc " << arc_min << ".." << arc_max << " t " << t << " trial " << trial;
                    corners += __builtin_popcount(want);
                    centres += 32;
                }
            }
        }
    // The cases must hold corners and non-corners alike, else the comparison proves little.
    EXPECT_GT(corners, centres / 20);
    EXPECT_LT(corners, centres - centres / 20);
}

TEST(FastBits, CanFailOnAnOffByOneThreshold) {
    // The comparison above detects a wrong threshold: t + 1 instead of t changes corners on these patches.
    std::mt19937 rng(3);
    std::vector<std::uint32_t> lut(detail::kLutWords);
    detail::build_corner_lut(9, 16, lut.data());
    int differ = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const Patch p = make_patch(rng, 1);
        differ += bit_sliced_corners(p, 2, 9, 16) != reference_corners(p, lut, 1);
    }
    EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace kestrel
