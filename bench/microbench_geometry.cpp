// kestrel_microbench, relative-pose rows (issue: geometry, item 7): 1000 correspondences, 50 % outliers,
// confidence 0.999, threshold 1 px, end to end (host correspondences in, model and mask on the host).
//   cpu/kestrel-relative_pose/...      RelativePoseEstimator on Backend::Cpu (five-point, two-point)
//   cpu/kestrel-five_point_solve/1000  the cost of one five-point solve on the CPU (ns_per_solve)
//   cpu/kestrel-five_point_solve_lanes/1000  the same for the RANSAC hypotheses' solver (lanes one after another)
//   pose/bearings-device/1000/50pct    the tracker's device entry (microbench_gpu.cpp)
//   pose/solve/five-point/4096         the cost of one five-point solve on the GPU (microbench_gpu.cpp)
//   cpu/cv-findEssentialMat+recoverPose/...  OpenCV, same threshold and confidence (when OpenCV is found)
//   pose/.../end-to-end                RelativePoseEstimator on Backend::Cuda (CUDA builds; skips without a GPU)
//   floor/pose-transfer/1000           H2D of 1000 point pairs (doubles) + D2H of the mask and the model +
//                                      one sync: the transfer floor the end-to-end row is compared with.
#include <cmath>
#include <random>
#include <vector>

#include "kestrel/detail/five_point_lanes_rules.hpp"
#include "kestrel/detail/five_point_rules.hpp"
#include "kestrel/relative_pose.hpp"
#include "microbench.hpp"
#if KESTREL_BENCH_OPENCV
#include <opencv2/calib3d.hpp>
#endif
#if defined(KESTREL_POSE_PROFILE) && KESTREL_BENCH_CUDA
#include <string>

#include "kernels/geometry/ransac.cuh"
#endif

namespace kestrel::bench::micro {

PoseScene pose_scene(int n, double outliers) {
    std::mt19937_64 rng(20261124);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::normal_distribution<double> g(0.0, 1.0);
    PoseScene s;
    const double ang = 0.2, ax[3] = {0.3, 0.9, 0.1};
    const double an = std::sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    const double a[3] = {ax[0] / an, ax[1] / an, ax[2] / an};
    const double c = std::cos(ang), sn = std::sin(ang), C = 1 - c;
    const double R[9] = {c + a[0] * a[0] * C,         a[0] * a[1] * C - a[2] * sn, a[0] * a[2] * C + a[1] * sn,
                         a[1] * a[0] * C + a[2] * sn, c + a[1] * a[1] * C,         a[1] * a[2] * C - a[0] * sn,
                         a[2] * a[0] * C - a[1] * sn, a[2] * a[1] * C + a[0] * sn, c + a[2] * a[2] * C};
    for (int k = 0; k < 9; ++k) s.R[k] = R[k];
    const double t[3] = {0.8, 0.1, 0.59};
    const int n_out = static_cast<int>(std::lround(outliers * n));
    const double noise = 0.5 / 500.0;
    for (int i = 0; i < n; ++i) {
        const double x = 0.6 * u(rng), y = 0.5 * u(rng), z = 6.0 + 4.0 * u(rng);
        const double X[3] = {x * z, y * z, z};
        const double Y[3] = {R[0] * X[0] + R[1] * X[1] + R[2] * X[2] + t[0], R[3] * X[0] + R[4] * X[1] + R[5] * X[2] + t[1],
                             R[6] * X[0] + R[7] * X[1] + R[8] * X[2] + t[2]};
        s.x1.push_back(x + noise * g(rng));
        s.x1.push_back(y + noise * g(rng));
        if ((i * 7919) % n < n_out) {  // outliers spread over the indices (7919 is prime)
            s.x2.push_back(0.6 * u(rng));
            s.x2.push_back(0.5 * u(rng));
        } else {
            s.x2.push_back(Y[0] / Y[2] + noise * g(rng));
            s.x2.push_back(Y[1] / Y[2] + noise * g(rng));
        }
    }
    return s;
}

#if defined(KESTREL_POSE_PROFILE) && KESTREL_BENCH_CUDA
// Builds with KESTREL_POSE_PROFILE: the kernels' per-phase profile (kernels::pose_profile_take) of the calls
// since the last take as counters pf_* (means per call); `reset`: only clear it.
void pose_profile_counters(benchmark::State& st, bool reset) {
    const char* names[96];
    double v[96], calls = 0.0;
    const int m = kernels::pose_profile_take(names, v, 96, &calls);
    if (reset) return;
    st.counters["pf_calls"] = calls;
    for (int i = 0; i < m; ++i) st.counters[std::string("pf_") + names[i]] = v[i];
}
#define KESTREL_POSE_PF(st, reset) pose_profile_counters(st, reset)
#else
#define KESTREL_POSE_PF(st, reset) ((void)0)
#endif

namespace {

constexpr int kPosePoints = 1000;

// 1000 lanes-solver solves (15 doubles per sample and view); the solutions' count. Built twice on x86-64 with GCC,
// for CPUs with FMA and without (as the CPU backend's passes, src/geometry/relative_pose_cpu.cpp).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("fma", "default"), flatten, optimize("fp-contract=off")))
#endif
long solve_lanes_1000(const double* p, const double* q) {
    long solutions = 0;
    double E[detail::kFivePointMaxSolutions][9];
    int flag = 0;
    for (int s = 0; s < 1000; ++s) solutions += detail::five_point_solve_lanes(p + 15 * s, q + 15 * s, E, &flag);
    benchmark::DoNotOptimize(E[0][0]);
    return solutions;
}
constexpr double kPoseOutliers = 0.5;

// The solver rows' input: 1000 samples of 5 correspondences of the pose rows' scene (no outliers), drawn by a fixed
// LCG, as 3-vectors (x, y, 1): 15 doubles per sample and view.
void five_point_samples_1000(std::vector<double>& p, std::vector<double>& q) {
    const PoseScene sc = pose_scene(kPosePoints, 0.0);
    p.assign(15 * 1000, 0.0);
    q.assign(15 * 1000, 0.0);
    std::uint64_t z = 777;
    for (int s = 0; s < 1000; ++s)
        for (int j = 0; j < 5; ++j) {
            z = z * 6364136223846793005ULL + 1442695040888963407ULL;
            const int i = static_cast<int>((z >> 33) % kPosePoints);
            p[15 * s + 3 * j] = sc.x1[2 * i];
            p[15 * s + 3 * j + 1] = sc.x1[2 * i + 1];
            p[15 * s + 3 * j + 2] = 1.0;
            q[15 * s + 3 * j] = sc.x2[2 * i];
            q[15 * s + 3 * j + 1] = sc.x2[2 * i + 1];
            q[15 * s + 3 * j + 2] = 1.0;
        }
}

void pose_rows(const char* prefix, Backend backend, bool gpu) {
    for (const PoseMethod m : {PoseMethod::FivePoint, PoseMethod::TwoPointWithRotation}) {
        const std::string name = std::string(prefix) + (m == PoseMethod::FivePoint ? "five-point" : "two-point") +
                                 "/1000/50pct" + (gpu ? "/end-to-end" : "");
        add(name, gpu ? 300 : 10, [m, backend, gpu](benchmark::State& st) {
            if (gpu && !g_gpu) return st.SkipWithError(kNoGpu);
            const PoseScene sc = pose_scene(kPosePoints, kPoseOutliers);
            RelativePoseConfig cfg;
            cfg.method = m;
            cfg.focal_px = 500.0;
            RelativePoseEstimator est(kPosePoints, cfg, backend);
            std::vector<std::uint8_t> mask(kPosePoints);
            const auto call = [&] {
                benchmark::DoNotOptimize(est.estimate(sc.x1.data(), sc.x2.data(), kPosePoints, mask.data(), sc.R));
            };
            call();  // untimed first call
#if KESTREL_BENCH_CUDA
            if (gpu) {
                KESTREL_POSE_PF(st, true);
                gpu_wall_loop(st, call);
                KESTREL_POSE_PF(st, false);
            } else {
                wall_loop(st, call);
            }
#else
            wall_loop(st, call);
#endif
            const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), kPosePoints, mask.data(), sc.R);
            st.counters["hypotheses"] = r.hypotheses;
            st.counters["inliers"] = r.inliers;
        });
    }
}

}  // namespace

void register_geometry() {
    pose_rows("cpu/kestrel-relative_pose/", Backend::Cpu, false);
    // The cost of one five-point solve on the CPU (unpolished, as RANSAC runs it): 1000 random samples of the pose
    // rows' scene per iteration; ns_per_solve = the median / 1000.
    add("cpu/kestrel-five_point_solve/1000", 20, [](benchmark::State& st) {
        std::vector<double> p, q;
        five_point_samples_1000(p, q);
        long solutions = 0;
        wall_loop(st, [&] {
            double E[detail::kFivePointMaxSolutions][9];
            int flag = 0;
            solutions = 0;
            for (int s = 0; s < 1000; ++s) solutions += detail::five_point_solve3(&p[15 * s], &q[15 * s], E, &flag, false);
            benchmark::DoNotOptimize(E[0][0]);
        });
        st.counters["ns_per_solve"] = st.counters["median_us"];  // us per 1000 solves = ns per solve
        st.counters["solutions_per_solve"] = static_cast<double>(solutions) / 1000.0;
    });
    // The RANSAC hypotheses' solver (five_point_lanes_rules.hpp: its 16 lanes one after another), as the CPU
    // backend runs it (the same 1000 samples; on x86-64 with FMA its fma is one instruction, as in the backend).
    add("cpu/kestrel-five_point_solve_lanes/1000", 20, [](benchmark::State& st) {
        std::vector<double> p, q;
        five_point_samples_1000(p, q);
        long solutions = 0;
        wall_loop(st, [&] { solutions = solve_lanes_1000(p.data(), q.data()); });
        st.counters["ns_per_solve"] = st.counters["median_us"];  // us per 1000 solves = ns per solve
        st.counters["solutions_per_solve"] = static_cast<double>(solutions) / 1000.0;
    });
#if KESTREL_BENCH_OPENCV
    add("cpu/cv-findEssentialMat+recoverPose/1000/50pct", 10, [](benchmark::State& st) {
        const PoseScene sc = pose_scene(kPosePoints, kPoseOutliers);
        std::vector<cv::Point2d> p1(kPosePoints), p2(kPosePoints);
        for (int i = 0; i < kPosePoints; ++i) {
            p1[i] = {500.0 * sc.x1[2 * i] + 320.0, 500.0 * sc.x1[2 * i + 1] + 240.0};
            p2[i] = {500.0 * sc.x2[2 * i] + 320.0, 500.0 * sc.x2[2 * i + 1] + 240.0};
        }
        const cv::Mat K = (cv::Mat_<double>(3, 3) << 500.0, 0, 320.0, 0, 500.0, 240.0, 0, 0, 1);
        cv::Mat mask, R, t;
        wall_loop(st, [&] {
            const cv::Mat E = cv::findEssentialMat(p1, p2, K, cv::RANSAC, 0.999, 1.0, mask);
            if (E.rows == 3) cv::recoverPose(E, p1, p2, K, R, t, mask);
        });
    });
#endif
#if KESTREL_BENCH_CUDA
    pose_rows("pose/", Backend::Cuda, true);
    // What the two-point call's parts cost: the same call without the rotation-only pass, and without the
    // refinement.
    for (const int variant : {0, 1}) {
        const std::string name = std::string("pose/two-point/1000/50pct/end-to-end/") +
                                 (variant == 0 ? "no-rotation-pass" : "no-refine");
        add(name, 300, [variant](benchmark::State& st) {
            if (!g_gpu) return st.SkipWithError(kNoGpu);
            const PoseScene sc = pose_scene(kPosePoints, kPoseOutliers);
            RelativePoseConfig cfg;
            cfg.method = PoseMethod::TwoPointWithRotation;
            cfg.focal_px = 500.0;
            if (variant == 0) cfg.rotation_only = false;
            else cfg.refine = false;
            RelativePoseEstimator est(kPosePoints, cfg, Backend::Cuda);
            std::vector<std::uint8_t> mask(kPosePoints);
            const auto call = [&] {
                benchmark::DoNotOptimize(est.estimate(sc.x1.data(), sc.x2.data(), kPosePoints, mask.data(), sc.R));
            };
            call();
            KESTREL_POSE_PF(st, true);
            gpu_wall_loop(st, call);
            KESTREL_POSE_PF(st, false);
            const RelativePoseResult r = est.estimate(sc.x1.data(), sc.x2.data(), kPosePoints, mask.data(), sc.R);
            st.counters["hypotheses"] = r.hypotheses;
            st.counters["inliers"] = r.inliers;
        });
    }
    register_pose_floor();
    register_pose_gpu();
#endif
}

}  // namespace kestrel::bench::micro
