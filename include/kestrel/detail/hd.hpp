// KESTREL_HD marks functions shared verbatim by the CPU reference and the CUDA kernels.
#pragma once
#if defined(__CUDACC__)
#define KESTREL_HD __host__ __device__ __forceinline__
#else
#define KESTREL_HD inline
#endif
