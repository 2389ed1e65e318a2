// The anchor stage (detail/anchor_rules.hpp): the affine + gain/offset fit against a track's first
// observation, on an analytic scene rendered exactly under known affine warps, and its effect on the
// FeatureTracker (drift removed on a rotating sequence). GPU agreement: test_feature_tracker_cuda.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "kestrel/detail/anchor_rules.hpp"
#include "kestrel/feature_tracker.hpp"
#include "src/track/anchor_internal.hpp"
#include "src/track/feature_tracker_backend.hpp"

namespace kestrel {
namespace {

using namespace kestrel::detail;

// A smooth, textured scene (grey levels in about [20, 235]).
double scene(double x, double y) {
    return 128.0 + 45.0 * std::sin(0.31 * x + 0.17 * y) + 30.0 * std::cos(0.23 * x - 0.37 * y) +
           20.0 * std::sin(0.53 * x + 0.05 * y) * std::cos(0.41 * y - 0.11 * x);
}

// Frame showing the scene through p = M q + c (linear part L, translation t): pixel p shows q = L^-1 (p - t),
// with gain and offset, rounded to 8 bits.
HostImage render(int w, int h, const double L[4], double tx, double ty, double gain = 1.0, double offset = 0.0) {
    const double det = L[0] * L[3] - L[1] * L[2];
    const double i00 = L[3] / det, i01 = -L[1] / det, i10 = -L[2] / det, i11 = L[0] / det;
    HostImage img(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double px = x - tx, py = y - ty;
            const double v = gain * scene(i00 * px + i01 * py, i10 * px + i11 * py) + offset;
            img.at(x, y) = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
        }
    return img;
}

LkImage view(const HostImage& im) { return {im.data(), im.width(), im.height(), im.pitch()}; }

struct Case {
    const char* what;
    double angle_deg, sx, sy, shear, gain, offset;
};

TEST(Anchor, RecoversKnownAffineWarpsGainAndOffset) {
    const double I[4] = {1, 0, 0, 1};
    const HostImage first = render(96, 96, I, 0, 0);
    const float cx = 47.0f, cy = 45.5f;
    TrackerConfig cfg;
    const AnchorSetup s = make_anchor_setup(cfg);
    std::vector<float> tmpl(3 * 16 * 16);
    ASSERT_TRUE(extract_template(view(first), cx, cy, 16, tmpl.data(), 0, 1));
    for (const Case& c : {Case{"identity", 0, 1, 1, 0, 1, 0}, Case{"rotation 10 deg", 10, 1, 1, 0, 1, 0},
                          Case{"zoom 1.2", 0, 1.2, 1.2, 0, 1, 0}, Case{"anisotropic + shear", 4, 1.1, 0.93, 0.08, 1, 0},
                          Case{"rotation + gain/offset", -7, 1.05, 1.05, 0, 1.3, -20}}) {
        const double a = c.angle_deg * 3.14159265358979 / 180.0;
        const double L[4] = {c.sx * std::cos(a), -c.sy * std::sin(a) + c.shear, c.sx * std::sin(a), c.sy * std::cos(a)};
        const double tx = 3.3, ty = -2.15;  // p = L q + t
        const HostImage cur = render(96, 96, L, tx, ty, c.gain, c.offset);
        const double true_x = L[0] * cx + L[1] * cy + tx, true_y = L[2] * cx + L[3] * cy + ty;
        AnchorState st;  // a start off by (0.7, -0.5) px with the identity warp
        st.x = static_cast<float>(true_x + 0.7);
        st.y = static_cast<float>(true_y - 0.5);
        CpuAnchorEngine eng(s, tmpl.data());
        const AnchorResult r = anchor_refine_one(eng, s, view(cur), st, anchor_prepare(eng, s));
        ASSERT_EQ(r.status, TrackStatus::Tracked) << c.what;
        EXPECT_LT(std::hypot(r.state.x - true_x, r.state.y - true_y), 0.03) << c.what;
        EXPECT_NEAR(r.state.a00, L[0], 0.01) << c.what;
        EXPECT_NEAR(r.state.a01, L[1], 0.01) << c.what;
        EXPECT_NEAR(r.state.a10, L[2], 0.01) << c.what;
        EXPECT_NEAR(r.state.a11, L[3], 0.01) << c.what;
        EXPECT_NEAR(r.state.gain, c.gain, 0.02) << c.what;
        EXPECT_NEAR(r.state.offset, c.offset, 2.0) << c.what;
        EXPECT_LT(r.residual, 1.5f) << c.what;
        EXPECT_LE(r.iterations, cfg.anchor.max_iterations);
    }
}

TEST(Anchor, DegenerateInputsAreFlaggedNotGarbage) {
    TrackerConfig cfg;
    const AnchorSetup s = make_anchor_setup(cfg);
    HostImage flat(64, 64);
    std::fill(flat.data(), flat.data() + 64 * 64, std::uint8_t{90});
    std::vector<float> tmpl(3 * 16 * 16);
    ASSERT_TRUE(extract_template(view(flat), 32.0f, 32.0f, 16, tmpl.data(), 0, 1));
    AnchorState st;
    st.x = st.y = 32.0f;
    CpuAnchorEngine eng(s, tmpl.data());
    const AnchorPrep flat_prep = anchor_prepare(eng, s);
    EXPECT_EQ(flat_prep.ok, 0);  // singular
    EXPECT_EQ(anchor_refine_one(eng, s, view(flat), st, flat_prep).status, TrackStatus::LostAnchor);
    const double I[4] = {1, 0, 0, 1};
    const HostImage img = render(64, 64, I, 0, 0);
    ASSERT_TRUE(extract_template(view(img), 32.0f, 32.0f, 16, tmpl.data(), 0, 1));
    CpuAnchorEngine e2(s, tmpl.data());
    const AnchorPrep prep = anchor_prepare(e2, s);
    EXPECT_EQ(prep.ok, 1);
    AnchorState nan_start = st;
    nan_start.a01 = std::nanf("");
    EXPECT_EQ(anchor_refine_one(e2, s, view(img), nan_start, prep).status, TrackStatus::LostAnchor);
    AnchorState outside = st;
    outside.x = -3.0f;  // centre outside the image: the first step cannot bring it back inside
    const AnchorResult r = anchor_refine_one(e2, s, view(img), outside, prep);
    EXPECT_EQ(r.status, TrackStatus::LostAnchor);
    EXPECT_TRUE(std::isfinite(r.state.x));
}

TEST(Anchor, ComposeInvertsTheIncrement) {
    AnchorState w;
    w.a00 = 1.1f; w.a01 = 0.05f; w.a10 = -0.04f; w.a11 = 0.95f; w.x = 10.0f; w.y = 20.0f;
    const float zero[6] = {0, 0, 0, 0, 0, 0};
    const AnchorState same = anchor_compose(w, zero);
    EXPECT_EQ(same.a00, w.a00);
    EXPECT_EQ(same.x, w.x);
    // W o dW^-1 o dW = W: composing with the increment's inverse and then the increment gives W back.
    const float d[6] = {0.01f, -0.02f, 0.015f, 0.005f, 0.3f, -0.2f};
    const AnchorState v = anchor_compose(w, d);
    // v(u) = W(dW^-1(u)) => v(dW(u)) = W(u) at u = (2, -3)
    const float u = 2.0f, vv = -3.0f;
    const float dx = (1 + d[0]) * u + d[2] * vv + d[4], dy = d[1] * u + (1 + d[3]) * vv + d[5];
    EXPECT_NEAR(v.a00 * dx + v.a01 * dy + v.x, w.a00 * u + w.a01 * vv + w.x, 1e-4);
    EXPECT_NEAR(v.a10 * dx + v.a11 * dy + v.y, w.a10 * u + w.a11 * vv + w.y, 1e-4);
}

// The fit's stopping rules: started at the solution its first step is below kAnchorFirstStop, so it stops after
// one iteration, and its residual is the mean |e| of that iteration's evaluation (at the start), computed here
// independently; started 0.3 px off it iterates to min_update, and the residual is that of the last evaluation.
TEST(Anchor, FirstStepBoundAndResidualFromTheLastSums) {
    const double I[4] = {1, 0, 0, 1};
    const HostImage first = render(96, 96, I, 0, 0);
    const float cx = 47.0f, cy = 45.5f;
    TrackerConfig cfg;
    const AnchorSetup s = make_anchor_setup(cfg);
    EXPECT_EQ(s.first_update, kAnchorFirstStop);
    std::vector<float> tmpl(3 * 16 * 16);
    ASSERT_TRUE(extract_template(view(first), cx, cy, 16, tmpl.data(), 0, 1));
    const HostImage cur = render(96, 96, I, 2.0, -1.0, 1.1, -5.0);  // integer shift: exact up to the 8-bit rounding
    CpuAnchorEngine eng(s, tmpl.data());
    const AnchorPrep prep = anchor_prepare(eng, s);
    // The mean |e| of the patch at warp w (gain, offset relative to the template), from the rules' own pieces.
    auto mean_abs_error = [&](const AnchorState& w) {
        double sum = 0.0;
        const float h = patch_half(16);
        for (int i = 0; i < 256; ++i) {
            const float u = anchor_u(i, 16, h), v = anchor_v(i, 16, h);
            sum += std::fabs(w.gain * tmpl[static_cast<std::size_t>(i)] + w.offset - anchor_sample(view(cur), w, u, v));
        }
        return sum / 256.0;
    };
    AnchorState at;
    at.x = cx + 2.0f;
    at.y = cy - 1.0f;
    at.gain = 1.1f;
    at.offset = -5.0f;
    const AnchorResult r = anchor_refine_one(eng, s, view(cur), at, prep);
    ASSERT_EQ(r.status, TrackStatus::Tracked);
    EXPECT_EQ(r.iterations, 1);
    EXPECT_NEAR(r.residual, mean_abs_error(at), 1e-3);
    EXPECT_LT(std::hypot(r.state.x - at.x, r.state.y - at.y), kAnchorFirstStop);
    AnchorState off = at;
    off.x += 0.3f;
    off.y -= 0.2f;
    const AnchorResult f = anchor_refine_one(eng, s, view(cur), off, prep);
    ASSERT_EQ(f.status, TrackStatus::Tracked);
    EXPECT_GE(f.iterations, 2);
    EXPECT_LT(std::hypot(f.state.x - at.x, f.state.y - at.y), 0.02);
    // The residual is of the last evaluation (before the last step, which moved no corner by min_update or more):
    // within a grey level of the one at the final warp, and not the one at the start.
    EXPECT_NEAR(f.residual, mean_abs_error(f.state), 0.5);
    EXPECT_GT(mean_abs_error(off), f.residual + 1.0);
}

// stored_patch_from: the identity and small warps take the stored patch on every level, warps within the coarse
// bound on the coarse levels only, a rotation, zoom or gain change beyond it the previous frame's on every level.
TEST(Anchor, StoredPatchOnlyNearTheIdentity) {
    TrackerConfig cfg;
    const AnchorSetup s = make_anchor_setup(cfg);
    const float b = kStoredPatchBound, b0 = kStoredPatchBound0;
    EXPECT_EQ(s.stored_bound, b);
    EXPECT_EQ(s.stored_bound0, b0);
    ASSERT_LT(b0, 0.5f * b);
    const int L = 3;
    const auto from = [&](const AnchorState& w) { return stored_patch_from(s, w, 0, L); };
    AnchorState w;
    EXPECT_EQ(from(w), 0);
    EXPECT_EQ(stored_patch_from(s, w, 1, L), 1);  // never below the setup's first stored level
    EXPECT_EQ(stored_patch_from(s, w, L, L), L);
    w.a00 = 1.0f + 0.4f * b0;
    w.a11 = 1.0f - 0.2f * b0;
    w.a01 = 0.3f * b0;
    EXPECT_EQ(from(w), 0);  // 0.9 b0
    w.a10 = 0.2f * b0;
    EXPECT_EQ(from(w), 1);  // 1.1 b0
    w.a00 = 1.0f + 0.4f * b;
    w.a11 = 1.0f - 0.2f * b;
    w.a01 = 0.3f * b;
    w.a10 = 0.0f;
    EXPECT_EQ(from(w), 1);  // 0.9 b
    const float r = 0.6f * b;  // a rotation: |a01| + |a10| = 1.2 b
    AnchorState rot;
    rot.a00 = rot.a11 = std::cos(r);
    rot.a01 = -std::sin(r);
    rot.a10 = std::sin(r);
    EXPECT_EQ(from(rot), L);
    AnchorState zoom;
    zoom.a00 = zoom.a11 = 1.0f + 0.6f * b;  // 1.2 b
    EXPECT_EQ(from(zoom), L);
    AnchorState gain;
    gain.gain = 1.0f + 4.4f * b;
    EXPECT_EQ(from(gain), L);
    gain.gain = 1.0f - 3.6f * b;
    EXPECT_EQ(from(gain), 0);
    AnchorState nan_warp;
    nan_warp.a01 = std::nanf("");
    EXPECT_EQ(from(nan_warp), L);
    nan_warp = AnchorState{};
    nan_warp.gain = std::nanf("");
    EXPECT_EQ(from(nan_warp), L);
    // The tracker's stop bounds: the coarse levels at kTrackerCoarseMinUpdate, the anchor's later steps at
    // kAnchorLaterStop (LkConfig::min_update where that is larger); standalone LK at min_update on every level.
    EXPECT_EQ(make_tracker_lk_setup(cfg).coarse_min_update, kTrackerCoarseMinUpdate);
    EXPECT_EQ(make_tracker_lk_setup(cfg).min_update, cfg.lk.min_update);
    EXPECT_EQ(make_lk_setup(cfg.lk).coarse_min_update, cfg.lk.min_update);
    EXPECT_EQ(s.min_update, kAnchorLaterStop);
    EXPECT_EQ(s.first_update, kAnchorFirstStop);
    {
        TrackerConfig loose;
        loose.lk.min_update = 0.2f;
        EXPECT_EQ(make_tracker_lk_setup(loose).coarse_min_update, 0.2f);
        EXPECT_EQ(make_anchor_setup(loose).min_update, 0.2f);
        EXPECT_EQ(make_anchor_setup(loose).first_update, 0.2f);
    }
    // The tracker uses it: with anchoring on (and previous-frame templates) the coarse levels are stored ones.
    EXPECT_LT(make_tracker_lk_setup(cfg).stored_from_level, cfg.lk.pyramid.levels);
    cfg.anchor.enabled = false;
    EXPECT_EQ(make_tracker_lk_setup(cfg).stored_from_level, cfg.lk.pyramid.levels);
}

// A rotating, zooming view of the scene over 40 frames: anchoring removes the drift that frame-to-frame
// LK accumulates (its per-frame errors add up along the track).
TEST(Anchor, FeatureTrackerDriftIsRemovedOnARotatingSequence) {
    const int w = 320, h = 240, frames = 40;
    auto pose = [&](int f, double L[4], double& tx, double& ty) {
        const double a = 0.006 * f, s = 1.0 + 0.004 * f;  // 0.34 degrees and 0.4 % per frame
        L[0] = s * std::cos(a); L[1] = -s * std::sin(a); L[2] = s * std::sin(a); L[3] = s * std::cos(a);
        // rotate and zoom about the image centre, plus a slow pan
        const double cxr = 0.5 * (w - 1), cyr = 0.5 * (h - 1);
        tx = cxr - (L[0] * cxr + L[1] * cyr) + 0.9 * f;
        ty = cyr - (L[2] * cxr + L[3] * cyr) - 0.4 * f;
    };
    std::vector<HostImage> seq;
    for (int f = 0; f < frames; ++f) {
        double L[4], tx, ty;
        pose(f, L, tx, ty);
        seq.push_back(render(w, h, L, tx, ty));
    }
    auto median_error = [&](bool anchor) {
        TrackerConfig cfg;
        cfg.target_features = 100;
        cfg.redetect_fraction = 0.0f;
        cfg.anchor.enabled = anchor;
        FeatureTracker tr(w, h, cfg, Backend::Cpu);
        std::vector<Track> born;
        std::vector<double> err;
        for (int f = 0; f < frames; ++f) {
            const auto& tracks = tr.track(seq[static_cast<std::size_t>(f)].view());
            if (f == 0) {
                born = tracks;
                continue;
            }
            double L0[4], t0x, t0y, L[4], tx, ty;
            pose(0, L0, t0x, t0y);
            pose(f, L, tx, ty);
            for (const Track& t : tracks) {
                const auto b = std::find_if(born.begin(), born.end(), [&](const Track& x) { return x.id == t.id; });
                if (b == born.end()) continue;
                // scene point of the birth position, then its position in frame f
                const double det = L0[0] * L0[3] - L0[1] * L0[2];
                const double px = b->x - t0x, py = b->y - t0y;
                const double qx = (L0[3] * px - L0[1] * py) / det, qy = (-L0[2] * px + L0[0] * py) / det;
                err.push_back(std::hypot(t.x - (L[0] * qx + L[1] * qy + tx), t.y - (L[2] * qx + L[3] * qy + ty)));
            }
        }
        EXPECT_GT(err.size(), 1000u);
        std::nth_element(err.begin(), err.begin() + static_cast<std::ptrdiff_t>(err.size() / 2), err.end());
        return err[err.size() / 2];
    };
    const double off = median_error(false), on = median_error(true);
    std::printf("[anchor] rotating sequence, median error relative to birth: %.4f px without, %.4f px with anchoring\n",
                off, on);
    EXPECT_LT(on, 0.05);
    EXPECT_LT(on, 0.5 * off);
}

// The fit schedule's rules on known answers (AnchorConfig::interval): which tracks are due on which frame, when the
// indicators call a fit that is not due, what a skipped fit gives and how the verdict and the bookkeeping take it.
TEST(Anchor, ScheduleKnownAnswers) {
    TrackerConfig cfg;
    EXPECT_EQ(cfg.anchor.interval, 1);  // the default: every frame
    AnchorSetup s = make_anchor_setup(cfg);
    EXPECT_EQ(s.interval, 1);
    EXPECT_EQ(s.drift_bound, kAnchorDriftBound);
    EXPECT_EQ(s.refit_residual, kAnchorRefitResidual);
    AnchorState settled;
    settled.age = kAnchorSettleFrames;
    settled.correction = 0.5f * kAnchorDriftBound;
    for (std::uint64_t id = 1; id <= 5; ++id) EXPECT_EQ(anchor_due(s, 7, id, settled), 1) << "interval 1: every frame";
    s.interval = 3;
    // (frame + id) mod 3 == 0: frame 10 -> ids 2, 5, 8; frame 11 -> ids 1, 4, 7; frame 12 -> ids 3, 6, 9.
    const int expect[3][9] = {{0, 1, 0, 0, 1, 0, 0, 1, 0}, {1, 0, 0, 1, 0, 0, 1, 0, 0}, {0, 0, 1, 0, 0, 1, 0, 0, 1}};
    for (int f = 0; f < 3; ++f)
        for (int id = 1; id <= 9; ++id)
            EXPECT_EQ(anchor_due(s, 10 + f, static_cast<std::uint64_t>(id), settled), expect[f][id - 1])
                << "frame " << 10 + f << " id " << id;
    // Staggered: over 3 consecutive frames each of 300 tracks is due exactly once, 100 on each frame.
    std::vector<int> times(301, 0);
    for (int f = 0; f < 3; ++f) {
        int on_frame = 0;
        for (std::uint64_t id = 1; id <= 300; ++id) {
            const int d = anchor_due(s, 1000 + f, id, settled);
            on_frame += d;
            times[id] += d;
        }
        EXPECT_EQ(on_frame, 100) << "frame " << 1000 + f;
    }
    for (std::uint64_t id = 1; id <= 300; ++id) EXPECT_EQ(times[id], 1) << "id " << id;
    // Large frame indices and ids (64-bit): (2^40 + 1 + 2) mod 3 = 0.
    EXPECT_EQ(anchor_due(s, (std::int64_t{1} << 40) + 1, 2, settled), (((std::uint64_t{1} << 40) + 3) % 3 == 0) ? 1 : 0);
    // Not scheduled (frame 10, id 1), but: a new reference (age below kAnchorSettleFrames), a last correction above
    // the bound (or not finite).
    EXPECT_EQ(anchor_due(s, 10, 1, settled), 0);
    AnchorState young = settled;
    young.age = kAnchorSettleFrames - 1;
    EXPECT_EQ(anchor_due(s, 10, 1, young), 1);
    AnchorState moved = settled;
    moved.correction = 1.01f * kAnchorDriftBound;
    EXPECT_EQ(anchor_due(s, 10, 1, moved), 1);
    moved.correction = kAnchorDriftBound;  // at the bound: not beyond it
    EXPECT_EQ(anchor_due(s, 10, 1, moved), 0);
    moved.correction = std::nanf("");
    EXPECT_EQ(anchor_due(s, 10, 1, moved), 1);
    // After LK: a track not due fits when LK did not converge or ended with a residual above refit_residual.
    AnchorState not_due = settled;
    not_due.due = 0;
    LkResult f;
    f.x = 40.25f;
    f.y = 31.5f;
    f.residual = 0.5f * kAnchorRefitResidual;
    EXPECT_FALSE(anchor_fit_wanted(s, not_due, f));
    AnchorState due = not_due;
    due.due = 1;
    EXPECT_TRUE(anchor_fit_wanted(s, due, f));
    LkResult rough = f;
    rough.residual = 1.01f * kAnchorRefitResidual;
    EXPECT_TRUE(anchor_fit_wanted(s, not_due, rough));
    rough.residual = std::nanf("");
    EXPECT_TRUE(anchor_fit_wanted(s, not_due, rough));
    LkResult crawling = f;
    crawling.status = TrackStatus::NotConverged;
    EXPECT_TRUE(anchor_fit_wanted(s, not_due, crawling));
    // A skipped fit: Tracked, 0 iterations, at the frame-to-frame estimate, the warp and illumination kept.
    AnchorState warped = not_due;
    warped.a00 = 1.02f; warped.a01 = -0.01f; warped.a10 = 0.015f; warped.a11 = 0.99f;
    warped.x = 39.0f; warped.y = 30.0f; warped.gain = 1.2f; warped.offset = -3.0f;
    warped.correction = 0.03f;
    const AnchorResult sk = anchor_skipped(warped, f);
    EXPECT_EQ(sk.status, TrackStatus::Tracked);
    EXPECT_EQ(sk.iterations, 0);
    EXPECT_EQ(sk.state.x, f.x);
    EXPECT_EQ(sk.state.y, f.y);
    EXPECT_EQ(sk.state.a00, warped.a00);
    EXPECT_EQ(sk.state.a01, warped.a01);
    EXPECT_EQ(sk.state.gain, warped.gain);
    EXPECT_EQ(sk.state.offset, warped.offset);
    // The verdict takes a skipped fit's position without its residual and distance tests (a residual beyond
    // max_residual); a fit that ran with the same numbers fails them and re-anchors.
    const TrackVerdictRule rule = verdict_rule(cfg);
    AnchorResult sk_high = sk;
    sk_high.residual = 2.0f * cfg.anchor.max_residual;
    const TrackVerdict v = track_verdict(f, nullptr, 38.0f, 29.0f, &sk_high, rule);
    EXPECT_EQ(v.status, TrackStatus::Tracked);
    EXPECT_EQ(v.reanchor, 0);
    EXPECT_EQ(v.x, f.x);
    AnchorResult ran = sk_high;
    ran.iterations = 1;
    EXPECT_EQ(track_verdict(f, nullptr, 38.0f, 29.0f, &ran, rule).reanchor, 1);
    // Bookkeeping: one frame older; a fit that ran sets the correction to its distance from the estimate.
    const AnchorState kept = anchor_after_frame(sk, f.x, f.y);
    EXPECT_EQ(kept.age, warped.age);  // counted up to kAnchorSettleFrames (settled already)
    AnchorResult young_skip = sk;
    young_skip.state.age = 0;
    EXPECT_EQ(anchor_after_frame(young_skip, f.x, f.y).age, 1);
    EXPECT_EQ(kept.correction, warped.correction);
    AnchorResult fit = sk;
    fit.iterations = 2;
    fit.state.x = f.x + 0.3f;
    fit.state.y = f.y - 0.4f;
    const AnchorState corrected = anchor_after_frame(fit, f.x, f.y);
    EXPECT_EQ(corrected.age, warped.age);
    EXPECT_NEAR(corrected.correction, 0.5f, 1e-5f);
}

// Whether each frame fitted each track on a FeatureTracker (CPU backend) by the schedule's rules, followed here from
// the tracker's outputs alone: a track fits when its reference patch is younger than kAnchorSettleFrames frames (born,
// or re-anchored after a fit that failed the verdict's tests), (frame + id) mod interval is 0, its last fit moved it
// by more than kAnchorDriftBound, or LK did not converge or left a residual above kAnchorRefitResidual. Counts the fits
// by the first reason that calls them (settle, schedule, correction, residual), the skipped ones and the re-anchored.
struct ScheduleCounts {
    int settle = 0, scheduled = 0, correction = 0, residual = 0, skipped = 0, reanchored = 0, mismatches = 0;
};

ScheduleCounts follow_schedule(const std::vector<HostImage>& seq, int interval, int features) {
    TrackerConfig cfg;
    cfg.target_features = features;
    cfg.redetect_fraction = 0.0f;
    cfg.anchor.interval = interval;
    FeatureTracker tr(seq[0].width(), seq[0].height(), cfg, Backend::Cpu);
    ScheduleCounts c;
    struct Follow {
        int age = 0;             // frames since the track's reference patch was stored
        float correction = 0.0f;  // its last fit's distance from the LK estimate
    };
    std::map<std::uint64_t, Follow> follow;
    for (std::size_t f = 0; f < seq.size(); ++f) {
        const std::vector<Track> before = tr.tracks();  // the frame's staged tracks, in order
        tr.track(seq[f].view());
        const detail::TrackerBackend& be = detail::TrackerAccess::backend(tr);
        std::map<std::uint64_t, Follow> next;
        for (std::size_t i = 0; i < before.size(); ++i) {
            const LkResult& lk = be.results()[i];
            if (lk.status != TrackStatus::Tracked && lk.status != TrackStatus::NotConverged) continue;  // no fit
            const AnchorResult& a = be.anchor_results()[i];
            const Follow fo = follow[before[i].id];
            const bool ran = a.iterations > 0 || a.status != TrackStatus::Tracked;
            const bool settle = fo.age < kAnchorSettleFrames;
            const bool scheduled = interval == 1 || (static_cast<std::uint64_t>(f) + before[i].id) %
                                                            static_cast<std::uint64_t>(interval) == 0;
            const bool moved = fo.correction > kAnchorDriftBound;
            const bool rough = lk.status == TrackStatus::NotConverged || !(lk.residual <= kAnchorRefitResidual);
            const bool expect = settle || scheduled || moved || rough;
            if (ran != expect) {
                ++c.mismatches;
                ADD_FAILURE() << "interval " << interval << " frame " << f << " track " << before[i].id << " age "
                              << fo.age << ": fit " << (ran ? "ran" : "skipped") << ", the rules say "
                              << (expect ? "fit" : "skip") << " (correction " << fo.correction << ", LK residual "
                              << lk.residual << ")";
            }
            if (!ran) ++c.skipped;
            else if (settle) ++c.settle;
            else if (scheduled) ++c.scheduled;
            else if (moved) ++c.correction;
            else if (rough) ++c.residual;
            Follow n{fo.age + 1, fo.correction};
            if (ran) {
                const float dx = fsub(a.state.x, lk.x), dy = fsub(a.state.y, lk.y);
                const float d = fsqrt(fadd(fmul(dx, dx), fmul(dy, dy)));
                if (a.status != TrackStatus::Tracked || !(a.residual <= cfg.anchor.max_residual) ||
                    !(d <= cfg.anchor.max_distance)) {
                    n = Follow{};  // re-anchored (if it stays live): a new reference patch
                    ++c.reanchored;
                } else {
                    n.correction = d;
                }
            }
            next[before[i].id] = n;
        }
        for (const Track& t : tr.tracks()) follow[t.id] = next.count(t.id) ? next[t.id] : Follow{};  // new: age 0
    }
    return c;
}

// A smooth pan (0.37, -0.21 px per frame): the tracks fit on their first two frames and then by the staggered
// schedule alone (frame-to-frame LK stays within kAnchorDriftBound of the fit): with interval 3 about a third of the
// settled track-frames fit, each track every third frame; with interval 1 every track every frame.
TEST(Anchor, FeatureTrackerFitsOnTheStaggeredSchedule) {
    const double I[4] = {1, 0, 0, 1};
    std::vector<HostImage> seq;
    for (int f = 0; f < 14; ++f) seq.push_back(render(240, 180, I, 0.37 * f, -0.21 * f));
    const ScheduleCounts one = follow_schedule(seq, 1, 60);
    EXPECT_EQ(one.mismatches, 0);
    EXPECT_EQ(one.skipped, 0);
    const ScheduleCounts three = follow_schedule(seq, 3, 60);
    EXPECT_EQ(three.mismatches, 0);
    std::printf("[anchor] interval 3, pan: %d settle, %d scheduled, %d correction, %d residual fits, %d skipped\n",
                three.settle, three.scheduled, three.correction, three.residual, three.skipped);
    EXPECT_GT(three.settle, 0);
    const int settled = three.scheduled + three.correction + three.residual + three.skipped;
    EXPECT_NEAR(static_cast<double>(three.scheduled) / settled, 1.0 / 3.0, 0.05);
    EXPECT_LT(three.correction + three.residual, settled / 20);
}

// A rotating, zooming view (2 degrees and 1.5 % per frame): frame-to-frame LK drifts by more than kAnchorDriftBound
// between scheduled fits, so fits that the schedule does not call run by the correction rule; and a frame with
// strong noise raises LK's residual above kAnchorRefitResidual, so that frame fits every track.
TEST(Anchor, FeatureTrackerFitsWhereTheIndicatorsSayDrift) {
    const int w = 240, h = 180;
    std::vector<HostImage> seq;
    for (int f = 0; f < 16; ++f) {
        const double a = 0.035 * f, sc = 1.0 + 0.015 * f;
        const double L[4] = {sc * std::cos(a), -sc * std::sin(a), sc * std::sin(a), sc * std::cos(a)};
        const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
        seq.push_back(render(w, h, L, cx - (L[0] * cx + L[1] * cy), cy - (L[2] * cx + L[3] * cy)));
    }
    const ScheduleCounts drift = follow_schedule(seq, 4, 60);
    EXPECT_EQ(drift.mismatches, 0);
    std::printf("[anchor] interval 4, rotation + zoom: %d settle, %d scheduled, %d correction, %d residual fits, "
                "%d skipped, %d re-anchored\n", drift.settle, drift.scheduled, drift.correction, drift.residual, drift.skipped,
                drift.reanchored);
    EXPECT_GT(drift.correction, 0);
    EXPECT_GT(drift.skipped, 0);
    // The pan with uniform noise of +-40 grey levels on frame 9.
    const double I[4] = {1, 0, 0, 1};
    std::vector<HostImage> noisy;
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> noise(-40, 40);
    for (int f = 0; f < 12; ++f) {
        noisy.push_back(render(w, h, I, 0.37 * f, -0.21 * f));
        if (f == 9)
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x)
                    noisy.back().at(x, y) = static_cast<std::uint8_t>(std::clamp(noisy.back().at(x, y) + noise(rng), 0, 255));
    }
    const ScheduleCounts rough = follow_schedule(noisy, 4, 60);
    EXPECT_EQ(rough.mismatches, 0);
    std::printf("[anchor] interval 4, noisy frame: %d settle, %d scheduled, %d correction, %d residual fits, "
                "%d skipped, %d re-anchored\n", rough.settle, rough.scheduled, rough.correction, rough.residual, rough.skipped,
                rough.reanchored);
    EXPECT_GT(rough.residual, 20);
}

}  // namespace
}  // namespace kestrel
