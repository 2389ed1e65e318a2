// Accuracy of RelativePoseEstimator beside OpenCV (cv::findEssentialMat with RANSAC, same threshold and
// confidence, then cv::recoverPose) on generated scenes: points in front of both cameras, 0.5 px noise,
// N = 50, 200, 1000, outlier ratios 0, 25, 50, 70 %. Per cell: median rotation and translation-direction
// error, inlier precision and recall, failure rate. Kestrel must be no worse in any cell (within a small
// statistical margin). KESTREL_POSE_TRIALS (default 20) sets the trials per cell; the table in
// docs/geometry.md was made with 200. And a wide equidistant fisheye (848x800, points up to 80 degrees off the
// axis, 0.5 px noise, 30 % outliers): Kestrel on bearings with the per-point threshold against OpenCV on the
// points undistorted to the z = 1 plane (cv::fisheye::undistortPoints, then findEssentialMat + recoverPose, the
// threshold 1 px at the mean focal length): recall >= 0.9, errors no worse.
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
#include "bearing_test_util.hpp"
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

TEST(RelativePoseOpenCV, WideFisheyeBearingsBeatUndistortedFindEssentialMat) {
    const char* env = std::getenv("KESTREL_POSE_TRIALS");
    const int trials = env ? std::max(1, std::atoi(env)) : 10;
    const Camera cam = wide_fisheye_848x800();
    const double f = 0.5 * (cam.fx + cam.fy);
    const cv::Matx33d Kc(cam.fx, 0, cam.cx, 0, cam.fy, cam.cy, 0, 0, 1);
    const cv::Vec4d D(cam.d[0], cam.d[1], cam.d[2], cam.d[3]);
    std::printf("| N | outliers | method | median rot err (deg) | median t-dir err (deg) | precision | recall | "
                "recall beyond 60 deg | failures |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int n : {200, 1000}) {
        std::mt19937_64 rng(848800 + n);
        RelativePoseConfig cfg;
        cfg.focal_px = f;
        cfg.threshold_px = 1.0;
        RelativePoseEstimator est(n, cfg, Backend::Cpu);
        Stats ks, cs, kn;
        double kwide = 0.0, cwide = 0.0, nwide = 0.0;
        std::vector<std::uint8_t> mask(n), nmask(n);
        for (int trial = 0; trial < trials; ++trial) {
            BearingSceneOptions o;
            o.n = n;
            o.outlier_ratio = 0.3;
            o.noise_px = 0.5;
            o.max_off_axis_deg = 80.0;
            const BearingScene sc = make_bearing_scene(rng, cam, o);
            PoseScene ps;  // the labels and the pose, for add_quality
            ps.R = sc.R;
            ps.t = sc.t;
            ps.inlier = sc.inlier;
            const auto wide_recall = [&](const std::uint8_t* m, bool ok) {
                int all = 0, kept = 0;
                for (int i = 0; i < n; ++i)
                    if (sc.inlier[i] && sc.off_axis1[i] > 60.0) {
                        ++all;
                        kept += ok && m[i];
                    }
                return all ? static_cast<double>(kept) / all : 1.0;
            };
            const RelativePoseResult r = est.estimate_bearings(sc.b1.data(), sc.b2.data(), n, mask.data(), nullptr,
                                                               sc.ppr.data());
            add_quality(ks, ps, r.status == PoseStatus::Ok,
                        Mat3{r.R[0], r.R[1], r.R[2], r.R[3], r.R[4], r.R[5], r.R[6], r.R[7], r.R[8]},
                        Vec3{r.t[0], r.t[1], r.t[2]}, mask.data());
            kwide += wide_recall(mask.data(), r.status == PoseStatus::Ok) / trials;
            // Kestrel on the same undistorted points (z = 1 plane), as before bearings
            std::vector<double> u1(2 * n), u2(2 * n);
            // OpenCV: undistort the pixels to the z = 1 plane, then findEssentialMat at the mean focal length
            std::vector<cv::Point2d> d1(n), d2(n), n1, n2;
            for (int i = 0; i < n; ++i) {
                d1[i] = {sc.px1[2 * i], sc.px1[2 * i + 1]};
                d2[i] = {sc.px2[2 * i], sc.px2[2 * i + 1]};
            }
            cv::fisheye::undistortPoints(d1, n1, Kc, D);
            cv::fisheye::undistortPoints(d2, n2, Kc, D);
            std::vector<cv::Point2d> p1(n), p2(n);
            for (int i = 0; i < n; ++i) {
                p1[i] = {f * n1[i].x, f * n1[i].y};
                p2[i] = {f * n2[i].x, f * n2[i].y};
                u1[2 * i] = n1[i].x;
                u1[2 * i + 1] = n1[i].y;
                u2[2 * i] = n2[i].x;
                u2[2 * i + 1] = n2[i].y;
            }
            const RelativePoseResult rn = est.estimate(u1.data(), u2.data(), n, nmask.data());
            add_quality(kn, ps, rn.status == PoseStatus::Ok,
                        Mat3{rn.R[0], rn.R[1], rn.R[2], rn.R[3], rn.R[4], rn.R[5], rn.R[6], rn.R[7], rn.R[8]},
                        Vec3{rn.t[0], rn.t[1], rn.t[2]}, nmask.data());
            nwide += wide_recall(nmask.data(), rn.status == PoseStatus::Ok) / trials;
            const cv::Mat K = (cv::Mat_<double>(3, 3) << f, 0, 0, 0, f, 0, 0, 0, 1);
            cv::Mat cmask, Rc, tc;
            const cv::Mat E = cv::findEssentialMat(p1, p2, K, cv::RANSAC, 0.999, 1.0, cmask);
            bool ok = E.rows == 3 && E.cols == 3;
            cv::Mat emask = cmask.clone();
            if (ok) ok = cv::recoverPose(E, p1, p2, K, Rc, tc, cmask) > 0;
            Mat3 R{};
            Vec3 t{};
            std::vector<std::uint8_t> cm(n, 0);
            if (ok) {
                for (int k = 0; k < 9; ++k) R[k] = Rc.at<double>(k / 3, k % 3);
                for (int k = 0; k < 3; ++k) t[k] = tc.at<double>(k);
                for (int i = 0; i < n; ++i) cm[i] = emask.at<std::uint8_t>(i) != 0;
            }
            add_quality(cs, ps, ok, R, t, cm.data());
            cwide += wide_recall(cm.data(), ok) / trials;
        }
        auto row = [&](const char* name, const Stats& s, double wide) {
            std::printf("| %d | 30 %% | %s | %.3f | %.3f | %.4f | %.4f | %.4f | %.1f %% |\n", n, name, s.median(s.rot),
                        s.median(s.dir), s.precision / s.trials, s.recall / s.trials, wide, 100.0 * s.fail_rate());
        };
        row("Kestrel CPU, bearings", ks, kwide);
        row("Kestrel CPU, z = 1 plane", kn, nwide);
        row("OpenCV, z = 1 plane", cs, cwide);
        std::fflush(stdout);
        EXPECT_GE(ks.recall / ks.trials, 0.9) << "N " << n;
        EXPECT_GE(ks.recall / ks.trials, cs.recall / cs.trials + 0.05) << "N " << n;
        EXPECT_GE(ks.precision / ks.trials, cs.precision / cs.trials - 0.02) << "N " << n;
        EXPECT_LE(ks.median(ks.rot), cs.median(cs.rot)) << "N " << n;
        EXPECT_LE(ks.median(ks.dir), cs.median(cs.dir)) << "N " << n;
        EXPECT_LE(ks.fail_rate(), cs.fail_rate()) << "N " << n;
    }
}

}  // namespace
}  // namespace kestrel::test
