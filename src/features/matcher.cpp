// HammingMatcher (both backends): validation, then match_cpu (Backend::Cpu) or the CUDA side
// (src/features/matcher_cuda.cpp).
#include <string>

#include "kestrel/matcher.hpp"
#include "src/core/backend.hpp"
#include "src/features/matcher_internal.hpp"

namespace kestrel {

struct HammingMatcher::Impl {
    MatcherConfig cfg;
    Backend backend = Backend::Cuda;
    int capacity = 0;
    std::unique_ptr<detail::CudaMatcher> cuda;  // Backend::Cuda
    std::vector<Match> cpu_result;              // Backend::Cpu: the last match()
};

HammingMatcher::HammingMatcher(const MatcherConfig& cfg, int capacity, Backend backend) {
    const char* where = "HammingMatcher";
    validate(cfg, where);
    detail::check_range(where, "capacity", capacity, 1, 1 << 20);
    if (backend != Backend::Cuda && backend != Backend::Cpu)
        detail::fail(where, "backend", "must be Backend::Cuda or Backend::Cpu");
    auto m = std::make_unique<Impl>();
    m->cfg = cfg;
    m->backend = backend;
    m->capacity = capacity;
    if (backend == Backend::Cuda) {
        detail::require_cuda(where);
        m->cuda = std::make_unique<detail::CudaMatcher>(cfg, capacity);
    } else {
        m->cpu_result.reserve(static_cast<std::size_t>(capacity));
    }
    impl_ = std::move(m);
}

HammingMatcher::HammingMatcher(HammingMatcher&&) noexcept = default;
HammingMatcher& HammingMatcher::operator=(HammingMatcher&&) noexcept = default;
HammingMatcher::~HammingMatcher() = default;

HammingMatcher::Impl& HammingMatcher::impl(const char* where) const {
    if (!impl_) detail::empty_object("HammingMatcher", where);
    return *impl_;
}

const MatcherConfig& HammingMatcher::config() const { return impl("config").cfg; }
Backend HammingMatcher::backend() const { return impl("backend").backend; }
int HammingMatcher::capacity() const { return impl("capacity").capacity; }

std::vector<Match> HammingMatcher::match(const OrbDescriptor* query, int n_query, const OrbDescriptor* train,
                                         int n_train, const Point2f* query_pos, const Point2f* train_pos) {
    Impl& m = impl("match");
    detail::check_match_args("HammingMatcher::match", m.cfg, m.capacity, query, n_query, train, n_train, query_pos,
                             train_pos);
    if (m.cuda) {
        std::vector<Match> out(static_cast<std::size_t>(n_query));
        m.cuda->match_host(query, n_query, train, n_train, query_pos, train_pos, out.data());
        return out;
    }
    m.cpu_result = match_cpu(query, n_query, train, n_train, m.cfg, query_pos, train_pos);
    return m.cpu_result;
}

void HammingMatcher::match_async(const OrbDescriptor* query, int n_query, const OrbDescriptor* train, int n_train,
                                 StreamHandle stream, const Point2f* query_pos, const Point2f* train_pos) {
    Impl& m = impl("match_async");
    if (!m.cuda)
        throw StateError("kestrel: HammingMatcher::match_async: needs Backend::Cuda (this matcher uses Backend::Cpu; "
                         "call match())");
    detail::check_match_args("HammingMatcher::match_async", m.cfg, m.capacity, query, n_query, train, n_train,
                             query_pos, train_pos);
    m.cuda->enqueue(query, n_query, train, n_train, query_pos, train_pos, stream);
}

const Match* HammingMatcher::device_matches() const {
    const Impl& m = impl("device_matches");
    return m.cuda ? m.cuda->device_matches() : nullptr;
}
const Match* HammingMatcher::host_matches() const {
    const Impl& m = impl("host_matches");
    if (m.cuda) return m.cuda->host_matches();
    return m.cpu_result.empty() ? nullptr : m.cpu_result.data();
}

}  // namespace kestrel
