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
    std::vector<double> x1, x2, s;  // staging (host): 3-vectors, scales
    std::vector<int> tables;        // the stop tables (m = 5, m = 2)
    std::unique_ptr<detail::PoseBackend> be;
    bool pending = false;       // a host-entry call awaits finish()
    bool device_pending = false;  // a device-entry call may be finished
    int n = 0;
    RelativePoseResult early;  // TooFewPoints answered without the backend
    bool early_set = false;

    int min_points(int method) const { return method == 0 ? 5 : 2; }
    int config_method() const { return cfg.method == PoseMethod::FivePoint ? 0 : 1; }

    void check_pending(const char* where) const {
        if (pending)
            throw StateError(std::string("kestrel: RelativePoseEstimator::") + where +
                             ": the previous call is still pending (call finish() first; one call in flight per object)");
    }

    void check_prior(const char* where, const double* prior, bool required) const {
        if (required)
            detail::check(prior != nullptr, where, "rotation_prior",
                          "must be given (3x3 row-major) with PoseMethod::TwoPointWithRotation");
        if (prior) detail::check_rotation(where, "rotation_prior", prior);
    }

    void check_call(const char* where, const void* a, const void* b, int count, const double* prior) const {
        detail::check_range(where, "n", count, 0, max_points);
        detail::check(count == 0 || a != nullptr, where, "x1", "must not be null when n > 0");
        detail::check(count == 0 || b != nullptr, where, "x2", "must not be null when n > 0");
        check_prior(where, cfg.method == PoseMethod::TwoPointWithRotation ? prior : nullptr,
                    cfg.method == PoseMethod::TwoPointWithRotation);
    }

    /// Where a call's points are staged: the backend's own host buffer (the CUDA backend's pinned block, so that
    /// nothing is copied on the host) or these vectors. which: 0 x1, 1 x2, 2 the scales.
    double* dst(int which, int count) {
        double* h = be->host_staging();
        if (h) return h + static_cast<std::size_t>(which) * 3 * static_cast<std::size_t>(count);
        return which == 0 ? x1.data() : which == 1 ? x2.data() : s.data();
    }

    /// Normalized points (x, y) -> (x, y, 1).
    template <typename T>
    void stage(const char* where, const T* a, const T* b, int count) {
        double* x1 = dst(0, count);
        double* x2 = dst(1, count);
        for (int i = 0; i < count; ++i) {
            for (int c = 0; c < 2; ++c) {
                const double u = static_cast<double>(a[2 * i + c]), v = static_cast<double>(b[2 * i + c]);
                if (!std::isfinite(u) || !std::isfinite(v))
                    detail::fail(where, std::isfinite(u) ? "x2" : "x1",
                                 "must hold finite coordinates (index " + detail::to_text(i) + ")");
                x1[3 * static_cast<std::size_t>(i) + c] = u;
                x2[3 * static_cast<std::size_t>(i) + c] = v;
            }
            x1[3 * static_cast<std::size_t>(i) + 2] = 1.0;
            x2[3 * static_cast<std::size_t>(i) + 2] = 1.0;
        }
    }

    /// Bearings -> unit 3-vectors (detail::pose_normalize3, as the device entry's conversion); scales.
    void stage_bearings(const char* where, const double* a, const double* b, const double* ppr, int count) {
        double* x1 = dst(0, count);
        double* x2 = dst(1, count);
        double* s = dst(2, count);
        for (int i = 0; i < count; ++i) {
            double* p = &x1[3 * static_cast<std::size_t>(i)];
            double* q = &x2[3 * static_cast<std::size_t>(i)];
            for (int c = 0; c < 3; ++c) {
                p[c] = a[3 * i + c];
                q[c] = b[3 * i + c];
                if (!std::isfinite(p[c]) || !std::isfinite(q[c]))
                    detail::fail(where, std::isfinite(p[c]) ? "b2" : "b1",
                                 "must hold finite coordinates (index " + detail::to_text(i) + ")");
            }
            const double np = detail::pose_normalize3(p), nq = detail::pose_normalize3(q);
            if (!(np > 1e-150) || !(nq > 1e-150) || !(np < 1e150) || !(nq < 1e150))
                detail::fail(where, np > 1e-150 && np < 1e150 ? "b2" : "b1",
                             "must hold bearing vectors of length in [1e-150, 1e150] (index " + detail::to_text(i) + ")");
            if (ppr) {
                detail::check(std::isfinite(ppr[i]) && ppr[i] > 0.0 && ppr[i] <= 1e7, where, "pixels_per_radian",
                              "must be finite and in (0, 1e7] (index " + detail::to_text(i) + ")");
                s[static_cast<std::size_t>(i)] = ppr[i];
            }
        }
    }

    void submit(const double* a, const double* b, const double* scale, int sphere, int method, int count,
                StreamHandle stream, const double* prior) {
        n = count;
        early_set = false;
        device_pending = false;
        if (count < min_points(method)) {
            early = RelativePoseResult{};
            early.status = PoseStatus::TooFewPoints;
            early_set = true;
            pending = true;
            return;
        }
        detail::PoseCall call;
        call.x1 = a;
        call.x2 = b;
        call.s = scale;
        call.n = count;
        call.sphere = sphere;
        call.method = method;
        if (prior && method == 1)
            for (int j = 0; j < 9; ++j) call.R[j] = prior[j];
        be->enqueue(call, stream);
        pending = true;  // only once enqueued: a failed call leaves nothing pending
    }

    RelativePoseResult take(std::uint8_t* mask) {
        if (!pending && !device_pending)
            throw StateError("kestrel: RelativePoseEstimator::finish: no call is pending (finish() follows an estimate_async())");
        pending = false;
        device_pending = false;
        if (early_set) {
            early_set = false;
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
    impl_->x1.resize(3 * static_cast<std::size_t>(max_points));
    impl_->x2.resize(3 * static_cast<std::size_t>(max_points));
    impl_->s.resize(static_cast<std::size_t>(max_points));
    detail::pose_stop_tables(cfg.confidence, cfg.max_hypotheses, impl_->tables);
    if (backend == Backend::Cuda) {
        detail::require_cuda("RelativePoseEstimator");
        impl_->be = detail::make_cuda_pose_backend(max_points, cfg, impl_->tables);
    } else {
        impl_->be = detail::make_cpu_pose_backend(max_points, cfg, impl_->tables);
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
    const char* where = "RelativePoseEstimator::estimate_async";
    im.check_pending("estimate_async");
    im.check_call(where, x1, x2, n, rotation_prior);
    im.stage(where, x1, x2, n);
    im.submit(im.dst(0, n), im.dst(1, n), nullptr, 0, im.config_method(), n, stream, rotation_prior);
}
void RelativePoseEstimator::estimate_async(const float* x1, const float* x2, int n, StreamHandle stream,
                                           const double* rotation_prior) {
    Impl& im = impl("estimate_async");
    const char* where = "RelativePoseEstimator::estimate_async";
    im.check_pending("estimate_async");
    im.check_call(where, x1, x2, n, rotation_prior);
    im.stage(where, x1, x2, n);
    im.submit(im.dst(0, n), im.dst(1, n), nullptr, 0, im.config_method(), n, stream, rotation_prior);
}
void RelativePoseEstimator::estimate_device_async(const double* d_x1, const double* d_x2, int n, StreamHandle stream,
                                                  const double* rotation_prior) {
    Impl& im = impl("estimate_device_async");
    if (im.backend != Backend::Cuda)
        throw StateError("kestrel: RelativePoseEstimator::estimate_device_async: needs Backend::Cuda (device arrays); "
                         "on Backend::Cpu use estimate_async or estimate with host arrays");
    im.check_pending("estimate_device_async");
    im.check_call("RelativePoseEstimator::estimate_device_async", d_x1, d_x2, n, rotation_prior);
    PoseDeviceInput in;
    in.normalized1 = d_x1;
    in.normalized2 = d_x2;
    in.count = n;
    in.rotation_prior = im.cfg.method == PoseMethod::TwoPointWithRotation ? rotation_prior : nullptr;
    im.n = n;
    im.early_set = false;
    detail::PoseCall call;
    call.n = n;
    call.sphere = 0;
    call.method = im.config_method();
    if (call.method == 1)
        for (int j = 0; j < 9; ++j) call.R[j] = rotation_prior[j];
    call.device = &in;
    im.be->enqueue(call, stream);
    im.pending = true;
}

void RelativePoseEstimator::estimate_device_async(const PoseDeviceInput& in, StreamHandle stream) {
    Impl& im = impl("estimate_device_async");
    const char* where = "RelativePoseEstimator::estimate_device_async";
    if (im.backend != Backend::Cuda)
        throw StateError("kestrel: RelativePoseEstimator::estimate_device_async: needs Backend::Cuda (device arrays); "
                         "on Backend::Cpu use estimate_bearings or estimate with host arrays");
    im.check_pending("estimate_device_async");
    detail::check_range(where, "count", in.count, 0, im.max_points);
    const bool bearings = in.bearings1 != nullptr || in.bearings2 != nullptr;
    const bool normalized = in.normalized1 != nullptr || in.normalized2 != nullptr;
    detail::check(!(bearings && normalized), where, "bearings1",
                  "give bearings (bearings1, bearings2) or normalized points (normalized1, normalized2), not both");
    if (in.count > 0 || in.device_count) {
        detail::check(bearings || normalized, where, "bearings1",
                      "must not be null when count > 0 (or give normalized1, normalized2)");
        if (bearings) {
            detail::check(in.bearings1 != nullptr, where, "bearings1", "must not be null when bearings2 is given");
            detail::check(in.bearings2 != nullptr, where, "bearings2", "must not be null when bearings1 is given");
        } else {
            detail::check(in.normalized1 != nullptr, where, "normalized1", "must not be null when normalized2 is given");
            detail::check(in.normalized2 != nullptr, where, "normalized2", "must not be null when normalized1 is given");
        }
    }
    detail::check(in.pixels_per_radian == nullptr || !normalized, where, "pixels_per_radian",
                  "applies to bearings only (normalized points use focal_px)");
    im.check_prior(where, in.rotation_prior, false);
    detail::PoseCall call;
    call.n = in.count;
    call.sphere = normalized ? 0 : 1;
    call.method = in.rotation_prior ? 1 : 0;
    if (in.rotation_prior)
        for (int j = 0; j < 9; ++j) call.R[j] = in.rotation_prior[j];
    call.device = &in;
    im.n = in.count;
    im.early_set = false;
    im.be->enqueue(call, stream);
    im.device_pending = true;
}

const std::uint8_t* RelativePoseEstimator::device_mask() const { return impl("device_mask").be->device_mask(); }
const PoseRecord* RelativePoseEstimator::device_record() const { return impl("device_record").be->device_record(); }

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

void RelativePoseEstimator::estimate_bearings_async(const double* b1, const double* b2, int n,
                                                    const double* rotation_prior, const double* pixels_per_radian,
                                                    StreamHandle stream) {
    Impl& im = impl("estimate_bearings_async");
    const char* where = "RelativePoseEstimator::estimate_bearings";
    im.check_pending("estimate_bearings_async");
    detail::check_range(where, "n", n, 0, im.max_points);
    detail::check(n == 0 || b1 != nullptr, where, "b1", "must not be null when n > 0");
    detail::check(n == 0 || b2 != nullptr, where, "b2", "must not be null when n > 0");
    const bool two = im.cfg.method == PoseMethod::TwoPointWithRotation;
    im.check_prior(where, two ? rotation_prior : nullptr, two);
    im.stage_bearings(where, b1, b2, pixels_per_radian, n);
    im.submit(im.dst(0, n), im.dst(1, n), pixels_per_radian ? im.dst(2, n) : nullptr, 1, im.config_method(), n, stream,
              rotation_prior);
}
RelativePoseResult RelativePoseEstimator::estimate_bearings(const double* b1, const double* b2, int n,
                                                            std::uint8_t* inlier_mask, const double* rotation_prior,
                                                            const double* pixels_per_radian) {
    estimate_bearings_async(b1, b2, n, rotation_prior, pixels_per_radian, nullptr);
    return finish(inlier_mask);
}

}  // namespace kestrel
