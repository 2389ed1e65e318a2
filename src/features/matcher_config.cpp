// Validation of MatcherConfig and of a matching call's arguments (both backends, both builds).
#include <cmath>

#include "kestrel/detail/validate.hpp"
#include "kestrel/matcher.hpp"
#include "src/features/matcher_internal.hpp"

namespace kestrel {

void validate(const MatcherConfig& cfg, const char* where) {
    if (!(std::isfinite(cfg.ratio) && cfg.ratio > 0.0f && cfg.ratio <= 1.0f))
        detail::fail(where, "ratio", "= " + detail::to_text(cfg.ratio) + " must be in (0, 1] (1 disables the ratio test)");
    if (!(std::isfinite(cfg.radius) && cfg.radius >= 0.0f))
        detail::fail(where, "radius", "= " + detail::to_text(cfg.radius) + " must be finite and >= 0 (0 = no limit)");
    if (!std::isfinite(cfg.epipolar_band))
        detail::fail(where, "epipolar_band", "= " + detail::to_text(cfg.epipolar_band) + " must be finite (< 0 = no band)");
    detail::check_range(where, "max_distance", cfg.max_distance, 0, kOrbDescriptorBits);
}

namespace detail {

bool needs_positions(const MatcherConfig& cfg) { return cfg.radius > 0.0f || cfg.epipolar_band >= 0.0f; }

void check_match_args(const char* where, const MatcherConfig& cfg, int capacity, const void* query, int n_query,
                      const void* train, int n_train, const void* query_pos, const void* train_pos) {
    check_range(where, "n_query", n_query, 0, capacity);
    check_range(where, "n_train", n_train, 0, capacity);
    if (n_query > 0 && query == nullptr) fail(where, "query", "must not be null when n_query > 0");
    if (n_train > 0 && train == nullptr) fail(where, "train", "must not be null when n_train > 0");
    if (needs_positions(cfg)) {
        if (n_query > 0 && query_pos == nullptr)
            fail(where, "query_pos", "must not be null: the config has a radius or an epipolar band");
        if (n_train > 0 && train_pos == nullptr)
            fail(where, "train_pos", "must not be null: the config has a radius or an epipolar band");
    }
}

}  // namespace detail
}  // namespace kestrel
