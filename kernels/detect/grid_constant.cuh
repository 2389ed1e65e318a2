// KESTREL_GRID_CONSTANT: __grid_constant__ on a kernel's const by-value parameter where the compiler has it
// (CUDA 11.7 and newer, sm_70 and newer): the kernel reads the parameter in place, also at run-time indices,
// instead of a per-thread copy in local memory. Empty on older toolkits (same results, the copy).
#pragma once

#if defined(__CUDACC_VER_MAJOR__) && (__CUDACC_VER_MAJOR__ > 11 || (__CUDACC_VER_MAJOR__ == 11 && __CUDACC_VER_MINOR__ >= 7))
#define KESTREL_GRID_CONSTANT __grid_constant__
#define KESTREL_HAS_GRID_CONSTANT 1
#else
#define KESTREL_GRID_CONSTANT
#define KESTREL_HAS_GRID_CONSTANT 0
#endif
