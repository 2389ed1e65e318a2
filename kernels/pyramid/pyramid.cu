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
#include "kernels/common/cuda_check.hpp"
#include "kestrel/detail/pyramid_rules.hpp"
#include "pyramid.cuh"

namespace kestrel::kernels {
namespace {

constexpr int kFusedThreads = 256;

template <int kTile>
__global__ void __launch_bounds__(kFusedThreads) pyramid_halving_kernel(PyramidDesc d) {
    __shared__ std::uint8_t tile[kTile * kTile + kTile * kTile / 4 + kTile * kTile / 16 + kTile * kTile / 64 + 64];
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

template <int kTile>
void launch_halving(const PyramidDesc& d, cudaStream_t stream) {
    const dim3 grid((d.level[1].width + kTile - 1) / kTile, (d.level[1].height + kTile - 1) / kTile);
    pyramid_halving_kernel<kTile><<<grid, kFusedThreads, 0, stream>>>(d);
}

__global__ void pyramid_resample_kernel(PyramidLevel src, PyramidLevel dst, std::int32_t sq16) {
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

}  // namespace

void launch_pyramid(const PyramidDesc& d, cudaStream_t stream) {
    if (d.levels < 2) return;
    if (d.scale_q16 == (2 << 16)) {
        static_assert((64 >> (kMaxLevels - 2)) >= 1, "fused tile too small for kMaxLevels");
        // Smallest tile whose coarsest level still has a pixel: T >> (levels - 2) >= 1.
        if (d.levels <= 6)
            launch_halving<16>(d, stream);
        else if (d.levels == 7)
            launch_halving<32>(d, stream);
        else
            launch_halving<64>(d, stream);
        KESTREL_CUDA_LAUNCH("pyramid");
        return;
    }
    for (int k = 1; k < d.levels; ++k) {
        const dim3 block(32, 8);
        const dim3 grid((d.level[k].width + 31) / 32, (d.level[k].height + 7) / 8);
        pyramid_resample_kernel<<<grid, block, 0, stream>>>(d.level[k - 1], d.level[k], d.scale_q16);
        KESTREL_CUDA_LAUNCH("pyramid");
    }
}

}  // namespace kestrel::kernels
