// CPU reference of the Hamming matcher (rules: include/kestrel/detail/orb_rules.hpp); the definition
// kernels/features/matcher.cu matches exactly.
#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/matcher.hpp"
#include "src/features/matcher_internal.hpp"

namespace kestrel {

namespace o = detail::orb;

namespace {
// The top 2 of each row against every candidate column.
std::vector<o::Top2> top2_all(const OrbDescriptor* a, const Point2f* apos, int na, const OrbDescriptor* b,
                              const Point2f* bpos, int nb, const MatcherConfig& cfg, bool a_is_query) {
    const bool limit = detail::needs_positions(cfg);
    std::vector<o::Top2> out(static_cast<std::size_t>(na));
    for (int i = 0; i < na; ++i) {
        o::Top2 t;
        for (int j = 0; j < nb; ++j) {
            if (limit) {
                // The predicate is always evaluated from the query's position to the train's.
                const Point2f& q = a_is_query ? apos[i] : bpos[j];
                const Point2f& r = a_is_query ? bpos[j] : apos[i];
                if (!o::candidate(q.x, q.y, r.x, r.y, cfg.radius, cfg.epipolar_band)) continue;
            }
            o::top2_push(t, o::hamming(a[i], b[j]), j);
        }
        out[static_cast<std::size_t>(i)] = t;
    }
    return out;
}
}  // namespace

std::vector<Match> match_cpu(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                             const MatcherConfig& cfg, const Point2f* query_pos, const Point2f* train_pos) {
    const char* where = "match_cpu";
    validate(cfg, where);
    detail::check_match_args(where, cfg, 1 << 30, query, n_query, train, n_train, query_pos, train_pos);
    const std::vector<o::Top2> fwd = top2_all(query, query_pos, n_query, train, train_pos, n_train, cfg, true);
    std::vector<o::Top2> bwd;
    if (cfg.cross_check) bwd = top2_all(train, train_pos, n_train, query, query_pos, n_query, cfg, false);
    std::vector<Match> out(static_cast<std::size_t>(n_query));
    for (int i = 0; i < n_query; ++i) {
        const o::Top2& t = fwd[static_cast<std::size_t>(i)];
        Match& m = out[static_cast<std::size_t>(i)];
        m.distance = t.d1;
        m.second = t.d2;
        m.train = o::accept_match(t, cfg.ratio, cfg.max_distance, cfg.cross_check,
                                  cfg.cross_check && t.i1 >= 0 ? bwd[static_cast<std::size_t>(t.i1)].i1 : -1, i);
    }
    return out;
}

}  // namespace kestrel
