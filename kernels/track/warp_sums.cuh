// Device-only: the warp-wide float sums of the tracking kernels (LK, anchor), bit-identical to the xor
// butterfly of kernels/common/warp_scan.cuh (warp::allreduce_add_rn, emulated on the host by
// detail::emulate_butterfly) with fewer instructions.
//
// The butterfly adds, at offsets 16, 8, 4, 2, 1, lane l's partial sums to lane l ^ off's: after each step both
// lanes of a pair hold the same values (IEEE addition is commutative), so every value of a pair is computed
// twice. Here the pair splits the work instead (reduce-scatter): at offset off the lane with bit `off` clear
// keeps the lower half of the values it still holds, the other the upper half, and each sends its partner the
// half it drops: one shuffle and one addition per kept value, the same operands as the butterfly's. Once a lane
// holds one value, the remaining offsets are the plain butterfly on it; each value is then read from a lane
// that holds it (one shuffle per value). Every value is the same sum of the same partial sums in the same tree
// as the butterfly's, so the result is the butterfly's, bit for bit, in every lane.
// Instructions for K values (shuffles + additions + selections): K = 9 (8 split + 1): 50 instead of 90; K = 4:
// 22 instead of 40; K = 5: 32 instead of 50.
#pragma once

namespace kestrel::kernels::track_sums {

constexpr unsigned kFullMask = 0xFFFFFFFFu;

/// The xor butterfly on K values (the plain one, for the values that do not split).
template <int K>
__device__ __forceinline__ void butterfly(float* v, int from_off) {
#pragma unroll
    for (int off = from_off; off >= 1; off >>= 1) {
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = __fadd_rn(v[k], __shfl_xor_sync(kFullMask, v[k], off));
    }
}

/// The lane that holds value k after the split stages of a power-of-two P (the lane bits select halves).
__host__ __device__ constexpr int split_lane(int P, int k) {
    int lane = 0, off = 16, cnt = P;
    while (cnt > 1) {
        cnt /= 2;
        if (k % (2 * cnt) >= cnt) lane |= off;
        off /= 2;
    }
    return lane;
}

/// The lanes of a group of G consecutive lanes of the warp (G = 32, 16 or 8: the tracking kernels' lanes per
/// track), as the mask of the group of warp lane wl.
template <int G>
__device__ __forceinline__ unsigned group_mask(int wl) {
    static_assert(G == 32 || G == 16 || G == 8, "G: 32, 16 or 8 lanes per track");
    if constexpr (G == 32) return kFullMask;
    else return ((1u << G) - 1u) << (wl & (32 - G));
}

/// Reduce-scatter of P values (P a power of two, 2 <= P <= G) within a group of G lanes (lane: the lane in the group,
/// mask: the group's lanes; G = 32: the warp): the split stages at offsets G/2 .. down to the one where each lane
/// holds one value, the plain butterfly on that value for the remaining offsets, then the broadcast from the lane in
/// the group that holds each value (split_lane): v[0..P-1] = the butterfly's sums, in every lane of the group.
template <int P, int G>
__device__ __forceinline__ void group_split_sum(float* v, int lane, unsigned mask) {
    static_assert(P >= 2 && P <= G && (P & (P - 1)) == 0, "P: a power of two, at most G");
    float w[P];
#pragma unroll
    for (int k = 0; k < P; ++k) w[k] = v[k];
    int off = G / 2;
#pragma unroll
    for (int cnt = P; cnt > 1; cnt /= 2, off /= 2) {
        const int m = cnt / 2;
        const bool upper = (lane & off) != 0;
        // This lane's values are w[0 .. cnt-1] in its group's order; it keeps the half of its bit and gets the
        // partner's copy of the same half. Index q of the kept half is value q (lower) or m + q (upper).
#pragma unroll
        for (int q = 0; q < m; ++q) {
            const float keep = upper ? w[m + q] : w[q];
            const float send = upper ? w[q] : w[m + q];
            w[q] = __fadd_rn(keep, __shfl_xor_sync(mask, send, off));
        }
    }
#pragma unroll
    for (; off >= 1; off >>= 1) w[0] = __fadd_rn(w[0], __shfl_xor_sync(mask, w[0], off));
#pragma unroll
    for (int k = 0; k < P; ++k) v[k] = __shfl_sync(mask, w[0], split_lane(P, k) / (32 / G), G);
}

/// Reduce-scatter of P values over the whole warp (P a power of two, 2 <= P <= 32), then the butterfly on the single
/// value held, then the broadcast: v[0..P-1] = the butterfly's sums, in every lane (group_split_sum with G = 32: the
/// same stages, offsets 16 .. 1, and the same bits).
template <int P>
__device__ __forceinline__ void split_sum(float* v, int lane) {
    group_split_sum<P, 32>(v, lane, kFullMask);
}

/// Sum of K floats over the warp, bit-identical to warp::allreduce_add_rn<K> (every lane gets the sums): the
/// largest power of two P <= K of them split (split_sum), the rest by the butterfly.
template <int K>
__device__ __forceinline__ void allreduce_add_rn(float* v, int lane) {
    constexpr int P = K >= 32 ? 32 : (K >= 16 ? 16 : (K >= 8 ? 8 : (K >= 4 ? 4 : (K >= 2 ? 2 : 1))));
    if constexpr (P >= 2) {
        split_sum<P>(v, lane);
        if constexpr (K > P) butterfly<K - P>(v + P, 16);
    } else {
        butterfly<K>(v, 16);  // one value: the butterfly itself
    }
}

/// The 32-lane butterfly's sums of K values when a group of G lanes does the work of the warp's 32: lane l of
/// the group holds, in acc[r], the partial sums that lane l + G r of a 32-lane warp would hold (r < 32 / G).
/// The butterfly's stages at offsets 32 / 2 .. G pair lane l + G r with lane l + G (r + cnt / 2) of the same
/// group's lane: they are additions inside the lane (acc[r] + acc[r + cnt / 2], the butterfly's operands); the
/// stages at offsets G / 2 .. 1 are shuffles within the group (group_split_sum, then the butterfly on what does
/// not split). Every value is thus the same sum of the same partial sums in the same tree as the 32-lane
/// butterfly's (allreduce_add_rn<K>, warp::allreduce_add_rn<K>), bit for bit, in every lane of the group.
/// Result in acc[0][0 .. K-1].
template <int K, int G>
__device__ __forceinline__ void group_allreduce_add_rn(float (&acc)[32 / G][K], int lane, unsigned mask) {
    constexpr int R = 32 / G;
#pragma unroll
    for (int cnt = R; cnt > 1; cnt /= 2) {
#pragma unroll
        for (int r = 0; r < cnt / 2; ++r) {
#pragma unroll
            for (int k = 0; k < K; ++k) acc[r][k] = __fadd_rn(acc[r][k], acc[r + cnt / 2][k]);
        }
    }
    if constexpr (G == 32) {
        allreduce_add_rn<K>(acc[0], lane);
    } else {
        // The largest power of two P <= min(K, G) of the values split (none when K = 1), the rest by the butterfly.
        constexpr int P = K >= G ? G : (K >= 16 ? 16 : (K >= 8 ? 8 : (K >= 4 ? 4 : (K >= 2 ? 2 : 0))));
        if constexpr (P >= 2) group_split_sum<P, G>(acc[0], lane, mask);
        if constexpr (K > P) {
#pragma unroll
            for (int off = G / 2; off >= 1; off >>= 1) {
#pragma unroll
                for (int k = P; k < K; ++k) acc[0][k] = __fadd_rn(acc[0][k], __shfl_xor_sync(mask, acc[0][k], off));
            }
        }
    }
}

/// K sums over a track's patch by its G lanes (the LK and anchor engines): lane l of the group does the work of the
/// 32-lane warp's lanes l + G r, r < 32 / G, its slot p = PerLane r + j holding pixel j of virtual lane r. add(acc, p)
/// adds slot p's terms to its virtual lane's partial sums acc (slots in order, those where holds(p)), then the 32-lane
/// butterfly's tree (group_allreduce_add_rn) gives out[0 .. K-1] in every lane of the group.
template <int K, int G, int PerLane, class Holds, class Add>
__device__ __forceinline__ void patch_sums(float* out, int lane, unsigned mask, Holds&& holds, Add&& add) {
    constexpr int kR = 32 / G;
    float acc[kR][K];
#pragma unroll
    for (int r = 0; r < kR; ++r)
#pragma unroll
        for (int q = 0; q < K; ++q) acc[r][q] = 0.0f;
#pragma unroll
    for (int p = 0; p < PerLane * kR; ++p)
        if (holds(p)) add(acc[p / PerLane], p);
    group_allreduce_add_rn<K, G>(acc, lane, mask);
#pragma unroll
    for (int q = 0; q < K; ++q) out[q] = acc[0][q];
}

}  // namespace kestrel::kernels::track_sums
