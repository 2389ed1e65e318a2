// RelativePoseConfig validation, the names of the enums and the adaptive stop table.
#include <cmath>
#include <vector>

#include "kestrel/detail/validate.hpp"
#include "kestrel/relative_pose_types.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel {

const char* to_string(PoseMethod m) {
    switch (m) {
        case PoseMethod::FivePoint: return "FivePoint";
        case PoseMethod::TwoPointWithRotation: return "TwoPointWithRotation";
    }
    return "unknown";
}

const char* to_string(PoseModel m) {
    switch (m) {
        case PoseModel::None: return "None";
        case PoseModel::FivePoint: return "FivePoint";
        case PoseModel::TwoPoint: return "TwoPoint";
        case PoseModel::RotationOnly: return "RotationOnly";
    }
    return "unknown";
}

const char* to_string(PoseStatus s) {
    switch (s) {
        case PoseStatus::Ok: return "Ok";
        case PoseStatus::TooFewPoints: return "TooFewPoints";
        case PoseStatus::NoModel: return "NoModel";
        case PoseStatus::Degenerate: return "Degenerate";
    }
    return "unknown";
}

void validate(const RelativePoseConfig& cfg, const char* where) {
    detail::check_range(where, "focal_px", cfg.focal_px, 1e-6, 1e6);
    detail::check_range(where, "threshold_px", cfg.threshold_px, 1e-6, 1000.0);
    detail::check_range(where, "confidence", cfg.confidence, 0.5, 0.999999999);
    detail::check_range(where, "max_hypotheses", cfg.max_hypotheses, 1, 1 << 20);
    detail::check_range(where, "batch", cfg.batch, 1, 65536);
    detail::check_range(where, "min_inliers", cfg.min_inliers, 2, 1 << 20);
    detail::check(cfg.method == PoseMethod::FivePoint || cfg.method == PoseMethod::TwoPointWithRotation, where,
                  "method", "must be FivePoint or TwoPointWithRotation");
}

namespace detail {

void pose_stop_tables(double confidence, int max_hypotheses, std::vector<int>& table) {
    table.resize(2 * static_cast<std::size_t>(kPoseStopBins + 1));
    const double num = std::log(1.0 - confidence);
    for (int half = 0; half < 2; ++half) {
        const int m = half == 0 ? 5 : 2;
        for (int q = 0; q <= kPoseStopBins; ++q) {
            int req = max_hypotheses;
            if (q > 0) {
                const double w = static_cast<double>(q) / kPoseStopBins;
                const double p = std::pow(w, m);
                if (p >= 1.0) {
                    req = 1;
                } else {
                    const double den = std::log1p(-p);
                    const double r = den < 0.0 ? std::ceil(num / den) : static_cast<double>(max_hypotheses);
                    req = r < 1.0 ? 1 : (r > max_hypotheses ? max_hypotheses : static_cast<int>(r));
                }
            }
            table[static_cast<std::size_t>(half * (kPoseStopBins + 1) + q)] = req;
        }
    }
}

void pose_setup(const PoseCall& call, const RelativePoseConfig& cfg, const double* x1, const double* x2,
                const double* s, int n, int bound, PoseFinishParams& fp, PoseProblem& rotation) {
    PoseProblem& p = fp.pe;
    p.x1 = x1;
    p.x2 = x2;
    p.s = s;
    p.n = n;
    p.sphere = call.sphere;
    p.f2 = cfg.focal_px * cfg.focal_px;
    p.thr2 = cfg.threshold_px * cfg.threshold_px;
    p.qscale = kPoseCostUnits / p.thr2;
    p.seed = cfg.seed;
    p.method = call.method;
    for (int j = 0; j < 9; ++j) p.R[j] = call.R[j];
    fp.thr2_rot = p.thr2 * kPoseRotationThreshold2Scale;
    fp.refine = cfg.refine ? 1 : 0;
    fp.min_inliers = cfg.min_inliers;
    fp.rotation_only = cfg.rotation_only ? 1 : 0;
    fp.bound = bound;
    rotation = p;
    rotation.method = 2;
    rotation.thr2 = fp.thr2_rot;
    rotation.qscale = kPoseCostUnits / rotation.thr2;
    rotation.seed = pose_rotation_seed(cfg.seed);
}

RelativePoseResult pose_result(const PoseRecord& rec) {
    RelativePoseResult r;
    r.status = static_cast<PoseStatus>(rec.status);
    r.model = static_cast<PoseModel>(rec.model);
    for (int j = 0; j < 9; ++j) {
        r.E[static_cast<std::size_t>(j)] = rec.E[j];
        r.R[static_cast<std::size_t>(j)] = rec.R[j];
    }
    for (int j = 0; j < 3; ++j) r.t[static_cast<std::size_t>(j)] = rec.t[j];
    r.inliers = rec.inliers;
    r.cheirality_inliers = rec.cheirality_inliers;
    r.hypotheses = rec.hypotheses;
    r.best_hypothesis = rec.best_hypothesis;
    r.cost = rec.cost;
    r.rotation_inliers = rec.rotation_inliers;
    return r;
}

}  // namespace detail
}  // namespace kestrel
