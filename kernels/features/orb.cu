// ORB on the GPU. References it must match bit for bit: orb_smooth_cpu, orb_angle_cpu and
// orb_descriptor_cpu (src/features/orb_cpu.cpp), with the rules in include/kestrel/detail/orb_rules.hpp.
//
// Smoothing: one launch for every level (blockIdx.z = level). A block stages a (32 + 6) x (8 + 6) tile
// of its level with reflect-101 indices in shared memory, runs the row rule (orb_blur_row) into a float
// tile, then the column rule (orb_blur_col): the reference's float operations in its order.
// Describe: one warp per keypoint, every level in one launch. The disc's moments are integer sums
// (lane u of each of the 31 rows, then an xor butterfly: exact in any order); every lane evaluates the
// same atan2 and cos/sin rules (explicit round-to-nearest float operations, compiled with
// --fmad=false); lane l then computes byte l of the descriptor (pairs 8l .. 8l+7), with the learned pattern
// staged in shared memory from the DeviceOrb's device copy.
#include "kernels/common/cuda_check.hpp"
#include "kestrel/detail/orb_rules.hpp"
#include "orb.cuh"

namespace kestrel::kernels {
namespace {

namespace o = detail::orb;

constexpr int kTileW = 32, kTileH = 8;
constexpr int kHalo = o::kOrbBlurRadius;
constexpr int kSrcW = kTileW + 2 * kHalo, kSrcH = kTileH + 2 * kHalo;

__global__ void __launch_bounds__(kTileW * kTileH) orb_smooth_kernel(OrbDesc d) {
    __shared__ std::uint8_t src[kSrcH][kSrcW];
    __shared__ float rows[kSrcH][kTileW];
    const OrbLevel lv = d.level[blockIdx.z];
    const int x0 = static_cast<int>(blockIdx.x) * kTileW, y0 = static_cast<int>(blockIdx.y) * kTileH;
    if (x0 >= lv.width || y0 >= lv.height) return;  // the whole block: this level is smaller
    const int t = static_cast<int>(threadIdx.y) * kTileW + static_cast<int>(threadIdx.x);
    for (int i = t; i < kSrcW * kSrcH; i += kTileW * kTileH) {
        const int sx = i % kSrcW, sy = i / kSrcW;
        const int x = o::reflect101(x0 + sx - kHalo, lv.width), y = o::reflect101(y0 + sy - kHalo, lv.height);
        src[sy][sx] = __ldg(lv.image + static_cast<std::size_t>(y) * lv.pitch + x);
    }
    __syncthreads();
    for (int i = t; i < kSrcH * kTileW; i += kTileW * kTileH) {
        const int rx = i % kTileW, ry = i / kTileW;
        int p[7];
#pragma unroll
        for (int k = 0; k < 7; ++k) p[k] = src[ry][rx + k];
        rows[ry][rx] = o::orb_blur_row(p);
    }
    __syncthreads();
    const int x = x0 + static_cast<int>(threadIdx.x), y = y0 + static_cast<int>(threadIdx.y);
    if (x >= lv.width || y >= lv.height) return;
    float c[7];
#pragma unroll
    for (int k = 0; k < 7; ++k) c[k] = rows[threadIdx.y + k][threadIdx.x];
    lv.smooth[static_cast<std::size_t>(y) * lv.smooth_pitch + x] = o::orb_blur_col(c);
}

constexpr int kWarpsPerBlock = 4;

__device__ __forceinline__ int pixel(const std::uint8_t* img, std::size_t pitch, int w, int h, int x, int y) {
    return __ldg(img + static_cast<std::size_t>(o::clampi(y, h)) * pitch + o::clampi(x, w));
}

__global__ void __launch_bounds__(32 * kWarpsPerBlock)
    orb_describe_kernel(OrbDesc d, const Keypoint* kps, const int* device_count, int host_count, int capacity,
                        float* angles, OrbDescriptor* descriptors) {
    // The learned pattern, staged once per block (4 bytes per thread).
    __shared__ __align__(4) signed char pattern[4 * kOrbDescriptorBits];
    for (int w = static_cast<int>(threadIdx.x); w < kOrbDescriptorBits; w += 32 * kWarpsPerBlock)
        reinterpret_cast<int*>(pattern)[w] = __ldg(reinterpret_cast<const int*>(d.pattern) + w);
    __syncthreads();
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int i = static_cast<int>(blockIdx.x) * kWarpsPerBlock + static_cast<int>(threadIdx.x) / 32;
    int n = device_count ? *device_count : host_count;
    n = n < 0 ? 0 : (n > capacity ? capacity : n);
    if (i >= n) return;  // the whole warp
    const Keypoint kp = kps[i];
    const int k = kp.level < 0 ? 0 : (kp.level >= d.levels ? d.levels - 1 : kp.level);
    const OrbLevel lv = d.level[k];
    const int cx = o::orb_level_coord(kp.x, lv.scale), cy = o::orb_level_coord(kp.y, lv.scale);

    // Moments of the disc: row v, pixel u = lane - umax (rows are at most 31 wide).
    int m10 = 0, m01 = 0;
#pragma unroll
    for (int v = -o::kOrbHalfPatch; v <= o::kOrbHalfPatch; ++v) {  // unrolled: orb_umax's index is a constant
        const int r = o::orb_umax(v < 0 ? -v : v);
        const int u = lane - r;
        if (u <= r) {
            const int p = pixel(lv.image, lv.pitch, lv.width, lv.height, cx + u, cy + v);
            m10 += u * p;
            m01 += v * p;
        }
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        m10 += __shfl_xor_sync(0xffffffffu, m10, off);
        m01 += __shfl_xor_sync(0xffffffffu, m01, off);
    }
    const float angle = o::orb_atan2_deg(static_cast<float>(m01), static_cast<float>(m10));
    float c = 0.0f, s = 0.0f;
    o::orb_cos_sin_deg(angle, c, s);

    unsigned byte = 0;
#pragma unroll
    for (int b = 0; b < 8; ++b) {
        const int pair = lane * 8 + b;
        int ax, ay, bx, by;
        o::orb_steer_point(pattern[4 * pair], pattern[4 * pair + 1], c, s, ax, ay);
        o::orb_steer_point(pattern[4 * pair + 2], pattern[4 * pair + 3], c, s, bx, by);
        const int pa = pixel(lv.smooth, lv.smooth_pitch, lv.width, lv.height, cx + ax, cy + ay);
        const int pb = pixel(lv.smooth, lv.smooth_pitch, lv.width, lv.height, cx + bx, cy + by);
        byte |= (pa < pb ? 1u : 0u) << b;
    }
    descriptors[i].bytes[lane] = static_cast<std::uint8_t>(byte);
    if (lane == 0) angles[i] = angle;
}

}  // namespace

void launch_orb_smooth(const OrbDesc& d, cudaStream_t stream) {
    const dim3 block(kTileW, kTileH);
    const dim3 grid((d.max_width + kTileW - 1) / kTileW, (d.max_height + kTileH - 1) / kTileH, d.levels);
    orb_smooth_kernel<<<grid, block, 0, stream>>>(d);
    KESTREL_CUDA_LAUNCH("ORB smoothing");
}

void launch_orb_describe(const OrbDesc& d, const Keypoint* keypoints, const int* device_count, int host_count,
                         int capacity, float* angles, OrbDescriptor* descriptors, cudaStream_t stream) {
    const int n = device_count ? capacity : host_count;
    if (n <= 0) return;
    const int blocks = (n + kWarpsPerBlock - 1) / kWarpsPerBlock;
    orb_describe_kernel<<<blocks, 32 * kWarpsPerBlock, 0, stream>>>(d, keypoints, device_count, host_count, capacity,
                                                                   angles, descriptors);
    KESTREL_CUDA_LAUNCH("ORB orientation and descriptors");
}

}  // namespace kestrel::kernels
