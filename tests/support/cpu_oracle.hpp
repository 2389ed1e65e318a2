// Test oracle: the straightforward CPU engines, kept verbatim as they were before the CPU backend was
// restructured for speed (row tables, vectorized segment test, threads, the warp sums' tree). The library's
// CPU backend must equal these bit for bit (tests/*/test_cpu_oracle*.cpp); they are compiled into the tests
// only and never change with the library.
#pragma once
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/detail/lk_rules.hpp"
#include "kestrel/detail/pyramid_rules.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyramid.hpp"
#include "src/detect/detector_geometry.hpp"

namespace kestrel::test::oracle {

// ---- pyramid: one source_tap per pixel -----------------------------------------------------------
inline std::vector<HostImage> build_pyramid(HostView image, const PyramidConfig& cfg) {
    const auto sizes = pyramid_sizes(image.width, image.height, cfg);
    const std::int32_t sq = detail::scale_q16(cfg.scale);
    std::vector<HostImage> out;
    out.push_back(HostImage::copy_of(image));
    for (std::size_t k = 1; k < sizes.size(); ++k) {
        const HostImage& src = out.back();
        HostImage dst(sizes[k].width, sizes[k].height);
        for (int y = 0; y < dst.height(); ++y) {
            const detail::Tap ty = detail::source_tap(y, sq, src.height());
            for (int x = 0; x < dst.width(); ++x) {
                const detail::Tap tx = detail::source_tap(x, sq, src.width());
                dst.at(x, y) = detail::blend(src.at(tx.i0, ty.i0), src.at(tx.i1, ty.i0), src.at(tx.i0, ty.i1),
                                             src.at(tx.i1, ty.i1), tx.w1, ty.w1);
            }
        }
        out.push_back(std::move(dst));
    }
    return out;
}

// ---- FAST: the segment test and the score pixel by pixel ----------------------------------------
inline int sobel_x(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* b = im.row(y);
    const std::uint8_t* c = im.row(y + 1);
    return (a[x + 1] + 2 * b[x + 1] + c[x + 1]) - (a[x - 1] + 2 * b[x - 1] + c[x - 1]);
}
inline int sobel_y(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* c = im.row(y + 1);
    return (c[x - 1] + 2 * c[x] + c[x + 1]) - (a[x - 1] + 2 * a[x] + a[x + 1]);
}
inline float harris(const HostView& im, int x, int y) {
    std::int64_t sxx = 0, syy = 0, sxy = 0;
    for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx) {
            const std::int64_t gx = sobel_x(im, x + dx, y + dy), gy = sobel_y(im, x + dx, y + dy);
            sxx += gx * gx;
            syy += gy * gy;
            sxy += gx * gy;
        }
    return detail::harris_from_sums(sxx, syy, sxy);
}

inline ScoreMap fast_score_map(HostView image, const FastConfig& cfg) {
    const auto lut = corner_lut(cfg.arc_min, cfg.arc_max);
    ScoreMap m;
    m.width = image.width;
    m.height = image.height;
    m.scores.assign(static_cast<std::size_t>(m.width) * m.height, 0.0f);
    const int b = score_border(cfg.score), t = cfg.threshold;
    for (int y = b; y < image.height - b; ++y)
        for (int x = b; x < image.width - b; ++x) {
            const int c = image.row(y)[x];
            int p[detail::kCircleSize];
            for (int i = 0; i < detail::kCircleSize; ++i)
                p[i] = image.row(y + detail::circle_dy(i))[x + detail::circle_dx(i)];
            if (!detail::is_corner(lut.data(), p, c, t, cfg.arc_min)) continue;
            float s = 0.0f;
            if (cfg.score == ScoreType::Harris)
                s = harris(image, x, y);
            else if (cfg.score == ScoreType::MaxThreshold)  // by its definition, not the closed form
                s = static_cast<float>(detail::score_max_threshold_search(lut.data(), p, c, t, cfg.arc_min));
            else
                s = static_cast<float>(detail::circle_score(cfg.score, lut.data(), p, c, t, cfg.arc_min, cfg.arc_max));
            m.scores[static_cast<std::size_t>(y) * m.width + x] = s;
        }
    return m;
}

// ---- grid selection: every pixel of every level in raster order ---------------------------------
inline void insert_best_first(std::uint64_t* top, int K, std::uint64_t key) {
    if (key <= top[K - 1]) return;
    int i = K - 1;
    while (i > 0 && top[i - 1] < key) {
        top[i] = top[i - 1];
        --i;
    }
    top[i] = key;
}

inline std::vector<Keypoint> grid_select(const detail::GridGeometry& g, const std::vector<ScoreMap>& maps,
                                         const DetectorConfig& cfg, const std::uint8_t* cell_skip,
                                         HostView pixel_mask) {
    using namespace detail;
    const int K = cfg.per_cell;
    std::vector<std::uint64_t> slots(static_cast<std::size_t>(g.cells()) * K, 0);
    for (int k = 0; k < g.levels; ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const float s = g.scale[k];
        const std::size_t pitch = sizeof(float) * static_cast<std::size_t>(m.width);
        for (int y = 0; y < m.height; ++y) {
            const int Y0 = level0_pixel(y, s, g.height);
            if (!inside_border(Y0, g.height, cfg.border)) continue;
            const int cy = Y0 / cfg.cell_height;
            for (int x = 0; x < m.width; ++x) {
                const float sp = m.at(x, y);
                if (!(sp > 0.0f)) continue;
                const int X0 = level0_pixel(x, s, g.width);
                if (!inside_border(X0, g.width, cfg.border)) continue;
                const int cell = cy * g.cols + X0 / cfg.cell_width;
                if (cell_skip && cell_skip[cell]) continue;
                if (pixel_mask.data && pixel_mask.row(Y0)[X0] == 0) continue;
                if (!nms_is_maximum(m.scores.data(), pitch, m.width, m.height, x, y, cfg.nms_radius, sp)) continue;
                insert_best_first(&slots[static_cast<std::size_t>(cell) * K], K, keypoint_key(sp, k, x, y));
            }
        }
    }
    std::uint64_t threshold = 1;
    if (cfg.max_features > 0) {
        std::vector<std::uint64_t> keys;
        for (std::uint64_t key : slots)
            if (key) keys.push_back(key);
        const std::size_t M = static_cast<std::size_t>(cfg.max_features);
        if (keys.size() > M) {
            std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(M - 1), keys.end(),
                             std::greater<std::uint64_t>());
            threshold = keys[M - 1];
        }
    }
    std::vector<Keypoint> out;
    for (std::uint64_t key : slots) {
        if (key < threshold) continue;
        const int level = key_level(key);
        Keypoint kp;
        kp.x = level0_coord(key_x(key), g.scale[level]);
        kp.y = level0_coord(key_y(key), g.scale[level]);
        kp.score = key_score(key);
        kp.level = level;
        out.push_back(kp);
    }
    return out;
}

/// The whole detector as it was: pyramid, score maps, selection.
inline std::vector<Keypoint> detect(HostView image, const DetectorConfig& cfg, const DetectionMasks& masks = {}) {
    const detail::GridGeometry g = detail::grid_geometry("oracle::detect", image.width, image.height, cfg);
    const std::vector<HostImage> pyr = build_pyramid(image, cfg.pyramid);
    std::vector<ScoreMap> maps;
    for (const HostImage& level : pyr) maps.push_back(fast_score_map(level.view(), cfg.fast));
    return grid_select(g, maps, cfg, masks.cell_skip, masks.pixel_mask);
}

// ---- LK and anchor engines: every lane's sums, then the full emulated butterfly ------------------
template <int K, class Add>
void warp_sums(int n, Add&& add, float* out) {
    using namespace detail;
    float lanes[kLkLanes][K];
    for (int l = 0; l < kLkLanes; ++l) {
        for (float& v : lanes[l]) v = 0.0f;
        for (int j = 0; j < kLkMaxPerLane; ++j) {
            const int i = lane_pixel(l, j, n);
            if (i >= 0) add(lanes[l], i);
        }
    }
    emulate_butterfly<K>(lanes, out);
}

class LkEngine {
public:
    LkEngine(const detail::LkSetup& s, const detail::LkImage* ref) : s_(s), ref_(ref) {}
    LkEngine(const detail::LkSetup& s, const float* slot_base, const std::int32_t* valid)
        : s_(s), stored_(slot_base), valid_(valid) {}

    bool load_template(int k, float rx, float ry, const detail::LkImage&, float, float) {
        const int n = s_.patch[k];
        if (stored_) {
            t_ = stored_ + detail::store_level_offset(s_, k);
            return valid_[k] != 0;
        }
        t_ = buf_;
        return detail::extract_template(ref_[k], rx, ry, n, buf_, 0, 1);
    }
    float template_sum(int k) {
        float out;
        warp_sums<1>(s_.patch[k], [&](float* acc, int i) { acc[0] = detail::fadd(acc[0], t_[i]); }, &out);
        return out;
    }
    void hessian_sums(int k, float mu, float* out) {
        const int npx = s_.patch[k] * s_.patch[k];
        warp_sums<detail::kLkHessianSums>(
            s_.patch[k], [&](float* acc, int i) { detail::add_hessian(acc, t_[i], t_[npx + i], t_[2 * npx + i], mu); },
            out);
    }
    void image_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha, float beta_c, float mu,
                    float* out, bool with_sad) {
        using namespace detail;
        const int n = s_.patch[k];
        const int npx = n * n;
        const PatchGrid g = patch_grid(cx, cy, patch_half(n));
        const GridTaps src(cur, g);
        warp_sums<kLkImageSums + 1>(
            n,
            [&](float* acc, int i) {
                const float a = fsub(t_[i], mu), image = grid_sample(src, g, i % n, i / n);
                if (with_sad)
                    add_image_sums<true>(acc, a, t_[npx + i], t_[2 * npx + i], image, alpha, beta_c);
                else
                    add_image_sums<false>(acc, a, t_[npx + i], t_[2 * npx + i], image, alpha, beta_c);
            },
            out);
    }
    void residual_sums(int k, const detail::LkImage& cur, float cx, float cy, float alpha, float beta_c,
                       float alpha0, float beta_c0, float mu, float* sad, float* sad0) {
        using namespace detail;
        const int n = s_.patch[k];
        const PatchGrid g = patch_grid(cx, cy, patch_half(n));
        const GridTaps src(cur, g);
        float out[2];
        warp_sums<2>(
            n,
            [&](float* acc, int i) {
                const float a = fsub(t_[i], mu), image = grid_sample(src, g, i % n, i / n);
                acc[0] = fadd(acc[0], fabsf(pixel_error_centred(a, image, alpha, beta_c)));
                acc[1] = fadd(acc[1], fabsf(pixel_error_centred(a, image, alpha0, beta_c0)));
            },
            out);
        *sad = out[0];
        *sad0 = out[1];
    }

private:
    const detail::LkSetup& s_;
    const detail::LkImage* ref_ = nullptr;
    const float* stored_ = nullptr;
    const std::int32_t* valid_ = nullptr;
    const float* t_ = nullptr;
    float buf_[3 * kMaxPatchSize * kMaxPatchSize] = {};
};

class AnchorEngine {
public:
    AnchorEngine(const detail::AnchorSetup& s, const float* tmpl) : s_(s), t_(tmpl) {}
    float template_sum() {
        float out;
        warp_sums<1>(s_.n, [&](float* acc, int i) { acc[0] = detail::fadd(acc[0], t_[i]); }, &out);
        return out;
    }
    void hessian_sums(float mu, float* out) {
        using namespace detail;
        const int n = s_.n, npx = n * n;
        const float h = patch_half(n);
        warp_sums<kAnchorHessianSums>(
            n,
            [&](float* acc, int i) {
                float sd[kAnchorParams];
                anchor_sd(fsub(t_[i], mu), t_[npx + i], t_[2 * npx + i], anchor_u(i, n, h), anchor_v(i, n, h), sd);
                anchor_add_hessian(acc, sd);
            },
            out);
    }
    void error_sums(const detail::LkImage& cur, const detail::AnchorState& w, float alpha, float beta_c, float mu,
                    float* out) {
        using namespace detail;
        const int n = s_.n, npx = n * n;
        const float h = patch_half(n);
        warp_sums<kAnchorParams + 1>(
            n,
            [&](float* acc, int i) {
                const float u = anchor_u(i, n, h), v = anchor_v(i, n, h), a = fsub(t_[i], mu);
                float sd[kAnchorParams];
                anchor_sd(a, t_[npx + i], t_[2 * npx + i], u, v, sd);
                anchor_add_error(acc, sd, a, anchor_sample(cur, w, u, v), alpha, beta_c);
            },
            out);
    }

private:
    const detail::AnchorSetup& s_;
    const float* t_;
};

}  // namespace kestrel::test::oracle
