// lk_track_cpu against a restatement of the LK rules written in this file from docs/tracker.md, section 1, and
// sharing no code with the library's tracker (no lk_rules.hpp, no engine, no driver): double precision, a plain
// bilinear sampler with the border rule's clamped taps, the Hessian and the error terms summed directly, the
// step solved by Gaussian elimination on the estimated parameters, and the coarse-to-fine policy (gain on level 0
// only, coarse levels skipped, cut short or discarded, the search window, oscillation, the residual test on the
// better of the fitted and the initial illumination). tests/track/test_track_cpu_oracle.cpp holds the CPU engine
// to the straightforward engine bit for bit, but through the library's own driver; this test checks the driver
// and the rules themselves. Float against double, on 62628 points (3 image pairs, 4 modes, 3 patch and pyramid
// layouts, varied guesses, points at the edges): the statuses agree on all but 1, the iteration counts on 99.9 %
// of the points both track, and then the positions agree within 0.0045 px (0.0096 px where the counts differ:
// one side took one more step below min_update), gain within 0.0008, offset within 0.08 grey levels. Bounds:
// 5e-3 px (0.015 px), 1e-3, 0.1; statuses on 99.5 % of the points, iterations on 98 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kestrel/lk_tracker.hpp"
#include "kestrel/pyramid.hpp"
#include "lk_test_util.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

namespace restated {

constexpr int kBorder = 16;  // taps up to 16 pixels outside the image read the nearest edge pixel

double tap(const HostImage& im, int x, int y) {
    return im.at(std::clamp(x, 0, im.width() - 1), std::clamp(y, 0, im.height() - 1));
}

// The n x n grid centred at (cx, cy), widened by m taps on each side, may be sampled: its taps within kBorder of
// the image, its centre in the image.
bool inside(const HostImage& im, double cx, double cy, int n, int m) {
    const double vx = cx - 0.5 * (n - 1), vy = cy - 0.5 * (n - 1);
    const double x0 = std::floor(vx), y0 = std::floor(vy);
    return x0 - m >= -kBorder && x0 + n + m <= im.width() - 1 + kBorder && y0 - m >= -kBorder &&
           y0 + n + m <= im.height() - 1 + kBorder && cx >= 0 && cx <= im.width() - 1 && cy >= 0 &&
           cy <= im.height() - 1;
}

// Bilinear samples of the grid (vx + i, vy + j), i, j = -m .. n - 1 + m, (vx, vy) = centre - (n - 1) / 2: one
// pair of weights for the whole grid.
std::vector<double> grid(const HostImage& im, double cx, double cy, int n, int m) {
    const double vx = cx - 0.5 * (n - 1), vy = cy - 0.5 * (n - 1);
    const double fx = std::floor(vx), fy = std::floor(vy), ax = vx - fx, ay = vy - fy;
    const int x0 = static_cast<int>(fx), y0 = static_cast<int>(fy), side = n + 2 * m;
    std::vector<double> v(static_cast<std::size_t>(side) * side);
    for (int j = 0; j < side; ++j)
        for (int i = 0; i < side; ++i) {
            const int x = x0 + i - m, y = y0 + j - m;
            const double top = (1 - ax) * tap(im, x, y) + ax * tap(im, x + 1, y);
            const double bottom = (1 - ax) * tap(im, x, y + 1) + ax * tap(im, x + 1, y + 1);
            v[static_cast<std::size_t>(j) * side + i] = (1 - ay) * top + ay * bottom;
        }
    return v;
}

// Solves A x = r (k x k, k <= 4) by Gaussian elimination with partial pivoting.
void solve(double A[4][4], double* r, int k, double* x) {
    for (int c = 0; c < k; ++c) {
        int p = c;
        for (int i = c + 1; i < k; ++i)
            if (std::fabs(A[i][c]) > std::fabs(A[p][c])) p = i;
        std::swap(A[c], A[p]);
        std::swap(r[c], r[p]);
        for (int i = c + 1; i < k; ++i) {
            const double f = A[i][c] / A[c][c];
            for (int j = c; j < k; ++j) A[i][j] -= f * A[c][j];
            r[i] -= f * r[c];
        }
    }
    for (int i = k - 1; i >= 0; --i) {
        double s = r[i];
        for (int j = i + 1; j < k; ++j) s -= A[i][j] * x[j];
        x[i] = s / A[i][i];
    }
}

LkResult track(const std::vector<HostImage>& ref, const std::vector<HostImage>& cur, Point2f p, LkGuess g,
               const LkConfig& cfg) {
    const bool est_gain_mode = cfg.mode == LkMode::TranslationGain || cfg.mode == LkMode::TranslationGainOffset;
    const bool est_offset = cfg.mode == LkMode::TranslationOffset || cfg.mode == LkMode::TranslationGainOffset;
    const int levels = cfg.pyramid.levels;
    double reach = 0;
    for (int k = 0; k < levels; ++k)
        reach += (k < cfg.coarse_from_level ? cfg.patch_size : cfg.coarse_patch_size) * level_scale(cfg.pyramid, k);
    double X = g.x, Y = g.y, alpha = g.gain, beta = g.offset;
    LkResult res;
    res.status = TrackStatus::Tracked;
    for (int k = levels - 1; k >= 0; --k) {
        const int n = k < cfg.coarse_from_level ? cfg.patch_size : cfg.coarse_patch_size;
        const double npx = static_cast<double>(n) * n, s = level_scale(cfg.pyramid, k);
        const auto lv = [s](double v) { return (v + 0.5) / s - 0.5; };
        const bool est_gain = est_gain_mode && k == 0;
        const HostImage &R = ref[static_cast<std::size_t>(k)], &C = cur[static_cast<std::size_t>(k)];
        double cx = lv(X), cy = lv(Y);
        if (!inside(R, lv(p.x), lv(p.y), n, 1) || !inside(C, cx, cy, n, 0)) {
            if (k == 0) {
                res.status = TrackStatus::LostOutOfBounds;
                break;
            }
            continue;
        }
        // Template and its central-difference gradients.
        const std::vector<double> t = grid(R, lv(p.x), lv(p.y), n, 1);
        const int side = n + 2;
        std::vector<double> T(static_cast<std::size_t>(npx)), gx(T.size()), gy(T.size());
        double mu = 0;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const auto at = [&](int a, int b) { return t[static_cast<std::size_t>(b + 1) * side + (a + 1)]; };
                const std::size_t q = static_cast<std::size_t>(j) * n + i;
                T[q] = at(i, j);
                gx[q] = 0.5 * (at(i + 1, j) - at(i - 1, j));
                gy[q] = 0.5 * (at(i, j + 1) - at(i, j - 1));
                mu += T[q];
            }
        mu = est_offset ? mu / npx : 0.0;
        // The estimated parameters, in the order (tx, ty, gain, offset), and their Jacobian at gain 1.
        std::vector<int> active{0, 1};
        if (est_gain) active.push_back(2);
        if (est_offset) active.push_back(3);
        const int na = static_cast<int>(active.size());
        const auto jac = [&](std::size_t q, int a) {
            return a == 0 ? gx[q] : a == 1 ? gy[q] : a == 2 ? T[q] - mu : 1.0;
        };
        double H[4][4] = {};
        for (std::size_t q = 0; q < T.size(); ++q)
            for (int a = 0; a < na; ++a)
                for (int b = 0; b < na; ++b) H[a][b] += jac(q, active[a]) * jac(q, active[b]);
        // Singular: the translation block's smaller eigenvalue per pixel below min_eigenvalue.
        const double tr = H[0][0] + H[1][1], det = H[0][0] * H[1][1] - H[0][1] * H[1][0];
        const double lmin = 0.5 * (tr - std::sqrt(std::max(0.0, tr * tr - 4 * det))) / npx;
        if (!(lmin >= cfg.min_eigenvalue)) {
            if (k == 0) {
                res.status = TrackStatus::LostSingular;
                break;
            }
            continue;
        }
        double beta_c = beta + alpha * mu;
        const double x_start = cx, y_start = cy, a_start = alpha, b_start = beta_c;
        const double gxk = lv(g.x), gyk = lv(g.y), window = reach / s;
        const int max_it = k == 0 ? cfg.max_iterations : std::min(cfg.max_iterations, cfg.coarse_max_iterations);
        const auto sad_at = [&](double x, double y, double a, double bc) {
            const std::vector<double> I = grid(C, x, y, n, 0);
            double sad = 0;
            for (std::size_t q = 0; q < T.size(); ++q) sad += std::fabs(a * (T[q] - mu) + bc - I[q]);
            return sad;
        };
        int it = 0;
        bool converged = false, gain_lost = false;
        double pdx = 0, pdy = 0, first_sad = 0, last_sad = 0;
        for (; it < max_it; ++it) {
            const std::vector<double> I = grid(C, cx, cy, n, 0);
            double b[4] = {}, sad = 0;
            for (std::size_t q = 0; q < T.size(); ++q) {
                const double e = alpha * (T[q] - mu) + beta_c - I[q];
                sad += std::fabs(e);
                for (int a = 0; a < na; ++a) b[a] += jac(q, active[a]) * e;
            }
            if (it == 0) first_sad = sad;
            last_sad = sad;
            double A[4][4], r[4], x[4] = {};
            for (int a = 0; a < na; ++a) {
                r[a] = -b[a];
                for (int c = 0; c < na; ++c) A[a][c] = H[a][c];
            }
            solve(A, r, na, x);
            double dq[4] = {x[0], x[1], 0, 0};
            for (int a = 2; a < na; ++a) dq[active[a]] = x[a];
            const double dtx = dq[0] / alpha, dty = dq[1] / alpha;
            const double nx = cx - dtx, ny = cy - dty, nal = alpha + dq[2], nb = beta_c + dq[3];
            const bool finite = std::isfinite(nx) && std::isfinite(ny) && std::isfinite(nal) && std::isfinite(nb);
            const bool gain_ok = nal >= 0.1 && nal <= 10.0;
            const bool in = inside(C, nx, ny, n, 0);
            const bool in_window = std::fabs(nx - gxk) <= window && std::fabs(ny - gyk) <= window;
            const bool oscillates = it > 0 && std::fabs(dtx + pdx) < cfg.min_update && std::fabs(dty + pdy) < cfg.min_update;
            if (!finite) {
                if (k == 0) res.status = TrackStatus::LostSingular;
                break;
            }
            if (!gain_ok) {
                gain_lost = true;
                break;
            }
            if (!in || !in_window) {
                if (k == 0) {
                    res.status = TrackStatus::LostOutOfBounds;
                    cx = nx;
                    cy = ny;
                } else if (!in_window && in) {
                    cx = x_start, cy = y_start, alpha = a_start, beta_c = b_start;
                }
                break;
            }
            if (oscillates) {
                cx = 0.5 * (cx + nx), cy = 0.5 * (cy + ny), alpha = 0.5 * (alpha + nal), beta_c = 0.5 * (beta_c + nb);
                converged = true;
                ++it;
                break;
            }
            cx = nx, cy = ny, alpha = nal, beta_c = nb;
            if (dtx * dtx + dty * dty < cfg.min_update * cfg.min_update) {
                converged = true;
                ++it;
                break;
            }
            pdx = dtx, pdy = dty;
        }
        if (k > 0 && last_sad > first_sad) cx = x_start, cy = y_start, alpha = a_start, beta_c = b_start;
        X = (cx + 0.5) * s - 0.5;
        Y = (cy + 0.5) * s - 0.5;
        beta = beta_c - alpha * mu;
        if (k == 0 && res.status == TrackStatus::Tracked) {
            res.iterations = it;
            res.residual = static_cast<float>(sad_at(cx, cy, alpha, beta_c) / npx);
            double test = res.residual;
            if (est_gain || est_offset) test = std::min(test, sad_at(cx, cy, g.gain, g.offset + g.gain * mu) / npx);
            if (gain_lost || !(test <= cfg.max_residual)) res.status = TrackStatus::LostResidual;
            else if (!converged) res.status = TrackStatus::NotConverged;
        }
    }
    res.x = static_cast<float>(X);
    res.y = static_cast<float>(Y);
    res.gain = static_cast<float>(alpha);
    res.offset = static_cast<float>(beta);
    return res;
}

}  // namespace restated

struct Agreement {
    int points = 0, same_status = 0, same_iterations = 0, both_tracked = 0, tracked = 0;
    double worst_position = 0, worst_position_other = 0, worst_gain = 0, worst_offset = 0, worst_residual = 0;
};

void compare(const std::vector<LkResult>& got, const std::vector<LkResult>& want, Agreement& a, const std::string& what) {
    for (std::size_t i = 0; i < got.size(); ++i) {
        const LkResult &g = got[i], &w = want[i];
        ++a.points;
        a.same_status += g.status == w.status;
        a.tracked += g.status == TrackStatus::Tracked;
        if (g.status != w.status || g.status != TrackStatus::Tracked) continue;
        ++a.both_tracked;
        const bool same_it = g.iterations == w.iterations;
        a.same_iterations += same_it;
        const double dp = std::hypot(g.x - w.x, g.y - w.y);
        // The same iterations: the same iterates up to float rounding. Otherwise one side took one more (or one
        // fewer) step, smaller than min_update (0.01 px) as both stop there, or settled half-way on an oscillation.
        const double pos_bound = same_it ? 5e-3 : 0.015, res_bound = same_it ? 2e-3 : 0.02;
        (same_it ? a.worst_position : a.worst_position_other) = std::max(same_it ? a.worst_position : a.worst_position_other, dp);
        a.worst_gain = std::max(a.worst_gain, static_cast<double>(std::fabs(g.gain - w.gain)));
        a.worst_offset = std::max(a.worst_offset, static_cast<double>(std::fabs(g.offset - w.offset)));
        a.worst_residual = std::max(a.worst_residual, static_cast<double>(std::fabs(g.residual - w.residual)));
        EXPECT_LE(dp, pos_bound) << what << " point " << i << ": (" << g.x << ", " << g.y << ") vs (" << w.x << ", "
                                 << w.y << "), iterations " << g.iterations << " vs " << w.iterations;
        EXPECT_LE(std::fabs(g.gain - w.gain), 1e-3f) << what << " point " << i;
        EXPECT_LE(std::fabs(g.offset - w.offset), 0.1f) << what << " point " << i;
        EXPECT_LE(std::fabs(g.residual - w.residual), res_bound * std::max(1.0f, w.residual)) << what << " point " << i;
    }
}

TEST(LkRestated, TrackerEqualsTheRestatedRulesInEveryMode) {
    struct Pair {
        const char* name;
        HostImage ref, cur;
    };
    std::vector<Pair> pairs;
    pairs.push_back({"vtest 0->3", test::real_image("vtest_000.png"), test::real_image("vtest_003.png")});
    const test::FloatImage g = test::blurred(test::real_image("graf1.png"), 1.0);
    pairs.push_back({"graf1 moved (3.4, -2.1), gain 1.2, offset -9", test::moved(g, 0, 0), test::moved(g, 3.4, -2.1, 1.2, -9)});
    const test::FloatImage a = test::blurred(test::real_image("aloeL.png"), 1.0);
    pairs.push_back({"aloeL moved (-5.6, 4.3), gain 0.8, offset 20", test::moved(a, 0, 0), test::moved(a, -5.6, 4.3, 0.8, 20)});
    Agreement all;
    for (const Pair& p : pairs)
        for (LkMode mode : {LkMode::Translation, LkMode::TranslationOffset, LkMode::TranslationGain,
                            LkMode::TranslationGainOffset})
            for (int layout = 0; layout < 3; ++layout) {
                LkConfig cfg;
                cfg.mode = mode;
                if (layout == 1) {  // 12x12 on level 0, 8x8 from level 1, 4 levels of 1.6
                    cfg.patch_size = 12;
                    cfg.coarse_patch_size = 8;
                    cfg.coarse_from_level = 1;
                    cfg.pyramid = {4, 1.6f};
                } else if (layout == 2) {  // one level, more iterations
                    cfg.pyramid = {1, 2.0f};
                    cfg.max_iterations = 20;
                }
                const auto rp = build_pyramid_cpu(p.ref.view(), cfg.pyramid), cp = build_pyramid_cpu(p.cur.view(), cfg.pyramid);
                std::vector<Point2f> pts = test::textured_points(p.ref, 17, 8, 5.0);
                pts.push_back({3.0f, 40.0f});  // next to the edges: the border rule
                pts.push_back({static_cast<float>(p.ref.width()) - 2.5f, 60.25f});
                std::vector<LkGuess> guesses;
                for (std::size_t i = 0; i < pts.size(); ++i)
                    guesses.push_back({pts[i].x + 0.3f * static_cast<float>(i % 5), pts[i].y - 0.2f * static_cast<float>(i % 3),
                                       i % 4 == 1 ? 1.1f : 1.0f, i % 4 == 2 ? 5.0f : 0.0f});
                const std::vector<LkResult> got = lk_track_cpu(rp, cp, pts, cfg, &guesses);
                std::vector<LkResult> want;
                for (std::size_t i = 0; i < pts.size(); ++i) want.push_back(restated::track(rp, cp, pts[i], guesses[i], cfg));
                compare(got, want, all, std::string(p.name) + " " + to_string(mode) + " layout " + std::to_string(layout));
            }
    std::printf("[lk restated] %d points: status equal on %d, %d Tracked by both (iterations equal on %d): worst "
                "position %.2g px (%.2g px where the iterations differ), gain %.2g, offset %.2g, residual %.2g\n",
                all.points, all.same_status, all.both_tracked, all.same_iterations, all.worst_position,
                all.worst_position_other, all.worst_gain, all.worst_offset, all.worst_residual);
    EXPECT_GT(all.tracked, all.points / 2) << "real tracking, not only lost points";
    EXPECT_GE(all.same_status, all.points - all.points / 200) << "statuses equal on 99.5 % of the points";
    EXPECT_GE(all.same_iterations, all.both_tracked - all.both_tracked / 50) << "iterations equal on 98 %";
}

}  // namespace
}  // namespace kestrel
