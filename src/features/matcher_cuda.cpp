// The CUDA side of HammingMatcher: device buffers for `capacity` queries and train descriptors and
// their top 2 lists, pinned staging for the synchronous form, the launches of
// kernels/features/matcher.cu. Nothing is allocated after construction.
#include <cuda_runtime.h>

#include <cstring>

#include "kernels/common/cuda_check.hpp"
#include "kernels/features/matcher.cuh"
#include "src/core/backend.hpp"
#include "src/features/buffers_cuda.hpp"
#include "src/features/matcher_internal.hpp"

namespace kestrel::detail {

struct CudaMatcher::Impl {
    MatcherConfig cfg;
    int capacity = 0;
    FeaturesDeviceBytes query, train, query_pos, train_pos, top2_query, top2_train, matches;
    FeaturesPinnedBytes host_matches, staging;  // staging: query, train, positions (synchronous form)
    cudaStream_t stream = nullptr;              // the synchronous form's own stream
    kernels::MatchParams params{};
};

CudaMatcher::CudaMatcher(const MatcherConfig& cfg, int capacity) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.cfg = cfg;
    m.capacity = capacity;
    const auto n = static_cast<std::size_t>(capacity);
    const char* a = "HammingMatcher allocation";
    m.query = features_device_alloc(n * sizeof(OrbDescriptor), a);
    m.train = features_device_alloc(n * sizeof(OrbDescriptor), a);
    m.query_pos = features_device_alloc(n * sizeof(Point2f), a);
    m.train_pos = features_device_alloc(n * sizeof(Point2f), a);
    m.top2_query = features_device_alloc(n * sizeof(orb::Top2), a);
    m.top2_train = features_device_alloc(n * sizeof(orb::Top2), a);
    m.matches = features_device_alloc(n * sizeof(Match), a);
    m.host_matches = features_pinned_alloc(n * sizeof(Match), a);
    m.staging = features_pinned_alloc(2 * n * (sizeof(OrbDescriptor) + sizeof(Point2f)), a);
    KESTREL_CUDA(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), a);
    m.params.radius = cfg.radius;
    m.params.band = cfg.epipolar_band;
    m.params.ratio = cfg.ratio;
    m.params.max_distance = cfg.max_distance;
    m.params.limit = needs_positions(cfg);
}

CudaMatcher::~CudaMatcher() {
    if (impl_ && impl_->stream) (void)cudaStreamDestroy(impl_->stream);
}

void CudaMatcher::enqueue(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                          const Point2f* query_pos, const Point2f* train_pos, StreamHandle stream) {
    Impl& m = *impl_;
    const auto s = static_cast<cudaStream_t>(stream);
    const kernels::MatchSide q{query, m.params.limit ? query_pos : nullptr, n_query};
    const kernels::MatchSide t{train, m.params.limit ? train_pos : nullptr, n_train};
    Match* out = static_cast<Match*>(m.matches.get());
    if (!m.cfg.cross_check) {
        kernels::launch_match_top2(q, t, m.params, true, nullptr, out, s);
    } else {
        auto* tq = static_cast<orb::Top2*>(m.top2_query.get());
        auto* tt = static_cast<orb::Top2*>(m.top2_train.get());
        kernels::launch_match_top2(q, t, m.params, true, tq, nullptr, s);
        kernels::launch_match_top2(t, q, m.params, false, tt, nullptr, s);
        kernels::launch_match_cross(tq, tt, n_query, m.params, out, s);
    }
    if (n_query > 0)
        KESTREL_CUDA(cudaMemcpyAsync(m.host_matches.get(), out, static_cast<std::size_t>(n_query) * sizeof(Match),
                                     cudaMemcpyDeviceToHost, s),
                     "HammingMatcher download");
}

void CudaMatcher::match_host(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                             const Point2f* query_pos, const Point2f* train_pos, Match* out) {
    Impl& m = *impl_;
    const cudaStream_t s = m.stream;
    const auto cap = static_cast<std::size_t>(m.capacity);
    auto* st = static_cast<unsigned char*>(m.staging.get());
    auto* sq = reinterpret_cast<OrbDescriptor*>(st);
    auto* stn = sq + cap;
    auto* sqp = reinterpret_cast<Point2f*>(stn + cap);
    auto* stp = sqp + cap;
    const auto nq = static_cast<std::size_t>(n_query), nt = static_cast<std::size_t>(n_train);
    const char* up = "HammingMatcher upload";
    if (nq) std::memcpy(sq, query, nq * sizeof(OrbDescriptor));
    if (nt) std::memcpy(stn, train, nt * sizeof(OrbDescriptor));
    if (nq) KESTREL_CUDA(cudaMemcpyAsync(m.query.get(), sq, nq * sizeof(OrbDescriptor), cudaMemcpyHostToDevice, s), up);
    if (nt) KESTREL_CUDA(cudaMemcpyAsync(m.train.get(), stn, nt * sizeof(OrbDescriptor), cudaMemcpyHostToDevice, s), up);
    if (m.params.limit) {
        if (nq) std::memcpy(sqp, query_pos, nq * sizeof(Point2f));
        if (nt) std::memcpy(stp, train_pos, nt * sizeof(Point2f));
        if (nq) KESTREL_CUDA(cudaMemcpyAsync(m.query_pos.get(), sqp, nq * sizeof(Point2f), cudaMemcpyHostToDevice, s), up);
        if (nt) KESTREL_CUDA(cudaMemcpyAsync(m.train_pos.get(), stp, nt * sizeof(Point2f), cudaMemcpyHostToDevice, s), up);
    }
    enqueue(static_cast<const OrbDescriptor*>(m.query.get()), n_query, static_cast<const OrbDescriptor*>(m.train.get()),
            n_train, static_cast<const Point2f*>(m.query_pos.get()), static_cast<const Point2f*>(m.train_pos.get()),
            reinterpret_cast<StreamHandle>(s));
    KESTREL_CUDA(cudaStreamSynchronize(s), "HammingMatcher::match");
    if (nq) std::memcpy(out, m.host_matches.get(), nq * sizeof(Match));
}

const Match* CudaMatcher::device_matches() const { return static_cast<const Match*>(impl_->matches.get()); }
const Match* CudaMatcher::host_matches() const { return static_cast<const Match*>(impl_->host_matches.get()); }

}  // namespace kestrel::detail
