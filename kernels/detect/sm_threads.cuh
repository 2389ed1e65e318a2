// kSmMaxThreads: the most resident threads per SM of the architecture being compiled (2048 on sm_70, sm_72,
// sm_80, sm_90; 1536 on sm_86, sm_87, sm_89; 1024 on sm_75), for __launch_bounds__ minimum-block counts
// that ask for full occupancy: a count above what the architecture holds would be ignored with a warning.
#pragma once

namespace kestrel::kernels {

#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kSmMaxThreads = 1536;
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kSmMaxThreads = 1024;
#else
constexpr int kSmMaxThreads = 2048;
#endif

}  // namespace kestrel::kernels
