// CPU reference of the anchor stage: anchor_refine_one (detail/anchor_rules.hpp) driven by an engine that
// emulates the warp lane by lane (kernels/track/anchor.cu runs the same operations in the same order).
#include "anchor_internal.hpp"

namespace kestrel::detail {

AnchorSetup make_anchor_setup(const TrackerConfig& cfg) {
    const LkSetup lk = make_lk_setup(cfg.lk);  // the mode's flags, level 0's patch side, the LK bounds
    AnchorSetup s{};
    s.n = lk.patch[0];
    s.est_gain = lk.est_gain;
    s.est_offset = lk.est_offset;
    s.max_iterations = cfg.anchor.max_iterations;
    s.min_update = lk.min_update;
    s.min_eigenvalue = lk.min_eigenvalue;
    return s;
}

KESTREL_CPU_CLONES float CpuAnchorEngine::template_sum() {
    float out;
    emulate_warp_sums<1>(s_.n, [&](float* acc, int i) KESTREL_CPU_LAMBDA { acc[0] = fadd(acc[0], t_[i]); }, &out);
    return out;
}

KESTREL_CPU_CLONES void CpuAnchorEngine::hessian_sums(float mu, float* out) {
    const int n = s_.n, npx = n * n;
    const float h = patch_half(n);
    emulate_warp_sums<kAnchorHessianSums>(
        n,
        [&](float* acc, int i) KESTREL_CPU_LAMBDA {
            float sd[kAnchorParams];
            anchor_sd(fsub(t_[i], mu), t_[npx + i], t_[2 * npx + i], anchor_u(i, n, h), anchor_v(i, n, h), sd);
            anchor_add_hessian(acc, sd);
        },
        out);
}

KESTREL_CPU_CLONES void CpuAnchorEngine::error_sums(const LkImage& cur, const AnchorState& w, float alpha, float beta_c, float mu,
                                 float* out) {
    const int n = s_.n, npx = n * n;
    const float h = patch_half(n);
    emulate_warp_sums<kAnchorParams + 1>(
        n,
        [&](float* acc, int i) KESTREL_CPU_LAMBDA {
            const float u = anchor_u(i, n, h), v = anchor_v(i, n, h), a = fsub(t_[i], mu);
            float sd[kAnchorParams];
            anchor_sd(a, t_[npx + i], t_[2 * npx + i], u, v, sd);
            anchor_add_error(acc, sd, a, anchor_sample(cur, w, u, v), alpha, beta_c);
        },
        out);
}

}  // namespace kestrel::detail
