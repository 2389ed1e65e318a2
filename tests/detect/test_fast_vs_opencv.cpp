// Conformance with OpenCV's cv::FAST (TYPE_9_16) on real images. With arc bounds [9, 16]:
//  - nonmaxSuppression = false: the set of corner pixels is identical (OpenCV then reports response 0,
//    since it computes scores only for its NMS);
//  - nonmaxSuppression = true: every keypoint OpenCV keeps is a Kestrel corner and its response equals
//    Kestrel's MT score exactly (MT = the largest threshold at which the pixel is still a corner).
#include <gtest/gtest.h>

#include <opencv2/features2d.hpp>

#include "kestrel/fast.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TEST(FastVsOpenCV, SameCornerSetAndMaxThresholdEqualsResponse) {
    long total_kept = 0;
    for (const auto& name : test::real_image_names()) {
        const HostImage img = test::real_image(name);
        const cv::Mat mat(img.height(), img.width(), CV_8UC1, const_cast<std::uint8_t*>(img.data()));
        for (int t : {5, 10, 20, 40}) {
            const ScoreMap ours = fast_score_map_cpu(img.view(), {t, 9, 16, ScoreType::MaxThreshold});
            std::vector<cv::KeyPoint> all;
            cv::FAST(mat, all, t, false, cv::FastFeatureDetector::TYPE_9_16);
            std::vector<char> is_cv(ours.scores.size(), 0);
            for (const auto& k : all) is_cv[static_cast<std::size_t>(k.pt.y) * img.width() + static_cast<std::size_t>(k.pt.x)] = 1;
            long ours_count = 0, mismatch = 0;
            for (std::size_t i = 0; i < ours.scores.size(); ++i) {
                ours_count += ours.scores[i] > 0;
                if ((ours.scores[i] > 0) != (is_cv[i] != 0) && ++mismatch <= 3)
                    ADD_FAILURE() << name << " t=" << t << " pixel " << i % img.width() << "," << i / img.width()
                                  << ": kestrel corner " << (ours.scores[i] > 0) << ", OpenCV corner " << int(is_cv[i]);
            }
            EXPECT_EQ(mismatch, 0) << name << " t=" << t;
            EXPECT_EQ(ours_count, static_cast<long>(all.size())) << name << " t=" << t;
            EXPECT_GT(all.size(), 10u) << name;

            std::vector<cv::KeyPoint> kept;
            cv::FAST(mat, kept, t, true, cv::FastFeatureDetector::TYPE_9_16);
            long bad = 0;
            for (const auto& k : kept) {
                const float mt = ours.at(static_cast<int>(k.pt.x), static_cast<int>(k.pt.y));
                if (mt != k.response && ++bad <= 3)
                    ADD_FAILURE() << name << " t=" << t << " at " << k.pt << ": MT " << mt << " vs response " << k.response;
            }
            EXPECT_EQ(bad, 0) << name << " t=" << t;
            total_kept += static_cast<long>(kept.size());
        }
    }
    EXPECT_GT(total_kept, 1000) << "the comparison must cover many OpenCV keypoints";
}

}  // namespace
}  // namespace kestrel
