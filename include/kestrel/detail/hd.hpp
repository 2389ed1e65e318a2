// KESTREL_HD marks functions shared verbatim by the CPU reference and the CUDA kernels.
#pragma once
#if defined(__CUDACC__)
#define KESTREL_HD __host__ __device__ __forceinline__
#else
#define KESTREL_HD inline
#endif

// Loop unrolling hints that host compilers ignore silently.
#if defined(__CUDA_ARCH__)
#define KESTREL_UNROLL _Pragma("unroll")
#define KESTREL_NO_UNROLL _Pragma("unroll 1")
#else
#define KESTREL_UNROLL
#define KESTREL_NO_UNROLL
#endif
