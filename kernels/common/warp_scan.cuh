// Device-only: warp prefix sums and warp-aggregated appends to a list in shared memory, for kernels whose
// threads each contribute zero or more entries (kernels/detect/fast_score.cu, kernels/detect/cell_detect.cu,
// kernels/detect/grid_select_block.cuh), and the warp-wide float sum of the tracking kernels. Every function
// must be called by all 32 lanes of the warp.
#pragma once

namespace kestrel::kernels::warp {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/// Sum of K floats over the warp by the xor butterfly (offsets 16, 8, 4, 2, 1, __fadd_rn): every lane ends with
/// the identical sums, in the order detail::emulate_butterfly reproduces on the host (the LK and anchor
/// kernels' reductions).
template <int K>
__device__ __forceinline__ void allreduce_add_rn(float* v) {
#pragma unroll
    for (int off = 16; off >= 1; off >>= 1) {
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = __fadd_rn(v[k], __shfl_xor_sync(kFullMask, v[k], off));
    }
}

/// Inclusive prefix sum over the warp: lane i receives v_0 + ... + v_i (five shuffles).
__device__ __forceinline__ unsigned inclusive_sum(unsigned v) {
    const unsigned lane = lane_id();
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const unsigned o = __shfl_up_sync(kFullMask, v, off);
        if (lane >= static_cast<unsigned>(off)) v += o;
    }
    return v;
}

/// Appends `count` entries per lane to a shared list whose length is *counter: returns this lane's first
/// slot (lanes in order, one shared atomic per warp, by the last lane).
__device__ __forceinline__ unsigned append(unsigned count, unsigned* counter) {
    const unsigned incl = inclusive_sum(count);
    const unsigned total = __shfl_sync(kFullMask, incl, 31);
    unsigned first = 0;
    if (lane_id() == 31 && total > 0) first = atomicAdd(counter, total);
    return __shfl_sync(kFullMask, first, 31) + incl - count;
}

/// append() for at most one entry per lane (a ballot instead of the scan): the slot of a lane with
/// `flag` set (meaningless otherwise).
__device__ __forceinline__ unsigned append_one(bool flag, unsigned* counter) {
    const unsigned ballot = __ballot_sync(kFullMask, flag);
    unsigned first = 0;
    if (lane_id() == 0 && ballot) first = atomicAdd(counter, static_cast<unsigned>(__popc(ballot)));
    return __shfl_sync(kFullMask, first, 0) + static_cast<unsigned>(__popc(ballot & ((1u << lane_id()) - 1u)));
}

}  // namespace kestrel::kernels::warp
