// Conformance of the detector's NMS with OpenCV's cv::FAST (TYPE_9_16, nonmaxSuppression = true), on
// one level with the MaxThreshold score (= OpenCV's response) and n = 1 (OpenCV's 3x3 NMS). OpenCV keeps
// strict maxima of its 3x3 neighbourhood; Kestrel also keeps the first pixel of each plateau. So:
//  - every Kestrel keypoint that is a strict maximum is an OpenCV keypoint with the same response;
//  - every OpenCV keypoint is a Kestrel candidate: it is output unless its cell already holds K
//    keypoints that all come before it in the documented order (score, then y, then x).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <opencv2/features2d.hpp>

#include "kestrel/feature_detector.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TEST(DetectorVsOpenCV, NmsAgreesWithCvFastOnStrictMaxima) {
    long strict = 0, cv_total = 0, cv_beaten = 0;
    for (const auto& name : test::real_image_names()) {
        HostImage img = test::real_image(name);
        if (img.width() > 1600 || img.height() > 1200) img = test::crop(img, 0, 0, 1600, 1200);
        const cv::Mat mat(img.height(), img.width(), CV_8UC1, img.data());
        for (const int t : {10, 25}) {
            DetectorConfig cfg;
            cfg.pyramid = {1, 2.0f};
            cfg.fast = {t, 9, 16, ScoreType::MaxThreshold};
            cfg.nms_radius = 1;
            cfg.per_cell = 8;
            cfg.cell_width = 32;
            cfg.cell_height = 32;
            const auto ours = detect_cpu(img.view(), cfg);
            const ScoreMap map = fast_score_map_cpu(img.view(), cfg.fast);
            std::vector<cv::KeyPoint> theirs;
            cv::FAST(mat, theirs, t, true, cv::FastFeatureDetector::TYPE_9_16);

            std::map<std::pair<int, int>, float> cv_at;
            for (const auto& k : theirs) cv_at[{static_cast<int>(k.pt.x), static_cast<int>(k.pt.y)}] = k.response;
            const int cols = grid_size(img.width(), img.height(), cfg).width;
            std::map<int, std::vector<Keypoint>> per_cell;
            for (const Keypoint& k : ours) {
                const int x = static_cast<int>(k.x), y = static_cast<int>(k.y);
                per_cell[(y / 32) * cols + x / 32].push_back(k);
                bool is_strict = true;
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx)
                        if ((dx || dy) && x + dx >= 0 && y + dy >= 0 && x + dx < img.width() && y + dy < img.height())
                            is_strict = is_strict && map.at(x + dx, y + dy) < k.score;
                if (!is_strict) continue;
                ++strict;
                const auto it = cv_at.find({x, y});
                ASSERT_NE(it, cv_at.end()) << name << " t=" << t << ": strict maximum (" << x << "," << y << ") not in OpenCV";
                EXPECT_EQ(it->second, k.score) << name << " at " << x << "," << y;
            }
            for (const auto& k : theirs) {
                const int x = static_cast<int>(k.pt.x), y = static_cast<int>(k.pt.y);
                ++cv_total;
                const auto& cell = per_cell[(y / 32) * cols + x / 32];
                const bool output = std::any_of(cell.begin(), cell.end(), [&](const Keypoint& o) {
                    return static_cast<int>(o.x) == x && static_cast<int>(o.y) == y;
                });
                if (output) continue;
                ++cv_beaten;
                ASSERT_EQ(static_cast<int>(cell.size()), cfg.per_cell) << name << " OpenCV keypoint " << x << "," << y << " missing";
                for (const Keypoint& o : cell)
                    EXPECT_TRUE(o.score > k.response || (o.score == k.response && (o.y < y || (o.y == y && o.x < x))))
                        << name << " OpenCV keypoint " << x << "," << y << " (" << k.response << ") beaten by a worse one";
            }
        }
    }
    EXPECT_GT(strict, 1000);
    EXPECT_GT(cv_total, cv_beaten);
}

}  // namespace
}  // namespace kestrel
