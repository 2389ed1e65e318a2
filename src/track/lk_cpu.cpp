// CPU reference of the LK tracker: lk_track_one (detail/lk_rules.hpp) driven by an engine that
// emulates the warp lane by lane, so that it runs the kernel's operations in the kernel's order.
#include <cstring>

#include "lk_internal.hpp"

namespace kestrel {
namespace detail {

bool extract_template_cpu(const LkImage& im, float rx, float ry, int n, float* out) {
    return extract_template(im, rx, ry, n, out, 0, 1);
}

bool CpuLkEngine::load_template(int k, float rx, float ry, const LkImage&, float, float) {
    const int n = s_.patch[k];
    if (stored_) {
        t_ = stored_ + store_level_offset(s_, k);
        return valid_[k] != 0;
    }
    t_ = buf_;
    return extract_template_cpu(ref_[k], rx, ry, n, buf_);
}

float CpuLkEngine::template_sum(int k) {
    float out;
    emulate_warp_sums<1>(s_.patch[k], [&](float* acc, int i) { acc[0] = fadd(acc[0], t_[i]); }, &out);
    return out;
}

void CpuLkEngine::hessian_sums(int k, float mu, float* out) {
    const int npx = s_.patch[k] * s_.patch[k];
    emulate_warp_sums<kLkHessianSums>(
        s_.patch[k], [&](float* acc, int i) { add_hessian(acc, t_[i], t_[npx + i], t_[2 * npx + i], mu); }, out);
}

void CpuLkEngine::image_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c, float mu,
                             float* out, bool with_sad) {
    const int n = s_.patch[k];
    const int npx = n * n;
    const PatchGrid g = patch_grid(cx, cy, patch_half(n));
    const GridTaps src(cur, g);
    emulate_warp_sums<kLkImageSums + 1>(
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

void CpuLkEngine::residual_sums(int k, const LkImage& cur, float cx, float cy, float alpha, float beta_c,
                                float alpha0, float beta_c0, float mu, float* sad, float* sad0) {
    const int n = s_.patch[k];
    const PatchGrid g = patch_grid(cx, cy, patch_half(n));
    const GridTaps src(cur, g);
    float out[2];
    emulate_warp_sums<2>(
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
