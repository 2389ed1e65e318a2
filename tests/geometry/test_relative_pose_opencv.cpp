// Accuracy of RelativePoseEstimator beside OpenCV (cv::findEssentialMat with RANSAC, same threshold and
// confidence, then cv::recoverPose) on generated scenes: points in front of both cameras, 0.5 px noise,
// N = 50, 200, 1000, outlier ratios 0, 25, 50, 70 %. Per cell: median rotation and translation-direction
// error, inlier precision and recall, failure rate. Kestrel must be no worse in any cell (within a small
// statistical margin). KESTREL_POSE_TRIALS (default 20) sets the trials per cell; the table in
// docs/geometry.md was made with 200.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <opencv2/calib3d.hpp>
#include <opencv2/core.hpp>

#include "kestrel/relative_pose.hpp"
#include "pose_test_util.hpp"

namespace kestrel::test {
namespace {

struct Stats {
    std::vector<double> rot, dir;
    double precision = 0, recall = 0;
    int failures = 0, trials = 0;
    double seconds = 0;
    double median(std::vector<double> v) const {
        if (v.empty()) return 180.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
    double fail_rate() const { return trials ? static_cast<double>(failures) / trials : 0.0; }
};

constexpr double kFocal = 500.0, kCx = 320.0, kCy = 240.0;
constexpr double kFailRotDeg = 2.0, kFailDirDeg = 10.0;

void add_quality(Stats& s, const PoseScene& sc, bool ok, const Mat3& R, const Vec3& t, const std::uint8_t* mask) {
    ++s.trials;
    int tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < sc.inlier.size(); ++i) {
        const bool m = ok && mask[i];
        tp += m && sc.inlier[i];
        fp += m && !sc.inlier[i];
        fn += !m && sc.inlier[i];
    }
    s.precision += tp + fp ? static_cast<double>(tp) / (tp + fp) : 0.0;
    s.recall += tp + fn ? static_cast<double>(tp) / (tp + fn) : 0.0;
    const double re = ok ? rotation_error_deg(sc.R, R) : 180.0;
    const double de = ok ? direction_error_deg(sc.t, t) : 180.0;
    s.rot.push_back(re);
    s.dir.push_back(de);
    if (!ok || re > kFailRotDeg || de > kFailDirDeg) ++s.failures;
}

TEST(RelativePoseOpenCV, AccuracyTableNoWorseThanFindEssentialMat) {
    const char* env = std::getenv("KESTREL_POSE_TRIALS");
    const int trials = env ? std::max(1, std::atoi(env)) : 20;
    std::printf("| N | outliers | method | median rot err (deg) | median t-dir err (deg) | precision | recall | "
                "failures | ms/call |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int n : {50, 200, 1000}) {
        for (double outl : {0.0, 0.25, 0.5, 0.7}) {
            std::mt19937_64 rng(1000 * n + static_cast<int>(100 * outl));
            RelativePoseConfig cfg;
            cfg.focal_px = kFocal;
            cfg.threshold_px = 1.0;
            cfg.confidence = 0.999;
            RelativePoseEstimator est(n, cfg, Backend::Cpu);
            Stats ks, cs;
            std::vector<std::uint8_t> mask(n);
            for (int trial = 0; trial < trials; ++trial) {
                SceneOptions o;
                o.n = n;
                o.outlier_ratio = outl;
                o.noise_px = 0.5;
                o.focal_px = kFocal;
                const PoseScene sc = make_scene(rng, o);
                auto t0 = std::chrono::steady_clock::now();
                const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), n, mask.data());
                ks.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                add_quality(ks, sc, r.status == PoseStatus::Ok,
                            Mat3{r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]},
                            Vec3{r.t[0], r.t[1], r.t[2]}, mask.data());
                // OpenCV on pixel coordinates.
                std::vector<cv::Point2d> p1(n), p2(n);
                for (int i = 0; i < n; ++i) {
                    p1[i] = {kFocal * sc.x1[2 * i] + kCx, kFocal * sc.x1[2 * i + 1] + kCy};
                    p2[i] = {kFocal * sc.x2[2 * i] + kCx, kFocal * sc.x2[2 * i + 1] + kCy};
                }
                const cv::Mat K = (cv::Mat_<double>(3, 3) << kFocal, 0, kCx, 0, kFocal, kCy, 0, 0, 1);
                cv::Mat cmask, Rc, tc;
                t0 = std::chrono::steady_clock::now();
                const cv::Mat E = cv::findEssentialMat(p1, p2, K, cv::RANSAC, 0.999, 1.0, cmask);
                bool ok = E.rows == 3 && E.cols == 3;
                cv::Mat emask = cmask.clone();
                if (ok) ok = cv::recoverPose(E, p1, p2, K, Rc, tc, cmask) > 0;
                cs.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                Mat3 R{};
                Vec3 t{};
                std::vector<std::uint8_t> cm(n, 0);
                if (ok) {
                    for (int k = 0; k < 9; ++k) R[k] = Rc.at<double>(k / 3, k % 3);
                    for (int k = 0; k < 3; ++k) t[k] = tc.at<double>(k);
                    for (int i = 0; i < n; ++i) cm[i] = emask.at<std::uint8_t>(i) != 0;
                }
                add_quality(cs, sc, ok, R, t, cm.data());
            }
            auto row = [&](const char* name, const Stats& s) {
                std::printf("| %d | %.0f %% | %s | %.3f | %.3f | %.4f | %.4f | %.1f %% | %.2f |\n", n, 100 * outl, name,
                            s.median(s.rot), s.median(s.dir), s.precision / s.trials, s.recall / s.trials,
                            100.0 * s.fail_rate(), 1e3 * s.seconds / s.trials);
            };
            row("Kestrel CPU", ks);
            row("OpenCV", cs);
            // No worse, within a statistical margin for this many trials.
            const double fail_margin = std::max(0.05, 3.0 / trials);
            EXPECT_LE(ks.fail_rate(), cs.fail_rate() + fail_margin) << "N " << n << " outliers " << outl;
            EXPECT_LE(ks.median(ks.rot), 1.2 * cs.median(cs.rot) + 0.02) << "N " << n << " outliers " << outl;
            EXPECT_LE(ks.median(ks.dir), 1.2 * cs.median(cs.dir) + 0.1) << "N " << n << " outliers " << outl;
            EXPECT_GE(ks.precision / ks.trials, cs.precision / cs.trials - 0.02) << "N " << n << " outliers " << outl;
            EXPECT_GE(ks.recall / ks.trials, cs.recall / cs.trials - 0.02) << "N " << n << " outliers " << outl;
            std::fflush(stdout);
        }
    }
}

}  // namespace
}  // namespace kestrel::test
