// include/kestrel/opencv.hpp: cv::Mat / cv::cuda::GpuMat -> views, keypoints -> cv::KeyPoint.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/opencv.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TEST(OpenCvInterop, HostViewSharesTheMatPixels) {
    cv::Mat m(37, 53, CV_8UC1);
    cv::randu(m, 0, 256);
    const HostView v = host_view(m);
    EXPECT_EQ(v.data, m.data);
    EXPECT_EQ(v.width, 53);
    EXPECT_EQ(v.height, 37);
    EXPECT_EQ(v.pitch, m.step[0]);
    EXPECT_EQ(v.row(5)[7], m.at<std::uint8_t>(5, 7));
}

TEST(OpenCvInterop, RoiKeepsTheParentRowStep) {
    cv::Mat m(100, 120, CV_8UC1);
    cv::randu(m, 0, 256);
    const cv::Mat roi = m(cv::Rect(10, 20, 50, 30));
    const HostView v = host_view(roi);
    EXPECT_EQ(v.width, 50);
    EXPECT_EQ(v.height, 30);
    EXPECT_EQ(v.pitch, 120u);
    for (int y = 0; y < 30; y += 7)
        for (int x = 0; x < 50; x += 9) EXPECT_EQ(v.row(y)[x], m.at<std::uint8_t>(20 + y, 10 + x));
}

TEST(OpenCvInterop, RejectsWrongTypesNamingTheParameter) {
    const cv::Mat colour(10, 10, CV_8UC3), wide(10, 10, CV_16UC1), empty;
    for (const cv::Mat* m : {&colour, &wide, &empty}) {
        try {
            host_view(*m);
            FAIL() << "accepted type " << m->type();
        } catch (const InvalidArgument& e) {
            EXPECT_EQ(e.parameter(), "mat");
        }
    }
    const int sizes[3] = {4, 4, 4};
    const cv::Mat cube(3, sizes, CV_8UC1);
    EXPECT_THROW(host_view(cube), InvalidArgument);
}

TEST(OpenCvInterop, MatHeaderRoundTrip) {
    const HostImage img = test::real_image("graf1.png");
    const cv::Mat m = to_mat(img.view());
    EXPECT_EQ(m.data, img.data());
    EXPECT_EQ(m.cols, img.width());
    EXPECT_EQ(m.rows, img.height());
    EXPECT_EQ(m.type(), CV_8UC1);
    cv::Mat writable(5, 6, CV_8UC1, cv::Scalar(0));
    host_mut_view(writable).row(2)[3] = 77;
    EXPECT_EQ(writable.at<std::uint8_t>(2, 3), 77);
}

// The same pixels through a cv::Mat ROI and through a packed copy give the same FAST score map
// (the view's pitch is honoured).
TEST(OpenCvInterop, ScoresThroughAMatRoiEqualScoresOfTheCopy) {
    const HostImage img = test::real_image("graf1.png");
    const cv::Mat whole = to_mat(img.view());
    const cv::Mat roi = whole(cv::Rect(33, 41, 301, 203));
    const HostImage copy = test::crop(img, 33, 41, 301, 203);
    FastConfig cfg;
    cfg.threshold = 15;
    const ScoreMap a = fast_score_map_cpu(host_view(roi), cfg), b = fast_score_map_cpu(copy.view(), cfg);
    ASSERT_EQ(a.scores.size(), b.scores.size());
    EXPECT_EQ(a.scores, b.scores);
    int corners = 0;
    for (float s : a.scores) corners += s > 0.0f;
    EXPECT_GT(corners, 50);  // real content: the comparison is not between two empty maps
}

TEST(OpenCvInterop, KeypointConversion) {
    PyramidConfig pyr{4, 1.5f};
    const std::vector<Keypoint> kps = {{10.5f, 20.25f, 33.0f, 0}, {100.0f, 7.0f, 1.5f, 2}, {3.0f, 4.0f, 9.0f, 3}};
    const std::vector<cv::KeyPoint> cv_kps = to_cv_keypoints(kps, pyr);
    ASSERT_EQ(cv_kps.size(), kps.size());
    for (std::size_t i = 0; i < kps.size(); ++i) {
        EXPECT_EQ(cv_kps[i].pt.x, kps[i].x);
        EXPECT_EQ(cv_kps[i].pt.y, kps[i].y);
        EXPECT_EQ(cv_kps[i].response, kps[i].score);
        EXPECT_EQ(cv_kps[i].octave, kps[i].level);
        EXPECT_FLOAT_EQ(cv_kps[i].size, 7.0f * level_scale(pyr, kps[i].level));
    }
    EXPECT_FLOAT_EQ(cv_kps[2].size, 7.0f * 1.5f * 1.5f * 1.5f);
    EXPECT_THROW(to_cv_keypoint({1, 1, 1, 4}, pyr), InvalidArgument);  // level outside the pyramid
    const std::vector<cv::Point2f> pts = to_cv_points(kps);
    ASSERT_EQ(pts.size(), 3u);
    EXPECT_EQ(pts[1], cv::Point2f(100.0f, 7.0f));
}

#if KESTREL_OPENCV_HAS_GPUMAT
// Only the header conversion is exercised: a GpuMat wrapping caller-owned memory needs no CUDA
// support in OpenCV (Debian's OpenCV has none), so this runs on any machine.
TEST(OpenCvInterop, GpuMatToDeviceViewAndBack) {
    std::vector<std::uint8_t> fake(64 * 48);
    cv::cuda::GpuMat g(40, 30, CV_8UC1, fake.data(), 64);
    const DeviceView v = device_view(g);
    EXPECT_EQ(v.data, fake.data());
    EXPECT_EQ(v.width, 30);
    EXPECT_EQ(v.height, 40);
    EXPECT_EQ(v.pitch, 64u);
    const cv::cuda::GpuMat back = to_gpumat(v);
    EXPECT_EQ(back.data, g.data);
    EXPECT_EQ(back.step, g.step);
    EXPECT_EQ(back.cols, 30);
    cv::cuda::GpuMat colour(4, 4, CV_8UC3, fake.data(), 64);
    EXPECT_THROW(device_view(colour), InvalidArgument);
    EXPECT_THROW(device_view(cv::cuda::GpuMat()), InvalidArgument);
}
#endif

}  // namespace
}  // namespace kestrel
