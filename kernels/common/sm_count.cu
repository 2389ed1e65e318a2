// sms_available (sm_count.cuh). The driver functions come from the runtime's entry-point query, so the
// library needs no libcuda link and still loads on drivers older than 12.4 (they simply have no green
// contexts, and the device's count is the answer).
#include "kernels/common/sm_count.cuh"

#include <cuda.h>  // CUDA_VERSION and the driver's resource types only
#include <cuda_runtime.h>

#include "kernels/common/cuda_check.hpp"

namespace kestrel::kernels {
namespace {

#if CUDA_VERSION >= 12040
template <typename F>
F driver_fn(const char* name) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult status{};
#if CUDART_VERSION >= 12050
    const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12040, cudaEnableDefault, &status);
#else
    const cudaError_t e = cudaGetDriverEntryPoint(name, &p, cudaEnableDefault, &status);
#endif
    if (e != cudaSuccess || status != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return reinterpret_cast<F>(p);
}

/// The current context's SM partition, or 0 when it cannot be told (no such driver function, no context).
int context_sms() {
    const auto get_current = driver_fn<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
    const auto get_resource = driver_fn<decltype(&cuCtxGetDevResource)>("cuCtxGetDevResource");
    if (get_current == nullptr || get_resource == nullptr) return 0;
    CUcontext ctx = nullptr;
    if (get_current(&ctx) != CUDA_SUCCESS || ctx == nullptr) return 0;
    CUdevResource res{};
    if (get_resource(ctx, &res, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) return 0;
    return static_cast<int>(res.sm.smCount);
}
#endif

}  // namespace

int sms_available() {
    int device = 0, sms = 0;
    KESTREL_CUDA(cudaGetDevice(&device), "SM count");
    KESTREL_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "SM count");
#if CUDA_VERSION >= 12040
    const int in_context = context_sms();
    if (in_context > 0 && in_context < sms) sms = in_context;
#endif
    return sms > 0 ? sms : 1;
}

}  // namespace kestrel::kernels
