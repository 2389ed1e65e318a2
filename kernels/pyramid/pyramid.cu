// GPU pyramid. Reference it must match bit for bit: build_pyramid_cpu (src/pyramid/pyramid_cpu.cpp), with the
// rule in include/kestrel/detail/pyramid_rules.hpp.
//
// s = 2: one launch builds every level. A block owns a T x T tile of level 1 (2T x 2T of level 0);
// since each coarser pixel depends only on the 2x2 pixels below it, the block derives its T/2 tile
// of level 2, T/4 of level 3, ... from shared memory without touching level 0 again. T is the
// smallest of 16, 32, 64 that still holds one pixel of the coarsest level (T >= 2^(levels-2)), so a
// 752x480 frame gets 360 blocks rather than a few dozen: the kernel is latency-bound, not
// bandwidth-bound, and wants many warps in flight.
// Other factors: one launch per level, one thread per output pixel, taps from the shared rule.
// Two pyramids of one size and configuration (launch_pyramid_pair: a stereo pair) take the same launches with
// gridDim.z = 2, the second pyramid's blocks at z = 1.
#include "kernels/common/cuda_check.hpp"
#include "kestrel/detail/pyramid_rules.hpp"
#include "pyramid.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kFusedThreads = 256;

template <int kTile>
__device__ __forceinline__ void halve_tile(const PyramidDesc& d, std::uint8_t* tile) {
    const PyramidLevel src0 = d.level[0];
    const PyramidLevel l1 = d.level[1];
    const int tx0 = blockIdx.x * kTile, ty0 = blockIdx.y * kTile;

    // Level 1 from level 0 (global memory); every iteration's loads are independent (unrolled).
#pragma unroll
    for (int j = 0; j < (kTile * kTile + kFusedThreads - 1) / kFusedThreads; ++j) {
        const int i = static_cast<int>(threadIdx.x) + j * kFusedThreads;
        const int lx = i % kTile, ly = i / kTile;
        const int x = tx0 + lx, y = ty0 + ly;
        if (i < kTile * kTile && x < l1.width && y < l1.height) {
            const std::uint8_t* r0 = src0.data + static_cast<std::size_t>(2 * y) * src0.pitch + 2 * x;
            const std::uint8_t* r1 = r0 + src0.pitch;
            const std::uint8_t v = detail::average4(__ldg(r0), __ldg(r0 + 1), __ldg(r1), __ldg(r1 + 1));
            tile[i] = v;
            l1.data[static_cast<std::size_t>(y) * l1.pitch + x] = v;
        }
    }
    // Level k+1 from level k (shared memory).
    int side = kTile, off = 0;
    for (int k = 2; k < d.levels; ++k) {
        __syncthreads();
        const int nside = side / 2, noff = off + side * side;
        const PyramidLevel dst = d.level[k];
        const int ox = tx0 >> (k - 1), oy = ty0 >> (k - 1);
        for (int i = threadIdx.x; i < nside * nside; i += kFusedThreads) {
            const int lx = i % nside, ly = i / nside;
            const int x = ox + lx, y = oy + ly;
            if (x < dst.width && y < dst.height) {
                const std::uint8_t* r0 = tile + off + (2 * ly) * side + 2 * lx;
                const std::uint8_t v = detail::average4(r0[0], r0[1], r0[side], r0[side + 1]);
                tile[noff + i] = v;
                dst.data[static_cast<std::size_t>(y) * dst.pitch + x] = v;
            }
        }
        side = nside;
        off = noff;
    }
}

// One pyramid (gridDim.z == 1) or two of one size and configuration (gridDim.z == 2: a StereoTracker's left and
// right images in one launch). Each branch reads its own parameter directly: selecting a descriptor by a run-time
// index would copy it to local memory.
template <int kTile>
__global__ void __launch_bounds__(kFusedThreads) pyramid_halving_kernel(PyramidDesc d0, PyramidDesc d1) {
    __shared__ std::uint8_t tile[kTile * kTile + kTile * kTile / 4 + kTile * kTile / 16 + kTile * kTile / 64 + 64];
    if (blockIdx.z == 0)
        halve_tile<kTile>(d0, tile);
    else
        halve_tile<kTile>(d1, tile);
}

template <int kTile>
void launch_halving(const PyramidDesc& d, const PyramidDesc* d1, cudaStream_t stream) {
    const dim3 grid((d.level[1].width + kTile - 1) / kTile, (d.level[1].height + kTile - 1) / kTile, d1 ? 2 : 1);
    pyramid_halving_kernel<kTile><<<grid, kFusedThreads, 0, stream>>>(d, d1 ? *d1 : d);
}

__device__ __forceinline__ void resample(const PyramidLevel& src, const PyramidLevel& dst, std::int32_t sq16) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dst.width || y >= dst.height) return;
    const detail::Tap tx = detail::source_tap(x, sq16, src.width);
    const detail::Tap ty = detail::source_tap(y, sq16, src.height);
    const std::uint8_t* r0 = src.data + static_cast<std::size_t>(ty.i0) * src.pitch;
    const std::uint8_t* r1 = src.data + static_cast<std::size_t>(ty.i1) * src.pitch;
    dst.data[static_cast<std::size_t>(y) * dst.pitch + x] =
        detail::blend(r0[tx.i0], r0[tx.i1], r1[tx.i0], r1[tx.i1], tx.w1, ty.w1);
}

// One level of one pyramid (gridDim.z == 1) or of two (gridDim.z == 2, the pair's second in src1/dst1).
__global__ void pyramid_resample_kernel(PyramidLevel src, PyramidLevel dst, PyramidLevel src1, PyramidLevel dst1,
                                        std::int32_t sq16) {
    if (blockIdx.z == 0)
        resample(src, dst, sq16);
    else
        resample(src1, dst1, sq16);
}

void launch_pyramids(const PyramidDesc& d, const PyramidDesc* d1, cudaStream_t stream) {
    if (d.levels < 2) return;
    if (d.scale_q16 == (2 << 16)) {
        static_assert((64 >> (kMaxLevels - 2)) >= 1, "fused tile too small for kMaxLevels");
        // Smallest tile whose coarsest level still has a pixel: T >> (levels - 2) >= 1.
        if (d.levels <= 6)
            launch_halving<16>(d, d1, stream);
        else if (d.levels == 7)
            launch_halving<32>(d, d1, stream);
        else
            launch_halving<64>(d, d1, stream);
        KESTREL_CUDA_LAUNCH("pyramid");
        return;
    }
    for (int k = 1; k < d.levels; ++k) {
        const dim3 block(32, 8);
        const dim3 grid((d.level[k].width + 31) / 32, (d.level[k].height + 7) / 8, d1 ? 2 : 1);
        const PyramidDesc& e = d1 ? *d1 : d;
        pyramid_resample_kernel<<<grid, block, 0, stream>>>(d.level[k - 1], d.level[k], e.level[k - 1], e.level[k],
                                                           d.scale_q16);
        KESTREL_CUDA_LAUNCH("pyramid");
    }
}

}  // namespace

void launch_pyramid(const PyramidDesc& d, cudaStream_t stream) { launch_pyramids(d, nullptr, stream); }

void launch_pyramid_pair(const PyramidDesc& a, const PyramidDesc& b, cudaStream_t stream) {
    launch_pyramids(a, &b, stream);
}

}  // namespace kestrel::kernels
