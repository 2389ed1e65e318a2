// Pyramid: GPU == CPU reference bit for bit on real images and odd sizes; the reference against
// hand-computed values; every validation.
#include <gtest/gtest.h>

#include "kestrel/pyramid.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

void expect_same(const HostImage& a, const HostImage& b, const std::string& what) {
    ASSERT_EQ(a.width(), b.width()) << what;
    ASSERT_EQ(a.height(), b.height()) << what;
    long diffs = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            if (a.at(x, y) != b.at(x, y) && ++diffs <= 5)
                ADD_FAILURE() << what << " differs at (" << x << "," << y << "): " << int(a.at(x, y)) << " vs "
                              << int(b.at(x, y));
    EXPECT_EQ(diffs, 0) << what;
}

void gpu_matches_cpu(const HostImage& img, const PyramidConfig& cfg, const std::string& what) {
    const auto ref = build_pyramid_cpu(img.view(), cfg);
    DevicePyramid pyr(img.width(), img.height(), cfg);
    const DeviceImage src = upload(img.view());
    pyr.build(src.view(), nullptr);
    synchronize(nullptr);
    ASSERT_EQ(pyr.levels(), static_cast<int>(ref.size()));
    for (int k = 0; k < pyr.levels(); ++k)
        expect_same(download(pyr.level(k)), ref[static_cast<std::size_t>(k)], what + " level " + std::to_string(k));
}

TEST(PyramidCpu, HalvingIsRoundedTwoByTwoAverage) {
    HostImage img(8, 8);
    for (int y = 0; y < 8; ++y)
        for (int x = 0; x < 8; ++x) img.at(x, y) = static_cast<std::uint8_t>((x * 37 + y * 91) % 256);
    img.at(0, 0) = 1; img.at(1, 0) = 2; img.at(0, 1) = 2; img.at(1, 1) = 1;  // sum 6 -> (6 + 2) >> 2 = 2
    PyramidConfig cfg{2, 2.0f};
    const auto sizes = pyramid_sizes(15, 17, {2, 2.0f});
    EXPECT_EQ(sizes[1].width, 7);
    EXPECT_EQ(sizes[1].height, 8);
    HostImage big(14, 14);
    for (int y = 0; y < 14; ++y)
        for (int x = 0; x < 14; ++x) big.at(x, y) = img.at(x % 8, y % 8);
    const auto p = build_pyramid_cpu(big.view(), cfg);
    EXPECT_EQ(p[1].at(0, 0), 2);
    for (int y = 0; y < 7; ++y)
        for (int x = 0; x < 7; ++x) {
            const int s = big.at(2 * x, 2 * y) + big.at(2 * x + 1, 2 * y) + big.at(2 * x, 2 * y + 1) + big.at(2 * x + 1, 2 * y + 1);
            EXPECT_EQ(p[1].at(x, y), (s + 2) >> 2) << x << "," << y;
        }
}

TEST(PyramidCpu, BilinearFactorPreservesConstantsAndRamps) {
    HostImage flat(40, 30, 77);
    for (const auto& lvl : build_pyramid_cpu(flat.view(), {3, 1.2f}))
        for (int y = 0; y < lvl.height(); ++y)
            for (int x = 0; x < lvl.width(); ++x) ASSERT_EQ(lvl.at(x, y), 77);
    // A horizontal ramp I = 2x sampled at (x + 0.5) * s - 0.5 gives 2 * that, within rounding.
    HostImage ramp(100, 20);
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 100; ++x) ramp.at(x, y) = static_cast<std::uint8_t>(2 * x);
    const auto p = build_pyramid_cpu(ramp.view(), {2, 1.25f});
    EXPECT_EQ(p[1].width(), 80);
    for (int x = 1; x < 79; ++x) EXPECT_NEAR(p[1].at(x, 5), 2.0 * ((x + 0.5) * 1.25 - 0.5), 0.51) << x;
}

TEST(PyramidCpu, LevelScale) {
    EXPECT_EQ(level_scale({4, 2.0f}, 3), 8.0f);
    EXPECT_NEAR(level_scale({4, 1.2f}, 2), 1.44f, 1e-4f);
}

TEST(PyramidValidation, RejectsBadConfigAndSizes) {
    HostImage img(64, 64, 5);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {0, 2.0f}), InvalidArgument);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {kMaxLevels + 1, 2.0f}), InvalidArgument);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {2, 1.0f}), InvalidArgument);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {2, 2.5f}), InvalidArgument);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {2, std::numeric_limits<float>::quiet_NaN()}), InvalidArgument);
    EXPECT_THROW(build_pyramid_cpu(img.view(), {2, std::numeric_limits<float>::infinity()}), InvalidArgument);
    // 64 -> 32 -> 16 -> 8 -> 4: four levels fit, five do not; the message names 'levels' and the bound.
    EXPECT_NO_THROW(build_pyramid_cpu(img.view(), {4, 2.0f}));
    try {
        build_pyramid_cpu(img.view(), {5, 2.0f});
        FAIL() << "expected InvalidArgument";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "levels");
        EXPECT_NE(std::string(e.what()).find("at most 4"), std::string::npos) << e.what();
    }
    HostImage one(1, 1, 0);
    EXPECT_THROW(build_pyramid_cpu(one.view(), {1, 2.0f}), InvalidArgument);
    HostView null_view{nullptr, 10, 10, 10};
    EXPECT_THROW(build_pyramid_cpu(null_view, {1, 2.0f}), InvalidArgument);
    HostView bad_pitch{img.data(), 64, 64, 63};
    EXPECT_THROW(build_pyramid_cpu(bad_pitch, {1, 2.0f}), InvalidArgument);
    HostView neg{img.data(), -3, 64, 64};
    EXPECT_THROW(build_pyramid_cpu(neg, {1, 2.0f}), InvalidArgument);
    EXPECT_THROW(pyramid_sizes(7, 6, {1, 2.0f}), InvalidArgument);
    EXPECT_NO_THROW(pyramid_sizes(7, 7, {1, 2.0f}));
    EXPECT_THROW(level_scale({2, 2.0f}, 2), InvalidArgument);
}

TEST(PyramidValidation, EmptyAndMovedFromObjectsThrowStateError) {
    DevicePyramid empty;
    EXPECT_THROW(empty.levels(), StateError);
    EXPECT_THROW(empty.build(nullptr), StateError);
}

TEST(PyramidGpu, RejectsWrongInputSize) {
    KESTREL_REQUIRE_GPU();
    DevicePyramid pyr(64, 48, {2, 2.0f});
    DeviceImage other(65, 48);
    EXPECT_THROW(pyr.build(other.view(), nullptr), InvalidArgument);
    EXPECT_THROW(DevicePyramid(6, 48, {1, 2.0f}), InvalidArgument);
    DevicePyramid moved = std::move(pyr);
    EXPECT_THROW(pyr.build(nullptr), StateError);  // NOLINT(bugprone-use-after-move): tested on purpose
    const HostImage frame = test::random_image(64, 48, 3);
    copy_async(frame.view(), moved.level0(), nullptr);  // level 0 defined before building (initcheck)
    EXPECT_NO_THROW(moved.build(nullptr));
    synchronize(nullptr);
}

TEST(PyramidGpu, MatchesCpuOnRealImages) {
    KESTREL_REQUIRE_GPU();
    for (const auto& name : test::real_image_names()) {
        const HostImage img = test::real_image(name);
        for (float s : {2.0f, 1.2f, 1.5f})
            for (int levels : {1, 2, 4})
                gpu_matches_cpu(img, {levels, s}, name + " s=" + std::to_string(s) + " L=" + std::to_string(levels));
    }
}

TEST(PyramidGpu, MatchesCpuOnOddSizes) {
    KESTREL_REQUIRE_GPU();
    const HostImage real = test::real_image("graf1.png");
    struct Case { int w, h, levels; };
    for (const Case c : {Case{7, 7, 1}, Case{33, 17, 2}, Case{753, 481, 5}, Case{4096, 2160, 8}, Case{129, 257, 4}}) {
        for (float s : {2.0f, 1.2f}) {
            PyramidConfig cfg{c.levels, s};
            try {
                (void)pyramid_sizes(c.w, c.h, cfg);
            } catch (const InvalidArgument&) {
                cfg.levels = 1;
                while (cfg.levels < kMaxLevels) {
                    PyramidConfig more{cfg.levels + 1, s};
                    try { (void)pyramid_sizes(c.w, c.h, more); } catch (const InvalidArgument&) { break; }
                    cfg = more;
                }
            }
            const HostImage img = (c.w <= real.width() && c.h <= real.height()) ? test::crop(real, 3, 1, c.w, c.h)
                                                                                 : test::random_image(c.w, c.h, 7);
            gpu_matches_cpu(img, cfg, std::to_string(c.w) + "x" + std::to_string(c.h) + " s=" + std::to_string(s));
        }
    }
    DevicePyramid tiny(7, 7, {1, 2.0f});
    EXPECT_THROW(DevicePyramid(1, 1, {1, 2.0f}), InvalidArgument);
}

}  // namespace
}  // namespace kestrel
