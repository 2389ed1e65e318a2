// FAST score stage: the lookup table, the segment test with bounded rectification, the four scores
// on hand-built cases with known answers, and GPU == CPU bit for bit on real images and odd sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <string>
#include <vector>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

// Independent longest circular run: try every start, walk forward.
int brute_run(std::uint32_t m) {
    int best = 0;
    for (int s = 0; s < 16; ++s) {
        int n = 0;
        while (n < 16 && ((m >> ((s + n) % 16)) & 1u)) ++n;
        best = std::max(best, n);
    }
    return best;
}

TEST(FastLut, MatchesBruteForceForEveryMaskAndBounds) {
    for (int lo : {1, 9, 12, 16})
        for (int hi : {lo, 13, 16}) {
            if (hi < lo) continue;
            const auto lut = corner_lut(lo, hi);
            ASSERT_EQ(lut.size(), 2048u);
            for (std::uint32_t m = 0; m < 65536u; ++m) {
                const int r = brute_run(m);
                ASSERT_EQ(detail::lut_test(lut.data(), m), r >= lo && r <= hi) << "mask " << m << " bounds " << lo << "," << hi;
            }
        }
}

TEST(FastLut, KnownRuns) {
    EXPECT_EQ(detail::longest_circular_run(0xFFFFu), 16);
    EXPECT_EQ(detail::longest_circular_run(0u), 0);
    EXPECT_EQ(detail::longest_circular_run(0x8001u), 2);   // wraps from bit 15 to bit 0
    EXPECT_EQ(detail::longest_circular_run(0xF00Fu), 8);   // 4 + 4 across the wrap
    EXPECT_EQ(detail::longest_circular_run(0x01FFu), 9);
    EXPECT_EQ(detail::longest_circular_run(0x7FFFu), 15);
}

TEST(FastRules, CompassPreTestNeverRejectsAQualifyingMask) {
    // The kernels skip the full segment test where the compass test fails: it must hold for every mask
    // with a run of at least arc_min, and it must reject something (else it saves nothing).
    for (int lo = 1; lo <= 16; ++lo) {
        long rejected = 0;
        for (std::uint32_t m = 0; m < 65536u; ++m) {
            const bool may = detail::compass_may_be_arc(m, lo);
            if (brute_run(m) >= lo) ASSERT_TRUE(may) << "mask " << m << " arc_min " << lo;
            rejected += !may;
        }
        if (lo >= 4) EXPECT_GT(rejected, 0) << "arc_min " << lo;
        else EXPECT_EQ(rejected, 0) << "arc_min " << lo;
    }
    // Known cases: arc_min 9 needs two neighbouring compass points.
    EXPECT_TRUE(detail::compass_may_be_arc(0x0011u, 9));   // N and E
    EXPECT_TRUE(detail::compass_may_be_arc(0x1001u, 9));   // W and N (wraps)
    EXPECT_FALSE(detail::compass_may_be_arc(0x0101u, 9));  // N and S are not neighbours
    EXPECT_FALSE(detail::compass_may_be_arc(0xEEEEu, 5));  // every non-compass pixel, no compass one
    EXPECT_TRUE(detail::compass_may_be_arc(0x1111u, 16));
    EXPECT_FALSE(detail::compass_may_be_arc(0x0111u, 16));
}

TEST(FastRules, RunMaskMatchesRunPosition) {
    for (std::uint32_t m = 1; m < 65536u; ++m) {
        int start = 0, len = 0;
        detail::longest_run_position(m, start, len);
        std::uint32_t expect = 0;
        for (int j = 0; j < len; ++j) expect |= 1u << ((start + j) % 16);
        ASSERT_EQ(detail::longest_run_mask(m), expect) << "mask " << m;
    }
}

TEST(FastValidation, RejectsOutOfRangeParameters) {
    HostImage img(32, 32, 10);
    for (const FastConfig bad : {FastConfig{-1, 9, 16}, FastConfig{255, 9, 16}, FastConfig{10, 0, 16},
                                 FastConfig{10, 17, 17}, FastConfig{10, 12, 11}, FastConfig{10, 9, 17},
                                 FastConfig{10, 9, 16, static_cast<ScoreType>(7)}}) {
        EXPECT_THROW(fast_score_map_cpu(img.view(), bad), InvalidArgument);
    }
    try {
        fast_score_map_cpu(img.view(), FastConfig{10, 12, 11});
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), "fast.arc_max");
        EXPECT_NE(std::string(e.what()).find("[12, 16]"), std::string::npos) << e.what();
    }
    EXPECT_THROW(corner_lut(0, 16), InvalidArgument);
    EXPECT_THROW(fast_score_map_cpu(HostView{nullptr, 4, 4, 4}, FastConfig{}), InvalidArgument);
    EXPECT_THROW(fast_score_maps_cpu({}, FastConfig{}), InvalidArgument);
}

// A 15x15 image: background `bg`, the centre pixel `c`, and the 16 circle pixels given.
HostImage circle_image(int bg, int c, const int (&p)[16]) {
    HostImage img(15, 15, static_cast<std::uint8_t>(bg));
    img.at(7, 7) = static_cast<std::uint8_t>(c);
    for (int i = 0; i < 16; ++i) img.at(7 + detail::circle_dx(i), 7 + detail::circle_dy(i)) = static_cast<std::uint8_t>(p[i]);
    return img;
}

TEST(FastCpu, AllBrightCircleIsCornerOnlyWithArcMax16) {
    const int p[16] = {200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200};
    const HostImage img = circle_image(200, 50, p);
    EXPECT_GT(fast_score_map_cpu(img.view(), {10, 9, 16}).at(7, 7), 0.0f);
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 9, 13}).at(7, 7), 0.0f);
}

TEST(FastCpu, ScoresOfAHandBuiltCorner) {
    // Centre 100, t = 10. Pixels 0..9 bright (arc of 10), 10..15 similar or dark by little.
    const int p[16] = {150, 140, 130, 120, 115, 125, 135, 145, 155, 111, 100, 95, 92, 105, 100, 100};
    const HostImage img = circle_image(100, 100, p);
    int sad_b = 0;
    for (int v : p) sad_b += std::abs(v - 100);
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 9, 16, ScoreType::SadCircle}).at(7, 7), static_cast<float>(sad_b));
    int sad_a = 0;  // the bright arc 0..9: sum (|p - c| - t)
    for (int i = 0; i <= 9; ++i) sad_a += std::abs(p[i] - 100) - 10;
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 9, 16, ScoreType::SadArc}).at(7, 7), static_cast<float>(sad_a));
    // MT: the arc 0..9 stays >= 9 long while t' < min(|p_i - c|, i = 0..9) = 11 -> t' = 10; and arc 0..8 (9 long) is
    // not enough alone since 9 = arc_min: with t' = 14 pixels 0..8 minus {4 (15)}... compute: bright set at t' is
    // {i : p_i > 100 + t'}; longest run >= 9 needs pixels 0..8 all > 100 + t' -> t' < 115 - 100 = 15 -> t' = 14.
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 9, 16, ScoreType::MaxThreshold}).at(7, 7), 14.0f);
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 11, 16, ScoreType::MaxThreshold}).at(7, 7), 0.0f);  // arc 10 < 11
    EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 10, 16, ScoreType::MaxThreshold}).at(7, 7), 10.0f);  // needs 0..9
}

TEST(FastCpu, UniformImageHasNoCorners) {
    for (int v : {0, 128, 255}) {
        HostImage img(40, 31, static_cast<std::uint8_t>(v));
        for (ScoreType s : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris}) {
            const ScoreMap m = fast_score_map_cpu(img.view(), {0, 9, 16, s});
            for (float f : m.scores) ASSERT_EQ(f, 0.0f);
        }
    }
}

TEST(FastCpu, SinglePixelSpikeAndSaturation) {
    for (auto [bg, spike] : {std::pair{0, 255}, std::pair{255, 0}, std::pair{20, 200}}) {
        HostImage img(21, 21, static_cast<std::uint8_t>(bg));
        img.at(10, 10) = static_cast<std::uint8_t>(spike);
        const ScoreMap m = fast_score_map_cpu(img.view(), {10, 9, 16, ScoreType::MaxThreshold});
        for (int y = 0; y < 21; ++y)
            for (int x = 0; x < 21; ++x) {
                if (x == 10 && y == 10)
                    EXPECT_EQ(m.at(x, y), static_cast<float>(std::abs(spike - bg) - 1)) << bg << "/" << spike;
                else
                    EXPECT_EQ(m.at(x, y), 0.0f) << x << "," << y;  // at most one circle pixel differs
            }
        EXPECT_EQ(fast_score_map_cpu(img.view(), {10, 9, 15}).at(10, 10), 0.0f);  // the arc is 16 long
    }
}

TEST(FastCpu, HarrisMatchesDoublePrecisionFormula) {
    const HostImage img = test::crop(test::real_image("graf1.png"), 200, 150, 120, 90);
    const ScoreMap m = fast_score_map_cpu(img.view(), {20, 9, 16, ScoreType::Harris});
    const ScoreMap corners = fast_score_map_cpu(img.view(), {20, 9, 16, ScoreType::SadCircle});
    int checked = 0;
    for (int y = 4; y < img.height() - 4; ++y)
        for (int x = 4; x < img.width() - 4; ++x) {
            if (corners.at(x, y) == 0.0f) {
                EXPECT_EQ(m.at(x, y), 0.0f);
                continue;
            }
            double a = 0, b = 0, c = 0;
            for (int v = y - 3; v <= y + 3; ++v)
                for (int u = x - 3; u <= x + 3; ++u) {
                    auto I = [&](int uu, int vv) { return static_cast<double>(img.at(uu, vv)); };
                    const double gx = I(u + 1, v - 1) + 2 * I(u + 1, v) + I(u + 1, v + 1) - I(u - 1, v - 1) - 2 * I(u - 1, v) - I(u - 1, v + 1);
                    const double gy = I(u - 1, v + 1) + 2 * I(u, v + 1) + I(u + 1, v + 1) - I(u - 1, v - 1) - 2 * I(u, v - 1) - I(u + 1, v - 1);
                    a += gx * gx;
                    b += gy * gy;
                    c += gx * gy;
                }
            const double r = (a * b - c * c) - 0.04 * (a + b) * (a + b);
            const double expect = r > 0 ? r * 25.0 / 1048576.0 : 0.0;
            EXPECT_NEAR(m.at(x, y), expect, std::abs(expect) * 1e-6 + 1e-9) << x << "," << y;
            ++checked;
        }
    EXPECT_GT(checked, 20);
}

// ---- GPU == CPU --------------------------------------------------------------------------------

void expect_maps_equal(const DeviceScoreMaps& maps, const std::vector<ScoreMap>& ref, const std::string& what) {
    for (int k = 0; k < maps.levels(); ++k) {
        const ScoreMap got = maps.download(k);
        ASSERT_EQ(got.width, ref[k].width);
        long diffs = 0, corners = 0;
        for (std::size_t i = 0; i < got.scores.size(); ++i) {
            corners += ref[k].scores[i] > 0;
            if (got.scores[i] != ref[k].scores[i] && ++diffs <= 3)
                ADD_FAILURE() << what << " level " << k << " pixel " << i % got.width << "," << i / got.width << ": gpu "
                              << got.scores[i] << " cpu " << ref[k].scores[i];
        }
        ASSERT_EQ(diffs, 0) << what << " level " << k << " (" << corners << " corners)";
    }
}

void gpu_matches_cpu_with(const HostImage& img, const PyramidConfig& pcfg, const FastConfig& fcfg, const std::string& what);

// compute() on a built pyramid, and compute_fused() from a separate device image (one launch for 2
// levels of factor 2 without Harris, build + compute otherwise): the same maps, and the fused pyramid
// levels equal the CPU pyramid. SAD-B, SAD-A and MT with both score kernels (KESTREL_SCORE_KERNEL: bit-sliced,
// simd; unset, the SMs present choose).
void gpu_matches_cpu(const HostImage& img, const PyramidConfig& pcfg, const FastConfig& fcfg, const std::string& what) {
    if (fcfg.score == ScoreType::Harris) return gpu_matches_cpu_with(img, pcfg, fcfg, what);
    for (const char* kernel : {"bit-sliced", "simd"}) {
        setenv("KESTREL_SCORE_KERNEL", kernel, 1);
        gpu_matches_cpu_with(img, pcfg, fcfg, what + " " + kernel);
        unsetenv("KESTREL_SCORE_KERNEL");
    }
}

void gpu_matches_cpu_with(const HostImage& img, const PyramidConfig& pcfg, const FastConfig& fcfg, const std::string& what) {
    const auto pyr_cpu = build_pyramid_cpu(img.view(), pcfg);
    const auto ref = fast_score_maps_cpu(pyr_cpu, fcfg);
    DevicePyramid pyr(img.width(), img.height(), pcfg);
    const DeviceImage src = upload(img.view());
    pyr.build(src.view(), nullptr);
    std::vector<Size2> sizes;
    for (int k = 0; k < pyr.levels(); ++k) sizes.push_back({pyr.level(k).width, pyr.level(k).height});
    DeviceScoreMaps maps(sizes, fcfg);
    maps.compute(pyr, nullptr);
    synchronize(nullptr);
    expect_maps_equal(maps, ref, what);

    DevicePyramid fused_pyr(img.width(), img.height(), pcfg);
    DeviceScoreMaps fused(sizes, fcfg);
    EXPECT_EQ(fused.fuses(fused_pyr), pcfg.levels == 2 && pcfg.scale == 2.0f && fcfg.score != ScoreType::Harris) << what;
    fused.compute_fused(src.view(), fused_pyr, nullptr);
    synchronize(nullptr);
    expect_maps_equal(fused, ref, what + " (compute_fused)");
    for (int k = 1; k < fused_pyr.levels(); ++k) {
        const HostImage lvl = download(fused_pyr.level(k));
        long diffs = 0;
        for (int y = 0; y < lvl.height(); ++y)
            for (int x = 0; x < lvl.width(); ++x) diffs += lvl.at(x, y) != pyr_cpu[k].at(x, y);
        EXPECT_EQ(diffs, 0) << what << " (compute_fused) pyramid level " << k;
    }
}

std::string describe(const FastConfig& f) {
    return std::string(to_string(f.score)) + " t=" + std::to_string(f.threshold) + " arc=[" + std::to_string(f.arc_min) +
           "," + std::to_string(f.arc_max) + "]";
}

TEST(FastGpu, MatchesCpuOnRealImagesAllScoresAndThresholds) {
    KESTREL_REQUIRE_GPU();
    int arc_pick = 0;
    auto names = test::real_image_names();
    if (test::under_compute_sanitizer()) names.resize(2);  // same kernels; the plain pass runs them all
    for (const auto& name : names) {
        const HostImage img = test::real_image(name);
        for (ScoreType s : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris})
            for (int t : {5, 10, 20, 40}) {
                const int lo = 9 + arc_pick % 4, hi = lo + (arc_pick / 4) % (17 - lo);
                ++arc_pick;
                const FastConfig f{t, lo, hi, s};
                gpu_matches_cpu(img, {2, 2.0f}, f, name + " " + describe(f));
            }
    }
}

TEST(FastGpu, MatchesCpuOnFullArcGrid) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::crop(test::real_image("aloeL.png"), 100, 80, 161, 119);
    for (ScoreType s : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris})
        for (int t : {5, 10, 20, 40})
            for (int lo = 9; lo <= 12; ++lo)
                for (int hi = lo; hi <= 16; ++hi) {
                    const FastConfig f{t, lo, hi, s};
                    gpu_matches_cpu(img, {1, 2.0f}, f, describe(f));
                }
}

// Every arc_min: the score kernel's compass pre-test needs 0 to 4 compass points (floor(arc_min / 4)).
TEST(FastGpu, MatchesCpuForEveryArcMin) {
    KESTREL_REQUIRE_GPU();
    const HostImage img = test::crop(test::real_image("graf1.png"), 31, 17, 263, 141);
    for (ScoreType s : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold})
        for (int t : {5, 20})
            for (int lo = 1; lo <= 16; ++lo)
                for (const int hi : {lo, 16}) {
                    const FastConfig f{t, lo, hi, s};
                    gpu_matches_cpu(img, {2, 2.0f}, f, describe(f));
                }
}

TEST(FastGpu, MatchesCpuOnOddSizesAndFactors) {
    KESTREL_REQUIRE_GPU();
    const HostImage real = test::real_image("vtest_000.png");
    struct Case { int w, h, levels; float s; };
    for (const Case c : {Case{7, 7, 1, 2.0f}, Case{9, 8, 1, 2.0f}, Case{33, 17, 1, 1.2f}, Case{753, 481, 4, 2.0f},
                         Case{753, 481, 4, 1.2f}, Case{101, 77, 2, 1.5f}, Case{1921, 1081, 3, 2.0f},
                         Case{753, 481, 2, 2.0f}, Case{37, 29, 2, 2.0f}, Case{261, 20, 2, 2.0f}, Case{1921, 1081, 2, 2.0f}}) {
        const HostImage img = c.w <= real.width() && c.h <= real.height() ? test::crop(real, 5, 3, c.w, c.h)
                                                                         : test::random_image(c.w, c.h, 11);
        for (ScoreType s : {ScoreType::SadCircle, ScoreType::MaxThreshold, ScoreType::Harris, ScoreType::SadArc})
            gpu_matches_cpu(img, {c.levels, c.s}, {10, 9, 16, s},
                            std::to_string(c.w) + "x" + std::to_string(c.h) + " " + to_string(s));
    }
    // Saturated content: every pixel 0 or 255.
    HostImage sat(64, 48);
    for (int y = 0; y < 48; ++y)
        for (int x = 0; x < 64; ++x) sat.at(x, y) = ((x * 7 + y * 13) % 5 < 2) ? 255 : 0;
    for (ScoreType s : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris})
        gpu_matches_cpu(sat, {2, 2.0f}, {40, 9, 16, s}, std::string("saturated ") + to_string(s));
}

// MaxThreshold's closed form on the device (16-bit lane minimums on sm_90, integers before) against the CPU's
// for every arc bound pair on generated content, tile by tile: uniform noise, saturated 0/255 (centres at
// either end), three grey levels (ties everywhere), smooth gradients with a little noise, both kernels.
TEST(FastGpu, MaxThresholdMatchesCpuOnGeneratedContentForEveryArcBoundPair) {
    KESTREL_REQUIRE_GPU();
    HostImage img(160, 96);
    std::uint32_t s = 2024;
    auto next = [&s] { s = s * 1664525u + 1013904223u; return s >> 8; };
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const int mode = (x / 16 + 3 * (y / 16)) % 4;
            int v = 0;
            if (mode == 0) v = static_cast<int>(next() % 256);
            else if (mode == 1) v = (next() & 1) ? 255 : 0;
            else if (mode == 2) v = 60 * static_cast<int>(next() % 3) + 40;
            else v = (x * 5 + y * 3) % 256 + static_cast<int>(next() % 9) - 4;
            img.at(x, y) = static_cast<std::uint8_t>(std::clamp(v, 0, 255));
        }
    std::vector<int> arc_mins;  // under compute-sanitizer: the generic kernels and the arc 9..16 ones
    for (int lo = 1; lo <= 16; ++lo)
        if (!test::under_compute_sanitizer() || lo == 3 || lo == 9) arc_mins.push_back(lo);
    for (const int lo : arc_mins)
        for (const int hi : {lo, (lo + 16) / 2, 16}) {
            const FastConfig f{lo <= 4 ? 60 : 5 + lo, lo, hi, ScoreType::MaxThreshold};
            gpu_matches_cpu(img, {2, 2.0f}, f, "generated " + describe(f));
        }
}

TEST(FastGpu, RejectsMismatchedPyramidAndMovedFrom) {
    KESTREL_REQUIRE_GPU();
    setenv("KESTREL_SCORE_KERNEL", "fastest", 1);  // not a kernel: refused, naming the variable
    try {
        DeviceScoreMaps bad({{64, 64}}, FastConfig{});
        ADD_FAILURE() << "KESTREL_SCORE_KERNEL=fastest accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("KESTREL_SCORE_KERNEL"), std::string::npos) << e.what();
    }
    unsetenv("KESTREL_SCORE_KERNEL");
    DevicePyramid pyr(64, 64, {2, 2.0f});
    DeviceScoreMaps maps({{64, 64}}, FastConfig{});
    EXPECT_THROW(maps.compute(pyr, nullptr), InvalidArgument);
    DeviceScoreMaps other = std::move(maps);
    EXPECT_THROW(maps.compute(pyr, nullptr), StateError);  // NOLINT(bugprone-use-after-move)
    const DeviceImage wrong(32, 32);
    EXPECT_THROW(other.compute_fused(wrong.view(), pyr, nullptr), InvalidArgument);  // pyramid of 2 levels, maps of 1
    DevicePyramid p64(64, 64, {1, 2.0f});
    EXPECT_THROW(other.compute_fused(wrong.view(), p64, nullptr), InvalidArgument);  // level0 32x32 vs 64x64
    EXPECT_THROW(DeviceScoreMaps({}, FastConfig{}), InvalidArgument);
    EXPECT_THROW(DeviceScoreMaps({{64, 64}}, FastConfig{10, 9, 8}), InvalidArgument);
}

}  // namespace
}  // namespace kestrel
