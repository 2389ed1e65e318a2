// The ORB rules and CPU reference against known answers: the disc, the atan2 and cos/sin rules against
// the C library, the smoothing's impulse response and invariants, angles of generated patterns, exact
// invariance of descriptors to quarter turns, the level mapping of detector keypoints, bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/orb.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

namespace o = detail::orb;

// The image rotated a quarter turn counter-clockwise as seen on screen (y down): pixel (x, y) of the
// source lands on (y, W - 1 - x).
HostImage rotate_quarter(const HostImage& a) {
    HostImage r(a.height(), a.width());
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) r.at(y, a.width() - 1 - x) = a.at(x, y);
    return r;
}

TEST(OrbRules, DiscIsTheSymmetricCircleOfRadius15) {
    int area = 0;
    for (int v = 0; v <= o::kOrbHalfPatch; ++v) {
        const int u = o::orb_umax(v);
        // The disc is symmetric under swapping u and v: u' <= umax[v] <=> v <= umax[u'].
        for (int w = 0; w <= o::kOrbHalfPatch; ++w) EXPECT_EQ(w <= u, v <= o::orb_umax(w)) << v << " " << w;
        // and stays within one pixel of the true circle.
        EXPECT_LE(std::abs(u * u + v * v - 225), 2 * 15 + 1) << v;
        area += (v == 0 ? 1 : 2) * (2 * u + 1);
    }
    EXPECT_NEAR(area, 3.14159265 * 15.5 * 15.5, 30.0);
}

TEST(OrbRules, Atan2WithinAHundredthOfADegree) {
    double worst = 0.0;
    for (int iy = -300; iy <= 300; iy += 7)
        for (int ix = -300; ix <= 300; ix += 5) {
            if (ix == 0 && iy == 0) continue;
            const float a = o::orb_atan2_deg(static_cast<float>(iy), static_cast<float>(ix));
            ASSERT_GE(a, 0.0f);
            ASSERT_LT(a, 360.0f);
            double ref = std::atan2(static_cast<double>(iy), static_cast<double>(ix)) * 180.0 / 3.14159265358979323846;
            if (ref < 0) ref += 360.0;
            double d = std::fabs(ref - a);
            d = std::min(d, 360.0 - d);
            worst = std::max(worst, d);
        }
    EXPECT_LT(worst, 0.01);
    EXPECT_EQ(o::orb_atan2_deg(0.0f, 5.0f), 0.0f);
    EXPECT_NEAR(o::orb_atan2_deg(5.0f, 0.0f), 90.0f, 1e-4f);
    EXPECT_NEAR(o::orb_atan2_deg(0.0f, -5.0f), 180.0f, 1e-4f);
    EXPECT_NEAR(o::orb_atan2_deg(-5.0f, 0.0f), 270.0f, 1e-4f);
    EXPECT_EQ(o::orb_atan2_deg(0.0f, 0.0f), 0.0f);
}

TEST(OrbRules, CosSinWithinOneHundredMillionth) {
    double worst = 0.0;
    for (int i = 0; i < 36000; ++i) {
        const float deg = static_cast<float>(i) * 0.01f + 0.0037f * static_cast<float>(i % 3);
        float c = 0, s = 0;
        o::orb_cos_sin_deg(deg, c, s);
        const double r = static_cast<double>(deg) * 3.14159265358979323846 / 180.0;
        worst = std::max({worst, std::fabs(c - std::cos(r)), std::fabs(s - std::sin(r))});
    }
    // Just below each quadrant boundary (deg / 90 may round up to the next quadrant there).
    for (const float b : {90.0f, 180.0f, 270.0f, 360.0f})
        for (float deg = std::nextafter(b, 0.0f), k = 0; k < 4; ++k, deg = std::nextafter(deg, 0.0f)) {
            float c = 0, s = 0;
            o::orb_cos_sin_deg(deg, c, s);
            const double r = static_cast<double>(deg) * 3.14159265358979323846 / 180.0;
            worst = std::max({worst, std::fabs(c - std::cos(r)), std::fabs(s - std::sin(r))});
        }
    EXPECT_LT(worst, 2e-7);
    // Exact on the axes: a quarter turn steers the pattern exactly.
    for (const float deg : {0.0f, 90.0f, 180.0f, 270.0f}) {
        float c = 0, s = 0;
        o::orb_cos_sin_deg(deg, c, s);
        EXPECT_EQ(std::fabs(c) + std::fabs(s), 1.0f) << deg;
    }
    // Angles outside [0, 360) wrap.
    float c1, s1, c2, s2;
    o::orb_cos_sin_deg(-30.0f, c1, s1);
    o::orb_cos_sin_deg(330.0f, c2, s2);
    EXPECT_NEAR(c1, c2, 1e-6f);
    EXPECT_NEAR(s1, s2, 1e-6f);
}

TEST(OrbRules, PatternIsOrbsLearnedPatternWithinTheDisc) {
    // Spot values of the published table (first and last pairs), and every point within 13 px per axis.
    EXPECT_EQ(o::orb_pattern(0), 8);
    EXPECT_EQ(o::orb_pattern(1), -3);
    EXPECT_EQ(o::orb_pattern(2), 9);
    EXPECT_EQ(o::orb_pattern(3), 5);
    EXPECT_EQ(o::orb_pattern(1020), -1);
    EXPECT_EQ(o::orb_pattern(1021), -6);
    EXPECT_EQ(o::orb_pattern(1022), 0);
    EXPECT_EQ(o::orb_pattern(1023), -11);
    for (int i = 0; i < 1024; ++i) {
        EXPECT_GE(o::orb_pattern(i), -13);
        EXPECT_LE(o::orb_pattern(i), 12);
    }
    // Steered offsets never leave the reach the clamping assumes.
    for (int a = 0; a < 360; a += 3) {
        float c, s;
        o::orb_cos_sin_deg(static_cast<float>(a) + 0.5f, c, s);
        for (int j = 0; j < 512; ++j) {
            int dx, dy;
            o::orb_steer(j, c, s, dx, dy);
            EXPECT_LE(std::abs(dx), o::kOrbPatternReach);
            EXPECT_LE(std::abs(dy), o::kOrbPatternReach);
        }
    }
}

TEST(OrbSmooth, ImpulseResponseIsTheSeparableGaussian) {
    HostImage img(21, 17, 0);
    img.at(10, 8) = 255;
    const HostImage s = orb_smooth_cpu(img.view());
    double taps = 0.0;
    for (int k = 0; k < 7; ++k) taps += o::orb_blur_tap(k);
    EXPECT_NEAR(taps, 1.0, 1e-6);
    int mass = 0;
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) {
            const int dx = x - 10, dy = y - 8;
            double expect = 0.0;
            if (std::abs(dx) <= 3 && std::abs(dy) <= 3)
                expect = 255.0 * o::orb_blur_tap(dx + 3) * o::orb_blur_tap(dy + 3);
            EXPECT_NEAR(s.at(x, y), expect, 0.5 + 1e-4) << x << "," << y;
            // Symmetric in both axes.
            if (std::abs(dx) <= 3 && std::abs(dy) <= 3) {
                EXPECT_EQ(s.at(x, y), s.at(10 - dx, y));
                EXPECT_EQ(s.at(x, y), s.at(x, 8 - dy));
            }
            mass += s.at(x, y);
        }
    EXPECT_NEAR(mass, 255, 12);
}

TEST(OrbSmooth, ConstantStaysConstantAndBordersReflect) {
    for (const int side : {1, 2, 3, 7, 8, 13}) {
        HostImage c(side, side + 2, 77);
        const HostImage s = orb_smooth_cpu(c.view());
        for (int y = 0; y < s.height(); ++y)
            for (int x = 0; x < s.width(); ++x) ASSERT_EQ(s.at(x, y), 77);
    }
    // Reflect-101 mirrors about the edge pixel: an image symmetric about column 0's mirror has a
    // smoothed column 0 equal to that of the symmetric extension.
    EXPECT_EQ(o::reflect101(-1, 10), 1);
    EXPECT_EQ(o::reflect101(-3, 10), 3);
    EXPECT_EQ(o::reflect101(10, 10), 8);
    EXPECT_EQ(o::reflect101(12, 10), 6);
    EXPECT_EQ(o::reflect101(-5, 3), 1);
    // Quarter turns commute with the smoothing (the kernel and the border rule are symmetric).
    const HostImage img = test::random_image(37, 29, 5);
    EXPECT_EQ(orb_smooth_cpu(rotate_quarter(img).view()).view().data[0],
              rotate_quarter(orb_smooth_cpu(img.view())).view().data[0]);
    const HostImage a = orb_smooth_cpu(rotate_quarter(img).view()), b = rotate_quarter(orb_smooth_cpu(img.view()));
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) ASSERT_EQ(a.at(x, y), b.at(x, y));
}

TEST(OrbAngle, PointsAlongTheBrightnessGradient) {
    // I = 128 + 3 (x cos t + y sin t): the centroid lies along direction t.
    for (int t = 0; t < 360; t += 15) {
        const double r = t * 3.14159265358979323846 / 180.0;
        HostImage img(61, 61);
        for (int y = 0; y < 61; ++y)
            for (int x = 0; x < 61; ++x)
                img.at(x, y) = static_cast<std::uint8_t>(std::lround(128 + 3.0 * ((x - 30) * std::cos(r) + (y - 30) * std::sin(r))));
        const float a = orb_angle_cpu(img.view(), 30, 30);
        double d = std::fabs(a - t);
        d = std::min(d, 360.0 - d);
        EXPECT_LT(d, 1.0) << t << " got " << a;
    }
    HostImage flat(40, 40, 90);
    EXPECT_EQ(orb_angle_cpu(flat.view(), 20, 20), 0.0f);  // no centroid offset: the angle of (0, 0)
}

TEST(OrbDescriptor, QuarterTurnGivesTheSameDescriptorAndAngle) {
    const HostImage img = test::crop(test::real_image("graf1.png"), 100, 80, 161, 121);
    const HostImage rot = rotate_quarter(img);
    const HostImage s = orb_smooth_cpu(img.view()), sr = orb_smooth_cpu(rot.view());
    int n = 0;
    for (int y = 20; y < img.height() - 20; y += 9)
        for (int x = 20; x < img.width() - 20; x += 11) {
            const float a = orb_angle_cpu(img.view(), x, y);
            const int xr = y, yr = img.width() - 1 - x;
            const float ar = orb_angle_cpu(rot.view(), xr, yr);
            // The rotated image turns the centroid by -90 degrees on screen (y down): a - 90.
            double d = std::fabs(std::fmod(a - ar + 720.0, 360.0) - 90.0);
            EXPECT_LT(d, 0.02) << x << "," << y << ": " << a << " vs " << ar;
            // On the axes the steering is exact, and the turned pattern samples the turned image: the
            // descriptor at angle t equals the turned image's at t - 90.
            for (const int t : {0, 90, 180, 270})
                EXPECT_EQ(orb_descriptor_cpu(s.view(), x, y, static_cast<float>(t)),
                          orb_descriptor_cpu(sr.view(), xr, yr, static_cast<float>((t + 270) % 360)))
                    << x << "," << y << " t " << t;
            ++n;
        }
    EXPECT_GT(n, 50);
}

TEST(OrbCompute, DetectorKeypointsMapExactlyToTheirLevels) {
    const HostImage img = test::real_image("graf1.png");
    DetectorConfig cfg;
    cfg.pyramid = {8, 1.2f};
    cfg.fast.score = ScoreType::Harris;
    cfg.fast.threshold = 12;
    cfg.per_cell = 4;
    cfg.max_features = 1000;
    const std::vector<Keypoint> kps = detect_cpu(img.view(), cfg);
    ASSERT_GT(kps.size(), 500u);
    const std::vector<HostImage> pyr = build_pyramid_cpu(img.view(), cfg.pyramid);
    const OrbFeatures f = orb_compute_cpu(pyr, cfg.pyramid, kps);
    ASSERT_EQ(f.angles.size(), kps.size());
    std::vector<int> per_level(8, 0);
    for (std::size_t i = 0; i < kps.size(); ++i) {
        const float s = level_scale(cfg.pyramid, kps[i].level);
        const int x = o::orb_level_coord(kps[i].x, s), y = o::orb_level_coord(kps[i].y, s);
        EXPECT_NEAR(kps[i].x / s, x, 1e-3);
        EXPECT_NEAR(kps[i].y / s, y, 1e-3);
        const HostImage& lv = pyr[static_cast<std::size_t>(kps[i].level)];
        EXPECT_EQ(f.angles[i], orb_angle_cpu(lv.view(), x, y));
        ++per_level[static_cast<std::size_t>(kps[i].level)];
        if (i % 97 == 0)
            EXPECT_EQ(f.descriptors[i], orb_descriptor_cpu(orb_smooth_cpu(lv.view()).view(), x, y, f.angles[i]));
    }
    int used = 0;
    for (const int c : per_level) used += c > 0;
    EXPECT_GE(used, 5);  // keypoints come from many levels
}

TEST(OrbCompute, RejectsBadInput) {
    const HostImage img = test::random_image(64, 48, 3);
    const PyramidConfig cfg{2, 2.0f};
    const auto pyr = build_pyramid_cpu(img.view(), cfg);
    std::vector<Keypoint> kps(1);
    kps[0].level = 2;
    EXPECT_THROW(orb_compute_cpu(pyr, cfg, kps), InvalidArgument);
    EXPECT_THROW(orb_compute_cpu({pyr[0]}, cfg, {}), InvalidArgument);
    EXPECT_THROW(orb_smooth_cpu(HostView{}), InvalidArgument);
    EXPECT_THROW(DeviceOrb(64, 48, cfg, 0), InvalidArgument);
    EXPECT_THROW(DeviceOrb(64, 48, PyramidConfig{8, 2.0f}, 10), InvalidArgument);
}

}  // namespace
}  // namespace kestrel

namespace kestrel {
namespace {

TEST(FeatureDetectorOrb, CpuBackendReturnsTheReferenceAnglesAndDescriptors) {
    const HostImage img = test::crop(test::real_image("graf1.png"), 10, 20, 500, 333);
    DetectorConfig cfg;
    cfg.pyramid = {8, 1.2f};
    cfg.per_cell = 2;
    FeatureDetector plain(cfg, Backend::Cpu);
    (void)plain.detect(img.view());
    EXPECT_EQ(plain.host_angles(), nullptr);
    EXPECT_EQ(plain.host_descriptors(), nullptr);
    cfg.orb_descriptors = true;
    FeatureDetector det(cfg, Backend::Cpu);
    const auto kps = det.detect(img.view());
    ASSERT_GT(kps.size(), 50u);
    const OrbFeatures ref = orb_compute_cpu(build_pyramid_cpu(img.view(), cfg.pyramid), cfg.pyramid, kps);
    ASSERT_NE(det.host_angles(), nullptr);
    ASSERT_NE(det.host_descriptors(), nullptr);
    EXPECT_EQ(det.device_descriptors(), nullptr);
    int bits = 0;
    for (std::size_t i = 0; i < kps.size(); ++i) {
        EXPECT_EQ(det.host_angles()[i], ref.angles[i]);
        EXPECT_EQ(det.host_descriptors()[i], ref.descriptors[i]);
        for (const std::uint8_t b : ref.descriptors[i].bytes) bits += __builtin_popcount(b);
    }
    // Descriptors carry information: about half of the bits are set.
    const double mean = static_cast<double>(bits) / static_cast<double>(kps.size());
    EXPECT_GT(mean, 90.0);
    EXPECT_LT(mean, 166.0);
}

}  // namespace
}  // namespace kestrel
