// Evaluation of the selection policies on a real viewpoint change, beside OpenCV's ORB detector:
// repeatability from graf1.png to graf3.png under the published homography H1to3p (same feature budget
// for grid, PyCA and cv::ORB), features and their spread; and the four FAST scores under both policies
// (one level, one keypoint per 32x32 cell). The properties are tests; the figures are printed (and quoted
// in docs/detector.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <opencv2/features2d.hpp>

#include "kestrel/feature_detector.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

// H1to3p of the Graffiti sequence (Mikolajczyk et al., "A comparison of affine region detectors", IJCV
// 2005), as shipped in OpenCV's samples/data/H1to3p.xml: maps graf1 pixels to graf3 pixels.
const double kH13[9] = {7.6285898e-01, -2.9922929e-01, 2.2567123e+02, 3.3443473e-01, 1.0143901e+00,
                        -7.6999973e+01, 3.4663091e-04, -1.4364524e-05, 1.0};

struct P2 {
    double x, y;
};

P2 apply(const cv::Matx33d& H, double x, double y) {
    const double w = H(2, 0) * x + H(2, 1) * y + H(2, 2);
    return {(H(0, 0) * x + H(0, 1) * y + H(0, 2)) / w, (H(1, 0) * x + H(1, 1) * y + H(1, 2)) / w};
}

/// Repeatability (Mikolajczyk's protocol on points): the keypoints of each image whose projection lies in
/// the other image (the common part), and among those of image 1 the ones with a keypoint of image 2
/// within eps pixels of their projection; divided by the smaller of the two common counts.
double repeatability(const std::vector<P2>& a, const std::vector<P2>& b, int w, int h, double eps = 2.5) {
    const cv::Matx33d H(kH13), Hi = H.inv();
    const auto inside = [&](P2 p) { return p.x >= 0 && p.y >= 0 && p.x <= w - 1 && p.y <= h - 1; };
    std::vector<P2> a2, b_common;
    for (const P2& p : a)
        if (const P2 q = apply(H, p.x, p.y); inside(q)) a2.push_back(q);
    for (const P2& p : b)
        if (inside(apply(Hi, p.x, p.y))) b_common.push_back(p);
    const std::size_t n = std::min(a2.size(), b_common.size());
    if (n == 0) return 0.0;
    std::size_t hits = 0;
    for (const P2& q : a2)
        for (const P2& p : b_common)
            if (std::hypot(p.x - q.x, p.y - q.y) <= eps) {
                ++hits;
                break;
            }
    return static_cast<double>(std::min(hits, n)) / static_cast<double>(n);
}

/// Spread: the fraction of 64x64 blocks of the image that hold at least one keypoint.
double coverage(const std::vector<P2>& a, int w, int h) {
    const int cols = (w + 63) / 64, rows = (h + 63) / 64;
    std::vector<char> hit(static_cast<std::size_t>(cols * rows), 0);
    for (const P2& p : a) hit[static_cast<std::size_t>(static_cast<int>(p.y) / 64 * cols + static_cast<int>(p.x) / 64)] = 1;
    return static_cast<double>(std::count(hit.begin(), hit.end(), 1)) / static_cast<double>(hit.size());
}

std::vector<P2> points(const std::vector<Keypoint>& kps) {
    std::vector<P2> out;
    for (const Keypoint& k : kps) out.push_back({k.x, k.y});
    return out;
}

struct Result {
    double rep, cov1;
    std::size_t n1, n2;
};

Result evaluate(const DetectorConfig& cfg, const HostImage& g1, const HostImage& g3) {
    const auto a = points(detect_cpu(g1.view(), cfg)), b = points(detect_cpu(g3.view(), cfg));
    return {repeatability(a, b, g3.width(), g3.height()), coverage(a, g1.width(), g1.height()), a.size(), b.size()};
}

DetectorConfig grid_orb_pyramid(int budget) {
    DetectorConfig c;
    c.pyramid = {8, 1.2f};
    c.fast.score = ScoreType::MaxThreshold;
    c.per_cell = 2;
    c.max_features = budget;
    return c;
}

DetectorConfig pyca_orb_pyramid(int budget) {
    DetectorConfig c = grid_orb_pyramid(budget);
    c.selection = SelectionPolicy::PyCA;
    c.pyca.cell.fill(16);
    c.per_cell = 4;
    return c;
}

TEST(PycaVsOpenCV, RepeatabilityOnGraf1ToGraf3WithOneBudget) {
    const HostImage g1 = test::real_image("graf1.png"), g3 = test::real_image("graf3.png");
    const int budget = 500;
    const Result grid = evaluate(grid_orb_pyramid(budget), g1, g3);
    const Result pyca = evaluate(pyca_orb_pyramid(budget), g1, g3);
    // cv::ORB's detector: FAST on 8 levels of 1.2, Harris ranking, the same budget.
    const cv::Mat m1(g1.height(), g1.width(), CV_8UC1, const_cast<std::uint8_t*>(g1.data()));
    const cv::Mat m3(g3.height(), g3.width(), CV_8UC1, const_cast<std::uint8_t*>(g3.data()));
    auto orb = cv::ORB::create(budget, 1.2f, 8);
    std::vector<cv::KeyPoint> k1, k3;
    orb->detect(m1, k1);
    orb->detect(m3, k3);
    std::vector<P2> o1, o3;
    for (const auto& k : k1) o1.push_back({k.pt.x, k.pt.y});
    for (const auto& k : k3) o3.push_back({k.pt.x, k.pt.y});
    const Result orb_r{repeatability(o1, o3, g3.width(), g3.height()), coverage(o1, g1.width(), g1.height()), o1.size(),
                       o3.size()};
    std::printf("graf1 -> graf3, budget %d, 8 levels of 1.2 (repeatability at 2.5 px; 64x64 blocks covered in graf1)\n",
                budget);
    for (const auto& [name, r] : {std::pair<const char*, Result>{"grid (MT, K=2 per 32x32)", grid},
                                  {"PyCA (MT, 16-px cells, q=3, K=4)", pyca},
                                  {"cv::ORB detector", orb_r}})
        std::printf("  %-34s repeatability %.3f  features %zu / %zu  coverage %.3f\n", name, r.rep, r.n1, r.n2, r.cov1);
    // Every detector fills the budget on both images. Kestrel's policies are less repeatable than ORB's detector on
    // this pair (today grid 0.580, PyCA 0.674, cv::ORB 0.877: ORB's Harris ranking keeps the strongest corners,
    // clustered) and spread twice as widely (64x64 blocks covered: 0.800, 0.792, 0.400). Bounds: today's
    // repeatability less 0.03 (15 of 500 features), PyCA above the grid, coverage at least ORB's plus 0.3.
    for (const Result& r : {grid, pyca}) {
        EXPECT_EQ(r.n1, static_cast<std::size_t>(budget));
        EXPECT_EQ(r.n2, static_cast<std::size_t>(budget));
        EXPECT_GE(r.cov1, orb_r.cov1 + 0.3);
    }
    EXPECT_GE(grid.rep, 0.580 - 0.03);
    EXPECT_GE(pyca.rep, 0.674 - 0.03);
    EXPECT_GT(pyca.rep, grid.rep);
    EXPECT_GT(orb_r.rep, 0.8) << "the harness: cv::ORB's own repeatability (0.877 with OpenCV 4.6)";
}

TEST(PycaVsOpenCV, FourScoresUnderBothPolicies) {
    const HostImage g1 = test::real_image("graf1.png"), g3 = test::real_image("graf3.png");
    const ScoreType scores[] = {ScoreType::SadCircle, ScoreType::SadArc, ScoreType::MaxThreshold, ScoreType::Harris};
    double grid_rep[4], pyca_rep[4];
    std::printf("graf1 -> graf3: one keypoint per 32x32 cell (repeatability at 2.5 px)\n");
    for (int i = 0; i < 4; ++i) {
        DetectorConfig grid;  // the grid, 1 level, 1 per 32x32 cell
        grid.pyramid = {1, 2.0f};
        grid.fast.score = scores[i];
        DetectorConfig pyca = grid;  // PyCA on 8 levels of 1.2, the same level-0 budget
        pyca.selection = SelectionPolicy::PyCA;
        pyca.pyramid = {8, 1.2f};
        pyca.pyca.cell.fill(16);
        const Result g = evaluate(grid, g1, g3), p = evaluate(pyca, g1, g3);
        grid_rep[i] = g.rep;
        pyca_rep[i] = p.rep;
        std::printf("  %-14s grid %.3f (%zu features)   PyCA %.3f (%zu features)\n", to_string(scores[i]), g.rep, g.n1,
                    p.rep, p.n1);
    }
    // SAD over the circle selects less repeatable corners than the maximum threshold, under both policies.
    EXPECT_LT(grid_rep[0], grid_rep[2]);
    EXPECT_LT(pyca_rep[0], pyca_rep[2]);
}

}  // namespace
}  // namespace kestrel
