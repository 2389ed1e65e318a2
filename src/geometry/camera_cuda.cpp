// Host side of the GPU batch unprojection: owns the device buffers (allocated once, for `capacity`
// points), validates every call, copies in, launches kernels/geometry/unproject.cu and copies out, all
// stream-ordered. Nothing here allocates or synchronizes per call (except the synchronous form's wait).
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "camera_internal.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/geometry/unproject.cuh"
#include "kestrel/device_image.hpp"
#include "src/core/backend.hpp"

namespace kestrel {

struct DeviceUnprojector::Impl {
    Camera cam;
    UndistortConfig cfg;
    detail::CameraSetup setup{};
    int capacity = 0;
    float* xy = nullptr;                  // 2 * capacity floats
    Point2d* normalized = nullptr;        // capacity points
    UnprojectStatus* status = nullptr;    // capacity statuses

    ~Impl() {
        if (xy) (void)cudaFree(xy);
        if (normalized) (void)cudaFree(normalized);
        if (status) (void)cudaFree(status);
    }

    /// Copy in, one launch, copy out, all on `stream` (arguments checked by the caller).
    void enqueue(const float* in, int count, Point2d* out, UnprojectStatus* out_status, StreamHandle stream) const {
        if (count == 0) return;
        const std::size_t n = static_cast<std::size_t>(count);
        KESTREL_CUDA(cudaMemcpyAsync(xy, in, 2 * n * sizeof(float), cudaMemcpyDefault, stream), "unproject upload");
        kernels::UnprojectLaunch p{};
        p.setup = setup;
        p.xy = xy;
        p.normalized = normalized;
        p.status = status;
        p.count = count;
        kernels::launch_unproject(p, stream);
        KESTREL_CUDA(cudaMemcpyAsync(out, normalized, n * sizeof(Point2d), cudaMemcpyDefault, stream),
                     "unproject download");
        KESTREL_CUDA(cudaMemcpyAsync(out_status, status, n * sizeof(UnprojectStatus), cudaMemcpyDefault, stream),
                     "unproject download");
    }
};

namespace {

/// Throws InvalidArgument naming `param` unless `p` is device, managed or page-locked host memory: a copy from
/// or to pageable memory would synchronize (the synchronous form takes any memory).
void check_not_pageable(const char* where, const char* param, const void* p) {
    cudaPointerAttributes attr{};
    const bool known = cudaPointerGetAttributes(&attr, p) == cudaSuccess;
    if (!known) (void)cudaGetLastError();
    const bool ok = known && (attr.type == cudaMemoryTypeHost || attr.type == cudaMemoryTypeDevice ||
                              attr.type == cudaMemoryTypeManaged);
    detail::check(ok, where, param,
                  "must point to device or page-locked host memory (cudaMalloc, cudaMallocHost, cudaHostRegister): a "
                  "pageable copy would synchronize; use unproject() for ordinary memory");
}

}  // namespace

DeviceUnprojector::DeviceUnprojector() = default;
DeviceUnprojector::DeviceUnprojector(DeviceUnprojector&&) noexcept = default;
DeviceUnprojector& DeviceUnprojector::operator=(DeviceUnprojector&&) noexcept = default;
DeviceUnprojector::~DeviceUnprojector() = default;

DeviceUnprojector::DeviceUnprojector(const Camera& cam, int capacity, const UndistortConfig& cfg) {
    const char* where = "DeviceUnprojector";
    auto m = std::make_unique<Impl>();
    m->setup = detail::make_camera_setup(cam, cfg, where);
    detail::check_range(where, "capacity", capacity, 1, kMaxUnprojectPoints);
    detail::require_cuda(where);
    m->cam = cam;
    m->cfg = cfg;
    m->capacity = capacity;
    const std::size_t n = static_cast<std::size_t>(capacity);
    KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->xy), 2 * n * sizeof(float)), "unprojector buffers");
    KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->normalized), n * sizeof(Point2d)), "unprojector buffers");
    KESTREL_CUDA(cudaMalloc(reinterpret_cast<void**>(&m->status), n * sizeof(UnprojectStatus)), "unprojector buffers");
    impl_ = std::move(m);
}

DeviceUnprojector::Impl& DeviceUnprojector::impl(const char* where) const {
    if (!impl_) detail::empty_object("DeviceUnprojector", where);
    return *impl_;
}

const Camera& DeviceUnprojector::camera() const { return impl("camera").cam; }
const UndistortConfig& DeviceUnprojector::config() const { return impl("config").cfg; }
int DeviceUnprojector::capacity() const { return impl("capacity").capacity; }

void DeviceUnprojector::unproject_async(const float* xy, int count, Point2d* normalized, UnprojectStatus* status,
                                        StreamHandle stream) {
    const char* where = "DeviceUnprojector::unproject_async";
    const Impl& m = impl("unproject_async");
    detail::check_unproject_args(where, xy, count, m.capacity, normalized, status);
    if (count == 0) return;
    check_not_pageable(where, "xy", xy);
    check_not_pageable(where, "normalized", normalized);
    check_not_pageable(where, "status", status);
    m.enqueue(xy, count, normalized, status, stream);
}

void DeviceUnprojector::unproject(const float* xy, int count, Point2d* normalized, UnprojectStatus* status) {
    const char* where = "DeviceUnprojector::unproject";
    const Impl& m = impl("unproject");
    detail::check_unproject_args(where, xy, count, m.capacity, normalized, status);
    m.enqueue(xy, count, normalized, status, nullptr);
    synchronize(nullptr, where);
}

}  // namespace kestrel
