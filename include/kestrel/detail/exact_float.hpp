// The exact float (and double) operations every rules header computes with: each is one IEEE operation, rounded
// to nearest, on both sides -- __fmul_rn & co. on the device (which nvcc never contracts into an FMA), the
// plain operator on the host (the CPU references are built without contraction) -- and ffma, a * b + c
// rounded once, where a rule fuses on purpose. A formula written with them gives the same bits on the CPU
// and the GPU.
#pragma once
#include <cmath>

#include "kestrel/detail/hd.hpp"

namespace kestrel::detail {

KESTREL_HD float fmul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
KESTREL_HD float fadd(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
KESTREL_HD float fsub(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}
KESTREL_HD float fdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}
/// The square root, correctly rounded on both sides (__fsqrt_rn; std::sqrt of a float).
KESTREL_HD float fsqrt(float a) {
#if defined(__CUDA_ARCH__)
    return __fsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}
/// a * b + c rounded once (fused multiply-add): the same IEEE operation on both sides (__fmaf_rn; std::fma,
/// one instruction on aarch64 and on x86-64 with FMA3, which glibc's fmaf selects at run time).
KESTREL_HD float ffma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}

// The same in double precision (the camera models' rules): __dmul_rn & co. on the device.
KESTREL_HD double dmul(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
KESTREL_HD double dadd(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
KESTREL_HD double dsub(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}
KESTREL_HD double ddiv(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}
/// a * b + c rounded once (__fma_rn on the device, std::fma on the host: the same IEEE operation).
KESTREL_HD double dfma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
}
KESTREL_HD double dsqrt(double a) {
#if defined(__CUDA_ARCH__)
    return __dsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}

}  // namespace kestrel::detail
