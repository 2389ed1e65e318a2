// Internal: what the matcher's front end, CPU reference and CUDA side share.
#pragma once
#include <memory>

#include "kestrel/matcher.hpp"

namespace kestrel::detail {

/// True when the config limits candidates by position (radius or epipolar band).
bool needs_positions(const MatcherConfig& cfg);

/// Argument checks of match_cpu / HammingMatcher::match / match_async (InvalidArgument naming the
/// parameter): counts in [0, capacity], arrays non-null where needed.
void check_match_args(const char* where, const MatcherConfig& cfg, int capacity, const void* query, int n_query,
                      const void* train, int n_train, const void* query_pos, const void* train_pos);

/// The CUDA side of HammingMatcher (src/features/matcher_cuda.cpp; a stand-in without CUDA).
class CudaMatcher {
public:
    CudaMatcher(const MatcherConfig& cfg, int capacity);
    ~CudaMatcher();
    CudaMatcher(const CudaMatcher&) = delete;
    CudaMatcher& operator=(const CudaMatcher&) = delete;
    void enqueue(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                 const Point2f* query_pos, const Point2f* train_pos, StreamHandle stream);
    /// Uploads host arrays through pinned staging, matches, downloads and waits.
    void match_host(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                    const Point2f* query_pos, const Point2f* train_pos, Match* out);
    const Match* device_matches() const;
    const Match* host_matches() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel::detail
