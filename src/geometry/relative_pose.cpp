// RelativePoseEstimator: validation, staging of the points as doubles, the stop table, the backend.
#include "kestrel/relative_pose.hpp"

#include <cmath>
#include <vector>

#include "kestrel/detail/validate.hpp"
#include "kestrel/error.hpp"
#include "src/core/backend.hpp"
#include "src/geometry/relative_pose_backend.hpp"

namespace kestrel {

struct RelativePoseEstimator::Impl {
    RelativePoseConfig cfg;
    Backend backend = Backend::Cpu;
    int max_points = 0;
    std::vector<double> x1, x2;  // staging (host)
    std::vector<int> required;   // stop table for (table_n, cfg)
    int table_n = -1;
    std::unique_ptr<detail::PoseBackend> be;
    bool pending = false;
    int n = 0;
    RelativePoseResult early;  // TooFewPoints answered without the backend
    bool early_set = false;

    int min_points() const { return cfg.method == PoseMethod::FivePoint ? 5 : 2; }

    void check_pending(const char* where) const {
        if (pending)
            throw StateError(std::string("kestrel: RelativePoseEstimator::") + where +
                             ": the previous call is still pending (call finish() first; one call in flight per object)");
    }

    void check_call(const char* where, const void* a, const void* b, int count, const double* prior) const {
        detail::check_range(where, "n", count, 0, max_points);
        detail::check(count == 0 || a != nullptr, where, "x1", "must not be null when n > 0");
        detail::check(count == 0 || b != nullptr, where, "x2", "must not be null when n > 0");
        if (cfg.method == PoseMethod::TwoPointWithRotation) {
            detail::check(prior != nullptr, where, "rotation_prior",
                          "must be given (3x3 row-major) with PoseMethod::TwoPointWithRotation");
            for (int j = 0; j < 9; ++j)
                detail::check(std::isfinite(prior[j]), where, "rotation_prior", "must be finite");
        }
    }

    template <typename T>
    void stage(const char* where, const T* a, const T* b, int count) {
        for (int i = 0; i < 2 * count; ++i) {
            x1[static_cast<std::size_t>(i)] = static_cast<double>(a[i]);
            x2[static_cast<std::size_t>(i)] = static_cast<double>(b[i]);
            if (!std::isfinite(x1[static_cast<std::size_t>(i)]) || !std::isfinite(x2[static_cast<std::size_t>(i)]))
                detail::fail(where, std::isfinite(x1[static_cast<std::size_t>(i)]) ? "x2" : "x1",
                             "must hold finite coordinates (index " + detail::to_text(i / 2) + ")");
        }
    }

    void submit(const char* where, const double* a, const double* b, bool device, int count, StreamHandle stream,
                const double* prior) {
        n = count;
        early_set = false;
        if (count < min_points()) {
            early = RelativePoseResult{};
            early.status = PoseStatus::TooFewPoints;
            early_set = true;
            pending = true;
            return;
        }
        if (table_n != count) {
            detail::pose_required_table(count, min_points(), cfg.confidence, cfg.max_hypotheses, required);
            table_n = count;
        }
        detail::PoseCall call;
        call.x1 = a;
        call.x2 = b;
        call.device_points = device;
        call.n = count;
        if (prior)
            for (int j = 0; j < 9; ++j) call.R[j] = prior[j];
        call.required = required.data();
        (void)where;
        be->enqueue(call, stream);
        pending = true;  // only once enqueued: a failed call leaves nothing pending
    }

    RelativePoseResult take(std::uint8_t* mask) {
        if (!pending)
            throw StateError("kestrel: RelativePoseEstimator::finish: no call is pending (finish() follows an estimate_async())");
        pending = false;
        if (early_set) {
            if (mask)
                for (int i = 0; i < n; ++i) mask[i] = 0;
            return early;
        }
        return be->finish(mask);
    }
};

RelativePoseEstimator::RelativePoseEstimator() = default;
RelativePoseEstimator::RelativePoseEstimator(int max_points, const RelativePoseConfig& cfg, Backend backend)
    : impl_(std::make_unique<Impl>()) {
    validate(cfg, "RelativePoseEstimator");
    detail::check(backend == Backend::Cpu || backend == Backend::Cuda, "RelativePoseEstimator", "backend",
                  "must be Backend::Cpu or Backend::Cuda");
    detail::check_range("RelativePoseEstimator", "max_points", max_points, 1, 1 << 24);
    impl_->cfg = cfg;
    impl_->backend = backend;
    impl_->max_points = max_points;
    impl_->x1.resize(2 * static_cast<std::size_t>(max_points));
    impl_->x2.resize(2 * static_cast<std::size_t>(max_points));
    impl_->required.reserve(static_cast<std::size_t>(max_points) + 1);
    if (backend == Backend::Cuda) {
        detail::require_cuda("RelativePoseEstimator");
        impl_->be = detail::make_cuda_pose_backend(max_points, cfg);
    } else {
        impl_->be = detail::make_cpu_pose_backend(max_points, cfg);
    }
}
RelativePoseEstimator::RelativePoseEstimator(RelativePoseEstimator&&) noexcept = default;
RelativePoseEstimator& RelativePoseEstimator::operator=(RelativePoseEstimator&&) noexcept = default;
RelativePoseEstimator::~RelativePoseEstimator() = default;

RelativePoseEstimator::Impl& RelativePoseEstimator::impl(const char* where) const {
    if (!impl_) detail::empty_object("RelativePoseEstimator", where);
    return *impl_;
}
Backend RelativePoseEstimator::backend() const { return impl("backend").backend; }
const RelativePoseConfig& RelativePoseEstimator::config() const { return impl("config").cfg; }
int RelativePoseEstimator::max_points() const { return impl("max_points").max_points; }

void RelativePoseEstimator::estimate_async(const double* x1, const double* x2, int n, StreamHandle stream,
                                           const double* rotation_prior) {
    Impl& im = impl("estimate_async");
    im.check_pending("estimate_async");
    im.check_call("RelativePoseEstimator::estimate_async", x1, x2, n, rotation_prior);
    im.stage("RelativePoseEstimator::estimate_async", x1, x2, n);
    im.submit("RelativePoseEstimator::estimate_async", im.x1.data(), im.x2.data(), false, n, stream, rotation_prior);
}
void RelativePoseEstimator::estimate_async(const float* x1, const float* x2, int n, StreamHandle stream,
                                           const double* rotation_prior) {
    Impl& im = impl("estimate_async");
    im.check_pending("estimate_async");
    im.check_call("RelativePoseEstimator::estimate_async", x1, x2, n, rotation_prior);
    im.stage("RelativePoseEstimator::estimate_async", x1, x2, n);
    im.submit("RelativePoseEstimator::estimate_async", im.x1.data(), im.x2.data(), false, n, stream, rotation_prior);
}
void RelativePoseEstimator::estimate_device_async(const double* d_x1, const double* d_x2, int n, StreamHandle stream,
                                                  const double* rotation_prior) {
    Impl& im = impl("estimate_device_async");
    if (im.backend != Backend::Cuda)
        throw StateError("kestrel: RelativePoseEstimator::estimate_device_async: needs Backend::Cuda (device arrays); "
                         "on Backend::Cpu use estimate_async or estimate with host arrays");
    im.check_pending("estimate_device_async");
    im.check_call("RelativePoseEstimator::estimate_device_async", d_x1, d_x2, n, rotation_prior);
    im.submit("RelativePoseEstimator::estimate_device_async", d_x1, d_x2, true, n, stream, rotation_prior);
}
RelativePoseResult RelativePoseEstimator::finish(std::uint8_t* inlier_mask) {
    return impl("finish").take(inlier_mask);
}

RelativePoseResult RelativePoseEstimator::estimate(const double* x1, const double* x2, int n,
                                                   std::uint8_t* inlier_mask, const double* rotation_prior) {
    estimate_async(x1, x2, n, nullptr, rotation_prior);
    return finish(inlier_mask);
}
RelativePoseResult RelativePoseEstimator::estimate(const float* x1, const float* x2, int n, std::uint8_t* inlier_mask,
                                                   const double* rotation_prior) {
    estimate_async(x1, x2, n, nullptr, rotation_prior);
    return finish(inlier_mask);
}

}  // namespace kestrel
