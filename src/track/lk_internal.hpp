// Internal pieces of the LK tracker shared by the CPU reference, the GPU host code and the
// FeatureTracker: resolving an LkConfig into the kernel's LkSetup, and the CPU engine (the warp
// emulated lane by lane) that lk_track_one drives on the host.
#pragma once
#include <vector>

#include "kestrel/detail/lk_rules.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel::detail {

/// Validates cfg and resolves it (scales through level_scale, patch sides per level).
LkSetup make_lk_setup(const LkConfig& cfg);

/// Level views of a CPU pyramid, checked against the setup (levels, sizes consistent with level 0).
void lk_levels(const std::vector<HostImage>& pyr, const LkConfig& cfg, const char* where, const char* param,
               LkImage* out);

/// Level views of a device pyramid for the LK kernels (the first `levels`); StateError unless every level
/// starts 4-byte aligned with a pitch that is a multiple of 4 (the kernels' word loads). CUDA builds only.
void device_lk_levels(const DevicePyramid& p, int levels, LkImage* out);

/// Throws InvalidArgument naming `param` unless x and y are finite.
void check_point(const char* where, const char* param, std::size_t index, float x, float y);

// The CPU engines' hot functions (the per-pixel sums) get a second build for x86-64 CPUs with FMA (GCC's
// function multi-versioning on the FMA feature bit, chosen once at load time; FMA implies AVX): there ffma
// (std::fma) is one instruction instead of a call into the C library. ("arch=haswell" would not do: GCC
// dispatches it on the CPU model, so other CPUs with FMA would get the plain build.) Both builds are IEEE single precision with every fused multiply-add stated
// (the files are compiled with -ffp-contract=off), so they return the same bits; other targets use the plain one.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(KESTREL_NO_CPU_CLONES)
#define KESTREL_CPU_CLONES __attribute__((target_clones("fma", "default"), flatten))
#else
#define KESTREL_CPU_CLONES
#endif
#if defined(__GNUC__)
#define KESTREL_CPU_INLINE inline __attribute__((always_inline))
#define KESTREL_CPU_LAMBDA __attribute__((always_inline))  // after a lambda's parameters: inlined into its clone
#else
#define KESTREL_CPU_INLINE inline
#define KESTREL_CPU_LAMBDA
#endif

/// The warp's xor butterfly of K sums over 32 lanes, as the tree it is for lane 0: at each step, for l < half,
/// lanes[l] = lanes[l] + lanes[l + half] (the butterfly's lanes[l] + lanes[l ^ half]: the same operands in the
/// same order, since l ^ half = l + half for l < half), half = 16, 8, 4, 2, 1; the result is lanes[0]. Exactly
/// emulate_butterfly (lk_rules.hpp) with 31 additions per sum instead of 160. Overwrites lanes.
template <int K>
KESTREL_CPU_INLINE void warp_tree_sums(float (&lanes)[kLkLanes][K], float* out) {
    for (int half = kLkLanes / 2; half >= 1; half /= 2)
        for (int l = 0; l < half; ++l)
            for (int k = 0; k < K; ++k) lanes[l][k] = fadd(lanes[l][k], lanes[l + half][k]);
    for (int k = 0; k < K; ++k) out[k] = lanes[0][k];
}

/// The warp's order for K sums over an n x n patch, emulated on the host: per lane l, add(lanes[l], i) for its
/// pixels i = lane_pixel(l, 0, n), lane_pixel(l, 1, n), ... in slot order, then the butterfly into out.
/// Both CPU engines (LK's and the anchor's) sum through it.
template <int K, class Add>
KESTREL_CPU_INLINE void emulate_warp_sums(int n, Add&& add, float* out) {
    float lanes[kLkLanes][K];
    for (int l = 0; l < kLkLanes; ++l) {
        for (float& v : lanes[l]) v = 0.0f;
        for (int j = 0; j < kLkMaxPerLane; ++j) {
            const int i = lane_pixel(l, j, n);
            if (i >= 0) add(lanes[l], i);
        }
    }
    warp_tree_sums<K>(lanes, out);
}

/// The same sums lane-major, so that the compiler runs the 32 lanes as vector lanes: acc[k][l] is lane l's
/// sum k; for slot j = 0 .. slots - 1 and every lane l with a pixel in slot j (valid[j][l] != 0),
/// add(a, j, l) updates lane l's K sums a[] in place (the per-lane add of emulate_warp_sums, in the same slot
/// order); then each sum's tree. The same operations in the same order per lane as emulate_warp_sums.
template <int K, class Add>
KESTREL_CPU_INLINE void lane_major_sums(int slots, const std::int32_t (*valid)[kLkLanes], Add&& add, float* out) {
    float acc[K][kLkLanes];
    for (int k = 0; k < K; ++k)
        for (int l = 0; l < kLkLanes; ++l) acc[k][l] = 0.0f;
    for (int j = 0; j < slots; ++j) {
        bool full = true;  // every lane has a pixel in this slot (always so for the sides 8 and 16)
        for (int l = 0; l < kLkLanes; ++l) full &= valid[j][l] != 0;
        if (full) {
            for (int l = 0; l < kLkLanes; ++l) {  // no branch: the compiler runs the lanes as vector lanes
                float a[K];
                for (int k = 0; k < K; ++k) a[k] = acc[k][l];
                add(a, j, l);
                for (int k = 0; k < K; ++k) acc[k][l] = a[k];
            }
        } else {
            for (int l = 0; l < kLkLanes; ++l) {
                if (!valid[j][l]) continue;
                float a[K];
                for (int k = 0; k < K; ++k) a[k] = acc[k][l];
                add(a, j, l);
                for (int k = 0; k < K; ++k) acc[k][l] = a[k];
            }
        }
    }
    for (int k = 0; k < K; ++k) {
        for (int half = kLkLanes / 2; half >= 1; half /= 2)  // the tree of warp_tree_sums, one sum at a time
            for (int l = 0; l < half; ++l) acc[k][l] = fadd(acc[k][l], acc[k][l + half]);
        out[k] = acc[k][0];
    }
}

/// A patch side's lane layout: pixel lane_pixel(l, j, n) of slot j, lane l (0 where empty), its validity, and
/// the number of slots in use.
struct LaneLayout {
    int n = 0, slots = 0;
    std::int32_t pixel[kLkMaxPerLane][kLkLanes];
    std::int32_t valid[kLkMaxPerLane][kLkLanes];
    /// The pixel offsets (anchor_u, anchor_v) of each slot and lane (0 where empty): the anchor engine's constants.
    float u[kLkMaxPerLane][kLkLanes], v[kLkMaxPerLane][kLkLanes];
    /// n divides 32 (lane_pixel's column layout): in slot j the lanes g n .. g n + n - 1 hold n consecutive pixels
    /// from pixel[j][g n] (a row of the patch), or none.
    bool rows = false;
    void set(int side);
    /// out[j][l] = plane[pixel[j][l]] for every slot j < slots and lane l (by rows of n where `rows`), 0 where empty.
    void gather(const float* plane, float (*out)[kLkLanes]) const;
};

/// The layout of side n in [1, kMaxPatchSize], built once (constant tables, shared read-only by every engine).
const LaneLayout& lane_layout(int n);

/// The host engine of lk_track_one: per-lane partial sums in the warp's order, then the emulated butterfly.
class CpuLkEngine {
public:
    /// Live templates from the reference pyramid `ref` (levels of the setup).
    CpuLkEngine(const LkSetup& s, const LkImage* ref) : s_(s), ref_(ref) {}
    /// Stored templates: `slot_base` points at one slot of a store laid out as store_level_offset() says, `valid`
    /// at its setup.levels flags.
    CpuLkEngine(const LkSetup& s, const float* slot_base, const std::int32_t* valid)
        : s_(s), stored_(slot_base), valid_(valid) {}
    /// Both: live templates on the levels below `from_level` (at least s.stored_from_level), stored ones from there
    /// on, with their preparations `prep` (setup.levels entries of the slot, lk_prepare_level of the stored templates).
    CpuLkEngine(const LkSetup& s, const LkImage* ref, const float* slot_base, const std::int32_t* valid,
                const LkLevelPrep* prep, int from_level)
        : s_(s), ref_(ref), stored_(slot_base), valid_(valid), prep_(prep), from_level_(from_level) {}

    bool load_template(int k, float rx, float ry, const LkImage& cur, float cx, float cy);
    /// Level k's preparation when its template is a stored one with a preparation (lk_track_one's shortcut).
    bool prepared(int k, LkLevelPrep& p) {
        if (!from_store_ || prep_ == nullptr) return false;
        p = prep_[k];
        return true;
    }
    float template_sum(int k);
    void hessian_sums(int k, float mu, float* out);
    /// out[0..3]; out[4] (sum |e|) when with_sad (else 0); out[2] (sum a I) only on a level with the gain (else 0).
    void image_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float mu, float* out,
                    bool with_sad);
    void residual_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float alpha0,
                       float beta_c0, float mu, float* sad, float* sad0);

private:
    const LkSetup& s_;
    const LkImage* ref_ = nullptr;
    const float* stored_ = nullptr;
    const std::int32_t* valid_ = nullptr;
    const LkLevelPrep* prep_ = nullptr;
    int from_level_ = 0;        // with ref_ and stored_: the first level of stored templates
    bool from_store_ = false;   // the current level's template is the stored one
    const float* t_ = nullptr;  // current level's T, gx = t_ + n*n, gy = t_ + 2*n*n
    float buf_[3 * kMaxPatchSize * kMaxPatchSize] = {};
    // The loaded template lane-major (slot j, lane l): T, gx, gy of pixel lanes_->pixel[j][l].
    const LaneLayout* lanes_ = nullptr;
    float lt_[kLkMaxPerLane][kLkLanes], lgx_[kLkMaxPerLane][kLkLanes], lgy_[kLkMaxPerLane][kLkLanes];
};

/// Fills T, gx, gy (n*n each, consecutive) of the template at (rx, ry) on `im` (level coordinates):
/// detail::extract_template over every pixel (lk_store_kernel spreads the same call over a warp's lanes).
/// Returns false (and writes nothing) when the template does not fit in the image.
bool extract_template_cpu(const LkImage& im, float rx, float ry, int n, float* out);

}  // namespace kestrel::detail
