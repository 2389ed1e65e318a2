// CPU reference of the LK tracker: lk_track_one (detail/lk_rules.hpp) driven by an engine that
// emulates the warp lane by lane, so that it runs the kernel's operations in the kernel's order. For speed
// the patch's samples are computed once per call (each row interpolation once), the butterfly is summed as
// the tree it is for lane 0, and the hot functions get an FMA build (lk_internal.hpp): the same values.
#include <cstring>
#include <type_traits>

#include "kestrel/detail/anchor_rules.hpp"
#include "lk_internal.hpp"

namespace kestrel {
namespace detail {

namespace {

/// Taps of row j of the grid as floats, i = first .. first + count - 1 (GridTaps::at, clamped into the image).
KESTREL_CPU_INLINE void tap_row(const GridTaps& src, int j, int first, int count, float* out) {
    const std::uint8_t* row = src.data + static_cast<std::size_t>(clamp_tap(src.y0 + j, src.last_y)) * src.pitch;
    const int x = src.x0 + first;
    if (x >= 0 && x + count - 1 <= src.last_x) {  // no tap past the edge (most grids): a plain conversion loop
        const std::uint8_t* p = row + x;
        for (int i = 0; i < count; ++i) out[i] = static_cast<float>(p[i]);
        return;
    }
    for (int i = 0; i < count; ++i) out[i] = static_cast<float>(row[clamp_tap(x + i, src.last_x)]);
}

/// Row interpolations grid_row(src, g, i, j) for i = first .. first + count - 1.
KESTREL_CPU_INLINE void grid_rows(const GridTaps& src, const PatchGrid& g, int j, int first, int count, float* out) {
    float taps[kMaxPatchSize + 3];
    tap_row(src, j, first, count + 1, taps);
    for (int i = 0; i < count; ++i) out[i] = ffma(g.ax, taps[i + 1], fmul(g.bx, taps[i]));
}

/// Samples grid_sample(src, g, i, j) for i, j in [first, first + count): S[(j - first) * count + (i - first)].
KESTREL_CPU_INLINE void sample_block(const GridTaps& src, const PatchGrid& g, int first, int count, float* S) {
    float rows[2][kMaxPatchSize + 2];
    grid_rows(src, g, first, first, count, rows[0]);
    for (int j = 0; j < count; ++j) {
        float* lo = rows[j & 1];
        float* hi = rows[(j + 1) & 1];
        grid_rows(src, g, first + j + 1, first, count, hi);
        float* s = S + j * count;
        for (int i = 0; i < count; ++i) s[i] = ffma(g.ay, hi[i], fmul(g.by, lo[i]));
    }
}

/// add_image_sums_packed (lk_rules.hpp) restated operation for operation (GCC would not inline the rule's own into
/// the FMA build, which then called the plain build per pixel); tests/track/test_track_cpu_oracle.cpp checks
/// the bits against the rule.
template <bool Sad, bool Gain>
KESTREL_CPU_INLINE void image_sums_of(float* acc, float a, float gx, float gy, float image, float alpha, float beta_c) {
    constexpr int q = Gain ? 3 : 2;
    acc[0] = ffma(gx, image, acc[0]);
    acc[1] = ffma(gy, image, acc[1]);
    if constexpr (Gain) acc[2] = ffma(a, image, acc[2]);
    acc[q] = fadd(acc[q], image);
    if constexpr (Sad) acc[q + 1] = fadd(acc[q + 1], fabsf(fsub(ffma(alpha, a, beta_c), image)));
}

}  // namespace

/// extract_template (lk_rules.hpp) over every pixel, with the samples of the widened (n + 2)^2 grid computed
/// once: T = sample(i, j), gx = (sample(i + 1, j) - sample(i - 1, j)) / 2 ... as grid_template computes them.
KESTREL_CPU_CLONES bool extract_template_cpu(const LkImage& im, float rx, float ry, int n, float* out) {
    if (!inside(im, rx, ry, n, 1)) return false;
    const PatchGrid g = patch_grid(rx, ry, patch_half(n));
    const GridTaps src(im, g);
    const int m = n + 2, npx = n * n;
    float S[(kMaxPatchSize + 2) * (kMaxPatchSize + 2)];
    sample_block(src, g, -1, m, S);  // S[(j + 1) * m + (i + 1)] = sample(i, j), i, j = -1 .. n
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const float* c = S + (j + 1) * m + (i + 1);
            const int p = j * n + i;
            out[p] = c[0];
            out[npx + p] = fmul(0.5f, fsub(c[1], c[-1]));
            out[2 * npx + p] = fmul(0.5f, fsub(c[m], c[-m]));
        }
    return true;
}

void LaneLayout::set(int side) {
    n = side;
    slots = 0;
    rows = kLkLanes % side == 0;
    const float h = patch_half(side);
    for (int j = 0; j < kLkMaxPerLane; ++j)
        for (int l = 0; l < kLkLanes; ++l) {
            const int i = lane_pixel(l, j, side);
            pixel[j][l] = i >= 0 ? i : 0;
            valid[j][l] = i >= 0;
            u[j][l] = i >= 0 ? anchor_u(i, side, h) : 0.0f;
            v[j][l] = i >= 0 ? anchor_v(i, side, h) : 0.0f;
            if (i >= 0 && j + 1 > slots) slots = j + 1;
        }
}

void LaneLayout::gather(const float* plane, float (*out)[kLkLanes]) const {
    const std::size_t run = static_cast<std::size_t>(n) * sizeof(float);
    if (n == 16) {  // the default side: 8 slots of two rows each, copied inline
        for (int j = 0; j < slots; ++j)
            for (int l = 0; l < kLkLanes; l += 16) {
                if (valid[j][l]) std::memcpy(&out[j][l], plane + pixel[j][l], 16 * sizeof(float));  // inlined: 64 bytes
                else std::memset(&out[j][l], 0, 16 * sizeof(float));
            }
        return;
    }
    if (rows) {
        for (int j = 0; j < slots; ++j)
            for (int l = 0; l < kLkLanes; l += n) {
                if (valid[j][l]) std::memcpy(&out[j][l], plane + pixel[j][l], run);
                else std::memset(&out[j][l], 0, run);
            }
        return;
    }
    for (int j = 0; j < slots; ++j)
        for (int l = 0; l < kLkLanes; ++l) out[j][l] = valid[j][l] ? plane[pixel[j][l]] : 0.0f;
}

const LaneLayout& lane_layout(int n) {
    static const std::vector<LaneLayout> layouts = [] {
        std::vector<LaneLayout> v(kMaxPatchSize + 1);
        for (int side = 1; side <= kMaxPatchSize; ++side) v[static_cast<std::size_t>(side)].set(side);
        return v;
    }();
    return layouts[static_cast<std::size_t>(n)];
}

bool CpuLkEngine::load_template(int k, float rx, float ry, const LkImage&, float, float) {
    const int n = s_.patch[k];
    bool ok;
    from_store_ = stored_ && (ref_ == nullptr || k >= from_level_);
    if (from_store_) {
        t_ = stored_ + store_level_offset(s_, k);
        ok = valid_[k] != 0;
    } else {
        t_ = buf_;
        ok = extract_template_cpu(ref_[k], rx, ry, n, buf_);
    }
    if (!ok) return false;
    lanes_ = &lane_layout(n);
    const int npx = n * n;
    lanes_->gather(t_, lt_);
    lanes_->gather(t_ + npx, lgx_);
    lanes_->gather(t_ + 2 * npx, lgy_);
    return true;
}

KESTREL_CPU_CLONES float CpuLkEngine::template_sum(int) {
    float out;
    lane_major_sums<1>(lanes_->slots, lanes_->valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        acc[0] = fadd(acc[0], lt_[j][l]);
    }, &out);
    return out;
}

KESTREL_CPU_CLONES void CpuLkEngine::hessian_sums(int, float mu, float* out) {
    lane_major_sums<kLkHessianSums>(lanes_->slots, lanes_->valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        add_hessian(acc, lt_[j][l], lgx_[j][l], lgy_[j][l], mu);
    }, out);
}

KESTREL_CPU_CLONES void CpuLkEngine::image_sums(int k, const LkImage& cur, float cx, float cy, float alpha,
                                                 float beta_c, float mu, float* out, bool with_sad) {
    const int n = s_.patch[k];
    const PatchGrid g = patch_grid(cx, cy, patch_half(n));
    const GridTaps src(cur, g);
    float S[kMaxPatchSize * kMaxPatchSize];
    sample_block(src, g, 0, n, S);
    float I[kLkMaxPerLane][kLkLanes];  // the samples lane-major
    lanes_->gather(S, I);
    // The packed sums (add_image_sums_packed): a I only where the level estimates the gain.
    const auto sums = [&](auto sad, auto gain) KESTREL_CPU_LAMBDA {
        constexpr bool kSad = decltype(sad)::value, kGain = decltype(gain)::value;
        float packed[kLkImageSumsPacked<kSad, kGain>];
        lane_major_sums<kLkImageSumsPacked<kSad, kGain>>(lanes_->slots, lanes_->valid,
                                                         [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
            image_sums_of<kSad, kGain>(acc, fsub(lt_[j][l], mu), lgx_[j][l], lgy_[j][l], I[j][l], alpha, beta_c);
        }, packed);
        unpack_image_sums<kSad, kGain>(packed, out);
    };
    using T = std::true_type;
    using F = std::false_type;
    const bool gain = k == 0 && s_.est_gain != 0;
    if (with_sad) {
        if (gain) sums(T{}, T{});
        else sums(T{}, F{});
    } else {
        if (gain) sums(F{}, T{});
        else sums(F{}, F{});
    }
}

KESTREL_CPU_CLONES void CpuLkEngine::residual_sums(int k, const LkImage& cur, float cx, float cy, float alpha,
                                                    float beta_c, float alpha0, float beta_c0, float mu, float* sad,
                                                    float* sad0) {
    const int n = s_.patch[k];
    const PatchGrid g = patch_grid(cx, cy, patch_half(n));
    const GridTaps src(cur, g);
    float S[kMaxPatchSize * kMaxPatchSize];
    sample_block(src, g, 0, n, S);
    float I[kLkMaxPerLane][kLkLanes];
    lanes_->gather(S, I);
    float out[2];
    lane_major_sums<2>(lanes_->slots, lanes_->valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        const float a = fsub(lt_[j][l], mu);
        acc[0] = fadd(acc[0], fabsf(pixel_error_centred(a, I[j][l], alpha, beta_c)));
        acc[1] = fadd(acc[1], fabsf(pixel_error_centred(a, I[j][l], alpha0, beta_c0)));
    }, out);
    *sad = out[0];
    *sad0 = out[1];
}

}  // namespace detail

std::vector<LkResult> lk_track_cpu(const std::vector<HostImage>& ref, const std::vector<HostImage>& cur,
                                   const std::vector<Point2f>& ref_points, const LkConfig& cfg,
                                   const std::vector<LkGuess>* guesses) {
    const char* where = "lk_track_cpu";
    const detail::LkSetup s = detail::make_lk_setup(cfg);
    detail::LkImage ref_levels[kMaxLevels], cur_levels[kMaxLevels];
    detail::lk_levels(ref, cfg, where, "ref", ref_levels);
    detail::lk_levels(cur, cfg, where, "cur", cur_levels);
    detail::check(cur[0].width() == ref[0].width() && cur[0].height() == ref[0].height(), where, "cur",
                  "level 0 is " + detail::to_text(cur[0].width()) + "x" + detail::to_text(cur[0].height()) +
                      ", must equal ref's " + detail::to_text(ref[0].width()) + "x" + detail::to_text(ref[0].height()));
    for (std::size_t i = 0; i < ref_points.size(); ++i)
        detail::check_point(where, "ref_points", i, ref_points[i].x, ref_points[i].y);
    if (guesses) {
        detail::check(guesses->size() == ref_points.size(), where, "guesses",
                      "has " + detail::to_text(guesses->size()) + " entries, must have one per point (" +
                          detail::to_text(ref_points.size()) + ")");
        for (std::size_t i = 0; i < guesses->size(); ++i) {
            const LkGuess& g = (*guesses)[i];
            detail::check_point(where, "guesses", i, g.x, g.y);
            detail::check(std::isfinite(g.gain) && g.gain > 0.0f && std::isfinite(g.offset), where, "guesses",
                          "[" + detail::to_text(i) + "] gain must be finite and > 0 and offset finite");
        }
    }
    std::vector<LkResult> out(ref_points.size());
    detail::CpuLkEngine eng(s, ref_levels);
    for (std::size_t i = 0; i < ref_points.size(); ++i) {
        const Point2f p = ref_points[i];
        const LkGuess g = guesses ? (*guesses)[i] : LkGuess{p.x, p.y, 1.0f, 0.0f};
        out[i] = detail::lk_track_one(eng, s, cur_levels, p.x, p.y, g);
    }
    return out;
}

}  // namespace kestrel
