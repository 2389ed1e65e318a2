// detect_cpu, the reference of the whole detector, on real images: equal to the independent oracle;
// every keypoint a FAST corner of the reference score map at its level and the maximum of its
// neighbourhood; at most K per cell in cell order; masked cells empty; pixel mask and border respected;
// the cap keeps the best. The CPU backend of FeatureDetector, also against a restatement of the detector written
// in this file from docs/detector.md alone; every validation and error path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "detector_test_util.hpp"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/feature_detector.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

struct Located {
    int u, v;  // level pixel
};

// The level pixel a keypoint was reported from: x = u * s_k exactly (float).
Located locate(const Keypoint& k, const DetectorConfig& cfg) {
    const float s = level_scale(cfg.pyramid, k.level);
    Located out{-1, -1};
    const int u0 = static_cast<int>(std::lround(k.x / s)), v0 = static_cast<int>(std::lround(k.y / s));
    for (int d = -2; d <= 2; ++d) {
        if (static_cast<float>(u0 + d) * s == k.x) out.u = u0 + d;
        if (static_cast<float>(v0 + d) * s == k.y) out.v = v0 + d;
    }
    return out;
}

std::vector<ScoreMap> reference_maps(const HostImage& img, const DetectorConfig& cfg) {
    return fast_score_maps_cpu(build_pyramid_cpu(img.view(), cfg.pyramid), cfg.fast);
}

DetectorConfig config(int levels, float scale, ScoreType score, int n, int K, int cw = 32, int ch = 32) {
    DetectorConfig c;
    c.pyramid = {levels, scale};
    c.fast.threshold = 12;
    c.fast.score = score;
    c.nms_radius = n;
    c.per_cell = K;
    c.cell_width = cw;
    c.cell_height = ch;
    return c;
}

std::vector<DetectorConfig> some_configs() {
    std::vector<DetectorConfig> v{config(1, 2.0f, ScoreType::SadCircle, 1, 1),
                                  config(2, 2.0f, ScoreType::MaxThreshold, 2, 3, 64, 48),
                                  config(3, 1.2f, ScoreType::SadArc, 3, 2),
                                  config(4, 2.0f, ScoreType::Harris, 4, 4, 64, 48)};
    v[1].max_features = 150;
    v[2].border = 9;
    v[3].fast.arc_min = 12;
    return v;
}

TEST(DetectCpu, EqualsTheIndependentOracleOnRealImages) {
    for (const auto& name : test::real_image_names())
        for (const auto& cfg : some_configs()) {
            HostImage img = test::real_image(name);
            if (img.width() > 1600 || img.height() > 1200)  // chessboard.png is 13 Mpx: keep the suite quick
                img = test::crop(img, 0, 0, std::min(img.width(), 1600), std::min(img.height(), 1200));
            const auto out = detect_cpu(img.view(), cfg);
            if (name != "chessboard.png") EXPECT_FALSE(out.empty()) << name << " " << test::describe(cfg);  // X-junctions have no 12-arc
            test::expect_same_keypoints(out, test::oracle_select(reference_maps(img, cfg), cfg),
                                        name + " " + test::describe(cfg));
        }
}

TEST(DetectCpu, KeypointsAreCornersLocalMaximaAtMostKPerCellInCellOrder) {
    for (const auto& name : {"graf1.png", "vtest_000.png", "box.png"})
        for (const auto& cfg : some_configs()) {
            SCOPED_TRACE(std::string(name) + " " + test::describe(cfg));
            const HostImage img = test::real_image(name);
            const auto pyramid = build_pyramid_cpu(img.view(), cfg.pyramid);
            const auto maps = fast_score_maps_cpu(pyramid, cfg.fast);
            const auto lut = corner_lut(cfg.fast.arc_min, cfg.fast.arc_max);
            const auto out = detect_cpu(img.view(), cfg);
            const Size2 grid = grid_size(img.width(), img.height(), cfg);
            std::vector<int> per_cell(static_cast<std::size_t>(grid.width) * grid.height, 0);
            int last_cell = -1;
            float last_score = 0;
            for (const Keypoint& k : out) {
                const Located p = locate(k, cfg);
                ASSERT_GE(p.u, 0) << test::describe(k);
                ASSERT_GE(p.v, 0) << test::describe(k);
                const ScoreMap& m = maps[static_cast<std::size_t>(k.level)];
                const HostImage& lvl = pyramid[static_cast<std::size_t>(k.level)];
                // The reference score, and a FAST corner by the segment test itself.
                ASSERT_EQ(m.at(p.u, p.v), k.score) << test::describe(k);
                ASSERT_GT(k.score, 0.0f);
                int circle[16];
                for (int i = 0; i < 16; ++i) circle[i] = lvl.at(p.u + detail::circle_dx(i), p.v + detail::circle_dy(i));
                EXPECT_TRUE(detail::is_corner(lut.data(), circle, lvl.at(p.u, p.v), cfg.fast.threshold))
                    << test::describe(k);
                // Maximum of its neighbourhood: strictly above earlier neighbours, >= later ones.
                for (int dy = -cfg.nms_radius; dy <= cfg.nms_radius; ++dy)
                    for (int dx = -cfg.nms_radius; dx <= cfg.nms_radius; ++dx) {
                        const int qx = p.u + dx, qy = p.v + dy;
                        if ((!dx && !dy) || qx < 0 || qy < 0 || qx >= m.width || qy >= m.height) continue;
                        const bool later = dy > 0 || (dy == 0 && dx > 0);
                        if (later) EXPECT_GE(k.score, m.at(qx, qy)) << test::describe(k);
                        else EXPECT_GT(k.score, m.at(qx, qy)) << test::describe(k);
                    }
                // Border, cell, order.
                const int X0 = std::min(static_cast<int>(k.x), img.width() - 1);
                const int Y0 = std::min(static_cast<int>(k.y), img.height() - 1);
                EXPECT_TRUE(X0 >= cfg.border && X0 < img.width() - cfg.border) << test::describe(k);
                EXPECT_TRUE(Y0 >= cfg.border && Y0 < img.height() - cfg.border) << test::describe(k);
                const int cell = (Y0 / cfg.cell_height) * grid.width + X0 / cfg.cell_width;
                ASSERT_GE(cell, last_cell) << "cell order";
                if (cell == last_cell) EXPECT_LE(k.score, last_score) << "rank order";
                last_cell = cell;
                last_score = k.score;
                ++per_cell[static_cast<std::size_t>(cell)];
            }
            EXPECT_LE(*std::max_element(per_cell.begin(), per_cell.end()), cfg.per_cell);
            if (cfg.max_features > 0) EXPECT_LE(static_cast<int>(out.size()), cfg.max_features);
        }
}

int cell_of(const Keypoint& k, const DetectorConfig& cfg, int cols, int w, int h) {
    const int X0 = std::min(static_cast<int>(k.x), w - 1), Y0 = std::min(static_cast<int>(k.y), h - 1);
    return (Y0 / cfg.cell_height) * cols + X0 / cfg.cell_width;
}

TEST(DetectCpu, MaskedCellsAreEmptyOthersUnchanged) {
    const HostImage img = test::real_image("vtest_050.png");
    const auto cfg = config(2, 2.0f, ScoreType::SadCircle, 1, 2);
    const Size2 grid = grid_size(img.width(), img.height(), cfg);
    std::vector<std::uint8_t> skip(static_cast<std::size_t>(grid.width) * grid.height);
    for (std::size_t i = 0; i < skip.size(); ++i) skip[i] = (i * 7 + i / 5) % 3 == 0;
    DetectionMasks m;
    m.cell_skip = skip.data();
    m.cell_grid = grid;
    const auto all = detect_cpu(img.view(), cfg);
    const auto masked = detect_cpu(img.view(), cfg, m);
    std::vector<Keypoint> expected;
    for (const Keypoint& k : all)
        if (!skip[static_cast<std::size_t>(cell_of(k, cfg, grid.width, img.width(), img.height()))]) expected.push_back(k);
    EXPECT_LT(masked.size(), all.size());
    test::expect_same_keypoints(masked, expected, "cell mask");
}

TEST(DetectCpu, PixelMaskIsRespectedAndFullyAllowedCellsUnchanged) {
    const HostImage img = test::real_image("graf1.png");
    const auto cfg = config(3, 2.0f, ScoreType::MaxThreshold, 2, 3);
    HostImage mask(img.width(), img.height(), 255);
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if ((x - 300) * (x - 300) + (y - 250) * (y - 250) < 150 * 150) mask.at(x, y) = 0;
    DetectionMasks m;
    m.pixel_mask = mask.view();
    const auto all = detect_cpu(img.view(), cfg);
    const auto masked = detect_cpu(img.view(), cfg, m);
    const Size2 grid = grid_size(img.width(), img.height(), cfg);
    std::vector<bool> touched(static_cast<std::size_t>(grid.width) * grid.height, false);
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
            if (!mask.at(x, y)) touched[static_cast<std::size_t>((y / 32) * grid.width + x / 32)] = true;
    for (const Keypoint& k : masked)
        EXPECT_NE(mask.at(std::min(static_cast<int>(k.x), img.width() - 1), std::min(static_cast<int>(k.y), img.height() - 1)), 0)
            << test::describe(k);
    std::vector<Keypoint> untouched_all, untouched_masked;
    for (const Keypoint& k : all)
        if (!touched[static_cast<std::size_t>(cell_of(k, cfg, grid.width, img.width(), img.height()))]) untouched_all.push_back(k);
    for (const Keypoint& k : masked)
        if (!touched[static_cast<std::size_t>(cell_of(k, cfg, grid.width, img.width(), img.height()))]) untouched_masked.push_back(k);
    EXPECT_LT(masked.size(), all.size());
    test::expect_same_keypoints(untouched_masked, untouched_all, "cells outside the mask");
}

TEST(DetectCpu, CapKeepsExactlyTheBest) {
    const HostImage img = test::real_image("aloeL.png");
    auto cfg = config(2, 1.2f, ScoreType::SadArc, 1, 4);
    const auto all = detect_cpu(img.view(), cfg);
    for (const int cap : {1, 17, 500, static_cast<int>(all.size()), static_cast<int>(all.size()) + 5}) {
        cfg.max_features = cap;
        const auto capped = detect_cpu(img.view(), cfg);
        // Best `cap` by (score desc, level asc, y asc, x asc), kept in the uncapped (cell) order.
        std::vector<Keypoint> sorted = all;
        std::sort(sorted.begin(), sorted.end(), [](const Keypoint& a, const Keypoint& b) {
            if (a.score != b.score) return a.score > b.score;
            if (a.level != b.level) return a.level < b.level;
            if (a.y != b.y) return a.y < b.y;
            return a.x < b.x;
        });
        sorted.resize(std::min(sorted.size(), static_cast<std::size_t>(cap)));
        std::vector<Keypoint> expected;
        for (const Keypoint& k : all)
            if (std::find(sorted.begin(), sorted.end(), k) != sorted.end()) expected.push_back(k);
        test::expect_same_keypoints(capped, expected, "cap " + std::to_string(cap));
    }
}

TEST(DetectCpu, CpuBackendEqualsDetectCpu) {
    const HostImage img = test::real_image("box.png");
    auto cfg = config(2, 2.0f, ScoreType::SadCircle, 2, 2);
    FeatureDetector det(cfg, Backend::Cpu);
    EXPECT_EQ(det.backend(), Backend::Cpu);
    EXPECT_EQ(det.capacity(), 0);
    const auto out = det.detect(img.view());
    test::expect_same_keypoints(out, detect_cpu(img.view(), cfg), "cpu backend");
    ASSERT_EQ(det.host_count(), static_cast<int>(out.size()));
    for (int i = 0; i < det.host_count(); ++i) EXPECT_EQ(det.host_keypoints()[i], out[static_cast<std::size_t>(i)]);
    const Size2 grid = grid_size(img.width(), img.height(), cfg);
    EXPECT_EQ(det.capacity(), grid.width * grid.height * 2);
    EXPECT_EQ(det.device_keypoints(), nullptr);
    EXPECT_THROW(det.detect_async(HostView{img.data(), img.width(), img.height(), img.pitch()}, nullptr), StateError);
    EXPECT_THROW(det.detect_async(DeviceView{img.data(), img.width(), img.height(), img.pitch()}, nullptr), StateError);
}

TEST(DetectCpu, GridSize) {
    DetectorConfig cfg;
    cfg.cell_width = 64;
    cfg.cell_height = 48;
    const Size2 g = grid_size(752, 480, cfg);
    EXPECT_EQ(g.width, 12);
    EXPECT_EQ(g.height, 10);
    const Size2 g2 = grid_size(753, 481, cfg);
    EXPECT_EQ(g2.width, 12);
    EXPECT_EQ(g2.height, 11);
}

// ---- validation ---------------------------------------------------------------------------------

void expect_invalid(const std::function<void()>& f, const std::string& param) {
    try {
        f();
        ADD_FAILURE() << "no exception, expected InvalidArgument for '" << param << "'";
    } catch (const InvalidArgument& e) {
        EXPECT_EQ(e.parameter(), param) << e.what();
        EXPECT_NE(std::string(e.what()).find(param), std::string::npos) << e.what();
    }
}

TEST(DetectorValidation, EveryConfigField) {
    const HostImage img(128, 96, 50);
    const auto with = [](auto edit) {
        DetectorConfig c;
        edit(c);
        return c;
    };
    const std::pair<DetectorConfig, std::string> bad[] = {
        {with([](DetectorConfig& c) { c.nms_radius = 0; }), "nms_radius"},
        {with([](DetectorConfig& c) { c.nms_radius = 5; }), "nms_radius"},
        {with([](DetectorConfig& c) { c.cell_width = 16; }), "cell_width"},
        {with([](DetectorConfig& c) { c.cell_width = 48; }), "cell_width"},
        {with([](DetectorConfig& c) { c.cell_width = 1056; }), "cell_width"},
        {with([](DetectorConfig& c) { c.cell_height = 7; }), "cell_height"},
        {with([](DetectorConfig& c) { c.cell_height = 1025; }), "cell_height"},
        {with([](DetectorConfig& c) { c.per_cell = 0; }), "per_cell"},
        {with([](DetectorConfig& c) { c.per_cell = 9; }), "per_cell"},
        {with([](DetectorConfig& c) { c.max_features = -1; }), "max_features"},
        {with([](DetectorConfig& c) { c.border = -1; }), "border"},
        {with([](DetectorConfig& c) { c.border = 65; }), "border"},
        {with([](DetectorConfig& c) { c.pyramid.levels = 0; }), "levels"},
        {with([](DetectorConfig& c) { c.pyramid.scale = 2.5f; }), "scale"},
        {with([](DetectorConfig& c) { c.fast.threshold = 255; }), "fast.threshold"},
        {with([](DetectorConfig& c) { c.fast.arc_min = 0; }), "fast.arc_min"},
        {with([](DetectorConfig& c) { c.fast.arc_max = 17; }), "fast.arc_max"},
    };
    for (const auto& [cfg, param] : bad) {
        SCOPED_TRACE(param);
        expect_invalid([&] { validate(cfg); }, param);
        expect_invalid([&] { detect_cpu(img.view(), cfg); }, param);
        expect_invalid([&] { FeatureDetector d(cfg, Backend::Cpu); }, param);
        expect_invalid([&] { FeatureDetector d(cfg, Backend::Cuda); }, param);  // config first, device second
        expect_invalid([&] { grid_size(128, 96, cfg); }, param);
    }
    DetectorConfig ok;
    ok.cell_width = 1024;
    ok.cell_height = 8;
    ok.per_cell = 8;
    ok.nms_radius = 4;
    ok.border = 64;
    ok.max_features = 1;
    EXPECT_NO_THROW(validate(ok));
}

TEST(DetectorValidation, ImageTooSmallForLevelsOrBorder) {
    DetectorConfig cfg;
    cfg.pyramid = {4, 2.0f};
    expect_invalid([&] { detect_cpu(HostImage(50, 200, 9).view(), cfg); }, "levels");  // 50/8 < 7
    cfg.pyramid = {1, 2.0f};
    cfg.border = 20;
    expect_invalid([&] { detect_cpu(HostImage(46, 200, 9).view(), cfg); }, "image.width");
    expect_invalid([&] { detect_cpu(HostImage(200, 46, 9).view(), cfg); }, "image.height");
    EXPECT_NO_THROW(detect_cpu(HostImage(47, 47, 9).view(), cfg));
    expect_invalid([&] { validate_image_size(46, 200, cfg); }, "width");
    expect_invalid([&] { validate_image_size(200, 46, cfg); }, "height");
    EXPECT_NO_THROW(validate_image_size(47, 47, cfg));
    cfg.pyramid = {4, 2.0f};
    expect_invalid([&] { validate_image_size(50, 200, cfg); }, "levels");
    cfg.pyramid = {1, 2.0f};
    expect_invalid([&] { detect_cpu(HostView{}, cfg); }, "image.data");
    FeatureDetector det(cfg, Backend::Cpu);
    expect_invalid([&] { det.detect(HostImage(46, 200, 9).view()); }, "image.width");
}

TEST(DetectorValidation, MasksOfTheWrongSize) {
    const HostImage img(100, 70, 9);
    DetectorConfig cfg;  // 32 x 32 cells: 4 x 3 grid
    std::vector<std::uint8_t> skip(12, 0);
    DetectionMasks m;
    m.cell_skip = skip.data();
    m.cell_grid = {3, 4};
    expect_invalid([&] { detect_cpu(img.view(), cfg, m); }, "masks.cell_grid");
    m.cell_grid = {};
    expect_invalid([&] { detect_cpu(img.view(), cfg, m); }, "masks.cell_grid");
    m.cell_grid = {4, 3};
    EXPECT_NO_THROW(detect_cpu(img.view(), cfg, m));
    const HostImage small(99, 70, 1);
    m.pixel_mask = small.view();
    expect_invalid([&] { detect_cpu(img.view(), cfg, m); }, "masks.pixel_mask");
    m.pixel_mask = HostView{small.data(), 100, 70, 50};  // pitch < width
    expect_invalid([&] { detect_cpu(img.view(), cfg, m); }, "masks.pixel_mask.pitch");
    FeatureDetector det(cfg, Backend::Cpu);
    expect_invalid([&] { det.detect(img.view(), m); }, "masks.pixel_mask.pitch");
}

TEST(DetectorValidation, MovedFromObjectsThrowStateError) {
    FeatureDetector a(DetectorConfig{}, Backend::Cpu);
    FeatureDetector b(std::move(a));
    const HostImage img(64, 64, 3);
    EXPECT_THROW(a.detect(img.view()), StateError);
    EXPECT_THROW((void)a.config(), StateError);
    EXPECT_THROW((void)a.backend(), StateError);
    EXPECT_THROW((void)a.host_count(), StateError);
    EXPECT_THROW((void)a.host_keypoints(), StateError);
    EXPECT_THROW((void)a.device_keypoints(), StateError);
    EXPECT_THROW((void)a.device_count(), StateError);
    EXPECT_THROW((void)a.capacity(), StateError);
    EXPECT_THROW(a.detect_async(DeviceView{}, nullptr), StateError);
    EXPECT_NO_THROW(b.detect(img.view()));
    FeatureDetector c(DetectorConfig{}, Backend::Cpu);
    c = std::move(b);
    EXPECT_THROW(b.detect(img.view()), StateError);
    EXPECT_NO_THROW(c.detect(img.view()));
}

TEST(DetectorValidation, CudaBackendWithoutDeviceThrowsNoDeviceError) {
    EXPECT_EQ(default_backend(), cuda_available() ? Backend::Cuda : Backend::Cpu);
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: the no-device path cannot be exercised here";
    try {
        FeatureDetector d(DetectorConfig{}, Backend::Cuda);
        ADD_FAILURE() << "expected NoDeviceError";
    } catch (const NoDeviceError& e) {
        EXPECT_NE(std::string(e.what()).find("Backend::Cpu"), std::string::npos) << e.what();
    }
}

// FeatureDetector's CPU backend against a restatement of docs/detector.md written here from the text, sharing no
// code with the library's detector (no fast_rules.hpp, no lookup table, no grid rules, no oracle_select): the
// Bresenham circle of radius 3, the segment test with bounded rectification by counting circular runs, the
// MaxThreshold score by trying every threshold, the 3-pixel score border, NMS with the raster-order tie rule,
// eligibility by the level-0 pixel of the keypoint's float position, the best K per cell over all levels, the
// cap, and the output order. Only the pyramid (tested on its own in test_detect_cpu_oracle.cpp and against
// OpenCV) and level_scale come from the library.
namespace restated {

const int kCircle[16][2] = {{0, -3}, {1, -3}, {2, -2}, {3, -1}, {3, 0},  {3, 1},   {2, 2},   {1, 3},
                            {0, 3},  {-1, 3}, {-2, 2}, {-3, 1}, {-3, 0}, {-3, -1}, {-2, -2}, {-1, -3}};

// Longest circular run of true entries (16 for all true).
int longest_run(const bool* on) {
    int best = 0;
    for (int start = 0; start < 16; ++start) {
        int len = 0;
        while (len < 16 && on[(start + len) % 16]) ++len;
        best = std::max(best, len);
    }
    return best;
}

bool is_corner(const HostImage& im, int x, int y, int t, int arc_min, int arc_max) {
    const int c = im.at(x, y);
    bool bright[16], dark[16];
    for (int i = 0; i < 16; ++i) {
        const int p = im.at(x + kCircle[i][0], y + kCircle[i][1]);
        bright[i] = p > c + t;
        dark[i] = p < c - t;
    }
    const int rb = longest_run(bright), rd = longest_run(dark);
    return (rb >= arc_min && rb <= arc_max) || (rd >= arc_min && rd <= arc_max);
}

// MaxThreshold: the largest t' >= t at which the pixel is still a corner; 0 for a non-corner or within 3 px of
// the level's edge.
std::vector<float> max_threshold_map(const HostImage& im, const FastConfig& f) {
    std::vector<float> m(static_cast<std::size_t>(im.width()) * im.height(), 0.0f);
    for (int y = 3; y < im.height() - 3; ++y)
        for (int x = 3; x < im.width() - 3; ++x) {
            if (!is_corner(im, x, y, f.threshold, f.arc_min, f.arc_max)) continue;
            int t = f.threshold;
            while (t < 255 && is_corner(im, x, y, t + 1, f.arc_min, f.arc_max)) ++t;
            m[static_cast<std::size_t>(y) * im.width() + x] = static_cast<float>(t);
        }
    return m;
}

struct Candidate {
    Keypoint k;
    int cell, u, v;
};

// Better: higher score, then lower level, lower y, lower x (level pixels).
bool better(const Candidate& a, const Candidate& b) {
    if (a.k.score != b.k.score) return a.k.score > b.k.score;
    if (a.k.level != b.k.level) return a.k.level < b.k.level;
    if (a.v != b.v) return a.v < b.v;
    return a.u < b.u;
}

std::vector<Keypoint> detect(const HostImage& img, const DetectorConfig& cfg) {
    const auto pyr = build_pyramid_cpu(img.view(), cfg.pyramid);
    const int W = img.width(), H = img.height();
    const int cols = (W + cfg.cell_width - 1) / cfg.cell_width;
    std::vector<Candidate> cands;
    for (int k = 0; k < static_cast<int>(pyr.size()); ++k) {
        const HostImage& im = pyr[static_cast<std::size_t>(k)];
        const std::vector<float> m = max_threshold_map(im, cfg.fast);
        const float s = level_scale(cfg.pyramid, k);
        const int w = im.width(), h = im.height(), n = cfg.nms_radius;
        const auto score = [&](int x, int y) {
            return x < 0 || y < 0 || x >= w || y >= h ? 0.0f : m[static_cast<std::size_t>(y) * w + x];
        };
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const float sp = score(x, y);
                if (sp <= 0.0f) continue;
                bool suppressed = false;
                for (int dy = -n; dy <= n && !suppressed; ++dy)
                    for (int dx = -n; dx <= n; ++dx) {
                        if (dx == 0 && dy == 0) continue;
                        const float sq = score(x + dx, y + dy);
                        const bool before = dy < 0 || (dy == 0 && dx < 0);
                        if (sq > sp || (sq == sp && before)) {
                            suppressed = true;
                            break;
                        }
                    }
                if (suppressed) continue;
                const float fx = static_cast<float>(x) * s, fy = static_cast<float>(y) * s;
                const int X0 = std::min(static_cast<int>(fx), W - 1), Y0 = std::min(static_cast<int>(fy), H - 1);
                if (X0 < cfg.border || X0 > W - 1 - cfg.border || Y0 < cfg.border || Y0 > H - 1 - cfg.border) continue;
                cands.push_back({{fx, fy, sp, k}, (Y0 / cfg.cell_height) * cols + X0 / cfg.cell_width, x, y});
            }
    }
    // The best K of every cell, then the best max_features of those, output by cell, then rank.
    std::stable_sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
        return a.cell != b.cell ? a.cell < b.cell : better(a, b);
    });
    std::vector<Candidate> kept;
    for (std::size_t i = 0; i < cands.size(); ++i) {
        int rank = 0;
        for (std::size_t j = i; j > 0 && cands[j - 1].cell == cands[i].cell; --j) ++rank;
        if (rank < cfg.per_cell) kept.push_back(cands[i]);
    }
    if (cfg.max_features > 0 && static_cast<int>(kept.size()) > cfg.max_features) {
        std::vector<Candidate> by_rank = kept;
        std::sort(by_rank.begin(), by_rank.end(), better);
        const Candidate last = by_rank[static_cast<std::size_t>(cfg.max_features) - 1];
        std::vector<Candidate> capped;
        for (const Candidate& c : kept)
            if (!better(last, c)) capped.push_back(c);
        kept.swap(capped);
    }
    std::vector<Keypoint> out;
    for (const Candidate& c : kept) out.push_back(c.k);
    return out;
}

}  // namespace restated

TEST(DetectCpu, FeatureDetectorCpuEqualsAStraightforwardRestatement) {
    std::vector<DetectorConfig> cfgs(3);  // [0]: the defaults (2 levels of 2, MaxThreshold t 10, arc 9-16, K 1)
    cfgs[1].pyramid = {3, 2.0f};
    cfgs[1].fast.threshold = 20;
    cfgs[1].fast.arc_min = 12;
    cfgs[1].nms_radius = 2;
    cfgs[1].per_cell = 3;
    cfgs[1].cell_width = 64;
    cfgs[1].cell_height = 48;
    cfgs[1].border = 9;
    cfgs[1].max_features = 120;
    cfgs[2].pyramid = {2, 1.5f};
    cfgs[2].fast.arc_min = 10;
    cfgs[2].fast.arc_max = 14;
    cfgs[2].nms_radius = 3;
    cfgs[2].per_cell = 2;
    cfgs[2].threads = 3;
    int total = 0;
    for (const char* name : {"graf1.png", "vtest_000.png", "box.png"})
        for (const DetectorConfig& cfg : cfgs) {
            const HostImage img = test::real_image(name);
            FeatureDetector det(cfg, Backend::Cpu);
            const std::vector<Keypoint> got = det.detect(img.view());
            EXPECT_GT(got.size(), 20u) << name << " " << test::describe(cfg);
            test::expect_same_keypoints(got, restated::detect(img, cfg), std::string(name) + " " + test::describe(cfg));
            total += static_cast<int>(got.size());
        }
    std::printf("[detector restated] %d keypoints, every one equal to the restatement's\n", total);
}

}  // namespace
}  // namespace kestrel
