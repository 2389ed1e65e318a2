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

void pose_required_table(int n, int m, double confidence, int max_hypotheses, std::vector<int>& table) {
    table.resize(static_cast<std::size_t>(n) + 1);
    const double num = std::log(1.0 - confidence);
    for (int c = 0; c <= n; ++c) {
        int req = max_hypotheses;
        if (c > 0 && n > 0) {
            const double w = static_cast<double>(c) / n;
            const double p = std::pow(w, m);
            if (p >= 1.0) {
                req = 1;
            } else {
                const double den = std::log1p(-p);
                const double r = den < 0.0 ? std::ceil(num / den) : static_cast<double>(max_hypotheses);
                req = r < 1.0 ? 1 : (r > max_hypotheses ? max_hypotheses : static_cast<int>(r));
            }
        }
        table[static_cast<std::size_t>(c)] = req;
    }
}

}  // namespace detail
}  // namespace kestrel
