// Independent references for the relative pose, computed with Eigen (a different code path from the library's own
// arithmetic): the linear eight-point essential matrix of exact correspondences (the null vector of the epipolar
// design matrix by JacobiSVD, projected onto the essential manifold by a second SVD), the translation of the
// two-point model as the null vector of its constraints (SelfAdjointEigenSolver), and the manifold checks of an
// estimate (singular values 1, 1, 0; R a rotation). Planar-image points and bearings beyond 90 degrees.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <random>

#include "kestrel/relative_pose.hpp"
#include "pose_test_util.hpp"

namespace kestrel {
namespace {

using Mat3e = Eigen::Matrix3d;

Mat3e to_eigen(const double* m) {
    Mat3e e;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) e(i, j) = m[3 * i + j];
    return e;
}

/// The eight-point reference: E with p2^T E p1 = 0 for every correspondence (3-vectors, rows of P1 and P2), the
/// least-squares null vector of the n x 9 design matrix, then the nearest essential matrix (singular values 1, 1, 0).
Mat3e eight_point(const Eigen::MatrixX3d& P1, const Eigen::MatrixX3d& P2) {
    Eigen::MatrixXd A(P1.rows(), 9);
    for (Eigen::Index i = 0; i < P1.rows(); ++i)
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) A(i, 3 * a + b) = P2(i, a) * P1(i, b);
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(A, Eigen::ComputeFullV);
    const Eigen::VectorXd e = svd.matrixV().col(8);
    Mat3e E;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) E(a, b) = e(3 * a + b);
    Eigen::JacobiSVD<Mat3e> s2(E, Eigen::ComputeFullU | Eigen::ComputeFullV);
    return s2.matrixU() * Eigen::Vector3d(1, 1, 0).asDiagonal() * s2.matrixV().transpose();
}

/// min over the sign of |a/|a| - b/|b||| (Frobenius).
double distance(const Mat3e& a, const Mat3e& b) {
    const Mat3e u = a / a.norm(), v = b / b.norm();
    return std::min((u - v).norm(), (u + v).norm());
}

/// The estimate lies on the essential manifold and decomposes into a rotation and a unit translation.
void expect_on_manifold(const RelativePoseResult& r, const std::string& what) {
    const Mat3e E = to_eigen(r.E.data()), R = to_eigen(r.R.data());
    const Eigen::Vector3d sv = E.jacobiSvd().singularValues();
    EXPECT_NEAR(sv(1) / sv(0), 1.0, 1e-9) << what;
    EXPECT_LT(sv(2) / sv(0), 1e-9) << what;
    EXPECT_LT((R.transpose() * R - Mat3e::Identity()).norm(), 1e-12) << what;
    EXPECT_NEAR(R.determinant(), 1.0, 1e-12) << what;
    const Eigen::Vector3d t(r.t[0], r.t[1], r.t[2]);
    EXPECT_NEAR(t.norm(), 1.0, 1e-12) << what;
    Mat3e tx;
    tx << 0, -t(2), t(1), t(2), 0, -t(0), -t(1), t(0), 0;
    EXPECT_LT(distance(tx * R, E), 1e-9) << what << ": E is not [t]x R";
}

TEST(RelativePoseEigen, EssentialMatrixOfExactDataEqualsTheSvdReference) {
    std::mt19937_64 rng(41);
    for (int trial = 0; trial < 20; ++trial) {
        test::SceneOptions o;
        o.n = 60;
        const test::PoseScene s = test::make_scene(rng, o);
        Eigen::MatrixX3d P1(o.n, 3), P2(o.n, 3);
        for (int i = 0; i < o.n; ++i) {
            P1.row(i) << s.x1[2 * i], s.x1[2 * i + 1], 1.0;
            P2.row(i) << s.x2[2 * i], s.x2[2 * i + 1], 1.0;
        }
        const Mat3e ref = eight_point(P1, P2);
        const std::string what = "trial " + std::to_string(trial);
        ASSERT_LT(distance(ref, to_eigen(s.E.data())), 1e-9) << what << ": the reference itself";
        RelativePoseEstimator est(o.n, {}, Backend::Cpu);
        const RelativePoseResult r = est.estimate(s.x1.data(), s.x2.data(), o.n);
        ASSERT_EQ(r.status, PoseStatus::Ok) << what;
        EXPECT_LT(distance(to_eigen(r.E.data()), ref), 1e-8) << what;
        expect_on_manifold(r, what);
    }
}

TEST(RelativePoseEigen, NoisyEstimateStaysOnTheManifoldNearTheReference) {
    std::mt19937_64 rng(42);
    for (int trial = 0; trial < 10; ++trial) {
        test::SceneOptions o;
        o.n = 300;
        o.noise_px = 0.5;
        o.outlier_ratio = 0.3;
        const test::PoseScene s = test::make_scene(rng, o);
        RelativePoseConfig cfg;
        cfg.focal_px = o.focal_px;
        cfg.seed = static_cast<std::uint64_t>(trial);
        RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
        const RelativePoseResult r = est.estimate(s.x1.data(), s.x2.data(), o.n);
        const std::string what = "trial " + std::to_string(trial);
        ASSERT_EQ(r.status, PoseStatus::Ok) << what;
        expect_on_manifold(r, what);
        // The eight-point reference on the true inliers (noisy): the estimate is at least as close to the truth.
        Eigen::MatrixX3d P1(o.n, 3), P2(o.n, 3);
        int m = 0;
        for (int i = 0; i < o.n; ++i)
            if (s.inlier[i]) {
                P1.row(m) << s.x1[2 * i], s.x1[2 * i + 1], 1.0;
                P2.row(m) << s.x2[2 * i], s.x2[2 * i + 1], 1.0;
                ++m;
            }
        const Mat3e ref = eight_point(P1.topRows(m), P2.topRows(m));
        const Mat3e truth = to_eigen(s.E.data());
        EXPECT_LT(distance(to_eigen(r.E.data()), truth), std::max(2.0 * distance(ref, truth), 0.02)) << what;
    }
}

TEST(RelativePoseEigen, TwoPointTranslationIsTheNullVectorOfItsConstraints) {
    std::mt19937_64 rng(43);
    for (int trial = 0; trial < 20; ++trial) {
        test::SceneOptions o;
        o.n = 40;
        const test::PoseScene s = test::make_scene(rng, o);
        // t . ((R p) x q) = 0 for every correspondence: t spans the null space of sum c c^T.
        const Mat3e R = to_eigen(s.R.data());
        Mat3e C = Mat3e::Zero();
        for (int i = 0; i < o.n; ++i) {
            const Eigen::Vector3d p(s.x1[2 * i], s.x1[2 * i + 1], 1.0), q(s.x2[2 * i], s.x2[2 * i + 1], 1.0);
            const Eigen::Vector3d c = (R * p).cross(q);
            C += c * c.transpose();
        }
        Eigen::SelfAdjointEigenSolver<Mat3e> eig(C);
        const Eigen::Vector3d ref = eig.eigenvectors().col(0);  // the smallest eigenvalue's
        RelativePoseConfig cfg;
        cfg.method = PoseMethod::TwoPointWithRotation;
        RelativePoseEstimator est(o.n, cfg, Backend::Cpu);
        const RelativePoseResult r = est.estimate(s.x1.data(), s.x2.data(), o.n, nullptr, s.R.data());
        const std::string what = "trial " + std::to_string(trial);
        ASSERT_EQ(r.status, PoseStatus::Ok) << what;
        const Eigen::Vector3d t(r.t[0], r.t[1], r.t[2]);
        EXPECT_LT(std::min((t - ref).norm(), (t + ref).norm()), 1e-9) << what;
        EXPECT_GT(t.dot(Eigen::Vector3d(s.t[0], s.t[1], s.t[2])), 0.999999) << what << ": the cheirality's sign";
        expect_on_manifold(r, what);
    }
}

TEST(RelativePoseEigen, BearingsBeyondNinetyDegreesEqualTheSvdReference) {
    // Points all around the camera (a fisheye's field of view: up to 120 degrees off the axis), exact bearings.
    std::mt19937_64 rng(44);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 10; ++trial) {
        const test::Mat3 R = test::axis_angle({u(rng), u(rng), u(rng)}, 0.1 * std::fabs(u(rng)));
        test::Vec3 t{u(rng), u(rng), u(rng)};
        const double nt = std::sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
        for (double& v : t) v /= nt;
        const int n = 80;
        std::vector<double> b1, b2;
        Eigen::MatrixX3d P1(n, 3), P2(n, 3);
        int behind = 0;
        while (static_cast<int>(b1.size()) < 3 * n) {
            const double th = 2.1 * std::fabs(u(rng)), ph = M_PI * u(rng), d = 3.0 + 5.0 * std::fabs(u(rng));
            const test::Vec3 X{d * std::sin(th) * std::cos(ph), d * std::sin(th) * std::sin(ph), d * std::cos(th)};
            const test::Vec3 RX = test::mat_vec(R, X);
            const test::Vec3 Y{RX[0] + t[0], RX[1] + t[1], RX[2] + t[2]};
            const double ny = std::sqrt(Y[0] * Y[0] + Y[1] * Y[1] + Y[2] * Y[2]);
            const int i = static_cast<int>(b1.size()) / 3;
            for (int c = 0; c < 3; ++c) {
                b1.push_back(X[c] / d);
                b2.push_back(Y[c] / ny);
            }
            P1.row(i) << X[0] / d, X[1] / d, X[2] / d;
            P2.row(i) << Y[0] / ny, Y[1] / ny, Y[2] / ny;
            behind += X[2] < 0 ? 1 : 0;
        }
        ASSERT_GT(behind, 5);
        const Mat3e ref = eight_point(P1, P2);
        const std::string what = "trial " + std::to_string(trial);
        ASSERT_LT(distance(ref, to_eigen(test::matmul(test::skew(t), R).data())), 1e-9) << what;
        RelativePoseEstimator est(n, {}, Backend::Cpu);
        const RelativePoseResult r = est.estimate_bearings(b1.data(), b2.data(), n);
        ASSERT_EQ(r.status, PoseStatus::Ok) << what;
        EXPECT_EQ(r.inliers, n) << what;
        EXPECT_LT(distance(to_eigen(r.E.data()), ref), 1e-8) << what;
        expect_on_manifold(r, what);
    }
}

}  // namespace
}  // namespace kestrel
