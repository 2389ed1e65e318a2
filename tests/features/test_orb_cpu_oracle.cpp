// The CPU ORB (row ring, fixed-width disc sums, the pattern steered in one pass, smoothed levels reused) equal
// BIT FOR BIT to the straightforward engine it replaced (tests/support/orb_oracle.hpp): the smoothing of real
// photos, odd crops and tiny images; the angle and the descriptor at every position of small images and on
// grids over real ones (borders and positions outside the level included) at many angles; orb_compute_cpu
// over 8 levels of 1.2 and 3 of 2; and FeatureDetector's CPU ORB frame after frame with 1 and 3 threads.
// Compiled without floating-point contraction, as the library's ORB is.
#include <gtest/gtest.h>

#include <cstring>

#include "kestrel/feature_detector.hpp"
#include "kestrel/orb.hpp"
#include "kestrel/pyramid.hpp"
#include "orb_oracle.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

bool same_image(const HostImage& a, const HostImage& b) {
    if (a.width() != b.width() || a.height() != b.height()) return false;
    for (int y = 0; y < a.height(); ++y)
        if (std::memcmp(a.data() + y * a.pitch(), b.data() + y * b.pitch(), static_cast<std::size_t>(a.width())) != 0)
            return false;
    return true;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<std::pair<std::string, HostImage>> images() {
    std::vector<std::pair<std::string, HostImage>> v;
    const HostImage graf = test::real_image("graf1.png");
    v.emplace_back("graf1", graf);
    v.emplace_back("vtest_000", test::real_image("vtest_000.png"));
    v.emplace_back("graf1-crop-333x251", test::crop(graf, 17, 9, 333, 251));
    v.emplace_back("graf1-crop-61x47", test::crop(graf, 301, 207, 61, 47));
    for (const auto& [w, h] : {std::pair<int, int>{1, 1}, {2, 3}, {5, 9}, {6, 6}, {7, 7}, {8, 13}, {37, 40}, {129, 77}})
        v.emplace_back("random-" + std::to_string(w) + "x" + std::to_string(h), test::random_image(w, h, w * 31u + h));
    return v;
}

TEST(OrbCpuOracle, SmoothingEqualsOracle) {
    for (const auto& [name, img] : images())
        ASSERT_TRUE(same_image(orb_smooth_cpu(img.view()), test::oracle::orb_smooth(img.view()))) << name;
}

TEST(OrbCpuOracle, AngleAndDescriptorEqualOracleEverywhere) {
    const float angles[] = {0.0f, 0.5f, 45.0f, 90.0f, 179.99f, 270.3f, 359.99f, 360.0f, -30.0f, 725.0f, 123.456f};
    long checked = 0;
    for (const auto& [name, img] : images()) {
        const HostImage s = orb_smooth_cpu(img.view());
        const int w = img.width(), h = img.height();
        // small images: every position and a margin outside; large ones: a grid through the borders
        const int step = w * h <= 160 * 160 ? 1 : 7;
        for (int y = -3; y < h + 3; y += (y >= 22 && y < h - 22 ? step : 1))
            for (int x = -3; x < w + 3; x += (x >= 22 && x < w - 22 ? step : 1)) {
                const float a = orb_angle_cpu(img.view(), x, y);
                ASSERT_TRUE(same_bits(a, test::oracle::orb_angle(img.view(), x, y))) << name << " (" << x << ", " << y << ")";
                const float ang[] = {a, angles[static_cast<std::size_t>(x * 7 + y * 3) % std::size(angles)]};
                for (float t : ang)
                    ASSERT_EQ(orb_descriptor_cpu(s.view(), x, y, t), test::oracle::orb_descriptor(s.view(), x, y, t))
                        << name << " (" << x << ", " << y << ") angle " << t;
                ++checked;
            }
    }
    EXPECT_GT(checked, 30000);
}

TEST(OrbCpuOracle, ComputeEqualsOracleOnDetections) {
    for (const PyramidConfig pc : {PyramidConfig{8, 1.2f}, PyramidConfig{3, 2.0f}})
        for (const char* file : {"graf1.png", "vtest_000.png"}) {
            const HostImage img = test::real_image(file);
            DetectorConfig c;
            c.pyramid = pc;
            c.fast = {20, 9, 16, ScoreType::MaxThreshold};
            c.nms_radius = 4;
            c.per_cell = 6;
            c.max_features = 1000;
            c.border = 31;
            const std::vector<Keypoint> kps = detect_cpu(img.view(), c);
            ASSERT_GT(kps.size(), 300u) << file;
            const std::vector<HostImage> pyr = build_pyramid_cpu(img.view(), pc);
            const OrbFeatures got = orb_compute_cpu(pyr, pc, kps);
            const OrbFeatures want = test::oracle::orb_compute(pyr, pc, kps);
            ASSERT_EQ(got.angles.size(), want.angles.size());
            for (std::size_t i = 0; i < kps.size(); ++i) {
                ASSERT_TRUE(same_bits(got.angles[i], want.angles[i])) << file << " keypoint " << i;
                ASSERT_EQ(got.descriptors[i], want.descriptors[i]) << file << " keypoint " << i;
            }
        }
}

TEST(OrbCpuOracle, DetectorOrbEqualsOracleFrameAfterFrame) {
    DetectorConfig c;
    c.pyramid = {8, 1.2f};
    c.fast = {20, 9, 16, ScoreType::MaxThreshold};
    c.nms_radius = 4;
    c.per_cell = 6;
    c.max_features = 1000;
    c.border = 31;
    c.orb_descriptors = true;
    for (int threads : {1, 3}) {
        c.threads = threads;
        FeatureDetector det(c, Backend::Cpu);
        for (const char* file : {"vtest_000.png", "vtest_050.png", "graf1.png", "vtest_000.png"}) {
            const HostImage img = test::real_image(file);
            const std::vector<Keypoint> kps = det.detect(img.view());
            const OrbFeatures want = test::oracle::orb_compute(build_pyramid_cpu(img.view(), c.pyramid), c.pyramid, kps);
            ASSERT_EQ(static_cast<std::size_t>(det.host_count()), kps.size());
            for (std::size_t i = 0; i < kps.size(); ++i) {
                ASSERT_TRUE(same_bits(det.host_angles()[i], want.angles[i])) << file << " keypoint " << i;
                ASSERT_EQ(det.host_descriptors()[i], want.descriptors[i]) << file << " keypoint " << i;
            }
        }
    }
}

}  // namespace
}  // namespace kestrel
