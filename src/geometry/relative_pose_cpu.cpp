// The CPU reference of RelativePoseEstimator (the definition kernels/geometry/ransac.cu matches): hypotheses
// scored in rounds of cfg.batch with detail::pose_hypothesis (include/kestrel/detail/ransac_rules.hpp), the
// in-order scan with the adaptive stop, then pose_finish (shared with the CUDA host side). This file is
// compiled with -ffp-contract=off (CMakeLists.txt) so that the host performs the rules' operations unfused,
// as the kernel (built with --fmad=false) does.
#include <cstring>
#include <memory>
#include <vector>

#include "kestrel/detail/ransac_rules.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel::detail {

namespace {

int mask_msac(const double* E, const double* x1, const double* x2, int n, double f2, double thr2, std::uint8_t* mask,
              double* cost) {
    int cnt = 0;
    double c = 0.0;
    for (int i = 0; i < n; ++i) {
        const double e2 = pose_sampson2(E, x1[2 * i], x1[2 * i + 1], x2[2 * i], x2[2 * i + 1], f2);
        const bool in = e2 < thr2;
        mask[i] = in ? 1 : 0;
        cnt += in ? 1 : 0;
        c += in ? e2 : thr2;
    }
    *cost = c;
    return cnt;
}

int count_in_front(const double* R, const double* t, const double* x1, const double* x2, const std::uint8_t* mask,
                   int n) {
    int cnt = 0;
    for (int i = 0; i < n; ++i)
        if (mask[i]) cnt += pose_in_front(R, t, x1[2 * i], x1[2 * i + 1], x2[2 * i], x2[2 * i + 1]) ? 1 : 0;
    return cnt;
}

}  // namespace

RelativePoseResult pose_finish(const PoseCall& call, const RelativePoseConfig& cfg, const double* x1,
                               const double* x2, const double* E, const PoseScan& scan, std::uint8_t* mask) {
    RelativePoseResult res;
    res.hypotheses = scan.used;
    res.best_hypothesis = scan.best;
    const int n = call.n;
    if (scan.best < 0 || scan.inliers < cfg.min_inliers) {
        res.status = PoseStatus::NoModel;
        std::memset(mask, 0, static_cast<std::size_t>(n));
        return res;
    }
    const double f2 = cfg.focal_px * cfg.focal_px;
    const double thr2 = cfg.threshold_px * cfg.threshold_px;
    const bool two_point = cfg.method == PoseMethod::TwoPointWithRotation;
    double cost = 0.0;
    mask_msac(E, x1, x2, n, f2, thr2, mask, &cost);
    double R[9], t[3];
    if (two_point) {
        // R is the prior; t from E = [t]x R (E's left null vector), its sign by cheirality.
        for (int j = 0; j < 9; ++j) R[j] = call.R[j];
        double Rd[9];
        pose_decompose(E, x1, x2, mask, n, Rd, t);
        const double tm[3] = {-t[0], -t[1], -t[2]};
        if (count_in_front(R, tm, x1, x2, mask, n) > count_in_front(R, t, x1, x2, mask, n)) {
            t[0] = tm[0];
            t[1] = tm[1];
            t[2] = tm[2];
        }
    } else {
        pose_decompose(E, x1, x2, mask, n, R, t);
    }
    double Ef[9];
    pose_skew_mul(t, R, Ef);
    int inl = mask_msac(Ef, x1, x2, n, f2, thr2, mask, &cost);
    if (cfg.refine) {
        // Levenberg-Marquardt on the inliers; the refined model is kept only when its MSAC cost over all
        // points is lower. The mask is then recomputed for the final model.
        double Rr[9], tr[3], Er[9];
        std::memcpy(Rr, R, sizeof Rr);
        std::memcpy(tr, t, sizeof tr);
        pose_refine(Rr, tr, x1, x2, mask, n, f2, two_point ? 2 : 5, 10);
        pose_skew_mul(tr, Rr, Er);
        int unused = 0;
        const double cr = pose_msac(Er, x1, x2, n, f2, thr2, &unused);
        if (cr < cost) {
            std::memcpy(R, Rr, sizeof R);
            std::memcpy(t, tr, sizeof t);
            std::memcpy(Ef, Er, sizeof Ef);
            inl = mask_msac(Ef, x1, x2, n, f2, thr2, mask, &cost);
        }
    }
    std::memcpy(res.E.data(), Ef, sizeof Ef);
    std::memcpy(res.R.data(), R, sizeof R);
    std::memcpy(res.t.data(), t, sizeof t);
    res.inliers = inl;
    res.cost = cost;
    res.cheirality_inliers = count_in_front(R, t, x1, x2, mask, n);
    res.status = res.cheirality_inliers >= cfg.min_inliers ? PoseStatus::Ok : PoseStatus::Degenerate;
    return res;
}

RelativePoseResult relative_pose_cpu(const PoseCall& call, const RelativePoseConfig& cfg, std::uint8_t* mask,
                                     PoseScratch& scratch) {
    PoseProblem p{};
    p.x1 = call.x1;
    p.x2 = call.x2;
    p.n = call.n;
    p.f2 = cfg.focal_px * cfg.focal_px;
    p.thr2 = cfg.threshold_px * cfg.threshold_px;
    p.seed = cfg.seed;
    p.method = cfg.method == PoseMethod::FivePoint ? 0 : 1;
    for (int j = 0; j < 9; ++j) p.R[j] = call.R[j];
    const int batch = cfg.batch;
    std::vector<double>& cost = scratch.cost;
    std::vector<int>& inl = scratch.inliers;
    std::vector<double>& Es = scratch.E;
    double bestE[9] = {0};
    PoseScan scan;
    for (int first = 0; first < cfg.max_hypotheses && !scan.stopped; first += batch) {
        const int count = first + batch <= cfg.max_hypotheses ? batch : cfg.max_hypotheses - first;
        for (int j = 0; j < count; ++j) cost[j] = pose_hypothesis(p, first + j, &Es[9 * j], &inl[j]);
        const int won = pose_scan(scan, cost.data(), inl.data(), first, count, call.required, cfg.max_hypotheses);
        if (won >= 0)
            for (int j = 0; j < 9; ++j) bestE[j] = Es[9 * won + j];
    }
    return pose_finish(call, cfg, call.x1, call.x2, bestE, scan, mask);
}

namespace {

class CpuPoseBackend final : public PoseBackend {
public:
    CpuPoseBackend(int max_points, const RelativePoseConfig& cfg)
        : cfg_(cfg), mask_(static_cast<std::size_t>(max_points)), scratch_(cfg.batch) {}
    void enqueue(const PoseCall& call, StreamHandle) override {
        n_ = call.n;
        result_ = relative_pose_cpu(call, cfg_, mask_.data(), scratch_);
    }
    RelativePoseResult finish(std::uint8_t* mask) override {
        if (mask) std::memcpy(mask, mask_.data(), static_cast<std::size_t>(n_));
        return result_;
    }

private:
    RelativePoseConfig cfg_;
    std::vector<std::uint8_t> mask_;
    PoseScratch scratch_;
    RelativePoseResult result_;
    int n_ = 0;
};

}  // namespace

std::unique_ptr<PoseBackend> make_cpu_pose_backend(int max_points, const RelativePoseConfig& cfg) {
    return std::make_unique<CpuPoseBackend>(max_points, cfg);
}

}  // namespace kestrel::detail
