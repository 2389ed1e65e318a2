// Brute-force Hamming matching on the GPU. Reference it must match exactly: match_cpu
// (src/features/matcher_cpu.cpp), with the rules in include/kestrel/detail/orb_rules.hpp.
//
// A block of 8 warps owns 8 rows (one per warp); the columns stream through shared memory in tiles of
// 256 descriptors (and positions). Lane l of a warp compares its row with columns l, l + 32, ... of the
// tile and keeps its top 2 under (distance, index); the warp then merges the 32 lists by an xor
// butterfly. Distances are integers and the merge is the top 2 of a union under a total order, so the
// result does not depend on the order of the work: equal to the reference's. Without the cross-check
// the same kernel applies the ratio test and writes the match (one launch); with it, both directions'
// top 2 then a small kernel that keeps mutual best matches.
#include "kernels/common/cuda_check.hpp"
#include "matcher.cuh"

namespace kestrel::kernels {
namespace {

namespace o = detail::orb;

constexpr int kWarps = 8;
constexpr int kTile = 256;
constexpr int kWords = kOrbDescriptorBytes / 4;

__device__ __forceinline__ o::Top2 shfl_top2(const o::Top2& t, int off) {
    o::Top2 r;
    r.d1 = __shfl_xor_sync(0xffffffffu, t.d1, off);
    r.i1 = __shfl_xor_sync(0xffffffffu, t.i1, off);
    r.d2 = __shfl_xor_sync(0xffffffffu, t.d2, off);
    r.i2 = __shfl_xor_sync(0xffffffffu, t.i2, off);
    return r;
}

__global__ void __launch_bounds__(32 * kWarps)
    match_top2_kernel(MatchSide rows, MatchSide cols, MatchParams p, bool rows_are_query, o::Top2* top2,
                      Match* matches) {
    __shared__ uint4 tile[kTile][2];
    __shared__ float2 tile_pos[kTile];  // (Point2f has default member initializers: not allowed in __shared__)
    const int lane = static_cast<int>(threadIdx.x) & 31;
    const int row = static_cast<int>(blockIdx.x) * kWarps + static_cast<int>(threadIdx.x) / 32;
    const bool active = row < rows.n;
    std::uint32_t q[kWords] = {};
    Point2f qp{};
    if (active) {
        const uint4* src = reinterpret_cast<const uint4*>(rows.desc + row);
        const uint4 a = src[0], b = src[1];
        q[0] = a.x; q[1] = a.y; q[2] = a.z; q[3] = a.w;
        q[4] = b.x; q[5] = b.y; q[6] = b.z; q[7] = b.w;
        if (p.limit) qp = rows.pos[row];
    }
    o::Top2 best;
    for (int base = 0; base < cols.n; base += kTile) {
        const int m = cols.n - base < kTile ? cols.n - base : kTile;
        __syncthreads();  // the previous tile is no longer read
        for (int j = static_cast<int>(threadIdx.x); j < m; j += 32 * kWarps) {
            const uint4* src = reinterpret_cast<const uint4*>(cols.desc + base + j);
            tile[j][0] = src[0];
            tile[j][1] = src[1];
            if (p.limit) tile_pos[j] = make_float2(cols.pos[base + j].x, cols.pos[base + j].y);
        }
        __syncthreads();
        if (!active) continue;
        for (int j = lane; j < m; j += 32) {
            if (p.limit) {
                const float2 t = tile_pos[j];
                const float2 r = make_float2(qp.x, qp.y);
                const float2 a = rows_are_query ? r : t;
                const float2 b = rows_are_query ? t : r;
                if (!o::candidate(a.x, a.y, b.x, b.y, p.radius, p.band)) continue;
            }
            const uint4 t0 = tile[j][0], t1 = tile[j][1];
            const int d = __popc(q[0] ^ t0.x) + __popc(q[1] ^ t0.y) + __popc(q[2] ^ t0.z) + __popc(q[3] ^ t0.w) +
                          __popc(q[4] ^ t1.x) + __popc(q[5] ^ t1.y) + __popc(q[6] ^ t1.z) + __popc(q[7] ^ t1.w);
            o::top2_push(best, d, base + j);
        }
    }
    if (!active) return;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) best = o::top2_merge(best, shfl_top2(best, off));
    if (lane != 0) return;
    if (matches) {
        Match mt;
        mt.train = o::accept_match(best, p.ratio, p.max_distance, false, -1, row);
        mt.distance = best.d1;
        mt.second = best.d2;
        matches[row] = mt;
    } else {
        top2[row] = best;
    }
}

__global__ void match_cross_kernel(const o::Top2* qt, const o::Top2* tt, int n, MatchParams p, Match* matches) {
    const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    if (i >= n) return;
    const o::Top2 t = qt[i];
    Match mt;
    mt.train = o::accept_match(t, p.ratio, p.max_distance, true, t.i1 >= 0 ? tt[t.i1].i1 : -1, i);
    mt.distance = t.d1;
    mt.second = t.d2;
    matches[i] = mt;
}

}  // namespace

void launch_match_top2(const MatchSide& rows, const MatchSide& cols, const MatchParams& p, bool rows_are_query,
                       o::Top2* top2, Match* matches, cudaStream_t stream) {
    if (rows.n <= 0) return;
    const int blocks = (rows.n + kWarps - 1) / kWarps;
    match_top2_kernel<<<blocks, 32 * kWarps, 0, stream>>>(rows, cols, p, rows_are_query, top2, matches);
    KESTREL_CUDA_LAUNCH("Hamming matching");
}

void launch_match_cross(const o::Top2* query_top2, const o::Top2* train_top2, int n_query, const MatchParams& p,
                        Match* matches, cudaStream_t stream) {
    if (n_query <= 0) return;
    match_cross_kernel<<<(n_query + 127) / 128, 128, 0, stream>>>(query_top2, train_top2, n_query, p, matches);
    KESTREL_CUDA_LAUNCH("Hamming matching cross-check");
}

}  // namespace kestrel::kernels
