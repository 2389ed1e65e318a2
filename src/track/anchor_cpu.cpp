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

CpuAnchorEngine::CpuAnchorEngine(const AnchorSetup& s, const float* tmpl)
    : s_(s), t_(tmpl), lanes_(lane_layout(s.n)) {
    const int n = s.n, npx = n * n;
    const float h = patch_half(n);
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < kLkLanes; ++l) {
            const int i = lanes_.pixel[j][l];
            lt_[j][l] = t_[i];
            lgx_[j][l] = t_[npx + i];
            lgy_[j][l] = t_[2 * npx + i];
            lu_[j][l] = anchor_u(i, n, h);
            lv_[j][l] = anchor_v(i, n, h);
        }
}

KESTREL_CPU_CLONES float CpuAnchorEngine::template_sum() {
    float out;
    lane_major_sums<1>(lanes_.slots, lanes_.valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        acc[0] = fadd(acc[0], lt_[j][l]);
    }, &out);
    return out;
}

/// anchor_add_hessian's 36 sums, one sum at a time over every lane (sum k's per-lane order is its own: each
/// pixel adds ffma(sd[r], sd[c], acc[k]) to it in slot order, independently of the other sums), so that each
/// pass is one vector loop; then each sum's tree.
KESTREL_CPU_CLONES void CpuAnchorEngine::hessian_sums(float mu, float* out) {
    float sd[kAnchorParams][kLkMaxPerLane][kLkLanes];
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < kLkLanes; ++l) {
            float v[kAnchorParams];
            anchor_sd(fsub(lt_[j][l], mu), lgx_[j][l], lgy_[j][l], lu_[j][l], lv_[j][l], v);
            for (int p = 0; p < kAnchorParams; ++p) sd[p][j][l] = v[p];
        }
    int k = 0;
    for (int r = 0; r < kAnchorParams; ++r)
        for (int c = r; c < kAnchorParams; ++c, ++k) {
            float acc[kLkLanes];
            for (int l = 0; l < kLkLanes; ++l) acc[l] = 0.0f;
            for (int j = 0; j < lanes_.slots; ++j)
                for (int l = 0; l < kLkLanes; ++l)
                    acc[l] = lanes_.valid[j][l] ? ffma(sd[r][j][l], sd[c][j][l], acc[l]) : acc[l];
            for (int half = kLkLanes / 2; half >= 1; half /= 2)
                for (int l = 0; l < half; ++l) acc[l] = fadd(acc[l], acc[l + half]);
            out[k] = acc[0];
        }
}

KESTREL_CPU_CLONES void CpuAnchorEngine::error_sums(const LkImage& cur, const AnchorState& w, float alpha,
                                                    float beta_c, float mu, float* out) {
    float I[kLkMaxPerLane][kLkLanes];  // the warped samples lane-major (scalar: each pixel its own taps)
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < kLkLanes; ++l)
            I[j][l] = lanes_.valid[j][l] ? anchor_sample(cur, w, lu_[j][l], lv_[j][l]) : 0.0f;
    lane_major_sums<kAnchorParams + 1>(lanes_.slots, lanes_.valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        const float a = fsub(lt_[j][l], mu);
        float sd[kAnchorParams];
        anchor_sd(a, lgx_[j][l], lgy_[j][l], lu_[j][l], lv_[j][l], sd);
        anchor_add_error(acc, sd, a, I[j][l], alpha, beta_c);
    }, out);
}

}  // namespace kestrel::detail
