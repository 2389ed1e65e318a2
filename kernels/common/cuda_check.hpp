// Internal: every CUDA runtime call and launch goes through these checks, in every build type.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "kestrel/error.hpp"

namespace kestrel::detail {

[[noreturn]] inline void throw_cuda(cudaError_t code, const char* call, const char* file, int line,
                                    const char* stage) {
    (void)cudaGetLastError();  // reset the thread's last error: the next launch check must not report this one again
    throw CudaError(static_cast<int>(code), call, file, line, stage,
                    std::string("kestrel: CUDA error in stage '") + stage + "': " + call + " failed with " +
                        cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ") at " + file + ":" +
                        std::to_string(line));
}

}  // namespace kestrel::detail

/// Checks a CUDA runtime call; throws kestrel::CudaError with the call, file, line and stage.
#define KESTREL_CUDA(call, stage)                                                          \
    do {                                                                                   \
        const cudaError_t kestrel_err_ = (call);                                           \
        if (kestrel_err_ != cudaSuccess)                                                   \
            ::kestrel::detail::throw_cuda(kestrel_err_, #call, __FILE__, __LINE__, stage); \
    } while (0)

/// Checks the launch that was just issued (configuration errors surface here, not later).
#define KESTREL_CUDA_LAUNCH(stage) KESTREL_CUDA(cudaGetLastError(), stage)
