// The stereo tracker on Middlebury's aloe pair (opencv-doc: aloeL, aloeR and aloeGT, the left image's
// ground-truth disparity, 1 px per grey level at this full size, 0 = unknown) beside OpenCV: its pyramidal LK
// from the same points left to right, and its SGBM disparity map sampled at them (tools/eval_stereo, the same
// harness as kestrel_eval_stereo). Only robust facts are asserted: the ground truth's scale, and Kestrel no
// worse than OpenCV's LK with the same pyramid (median error within 0.1 px, over 1 px within 5 points; once the
// tracks seed from the frame before, unmatched within 10 points).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <opencv2/core.hpp>

#include "kestrel/stereo_tracker.hpp"
#include "stereo_eval.hpp"
#include "test_data.hpp"

namespace kestrel::test {
namespace {

cv::Mat as_mat(const HostImage& img) {
    cv::Mat m(img.height(), img.width(), CV_8UC1);
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) m.at<unsigned char>(y, x) = img.at(x, y);
    return m;
}

struct Aloe {
    HostImage left = real_image("aloeL.png"), right = real_image("aloeR.png"), gt = real_image("aloeGT.png");
};

// The ground truth's scale: SGBM's disparities over the ground truth's grey levels, at every pixel where both
// are known, have a median of 1 (measured: 1.002 over ~235 000 pixels): one grey level is one pixel of
// disparity at this size (1282x1110, Middlebury 2006's full size of Aloe).
TEST(StereoOpenCv, AloeGroundTruthIsOnePixelPerGreyLevel) {
    const Aloe a;
    ASSERT_EQ(a.left.width(), a.gt.width());
    ASSERT_EQ(a.left.height(), a.gt.height());
    const cv::Mat sgbm = kestrel_eval::sgbm_map(as_mat(a.left), as_mat(a.right));
    std::vector<double> ratio;
    for (int y = 0; y < a.gt.height(); y += 2)
        for (int x = 0; x < a.gt.width(); x += 2) {
            const int g = a.gt.at(x, y);
            const short s = sgbm.at<short>(y, x);
            if (g > 0 && s > 0) ratio.push_back(s / 16.0 / g);
        }
    ASSERT_GT(ratio.size(), 50000u);
    std::nth_element(ratio.begin(), ratio.begin() + ratio.size() / 2, ratio.end());
    EXPECT_NEAR(ratio[ratio.size() / 2], 1.0, 0.02);
}

// Kestrel's features of aloeL (the first frame's tracks), matched into aloeR, beside OpenCV's LK from the same
// points with the same pyramid (5 levels: the disparities at the features reach 139 px; window 16, Kestrel's
// patch) and SGBM (mode HH, block 5, 256 disparities, P1/P2 = 8/32 * 25) sampled bilinearly at them.
TEST(StereoOpenCv, AloeDisparityBesideOpenCv) {
    const Aloe a;
    const int levels = 5;
    StereoConfig cfg;
    cfg.match.lk.pyramid.levels = levels;  // StereoMatchConfig's default
    const StereoRig rig = rectified_rig(3740.0, (a.left.width() - 1) * 0.5, (a.left.height() - 1) * 0.5, 0.16);
    StereoTracker tracker(a.left.width(), a.left.height(), rig, cfg, Backend::Cpu);
    const cv::Mat gt8 = as_mat(a.gt), L = as_mat(a.left), R = as_mat(a.right);
    // The first frame (every track new, seeded at zero disparity), then the same pair again: the tracks seed with
    // their previous disparity or their matched neighbours' median, as they would in a sequence.
    kestrel_eval::StereoScore k, k_seeded;
    std::vector<cv::Point2f> pts;
    for (int frame = 0; frame < 5; ++frame) {
        const std::vector<StereoTrack>& tracks = tracker.track(a.left.view(), a.right.view());
        std::vector<cv::Point2f> p;
        std::vector<double> d;
        for (const StereoTrack& t : tracks) {
            p.emplace_back(t.left.x, t.left.y);
            d.push_back(t.status == StereoStatus::Matched ? t.disparity : NAN);
        }
        if (frame == 0) {
            pts = p;
            k = kestrel_eval::score("Kestrel CPU, 5 levels", d, kestrel_eval::ground_truth_at(gt8, p));
        }
        if (frame == 4) k_seeded = kestrel_eval::score("Kestrel CPU, 5th frame", d, kestrel_eval::ground_truth_at(gt8, p));
    }
    const std::vector<double> truth = kestrel_eval::ground_truth_at(gt8, pts);
    const auto lk = kestrel_eval::score("OpenCV LK 16x16, maxLevel 4",
                                        kestrel_eval::opencv_lk_disparities(L, R, pts, 16, levels - 1), truth);
    const auto sgbm = kestrel_eval::score("OpenCV SGBM", kestrel_eval::sample_disparities(kestrel_eval::sgbm_map(L, R), pts), truth);
    std::printf("%s\n%s\n%s\n%s\n%s\n", kestrel_eval::table_header().c_str(), kestrel_eval::table_row(k).c_str(),
                kestrel_eval::table_row(k_seeded).c_str(), kestrel_eval::table_row(lk).c_str(),
                kestrel_eval::table_row(sgbm).c_str());
    // Measured (CPU): first frame 60 of 195 matched (69 % unmatched: disparities of 44 to 139 px, most beyond
    // LK's reach from a zero seed), median 0.31 px, none over 1 px; fifth frame 46 % unmatched, median 0.31 px;
    // OpenCV LK 60 % unmatched, median 0.30 px, 2.5 % over 1 px (the ground truth is in whole pixels: a median
    // near 0.25-0.3 px is its rounding).
    // Bounds: today's figures plus a margin of 3 % of the points (6 of 195) for the shares and 0.03 px for the
    // medians (a tenth of the truth's rounding); where Kestrel is compared with OpenCV's LK, at most LK's figure.
    ASSERT_GE(k.points, 100u) << "features with a known ground truth";
    ASSERT_GE(k.matched, 20u);
    ASSERT_GE(lk.matched, 20u);
    // First frame: the matches are as accurate as LK's (median 0.314 against 0.301 px; none over 1 px against 2.5 %),
    // and the share out of reach from a zero seed is today's (69.2 %).
    EXPECT_LE(k.median_error, lk.median_error + 0.03);
    EXPECT_LE(k.over_1px, lk.over_1px);
    EXPECT_LE(k.unmatched, 0.692 + 0.03);
    // Fifth frame: the seeds reach further than LK from zero (46.2 % unmatched against 59.5 %), as accurately
    // (0.310 px, 1.0 % over 1 px).
    EXPECT_LE(k_seeded.median_error, lk.median_error + 0.03);
    EXPECT_LE(k_seeded.over_1px, lk.over_1px);
    EXPECT_LE(k_seeded.unmatched, 0.462 + 0.03);
    EXPECT_LT(k_seeded.unmatched, lk.unmatched);
    // The harness reads the truth right: SGBM, a dense matcher made for this data, is within half a pixel.
    EXPECT_LT(sgbm.median_error, 0.5);
}

}  // namespace
}  // namespace kestrel::test
