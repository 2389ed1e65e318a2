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
    s.min_update = lk.min_update > kAnchorLaterStop ? lk.min_update : kAnchorLaterStop;
    s.min_eigenvalue = lk.min_eigenvalue;
    s.first_update = kAnchorFirstStop > s.min_update ? kAnchorFirstStop : s.min_update;
    s.inv_npx = exact_reciprocal(static_cast<float>(s.n * s.n));
    s.stored_bound = kStoredPatchBound;
    s.stored_bound0 = kStoredPatchBound0;
    s.interval = cfg.anchor.interval;
    s.drift_bound = kAnchorDriftBound;
    s.refit_residual = kAnchorRefitResidual;
    return s;
}

LkSetup make_tracker_lk_setup(const TrackerConfig& cfg) {
    LkSetup s = make_lk_setup(cfg.lk);
    if (cfg.anchor.enabled && cfg.lk.template_source == TemplateSource::PreviousFrame) s.stored_from_level = 0;
    if (s.coarse_min_update < kTrackerCoarseMinUpdate) {
        s.coarse_min_update = kTrackerCoarseMinUpdate;
        s.coarse_min_update_sq = kTrackerCoarseMinUpdate * kTrackerCoarseMinUpdate;
    }
    return s;
}

CpuAnchorEngine::CpuAnchorEngine(const AnchorSetup& s, const float* tmpl)
    : s_(s), t_(tmpl), lanes_(lane_layout(s.n)) {
    const int npx = s.n * s.n;
    lanes_.gather(t_, lt_);
    lanes_.gather(t_ + npx, lgx_);
    lanes_.gather(t_ + 2 * npx, lgy_);
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
            anchor_sd(fsub(lt_[j][l], mu), lgx_[j][l], lgy_[j][l], lanes_.u[j][l], lanes_.v[j][l], v);
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
    // The warped samples lane-major: anchor_sample (anchor_rules.hpp) in three passes, the position, the grid
    // (patch_grid) and the four taps' offsets of every lane as vector lanes (clamped into the image: the border
    // rule of GridTaps::at; computed for empty lanes too, so that no lane branches: their values are never
    // summed), the taps (scalar loads), then grid_sample's blend, ffma(ay, row(1), by * row(0)) with
    // row(j) = ffma(ax, I(1, j), bx * I(0, j)), as vector lanes. The same operations on the same values.
    constexpr int S = kLkMaxPerLane, L = kLkLanes;
    float ax[S][L], bx[S][L], ay[S][L], by[S][L];
    std::int32_t o00[S][L], o10[S][L], o01[S][L], o11[S][L];
    const int last_x = cur.width - 1, last_y = cur.height - 1, pitch = static_cast<int>(cur.pitch);
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < L; ++l) {
            const float u = lanes_.u[j][l], v = lanes_.v[j][l];
            const float px = ffma(w.a00, u, ffma(w.a01, v, w.x));
            const float py = ffma(w.a10, u, ffma(w.a11, v, w.y));
            const PatchGrid g = patch_grid(px, py, 0.0f);
            ax[j][l] = g.ax;
            bx[j][l] = g.bx;
            ay[j][l] = g.ay;
            by[j][l] = g.by;
            const int r0 = clamp_tap(g.y0, last_y) * pitch, r1 = clamp_tap(g.y0 + 1, last_y) * pitch;
            const int c0 = clamp_tap(g.x0, last_x), c1 = clamp_tap(g.x0 + 1, last_x);
            o00[j][l] = r0 + c0;
            o10[j][l] = r0 + c1;
            o01[j][l] = r1 + c0;
            o11[j][l] = r1 + c1;
        }
    float t00[S][L], t10[S][L], t01[S][L], t11[S][L];
    const std::uint8_t* data = cur.data;
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < L; ++l) {
            t00[j][l] = static_cast<float>(data[o00[j][l]]);
            t10[j][l] = static_cast<float>(data[o10[j][l]]);
            t01[j][l] = static_cast<float>(data[o01[j][l]]);
            t11[j][l] = static_cast<float>(data[o11[j][l]]);
        }
    float I[S][L];
    for (int j = 0; j < lanes_.slots; ++j)
        for (int l = 0; l < L; ++l) {
            const float row0 = ffma(ax[j][l], t10[j][l], fmul(bx[j][l], t00[j][l]));
            const float row1 = ffma(ax[j][l], t11[j][l], fmul(bx[j][l], t01[j][l]));
            I[j][l] = ffma(ay[j][l], row1, fmul(by[j][l], row0));
        }
    lane_major_sums<kAnchorParams + 1>(lanes_.slots, lanes_.valid, [&](float* acc, int j, int l) KESTREL_CPU_LAMBDA {
        const float a = fsub(lt_[j][l], mu);
        float sd[kAnchorParams];
        anchor_sd(a, lgx_[j][l], lgy_[j][l], lanes_.u[j][l], lanes_.v[j][l], sd);
        anchor_add_error(acc, sd, a, I[j][l], alpha, beta_c);
    }, out);
}

}  // namespace kestrel::detail
