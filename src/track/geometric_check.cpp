// FeatureTracker's geometric check (src/track/geometric_check.hpp). Per frame:
//   1. the candidate tracks' previous and current positions -> normalized points (unproject_cpu with the
//      configured camera; a track either of whose positions has no valid preimage is not checked, and kept);
//   2. fewer than min_tracks checked tracks: model None, nothing rejected;
//   3. the relative pose (RelativePoseEstimator on the CPU: five-point, or two-point with the rotation prior),
//      and the rotation-only model (rotation_only_fit: the prior, or a two-point rotation RANSAC);
//   4. model selection by GRIC (Torr 1998; noise sigma = threshold / 2): the pose (manifold dimension 3; 5
//      parameters, 2 with a prior) on the Sampson errors, the rotation (dimension 2; 3 parameters, 0 with a
//      prior) on half the squared transfer error (the distance to the rotation manifold in the joint image
//      space when both images share the error); the lower score decides;
//   5. a checked track outside the deciding model's inliers becomes an outlier; under a rotation-only decision
//      only when the pose (if any) rejects it too or its transfer error is at least twice the threshold, so that
//      small parallax the selection missed ends no static track.
// Every step is host code run by both backends on the same LK verdicts: the tracks are the same on both.
#include "geometric_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kestrel/camera.hpp"

namespace kestrel {

const char* to_string(CheckModel m) {
    switch (m) {
        case CheckModel::None: return "None";
        case CheckModel::Essential: return "Essential";
        case CheckModel::TwoPoint: return "TwoPoint";
        case CheckModel::RotationOnly: return "RotationOnly";
    }
    return "unknown";
}

namespace detail {

namespace {

RelativePoseConfig pose_config(const GeometricCheckConfig& c, PoseMethod method) {
    RelativePoseConfig p;
    p.focal_px = 0.5 * (c.camera.fx + c.camera.fy);
    p.threshold_px = c.threshold_px;
    p.confidence = c.confidence;
    p.max_hypotheses = c.max_hypotheses;
    p.seed = c.seed;
    p.method = method;
    p.refine = true;
    p.min_inliers = 8;
    return p;
}

std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finalizer
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void bearing(double x, double y, double* b) {
    const double s = 1.0 / std::sqrt(x * x + y * y + 1.0);
    b[0] = x * s;
    b[1] = y * s;
    b[2] = s;
}

void cross(const double* a, const double* b, double* c) {
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

bool normalize3(double* v) {
    const double n = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (!(n > 1e-12)) return false;
    v[0] /= n;
    v[1] /= n;
    v[2] /= n;
    return true;
}

/// R with R a_k = c_k for the orthonormal frames built from (b1_i, b1_j) and (b2_i, b2_j): R = C A^T.
bool triad_rotation(const double* p1, const double* q1, const double* p2, const double* q2, double* R) {
    double A[3][3], C[3][3];
    for (int k = 0; k < 3; ++k) {
        A[0][k] = p1[k];
        C[0][k] = p2[k];
    }
    cross(p1, q1, A[1]);
    cross(p2, q2, C[1]);
    if (!normalize3(A[1]) || !normalize3(C[1])) return false;
    cross(A[0], A[1], A[2]);
    cross(C[0], C[1], C[2]);
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) R[3 * r + c] = C[0][r] * A[0][c] + C[1][r] * A[1][c] + C[2][r] * A[2][c];
    return true;
}

double transfer_px(const double* R, const double* b1, const double* b2, double focal) {
    double d2 = 0.0;
    for (int r = 0; r < 3; ++r) {
        const double v = b2[r] - (R[3 * r] * b1[0] + R[3 * r + 1] * b1[1] + R[3 * r + 2] * b1[2]);
        d2 += v * v;
    }
    return focal * std::sqrt(d2);
}

/// MSAC cost and inlier count of R over the m points.
double rotation_cost(const double* R, const double* x1, const double* x2, int m, double focal, double thr, int* inl) {
    double cost = 0.0;
    int c = 0;
    for (int i = 0; i < m; ++i) {
        double b1[3], b2[3];
        bearing(x1[2 * i], x1[2 * i + 1], b1);
        bearing(x2[2 * i], x2[2 * i + 1], b2);
        const double e = transfer_px(R, b1, b2, focal);
        if (e < thr) {
            cost += e * e;
            ++c;
        } else {
            cost += thr * thr;
        }
    }
    *inl = c;
    return cost;
}

/// R <- exp([w]x) R, Rodrigues.
void rotate_by(const double* w, double* R) {
    const double th = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    double K[9] = {0, -w[2], w[1], w[2], 0, -w[0], -w[1], w[0], 0};
    double a = 1.0, b = 0.5;  // sin(th)/th, (1 - cos(th))/th^2
    if (th > 1e-8) {
        a = std::sin(th) / th;
        b = (1.0 - std::cos(th)) / (th * th);
    }
    double K2[9], E[9], out[9];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K2[3 * r + c] = K[3 * r] * K[c] + K[3 * r + 1] * K[3 + c] + K[3 * r + 2] * K[6 + c];
    for (int j = 0; j < 9; ++j) E[j] = (j % 4 == 0 ? 1.0 : 0.0) + a * K[j] + b * K2[j];
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) out[3 * r + c] = E[3 * r] * R[c] + E[3 * r + 1] * R[3 + c] + E[3 * r + 2] * R[6 + c];
    std::memcpy(R, out, sizeof out);
}

/// Solves the symmetric 3x3 system A w = g (Cramer); false when singular.
bool solve3(const double* A, const double* g, double* w) {
    const double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
                       A[2] * (A[3] * A[7] - A[4] * A[6]);
    if (!(std::fabs(det) > 1e-300) || !std::isfinite(det)) return false;
    for (int k = 0; k < 3; ++k) {
        double M[9];
        std::memcpy(M, A, sizeof M);
        for (int r = 0; r < 3; ++r) M[3 * r + k] = g[r];
        w[k] = (M[0] * (M[4] * M[8] - M[5] * M[7]) - M[1] * (M[3] * M[8] - M[5] * M[6]) +
                M[2] * (M[3] * M[7] - M[4] * M[6])) / det;
    }
    return true;
}

/// Sampson error (px) of the pair under E (normalized coordinates, row-major E).
double sampson_px(const double* E, double u1, double v1, double u2, double v2, double focal) {
    const double a0 = E[0] * u1 + E[1] * v1 + E[2];
    const double a1 = E[3] * u1 + E[4] * v1 + E[5];
    const double a2 = E[6] * u1 + E[7] * v1 + E[8];
    const double b0 = E[0] * u2 + E[3] * v2 + E[6];
    const double b1 = E[1] * u2 + E[4] * v2 + E[7];
    const double r = u2 * a0 + v2 * a1 + a2;
    const double d = a0 * a0 + a1 * a1 + b0 * b0 + b1 * b1;
    if (!(d > 0.0)) return 1e150;
    return focal * std::fabs(r) / std::sqrt(d);
}

}  // namespace

double gric(const double* e2, int m, double sigma, int d, int k) {
    const double cap = 2.0 * (4 - d);
    const double s2 = sigma * sigma;
    double g = 0.0;
    for (int i = 0; i < m; ++i) g += std::min(e2[i] / s2, cap);
    return g + std::log(4.0) * d * m + std::log(4.0 * m) * k;
}

int rotation_only_fit(const double* x1, const double* x2, int m, double focal, double thr, double confidence,
                      int max_hypotheses, std::uint64_t seed, const double* R_prior, double* R, double* err,
                      std::uint8_t* mask) {
    int drawn = 0;
    int inl = 0;
    double best = 0.0;
    if (R_prior) {
        std::memcpy(R, R_prior, 9 * sizeof(double));
        best = rotation_cost(R, x1, x2, m, focal, thr, &inl);
    } else {
        bool have = false;
        int need = max_hypotheses;
        const double log_fail = std::log(1.0 - confidence);
        for (int k = 0; k < need && k < max_hypotheses; ++k) {
            ++drawn;
            const std::uint64_t r = mix64(seed ^ mix64(0x524f54ULL + static_cast<std::uint64_t>(k)));
            const int i = static_cast<int>((r & 0xffffffffULL) % static_cast<std::uint64_t>(m));
            int j = static_cast<int>((r >> 32) % static_cast<std::uint64_t>(m - 1));
            if (j >= i) ++j;
            double p1[3], q1[3], p2[3], q2[3], Rk[9];
            bearing(x1[2 * i], x1[2 * i + 1], p1);
            bearing(x1[2 * j], x1[2 * j + 1], q1);
            bearing(x2[2 * i], x2[2 * i + 1], p2);
            bearing(x2[2 * j], x2[2 * j + 1], q2);
            if (!triad_rotation(p1, q1, p2, q2, Rk)) continue;
            int c = 0;
            const double cost = rotation_cost(Rk, x1, x2, m, focal, thr, &c);
            if (!have || cost < best) {
                have = true;
                best = cost;
                inl = c;
                std::memcpy(R, Rk, sizeof Rk);
                const double w = static_cast<double>(c) / m;
                const double p = 1.0 - w * w;
                if (p <= 0.0) {
                    need = k + 1;
                } else {
                    const double q = std::ceil(log_fail / std::log(p));
                    need = q < static_cast<double>(max_hypotheses) ? std::max(1, static_cast<int>(q)) : max_hypotheses;
                }
            }
        }
        if (!have) {
            for (int j = 0; j < 9; ++j) R[j] = (j % 4 == 0) ? 1.0 : 0.0;
            best = rotation_cost(R, x1, x2, m, focal, thr, &inl);
        }
        // Gauss-Newton on the inliers: with R <- exp([w]x) R and v = R b1, exp([w]x) v ~ v - [v]x w, so the
        // residual r(w) = b2 - exp([w]x) v ~ r + [v]x w; the step solves ([v]x^T [v]x) w = -[v]x^T r summed over
        // the inliers, and is kept while it lowers the MSAC cost over all points.
        for (int it = 0; it < 5 && inl >= 3; ++it) {
            double A[9] = {0}, g[3] = {0};
            for (int i = 0; i < m; ++i) {
                double b1[3], b2[3];
                bearing(x1[2 * i], x1[2 * i + 1], b1);
                bearing(x2[2 * i], x2[2 * i + 1], b2);
                if (!(transfer_px(R, b1, b2, focal) < thr)) continue;
                double v[3];
                for (int a = 0; a < 3; ++a) v[a] = R[3 * a] * b1[0] + R[3 * a + 1] * b1[1] + R[3 * a + 2] * b1[2];
                const double res[3] = {b2[0] - v[0], b2[1] - v[1], b2[2] - v[2]};
                const double J[9] = {0, -v[2], v[1], v[2], 0, -v[0], -v[1], v[0], 0};  // [v]x, row-major
                for (int a = 0; a < 3; ++a) {
                    for (int b = 0; b < 3; ++b) {
                        double s = 0.0;
                        for (int c = 0; c < 3; ++c) s += J[3 * c + a] * J[3 * c + b];
                        A[3 * a + b] += s;
                    }
                    double s = 0.0;
                    for (int c = 0; c < 3; ++c) s += J[3 * c + a] * res[c];
                    g[a] -= s;
                }
            }
            double w[3];
            if (!solve3(A, g, w)) break;
            double Rn[9];
            std::memcpy(Rn, R, sizeof Rn);
            rotate_by(w, Rn);
            int c = 0;
            const double cost = rotation_cost(Rn, x1, x2, m, focal, thr, &c);
            if (!(cost < best)) break;
            best = cost;
            inl = c;
            std::memcpy(R, Rn, sizeof Rn);
        }
    }
    for (int i = 0; i < m; ++i) {
        double b1[3], b2[3];
        bearing(x1[2 * i], x1[2 * i + 1], b1);
        bearing(x2[2 * i], x2[2 * i + 1], b2);
        err[i] = transfer_px(R, b1, b2, focal);
        mask[i] = err[i] < thr ? 1 : 0;
    }
    return drawn;
}

GeometricCheck::GeometricCheck(const GeometricCheckConfig& cfg, int capacity)
    : cfg_(cfg), capacity_(capacity), focal_(0.5 * (cfg.camera.fx + cfg.camera.fy)),
      five_(capacity, pose_config(cfg, PoseMethod::FivePoint), Backend::Cpu),
      two_(capacity, pose_config(cfg, PoseMethod::TwoPointWithRotation), Backend::Cpu) {
    const auto c = static_cast<std::size_t>(capacity);
    px1_.resize(2 * c);
    px2_.resize(2 * c);
    n1_.resize(c);
    n2_.resize(c);
    s1_.resize(c);
    s2_.resize(c);
    x1_.resize(2 * c);
    x2_.resize(2 * c);
    index_.resize(c);
    mask_.resize(c);
    rmask_.resize(c);
    e_pose_.resize(c);
    e_rot_.resize(c);
}

const GeometricCheckResult& GeometricCheck::run(const Point2f* prev, const Point2f* cur,
                                                const std::uint8_t* candidate, int n, const double* R_prior,
                                                std::uint8_t* outlier) {
    res_ = GeometricCheckResult{};
    std::memset(outlier, 0, static_cast<std::size_t>(n));
    // 1. Candidates -> normalized points.
    int c = 0;
    for (int i = 0; i < n; ++i) {
        if (!candidate[i]) continue;
        px1_[2 * c] = prev[i].x;
        px1_[2 * c + 1] = prev[i].y;
        px2_[2 * c] = cur[i].x;
        px2_[2 * c + 1] = cur[i].y;
        index_[static_cast<std::size_t>(c)] = i;
        ++c;
    }
    unproject_cpu(cfg_.camera, px1_.data(), c, n1_.data(), s1_.data());
    unproject_cpu(cfg_.camera, px2_.data(), c, n2_.data(), s2_.data());
    int m = 0;
    for (int k = 0; k < c; ++k) {
        if (s1_[k] != UnprojectStatus::Ok || s2_[k] != UnprojectStatus::Ok) continue;
        x1_[2 * m] = n1_[k].x;
        x1_[2 * m + 1] = n1_[k].y;
        x2_[2 * m] = n2_[k].x;
        x2_[2 * m + 1] = n2_[k].y;
        index_[static_cast<std::size_t>(m)] = index_[static_cast<std::size_t>(k)];
        ++m;
    }
    res_.checked = m;
    // 2. Too few to decide.
    if (m < cfg_.min_tracks) {
        res_.checked = 0;
        return res_;
    }
    // 3. The relative pose and the rotation-only model.
    const bool prior = R_prior != nullptr;
    RelativePoseEstimator& est = prior ? two_ : five_;
    const RelativePoseResult pose = est.estimate(x1_.data(), x2_.data(), m, mask_.data(), R_prior);
    res_.pose_status = pose.status;
    res_.hypotheses = pose.hypotheses;
    double Rr[9];
    res_.hypotheses += rotation_only_fit(x1_.data(), x2_.data(), m, focal_, cfg_.threshold_px, cfg_.confidence,
                                         cfg_.max_hypotheses, cfg_.seed, R_prior, Rr, e_rot_.data(), rmask_.data());
    int rot_inliers = 0;
    for (int k = 0; k < m; ++k) rot_inliers += rmask_[k];
    // 4. Model selection.
    const double sigma = 0.5 * cfg_.threshold_px;
    const bool pose_ok = pose.status == PoseStatus::Ok;
    const bool rot_ok = rot_inliers >= 8;
    if (pose_ok) {
        for (int k = 0; k < m; ++k) {
            const double e = sampson_px(pose.E.data(), x1_[2 * k], x1_[2 * k + 1], x2_[2 * k], x2_[2 * k + 1], focal_);
            e_pose_[k] = e * e;
        }
        res_.gric_pose = gric(e_pose_.data(), m, sigma, 3, prior ? 2 : 5);
    }
    if (rot_ok) {
        for (int k = 0; k < m; ++k) e_pose_[k] = 0.5 * e_rot_[k] * e_rot_[k];  // reused as scratch
        res_.gric_rotation = gric(e_pose_.data(), m, sigma, 2, prior ? 0 : 3);
    }
    const std::uint8_t* keep = nullptr;
    if (pose_ok && (!rot_ok || res_.gric_pose < res_.gric_rotation)) {
        res_.model = prior ? CheckModel::TwoPoint : CheckModel::Essential;
        res_.R = pose.R;
        res_.t = pose.t;
        keep = mask_.data();
    } else if (rot_ok) {
        res_.model = CheckModel::RotationOnly;
        for (int j = 0; j < 9; ++j) res_.R[static_cast<std::size_t>(j)] = Rr[j];
        keep = rmask_.data();
    } else {
        res_.model = CheckModel::None;
        return res_;
    }
    // 5. Outliers of the deciding model. A rotation-only decision ends a track only when the pose (when there is
    //    one) rejects it too: GRIC prefers the rotation while a minority of the points shows parallax, and near
    //    static points may then move by more than the threshold after derotation; the pose model explains them.
    //    A transfer error of twice the threshold or more ends the track either way.
    const std::uint8_t* also = res_.model == CheckModel::RotationOnly && pose_ok ? mask_.data() : nullptr;
    const double sure = 2.0 * cfg_.threshold_px;
    for (int k = 0; k < m; ++k)
        if (!keep[k] && !(also && also[k] && e_rot_[k] < sure)) {
            outlier[index_[static_cast<std::size_t>(k)]] = 1;
            ++res_.outliers;
        }
    return res_;
}

}  // namespace detail
}  // namespace kestrel
