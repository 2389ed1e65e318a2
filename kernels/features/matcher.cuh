// Internal launch interface of kernels/features/matcher.cu (host-callable, no device code).
#pragma once
#include <cuda_runtime.h>

#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/orb_types.hpp"

namespace kestrel::kernels {

/// One side of a matching: descriptors and (optional) positions.
struct MatchSide {
    const OrbDescriptor* desc;
    const Point2f* pos;  ///< null when the config limits nothing by position
    int n;
};

struct MatchParams {
    float radius;         ///< > 0: radius limit
    float band;           ///< >= 0: epipolar band
    float ratio;
    int max_distance;
    bool limit;           ///< radius or band in use
};

/// Top 2 of every row of `rows` among `cols` (rows_are_query: the position predicate is always taken
/// from the query's position to the train's). With `matches` non-null (no cross-check) the accepted
/// match of every row is written there directly; else the top 2 go to `top2`.
void launch_match_top2(const MatchSide& rows, const MatchSide& cols, const MatchParams& p, bool rows_are_query,
                       detail::orb::Top2* top2, Match* matches, cudaStream_t stream);

/// The cross-check: Match of every query from its top 2 and the train side's top 2.
void launch_match_cross(const detail::orb::Top2* query_top2, const detail::orb::Top2* train_top2, int n_query,
                        const MatchParams& p, Match* matches, cudaStream_t stream);

}  // namespace kestrel::kernels
