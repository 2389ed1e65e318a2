// The CPU backend's detector (row tables, the vectorized pre-test, corner lists, reused memory, threads) equal
// BIT FOR BIT to the straightforward engines it replaced (tests/support/cpu_oracle.hpp): pyramids of every
// factor and odd sizes, score maps of every score type over thresholds and arc bounds, and whole detections
// over a grid of configs and masks with 1, 2, 3 and 8 threads, frame after frame on one detector.
#include <gtest/gtest.h>

#include <cstring>

#include "cpu_oracle.hpp"
#include "detector_test_util.hpp"
#include "kestrel/feature_detector.hpp"
#include "src/core/thread_pool.hpp"
#include "src/pyramid/pyramid_cpu.hpp"
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

bool same_map(const ScoreMap& a, const ScoreMap& b) {
    return a.width == b.width && a.height == b.height && a.scores.size() == b.scores.size() &&
           std::memcmp(a.scores.data(), b.scores.data(), a.scores.size() * sizeof(float)) == 0;
}

/// Real photos, real crops of odd sizes, and generated images of odd sizes.
std::vector<std::pair<std::string, HostImage>> images() {
    std::vector<std::pair<std::string, HostImage>> v;
    const HostImage graf = test::real_image("graf1.png");
    const HostImage aloe = test::real_image("aloeL.png");
    v.emplace_back("graf1", graf);
    v.emplace_back("aloeL-crop-333x251", test::crop(aloe, 17, 9, 333, 251));
    v.emplace_back("graf1-crop-97x61", test::crop(graf, 301, 207, 97, 61));
    v.emplace_back("vtest_000", test::real_image("vtest_000.png"));
    v.emplace_back("random-129x77", test::random_image(129, 77, 3));
    v.emplace_back("random-64x33", test::random_image(64, 33, 11));
    return v;
}

TEST(CpuOracle, PyramidEqualsOracleForEveryFactorAndThreadCount) {
    detail::ThreadPool pools[] = {detail::ThreadPool(1), detail::ThreadPool(2), detail::ThreadPool(3),
                                  detail::ThreadPool(8)};
    int checked = 0;
    for (const auto& [name, img] : images())
        for (float scale : {2.0f, 1.9f, 1.5f, 1.25f, 1.2f})
            for (int levels : {1, 2, 4}) {
                const PyramidConfig cfg{levels, scale};
                std::vector<HostImage> want;
                try {
                    want = test::oracle::build_pyramid(img.view(), cfg);
                } catch (const InvalidArgument&) {
                    continue;  // too small for this many levels
                }
                const std::vector<HostImage> got = build_pyramid_cpu(img.view(), cfg);
                ASSERT_EQ(got.size(), want.size());
                for (std::size_t k = 0; k < got.size(); ++k)
                    ASSERT_TRUE(same_image(got[k], want[k])) << name << " scale " << scale << " level " << k;
                for (detail::ThreadPool& pool : pools) {
                    std::vector<HostImage> out;
                    detail::PyramidScratch scratch;
                    for (int rep = 0; rep < 2; ++rep) {  // the second call reuses the images
                        detail::build_pyramid_into(img.view(), cfg, out, scratch, &pool);
                        ASSERT_EQ(out.size(), want.size());
                        for (std::size_t k = 0; k < out.size(); ++k)
                            ASSERT_TRUE(same_image(out[k], want[k]))
                                << name << " scale " << scale << " level " << k << " threads " << pool.size();
                    }
                }
                ++checked;
            }
    EXPECT_GT(checked, 60);
}

TEST(CpuOracle, ScoreMapsEqualOracleForEveryScoreThresholdAndArc) {
    const std::pair<int, int> arcs[] = {{9, 16}, {12, 16}, {3, 16}, {1, 4}, {9, 12}, {16, 16}, {5, 8}, {13, 15}};
    int corners = 0, cases = 0;
    for (const auto& [name, img] : images())
        for (ScoreType score : {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris})
            for (int t : {0, 7, 20, 60})
                for (const auto& arc : arcs) {
                    // keeps the grid quick: the full-size photos with the usual arcs only
                    if ((name == "graf1" || name == "vtest_000") && (t == 0 || arc.first < 9 || arc.second < 16)) continue;
                    FastConfig cfg;
                    cfg.score = score;
                    cfg.threshold = t;
                    cfg.arc_min = arc.first;
                    cfg.arc_max = arc.second;
                    const ScoreMap want = test::oracle::fast_score_map(img.view(), cfg);
                    const ScoreMap got = fast_score_map_cpu(img.view(), cfg);
                    ASSERT_TRUE(same_map(got, want)) << name << " score " << static_cast<int>(score) << " t " << t
                                                     << " arc [" << arc.first << ", " << arc.second << "]";
                    for (float s : want.scores) corners += s > 0.0f;
                    ++cases;
                }
    EXPECT_GT(cases, 500);
    EXPECT_GT(corners, 100000);  // the grid exercises real corners, not empty maps
}

std::vector<DetectorConfig> detector_configs() {
    std::vector<DetectorConfig> v;
    auto add = [&](int levels, float scale, ScoreType score, int t, int n, int K, int cw, int ch) {
        DetectorConfig c;
        c.pyramid = {levels, scale};
        c.fast.score = score;
        c.fast.threshold = t;
        c.nms_radius = n;
        c.per_cell = K;
        c.cell_width = cw;
        c.cell_height = ch;
        v.push_back(c);
        return &v.back();
    };
    add(2, 2.0f, ScoreType::SadCircle, 10, 1, 1, 32, 32);
    add(3, 2.0f, ScoreType::MaxThreshold, 12, 2, 3, 64, 48)->max_features = 150;
    add(3, 1.2f, ScoreType::SadArc, 8, 3, 2, 32, 8)->border = 9;
    DetectorConfig* h = add(4, 1.5f, ScoreType::Harris, 15, 4, 4, 96, 40);
    h->fast.arc_min = 12;
    h->border = 3;
    add(1, 2.0f, ScoreType::MaxThreshold, 5, 1, 8, 32, 32)->fast.arc_max = 12;
    // The ORB configuration (docs/features.md): 8 levels of 1.2, MaxThreshold at 20, 9x9 NMS, 6 per cell, 1000.
    DetectorConfig* orb = add(8, 1.2f, ScoreType::MaxThreshold, 20, 4, 6, 32, 32);
    orb->max_features = 1000;
    orb->border = 31;
    return v;
}

TEST(CpuOracle, DetectorEqualsOracleOverConfigsMasksAndThreads) {
    const std::vector<std::pair<std::string, HostImage>> imgs = images();
    int keypoints = 0;
    for (const DetectorConfig& base : detector_configs()) {
        // One detector per thread count, fed the same frames in the same order (each clears the last
        // frame's corners and reuses its memory), so the oracle runs once per case.
        std::vector<FeatureDetector> dets;
        for (int threads : {1, 2, 3, 8}) {
            DetectorConfig cfg = base;
            cfg.threads = threads;
            dets.emplace_back(cfg, Backend::Cpu);
        }
        const DetectorConfig& cfg = base;
        for (const auto& [name, img] : imgs) {
            std::vector<HostImage> frames{img};
            if (name == "graf1") frames.push_back(test::real_image("graf3.png"));
            if (name == "vtest_000") frames.push_back(test::real_image("vtest_050.png"));
            for (const HostImage& frame : frames) {
                Size2 grid;
                try {
                    grid = grid_size(frame.width(), frame.height(), cfg);
                    validate_image_size(frame.width(), frame.height(), cfg);
                } catch (const InvalidArgument&) {
                    continue;
                }
                std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width) * grid.height);
                for (std::size_t i = 0; i < skip.size(); ++i) skip[i] = (i * 7 + 3) % 5 == 0;
                HostImage mask(frame.width(), frame.height(), 1);
                for (int y = 0; y < frame.height(); ++y)
                    for (int x = 0; x < frame.width(); ++x)
                        if (((x / 13) + (y / 11)) % 4 == 0) mask.at(x, y) = 0;
                for (int m = 0; m < 4; ++m) {
                    DetectionMasks masks;
                    if (m & 1) {
                        masks.cell_skip = skip.data();
                        masks.cell_grid = grid;
                    }
                    if (m & 2) masks.pixel_mask = mask.view();
                    const std::vector<Keypoint> want = test::oracle::detect(frame.view(), cfg, masks);
                    const std::string what = name + " masks " + std::to_string(m) + " " + test::describe(cfg);
                    test::expect_same_keypoints(detect_cpu(frame.view(), cfg, masks), want, what + " detect_cpu");
                    for (FeatureDetector& det : dets)
                        test::expect_same_keypoints(det.detect(frame.view(), masks), want,
                                                    what + " threads " + std::to_string(det.config().threads));
                    keypoints += static_cast<int>(want.size());
                }
            }
        }
    }
    EXPECT_GT(keypoints, 10000);
}

TEST(CpuOracle, ThreadsSettingIsValidated) {
    DetectorConfig c;
    c.threads = -1;
    EXPECT_THROW(validate(c), InvalidArgument);
    c.threads = 257;
    EXPECT_THROW(validate(c), InvalidArgument);
    c.threads = 0;
    EXPECT_NO_THROW(validate(c));
    EXPECT_GE(detail::resolve_threads(0), 1);
    EXPECT_EQ(detail::ThreadPool(3).size(), 3);
}

}  // namespace
}  // namespace kestrel
