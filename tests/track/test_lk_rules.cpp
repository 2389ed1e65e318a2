// The shared LK rules (detail/lk_rules.hpp) against independent computations: the bilinear formula,
// template gradients against numeric derivatives of a smooth reconstruction, the Jacobian (gain,
// offset, translation) against numeric differences of the error, the exact SIC step against a
// double-precision least-squares solve with the full Jacobian, the singularity tests, the divisions by powers
// of two as multiplies, the normal equations over the active parameters only (the 3 x 3 system of the levels without
// the gain, the packed image sums), and the levels prepared once.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

#include "kestrel/detail/lk_rules.hpp"
#include "kestrel/pyramid.hpp"
#include "lk_test_util.hpp"
#include "src/track/lk_internal.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

using namespace kestrel::detail;

LkImage view_of(const HostImage& img) { return {img.data(), img.width(), img.height(), img.pitch()}; }

/// Bilinear sample at one point: the one-sample grid there (n = 1, h = 0).
float bilinear(const LkImage& im, float x, float y) {
    const PatchGrid g = patch_grid(x, y, 0.0f);
    return grid_sample(GridTaps(im, g), g, 0, 0);
}

/// The direct form of the error terms, the reference for error_terms(): per pixel e = alpha (T - mu) +
/// beta_c - I and the sums gx e, gy e, a e, e, |e|.
constexpr int kDirectSums = 5;
void add_error(float* acc, float t, float gx, float gy, float image, float alpha, float beta_c, float mu) {
    const float a = fsub(t, mu);
    const float e = pixel_error_centred(a, image, alpha, beta_c);
    acc[0] = fadd(acc[0], fmul(gx, e));
    acc[1] = fadd(acc[1], fmul(gy, e));
    acc[2] = fadd(acc[2], fmul(a, e));
    acc[3] = fadd(acc[3], e);
    acc[4] = fadd(acc[4], fabsf(e));
}

TEST(LkRules, FusedMultiplyAddRoundsOnce) {
    // ffma is the fused operation on the host too (the GPU's __fmaf_rn): with a = b = 1 + 2^-12 and
    // c = -(1 + 2^-11), a * b = 1 + 2^-11 + 2^-24 exactly; rounded first it would be 1 + 2^-11 (the 2^-24 is
    // half an ulp, ties to even) and the sum 0; rounded once, the sum is the exact 2^-24.
    const float a = 1.0f + std::ldexp(1.0f, -12), c = -(1.0f + std::ldexp(1.0f, -11));
    EXPECT_EQ(ffma(a, a, c), std::ldexp(1.0f, -24));
    EXPECT_EQ(fmul(a, a), -c);  // the separately rounded product
}

TEST(LkRules, BilinearIsTheDocumentedFormula) {
    HostImage img(4, 4);
    const std::uint8_t v[16] = {10, 20, 30, 40, 50, 60, 70, 80, 15, 25, 35, 45, 200, 100, 0, 255};
    for (int i = 0; i < 16; ++i) img.at(i % 4, i / 4) = v[i];
    const LkImage im = view_of(img);
    EXPECT_EQ(bilinear(im, 1.0f, 1.0f), 60.0f);
    // (1.25, 1.5): top = 0.75*60 + 0.25*70 = 62.5, bottom = 0.75*25 + 0.25*35 = 27.5, value = 45.
    EXPECT_FLOAT_EQ(bilinear(im, 1.25f, 1.5f), 45.0f);
    // inside(): the centre within the image and the grid's taps within kLkBorder of it (the border rule).
    EXPECT_TRUE(inside(im, 3.0f, 1.0f, 1, 1));    // centre on the last column: taps 2 .. 5 (5 replicates 3)
    EXPECT_FALSE(inside(im, 3.01f, 1.0f, 1, 1));  // centre past the last column
    EXPECT_TRUE(inside(im, 0.0f, 3.0f, 16, 1));   // a 16x16 template centred on the corner pixel
    EXPECT_FALSE(inside(im, -0.01f, 1.0f, 1, 0));
    EXPECT_FALSE(inside(im, 1.0f, 3.5f, 2, 0));
    HostImage edge_img(64, 64);
    const LkImage bim = view_of(edge_img);
    // Taps reaching past kLkBorder: a side-16 grid at centre 0 has x0 - margin = -8 - margin.
    static_assert(kLkBorder >= 9, "a 16x16 template centred on an edge pixel must fit");
    EXPECT_TRUE(inside(bim, 0.0f, 0.0f, 16, 1));
    EXPECT_TRUE(inside(bim, 63.0f, 63.0f, 16, 1));
    // Taps past the edge read the edge pixel: at x = -0.5 the bilinear mix of I(-1, 1) and I(0, 1) is I(0, 1).
    {
        const PatchGrid g = patch_grid(-0.5f, 1.0f, 0.0f);
        EXPECT_EQ(grid_sample(GridTaps(im, g), g, 0, 0), 50.0f);
        const PatchGrid c = patch_grid(4.25f, 5.0f, 0.0f);  // right of and below the image: I(3, 3)
        EXPECT_EQ(grid_sample(GridTaps(im, c), c, 0, 0), 255.0f);
    }
    EXPECT_FALSE(inside(im, std::nanf(""), 1.0f, 1, 0));
    // The grid of a 16x16 patch: first sample at centre - 7.5, one pair of weights for all samples.
    const PatchGrid g = patch_grid(20.25f, 10.75f, patch_half(16));
    EXPECT_EQ(g.vx, 12.75f);
    EXPECT_EQ(g.x0, 12);
    EXPECT_EQ(g.ax, 0.75f);
    EXPECT_EQ(g.bx, 0.25f);
    EXPECT_EQ(g.y0, 3);
    EXPECT_EQ(g.ay, 0.25f);
    // grid_sample(i, j) is the bilinear sample at (vx + i, vy + j).
    HostImage big(40, 30);
    for (int y = 0; y < 30; ++y)
        for (int x = 0; x < 40; ++x) big.at(x, y) = static_cast<std::uint8_t>((x * 37 + y * 101 + x * y) % 251);
    const LkImage bi = view_of(big);
    const PatchGrid h = patch_grid(19.25f, 14.625f, patch_half(16));  // vx + i, vy + j exact in float
    for (int j = 0; j < 16; ++j)
        for (int i = 0; i < 16; ++i)
            EXPECT_EQ(grid_sample(GridTaps(bi, h), h, i, j),
                      bilinear(bi, h.vx + static_cast<float>(i), h.vy + static_cast<float>(j)));
    EXPECT_FLOAT_EQ(to_level(from_level(13.37f, 4.0f), 4.0f), 13.37f);
    EXPECT_EQ(to_level(2.5f, 2.0f), 1.0f);  // level-1 pixel 1 averages level-0 pixels 2 and 3: centre 2.5
}

/// Template pixel at (x, y): the one-sample grid there (n = 1, h = 0).
void template_at(const LkImage& im, float x, float y, float& t, float& gx, float& gy) {
    const PatchGrid g = patch_grid(x, y, 0.0f);
    grid_template(GridTaps(im, g), g, 0, 0, t, gx, gy);
}

/// Offset of patch pixel i (row-major) from the patch centre: (i % n - h, i / n - h).
void patch_offset(int i, int n, float& ox, float& oy) {
    const float h = patch_half(n);
    ox = static_cast<float>(i % n) - h;
    oy = static_cast<float>(i / n) - h;
}

/// The current image's sample of patch pixel i on the grid at (cx, cy).
float image_pixel(const LkImage& cur, float cx, float cy, int n, int i) {
    const PatchGrid g = patch_grid(cx, cy, patch_half(n));
    return grid_sample(GridTaps(cur, g), g, i % n, i / n);
}

/// The template pixel i of the grid at (rx, ry).
void template_pixel(const LkImage& ref, float rx, float ry, int n, int i, float& t, float& gx, float& gy) {
    const PatchGrid g = patch_grid(rx, ry, patch_half(n));
    grid_template(GridTaps(ref, g), g, i % n, i / n, t, gx, gy);
}

HostImage ramp(int w, int h, int ax, int ay, int c) {
    HostImage img(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img.at(x, y) = static_cast<std::uint8_t>(ax * x + ay * y + c);
    return img;
}

TEST(LkRules, TemplateGradientIsTheCentralDifference) {
    // On a linear ramp bilinear sampling and central differences are exact.
    const HostImage r = ramp(60, 20, 3, 2, 10);
    for (float x : {10.0f, 20.3f, 31.75f})
        for (float y : {5.0f, 9.6f, 13.125f}) {
            float t, gx, gy;
            template_at(view_of(r), x + 1.5f, y - 0.5f, t, gx, gy);
            EXPECT_NEAR(t, 3.0f * (x + 1.5f) + 2.0f * (y - 0.5f) + 10.0f, 1e-4f);
            EXPECT_NEAR(gx, 3.0f, 1e-5f);  // float rounding of the bilinear weights only
            EXPECT_NEAR(gy, 2.0f, 1e-5f);
        }
    // On a real image: against the same operator, (G(x+1) - G(x-1)) / 2, applied to a smooth (Lanczos)
    // reconstruction instead of bilinear samples of the 8-bit image.
    const HostImage img = test::real_image("graf1.png");
    const test::FloatImage g = test::blurred(img, 1.5);
    const HostImage q = test::moved(g, 0, 0);
    std::vector<double> err, mag;
    const auto pts = test::textured_points(q, 20, 40, 20.0);
    ASSERT_GE(pts.size(), 50u);
    for (std::size_t i = 0; i < pts.size(); ++i) {
        const float x = pts[i].x + 0.37f * static_cast<float>(i % 3), y = pts[i].y + 0.21f * static_cast<float>(i % 5);
        float t, gx, gy;
        template_at(view_of(q), x, y, t, gx, gy);
        const double ngx = 0.5 * (test::sample_lanczos(g, x + 1, y) - test::sample_lanczos(g, x - 1, y));
        const double ngy = 0.5 * (test::sample_lanczos(g, x, y + 1) - test::sample_lanczos(g, x, y - 1));
        err.push_back(std::hypot(gx - ngx, gy - ngy));
        mag.push_back(std::hypot(ngx, ngy));
    }
    EXPECT_LT(test::median_of(err), 0.5);  // 8-bit rounding and bilinear vs Lanczos sampling
    EXPECT_LT(test::median_of(err), 0.05 * test::median_of(mag));
}

// Energy E = sum e^2 / 2 of the model e(x) = a (T(x) - mu) + bc - I(x + c), the template sampled
// bilinearly at (rx, ry) from ref.
double energy(const LkImage& ref, const LkImage& cur, int n, double rx, double ry, float cx, float cy, double a,
              double bc, double mu) {
    double e2 = 0;
    for (int i = 0; i < n * n; ++i) {
        float ox, oy;
        patch_offset(i, n, ox, oy);
        const double t = bilinear(ref, static_cast<float>(rx + ox), static_cast<float>(ry + oy));
        const double e = a * (t - mu) + bc - image_pixel(cur, cx, cy, n, i);
        e2 += 0.5 * e * e;
    }
    return e2;
}

struct Sums {
    float b[kDirectSums] = {};
    double mu = 0;
};

Sums error_sums(const LkImage& ref, const LkImage& cur, int n, float rx, float ry, float cx, float cy, float alpha,
                float beta_c) {
    std::vector<float> t(n * n), gx(n * n), gy(n * n);
    Sums s;
    for (int i = 0; i < n * n; ++i) {
        template_pixel(ref, rx, ry, n, i, t[i], gx[i], gy[i]);
        s.mu += t[i];
    }
    s.mu /= n * n;
    for (int i = 0; i < n * n; ++i)
        add_error(s.b, t[i], gx[i], gy[i], image_pixel(cur, cx, cy, n, i), alpha, beta_c, static_cast<float>(s.mu));
    return s;
}

TEST(LkRules, JacobianMatchesNumericDifferencesOfTheError) {
    const float alpha = 1.05f, beta_c = 130.0f;
    // Translation columns, on ramps (where the template is exactly linear in the shift, so the central
    // difference of E is exact): dE/d(template shift) = alpha * sum grad T e.
    {
        const HostImage r = ramp(60, 30, 3, 2, 10);
        HostImage c = ramp(60, 30, 2, 3, 5);
        for (int y = 0; y < 30; ++y)
            for (int x = 0; x < 60; ++x) c.at(x, y) = static_cast<std::uint8_t>(c.at(x, y) + (x * y) % 7);
        const LkImage ref = view_of(r), cur = view_of(c);
        const int n = 8;
        const float rx = 30.3f, ry = 12.6f, cx = 29.1f, cy = 13.7f;
        const Sums s = error_sums(ref, cur, n, rx, ry, cx, cy, alpha, beta_c);
        const double h = 0.125;
        const double dtx = (energy(ref, cur, n, rx + h, ry, cx, cy, alpha, beta_c, s.mu) -
                            energy(ref, cur, n, rx - h, ry, cx, cy, alpha, beta_c, s.mu)) / (2 * h);
        const double dty = (energy(ref, cur, n, rx, ry + h, cx, cy, alpha, beta_c, s.mu) -
                            energy(ref, cur, n, rx, ry - h, cx, cy, alpha, beta_c, s.mu)) / (2 * h);
        ASSERT_GT(std::fabs(dtx), 100.0);
        EXPECT_NEAR(alpha * s.b[0], dtx, 1e-4 * std::fabs(dtx));
        EXPECT_NEAR(alpha * s.b[1], dty, 1e-4 * std::fabs(dty));
    }
    // Gain and offset columns, on a real image: E is quadratic in both, central differences exact.
    {
        const HostImage img = test::real_image("aloeL.png");
        const test::FloatImage g = test::blurred(img, 1.0);
        const HostImage r = test::moved(g, 0, 0);
        const HostImage c = test::moved(g, 0.8, -0.6, 1.1, 7.0);
        const LkImage ref = view_of(r), cur = view_of(c);
        const int n = 16;
        const float rx = 300.0f, ry = 200.0f, cx = 300.3f, cy = 199.8f;
        const Sums s = error_sums(ref, cur, n, rx, ry, cx, cy, alpha, beta_c);
        const double h = 1e-3;
        const double dga = (energy(ref, cur, n, rx, ry, cx, cy, alpha + h, beta_c, s.mu) -
                            energy(ref, cur, n, rx, ry, cx, cy, alpha - h, beta_c, s.mu)) / (2 * h);
        const double dof = (energy(ref, cur, n, rx, ry, cx, cy, alpha, beta_c + h, s.mu) -
                            energy(ref, cur, n, rx, ry, cx, cy, alpha, beta_c - h, s.mu)) / (2 * h);
        EXPECT_NEAR(s.b[2], dga, 1e-3 * std::fabs(dga) + 1e-2);
        EXPECT_NEAR(s.b[3], dof, 1e-3 * std::fabs(dof) + 1e-2);
    }
}

TEST(LkRules, ErrorTermsFromImageSumsEqualTheDirectSums) {
    // The tracker never forms the per-pixel error for its error terms: error_terms() composes them from
    // the Hessian's template sums and four image sums. Against the direct sums of e = alpha a + beta_c - I.
    EXPECT_EQ(fdiv(1.0f, kLkMinGain), kLkMaxGain);
    const HostImage img = test::real_image("graf1.png");
    const test::FloatImage g = test::blurred(img, 1.0);
    const HostImage r = test::moved(g, 0, 0);
    const HostImage c = test::moved(g, 1.4, -0.7, 1.2, -15.0);
    const LkImage ref = view_of(r), cur = view_of(c);
    for (int n : {16, 12, 8}) {
        for (float mu_on : {0.0f, 1.0f}) {
            const float rx = 300.4f, ry = 250.7f, cx = 301.9f, cy = 249.8f, alpha = 1.17f;
            std::vector<float> t(n * n), gx(n * n), gy(n * n);
            float tsum = 0;
            for (int i = 0; i < n * n; ++i) {
                template_pixel(ref, rx, ry, n, i, t[i], gx[i], gy[i]);
                tsum += t[i];
            }
            const float mu = mu_on * tsum / static_cast<float>(n * n);
            const float beta_c = -12.0f + alpha * mu;
            float hs[kLkHessianSums] = {}, direct[kDirectSums] = {}, is[kLkImageSums + 1] = {};
            double scale = 0;
            for (int i = 0; i < n * n; ++i) {
                const float image = image_pixel(cur, cx, cy, n, i);
                add_hessian(hs, t[i], gx[i], gy[i], mu);
                add_error(direct, t[i], gx[i], gy[i], image, alpha, beta_c, mu);
                add_image_sums<true>(is, fsub(t[i], mu), gx[i], gy[i], image, alpha, beta_c);
                scale = std::max(scale, std::fabs(static_cast<double>(is[0])) + std::fabs(static_cast<double>(is[2])));
            }
            float b[4];
            error_terms(hs, static_cast<float>(n * n), is, alpha, beta_c, b);
            for (int q = 0; q < 4; ++q)
                EXPECT_NEAR(b[q], direct[q], 1e-5 * scale + 1e-3) << "n " << n << " term " << q << " mu " << mu;
            EXPECT_EQ(is[4], direct[4]);  // sum |e|: the same per-pixel operations in the same order
        }
    }
}

// Solves the 4x4 system A x = y in double (Gaussian elimination with partial pivoting).
std::vector<double> solve4(std::vector<std::vector<double>> a, std::vector<double> y) {
    for (int c = 0; c < 4; ++c) {
        int p = c;
        for (int r = c + 1; r < 4; ++r)
            if (std::fabs(a[r][c]) > std::fabs(a[p][c])) p = r;
        std::swap(a[p], a[c]);
        std::swap(y[p], y[c]);
        for (int r = c + 1; r < 4; ++r) {
            const double f = a[r][c] / a[c][c];
            for (int k = c; k < 4; ++k) a[r][k] -= f * a[c][k];
            y[r] -= f * y[c];
        }
    }
    std::vector<double> x(4);
    for (int r = 3; r >= 0; --r) {
        double v = y[r];
        for (int k = r + 1; k < 4; ++k) v -= a[r][k] * x[k];
        x[r] = v / a[r][r];
    }
    return x;
}

TEST(LkRules, ExactSicStepEqualsLeastSquaresWithTheFullJacobian) {
    const HostImage img = test::real_image("graf1.png");
    const test::FloatImage g = test::blurred(img, 1.0);
    const HostImage r = test::moved(g, 0, 0);
    const HostImage c = test::moved(g, 0.4, 0.3, 1.3, -12.0);
    const LkImage ref = view_of(r), cur = view_of(c);
    const int n = 16;
    const float rx = 420.0f, ry = 310.0f, cx = 420.1f, cy = 310.1f;
    const float alpha = 1.25f, beta = -10.0f;
    std::vector<float> t(n * n), gx(n * n), gy(n * n);
    float tsum = 0;
    for (int i = 0; i < n * n; ++i) {
        template_pixel(ref, rx, ry, n, i, t[i], gx[i], gy[i]);
        tsum += t[i];
    }
    const float mu = tsum / static_cast<float>(n * n);
    const float beta_c = beta + alpha * mu;
    float hs[kLkHessianSums] = {}, es[kDirectSums] = {};
    for (int i = 0; i < n * n; ++i) {
        add_hessian(hs, t[i], gx[i], gy[i], mu);
        add_error(es, t[i], gx[i], gy[i], image_pixel(cur, cx, cy, n, i), alpha, beta_c, mu);
    }
    LkSystem sys;
    ASSERT_TRUE(lk_factorize(hs, static_cast<float>(n * n), 1, 1, 1.0f, sys));
    float dq[4];
    lk_solve(sys, es, 1, 1, dq);
    // Independent: J = [alpha gx, alpha gy, T - mu, 1] in double, dq = -(J^T J)^-1 J^T e.
    std::vector<std::vector<double>> h(4, std::vector<double>(4, 0.0));
    std::vector<double> b(4, 0.0);
    for (int i = 0; i < n * n; ++i) {
        const double j[4] = {alpha * static_cast<double>(gx[i]), alpha * static_cast<double>(gy[i]),
                             static_cast<double>(t[i]) - mu, 1.0};
        const double e = alpha * (static_cast<double>(t[i]) - mu) + beta_c - image_pixel(cur, cx, cy, n, i);
        for (int p = 0; p < 4; ++p) {
            b[p] -= j[p] * e;
            for (int q = 0; q < 4; ++q) h[p][q] += j[p] * j[q];
        }
    }
    const auto x = solve4(h, b);
    EXPECT_NEAR(dq[0] / alpha, x[0], 1e-4 + 1e-3 * std::fabs(x[0]));  // the driver's dt = dq_t / alpha
    EXPECT_NEAR(dq[1] / alpha, x[1], 1e-4 + 1e-3 * std::fabs(x[1]));
    EXPECT_NEAR(dq[2], x[2], 1e-5 + 1e-3 * std::fabs(x[2]));
    EXPECT_NEAR(dq[3], x[3], 1e-3 + 1e-3 * std::fabs(x[3]));
    // And the step points the right way: the true motion is about (0.3, 0.2) from the estimate, gain +0.05.
    EXPECT_GT(-dq[0] / alpha, 0.1f);
    EXPECT_GT(-dq[1] / alpha, 0.05f);
}

TEST(LkRules, SingularSystemsAreDetected) {
    LkSystem sys;
    // No gradient at all (flat patch): the eigenvalue test fails.
    const float flat[kLkHessianSums] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    EXPECT_FALSE(lk_factorize(flat, 64.0f, 0, 0, 1.0f, sys));
    // A pure edge: gradient along x only.
    const float edge[kLkHessianSums] = {6400, 0, 0.5f, 0, 0, 0, 0, 0, 0};
    EXPECT_FALSE(lk_factorize(edge, 64.0f, 0, 0, 1.0f, sys));
    EXPECT_TRUE(lk_factorize(edge, 64.0f, 0, 0, 0.0f, sys));  // threshold 0: only the pivot test remains
    // Gain column identical to the x-gradient column: rank-deficient 3x3.
    const float dep[kLkHessianSums] = {100, 0, 100, 100, 0, 100, 0, 0, 0};
    EXPECT_FALSE(lk_factorize(dep, 16.0f, 1, 0, 0.0f, sys));
    const float ok[kLkHessianSums] = {100, 5, 80, 3, -2, 400, 1, 2, 0};
    ASSERT_TRUE(lk_factorize(ok, 16.0f, 1, 1, 1.0f, sys));
    const float b[4] = {1, 2, 3, 4};
    float x[4];
    lk_solve(sys, b, 1, 1, x);
    const auto ref = solve4({{100, 5, 3, 1}, {5, 80, -2, 2}, {3, -2, 400, 0}, {1, 2, 0, 16}}, {-1, -2, -3, -4});
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(x[i], ref[i], 1e-6);
    // Inactive parameters get exactly zero.
    lk_factorize(ok, 16.0f, 0, 0, 1.0f, sys);
    lk_solve(sys, b, 0, 0, x);
    EXPECT_EQ(x[2], 0.0f);
    EXPECT_EQ(x[3], 0.0f);
}

std::uint32_t bits_of(float v) {
    std::uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    return b;
}

// A division by a power of two is a multiply by its reciprocal with the same bits (both round the same real number
// once); the setup uses it only for such divisors (exact_reciprocal is 0 otherwise), and a reciprocal that is not
// exact would change results (the check that this test can fail).
TEST(LkRules, PowerOfTwoDivisionsAreMultipliesWithTheSameBits) {
    EXPECT_EQ(exact_reciprocal(1.0f), 1.0f);
    EXPECT_EQ(exact_reciprocal(4.0f), 0.25f);
    EXPECT_EQ(exact_reciprocal(256.0f), 1.0f / 256.0f);
    EXPECT_EQ(exact_reciprocal(1.5f), 0.0f);
    EXPECT_EQ(exact_reciprocal(144.0f), 0.0f);
    EXPECT_EQ(exact_reciprocal(0.0f), 0.0f);
    std::mt19937 rng(7);
    std::uniform_int_distribution<std::uint32_t> any;
    int inexact_third = 0;
    for (int t = 0; t < 200000; ++t) {
        std::uint32_t b = any(rng);
        float x;
        std::memcpy(&x, &b, sizeof x);  // every finite, subnormal, infinite and NaN pattern
        for (const float d : {2.0f, 4.0f, 256.0f, 0.5f, 3.0f, 1.5f}) {
            const float got = div_by(x, d, exact_reciprocal(d)), want = fdiv(x, d);
            if (x == x) ASSERT_EQ(bits_of(got), bits_of(want)) << x << " / " << d;
            else ASSERT_TRUE(got != got);
        }
        if (x == x && bits_of(fmul(x, 1.0f / 3.0f)) != bits_of(fdiv(x, 3.0f))) ++inexact_third;
    }
    EXPECT_GT(inexact_third, 1000);  // a non-exact reciprocal would be caught above
    // The setup resolves them per level: to_level_k is to_level with the same bits.
    LkConfig cfg;
    cfg.pyramid = {4, 2.0f};
    const LkSetup s = make_lk_setup(cfg);
    for (int k = 0; k < s.levels; ++k) {
        EXPECT_EQ(s.inv_scale[k], 1.0f / s.scale[k]);
        EXPECT_EQ(s.window[k], s.reach / s.scale[k]);
        for (float x = -3.0f; x < 800.0f; x += 0.37f)
            ASSERT_EQ(bits_of(to_level_k(s, k, x)), bits_of(to_level(x, s.scale[k])));
    }
    cfg.pyramid = {3, 1.5f};
    EXPECT_EQ(make_lk_setup(cfg).inv_scale[1], 0.0f);  // 1.5: divided
}

// The normal equations over the active parameters (2, 3 or 4) against a double-precision solve of the same
// reduced system; inactive parameters' steps are exactly 0.
TEST(LkRules, ReducedSystemsSolveTheActiveParameters) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int t = 0; t < 200; ++t) {
        // sums of a random 16-pixel patch: gx, gy, a = T - mu, 1
        float hs[kLkHessianSums] = {};
        for (int i = 0; i < 16; ++i)
            add_hessian_centred(hs, 20.0f * u(rng), 15.0f * u(rng) + 3.0f, 15.0f * u(rng) - 2.0f);
        const float n = 16.0f, b[4] = {u(rng) * 50, u(rng) * 50, u(rng) * 80, u(rng) * 10};
        const double full[4][4] = {{hs[0], hs[1], hs[3], hs[6]}, {hs[1], hs[2], hs[4], hs[7]},
                                   {hs[3], hs[4], hs[5], hs[8]}, {hs[6], hs[7], hs[8], n}};
        for (int gain = 0; gain <= 1; ++gain)
            for (int offset = 0; offset <= 1; ++offset) {
                LkSystem sys;
                if (!lk_factorize(hs, n, gain, offset, 0.0f, sys)) continue;
                float x[4];
                lk_solve(sys, b, gain, offset, x);
                std::vector<int> ix = {0, 1};
                if (gain) ix.push_back(2);
                if (offset) ix.push_back(3);
                std::vector<std::vector<double>> h(4, std::vector<double>(4, 0.0));
                std::vector<double> r(4, 0.0);
                for (int i = 0; i < 4; ++i) h[i][i] = 1.0;  // solve4 on the active block padded with the identity
                for (std::size_t i = 0; i < ix.size(); ++i) {
                    r[i] = -b[ix[i]];
                    for (std::size_t j = 0; j < ix.size(); ++j) h[i][j] = full[ix[i]][ix[j]];
                }
                const auto want = solve4(h, r);
                for (std::size_t i = 0; i < ix.size(); ++i)
                    EXPECT_NEAR(x[ix[i]], want[i], 1e-4 * (1.0 + std::fabs(want[i]))) << "trial " << t;
                if (!gain) EXPECT_EQ(x[2], 0.0f);
                if (!offset) EXPECT_EQ(x[3], 0.0f);
            }
    }
}

/// The 4 x 4 inverse of the sums with the gain inactive, as the factorisation computed it before the levels without
/// the gain had a 3 x 3 system of their own: the gain's identity row and column in H, lk_invert<4>.
bool inverse_4x4_without_gain(const float* hs, float n, int est_offset, float (&hinv)[4][4]) {
    float h[4][4] = {{hs[0], hs[1], 0.0f, est_offset ? hs[6] : 0.0f},
                     {hs[1], hs[2], 0.0f, est_offset ? hs[7] : 0.0f},
                     {0.0f, 0.0f, 1.0f, 0.0f},
                     {est_offset ? hs[6] : 0.0f, est_offset ? hs[7] : 0.0f, 0.0f, est_offset ? n : 1.0f}};
    return lk_invert<4>(h, hinv);
}

// The levels without the gain (every coarse level) factorize the 3 x 3 system over (tx, ty, offset): exactly the
// inverse, and so the steps, of the 4 x 4 system with the gain's identity row (the zeros it adds change nothing),
// on random patches and on ill-conditioned ones. A 3 x 3 inverse put back in the wrong places (the offset's row in
// the gain's) gives other steps (so the comparison can fail).
TEST(LkRules, CoarseLevelsSolveTheirThreeByThreeSystemExactly) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    int compared = 0, misplaced_differs = 0;
    for (int t = 0; t < 20000; ++t) {
        float hs[kLkHessianSums] = {};
        const int npx = t % 3 == 0 ? 16 : 256;
        const float cond = t % 5 == 0 ? 0.01f : 1.0f;  // some nearly singular translation blocks
        for (int i = 0; i < npx; ++i) {
            const float gx = 30.0f * u(rng) + 4.0f * u(rng);
            add_hessian_centred(hs, 20.0f * u(rng), gx, cond * 25.0f * u(rng) + (1.0f - cond) * gx);
        }
        const float n = static_cast<float>(npx);
        const float b[4] = {u(rng) * 500, u(rng) * 500, u(rng) * 800, u(rng) * 100};
        for (int offset = 0; offset <= 1; ++offset) {
            LkSystem sys;
            float want[4][4];
            const bool ok = lk_factorize(hs, n, 0, offset, 0.0f, sys);
            ASSERT_EQ(ok, inverse_4x4_without_gain(hs, n, offset, want)) << "trial " << t;
            if (!ok) continue;
            ++compared;
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) ASSERT_EQ(sys.hinv[i][j], want[i][j]) << "trial " << t << " (" << i << ", " << j << ")";
            float x[4], xw[4];
            lk_solve(sys, b, 0, offset, x);
            LkSystem ref;
            std::memcpy(ref.hinv, want, sizeof want);
            lk_solve(ref, b, 0, offset, xw);
            for (int i = 0; i < 4; ++i) ASSERT_EQ(bits_of(x[i]), bits_of(xw[i])) << "trial " << t;
            // The same inverse with the offset's row and column in the gain's places.
            LkSystem bad = sys;
            for (int i = 0; i < 4; ++i) {
                std::swap(bad.hinv[i][2], bad.hinv[i][3]);
            }
            for (int i = 0; i < 4; ++i) std::swap(bad.hinv[2][i], bad.hinv[3][i]);
            float xb[4];
            lk_solve(bad, b, 0, offset, xb);
            if (bits_of(xb[0]) != bits_of(x[0]) || bits_of(xb[3]) != bits_of(x[3])) ++misplaced_differs;
        }
    }
    EXPECT_GT(compared, 30000);
    EXPECT_GT(misplaced_differs, compared / 3);
    // With the gain the 4 x 4 system is factorized as it is (the same function).
    float hs[kLkHessianSums] = {};
    for (int i = 0; i < 256; ++i) add_hessian_centred(hs, 20.0f * u(rng), 30.0f * u(rng), 25.0f * u(rng));
    float h[4][4] = {{hs[0], hs[1], hs[3], hs[6]}, {hs[1], hs[2], hs[4], hs[7]}, {hs[3], hs[4], hs[5], hs[8]},
                     {hs[6], hs[7], hs[8], 256.0f}}, want[4][4];
    LkSystem sys;
    ASSERT_TRUE(lk_factorize(hs, 256.0f, 1, 1, 0.0f, sys));
    ASSERT_TRUE(lk_invert<4>(h, want));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) EXPECT_EQ(sys.hinv[i][j], want[i][j]);
}

// The packed image sums (a I left out without the gain) are the full sums' values in their places, a I = 0; the
// error terms the driver solves with are then those of the full sums wherever lk_solve reads them.
TEST(LkRules, PackedImageSumsAreTheFullSums) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int t = 0; t < 2000; ++t) {
        float full[kLkImageSums + 1] = {}, p_sad[kLkImageSumsPacked<true, false>] = {},
              p_gain[kLkImageSumsPacked<false, true>] = {}, p_none[kLkImageSumsPacked<false, false>] = {},
              p_both[kLkImageSumsPacked<true, true>] = {};
        const float alpha = 1.0f + 0.2f * u(rng), beta_c = 100.0f + 50.0f * u(rng);
        for (int i = 0; i < 64; ++i) {
            const float a = 40.0f * u(rng), gx = 30.0f * u(rng), gy = 30.0f * u(rng), image = 128.0f + 120.0f * u(rng);
            add_image_sums<true>(full, a, gx, gy, image, alpha, beta_c);
            add_image_sums_packed<true, false>(p_sad, a, gx, gy, image, alpha, beta_c);
            add_image_sums_packed<false, true>(p_gain, a, gx, gy, image, alpha, beta_c);
            add_image_sums_packed<false, false>(p_none, a, gx, gy, image, alpha, beta_c);
            add_image_sums_packed<true, true>(p_both, a, gx, gy, image, alpha, beta_c);
        }
        float o[4][kLkImageSums + 1];
        unpack_image_sums<true, false>(p_sad, o[0]);
        unpack_image_sums<false, true>(p_gain, o[1]);
        unpack_image_sums<false, false>(p_none, o[2]);
        unpack_image_sums<true, true>(p_both, o[3]);
        for (int q = 0; q <= kLkImageSums; ++q) {
            ASSERT_EQ(bits_of(o[3][q]), bits_of(full[q]));
            const bool sad = q == kLkImageSums;
            ASSERT_EQ(bits_of(o[0][q]), bits_of(q == 2 ? 0.0f : full[q]));
            ASSERT_EQ(bits_of(o[1][q]), bits_of(sad ? 0.0f : full[q]));
            ASSERT_EQ(bits_of(o[2][q]), bits_of(q == 2 || sad ? 0.0f : full[q]));
        }
    }
}

// A level's preparation (mean, sums, inverse) handed in by the engine gives the track it would compute itself,
// bit for bit: the stored coarse levels' preparations, computed once when the patch is stored, change nothing.
// A level-0 preparation off by one unit in the last place of the mean changes the results (so the comparison can
// fail).
TEST(LkRules, PreparedLevelsGiveTheSameTracks) {
    const HostImage img = test::real_image("graf1.png");
    const test::FloatImage g = test::blurred(img, 0.8);
    const HostImage r = test::moved(g, 0, 0), c = test::moved(g, 2.3, -1.6, 1.1, 6.0);
    LkConfig cfg;
    const std::vector<HostImage> rp = build_pyramid_cpu(r.view(), cfg.pyramid), cp = build_pyramid_cpu(c.view(), cfg.pyramid);
    LkImage rl[kMaxLevels], cl[kMaxLevels];
    for (int k = 0; k < cfg.pyramid.levels; ++k) {
        rl[k] = view_of(rp[static_cast<std::size_t>(k)]);
        cl[k] = view_of(cp[static_cast<std::size_t>(k)]);
    }
    for (const int from : {1, 0}) {
        LkSetup s = make_lk_setup(cfg);
        s.stored_from_level = from;
        const int per_slot = store_floats_per_slot(s);
        int same = 0, changed = 0, cases = 0, near = 0;
        for (const Point2f& p : test::textured_points(r, 23, 40)) {
            std::vector<float> store(static_cast<std::size_t>(per_slot));
            std::int32_t valid[kMaxLevels] = {};
            for (int k = 0; k < s.levels; ++k)
                valid[k] = extract_template_cpu(rl[k], to_level(p.x, s.scale[k]), to_level(p.y, s.scale[k]), s.patch[k],
                                                store.data() + store_level_offset(s, k));
            LkLevelPrep prep[kMaxLevels] = {}, bad[kMaxLevels] = {};
            CpuLkEngine pe(s, store.data(), valid);
            for (int k = from; k < s.levels; ++k)
                if (pe.load_template(k, 0, 0, cl[k], 0, 0)) lk_prepare_level(pe, s, k, prep[k]);
            for (int k = 0; k < s.levels; ++k) {
                bad[k] = prep[k];
                bad[k].mu = std::nextafter(prep[k].mu, 1e9f);
            }
            const LkGuess guess{p.x, p.y, 1.0f, 0.0f};
            CpuLkEngine computed(s, rl, store.data(), valid, nullptr, from);
            CpuLkEngine handed(s, rl, store.data(), valid, prep, from);
            CpuLkEngine wrong(s, rl, store.data(), valid, bad, from);
            const LkResult a = lk_track_one(computed, s, cl, p.x, p.y, guess);
            const LkResult b = lk_track_one(handed, s, cl, p.x, p.y, guess);
            const LkResult w = lk_track_one(wrong, s, cl, p.x, p.y, guess);
            same += std::memcmp(&a, &b, sizeof a) == 0;
            changed += std::memcmp(&a, &w, sizeof a) != 0;
            ++cases;
            if (a.status == TrackStatus::Tracked) near += std::hypot(a.x - (p.x + 2.3f), a.y - (p.y - 1.6f)) < 0.1f;
        }
        EXPECT_GT(cases, 100);
        EXPECT_GT(near, cases * 3 / 4) << "stored from level " << from;  // real tracking
        EXPECT_EQ(same, cases) << "stored from level " << from;
        // The coarse levels only seed level 0, which mostly converges to the same bits from a slightly different
        // start; with level 0 prepared too the perturbation reaches the results.
        if (from == 0) EXPECT_GT(changed, cases / 4);
    }
}

// The coarse levels stop at coarse_min_update, level 0 at min_update: a coarse bound of a whole level pixel ends
// every coarse level after its first step (different seeds, so different level-0 results), and level 0 still
// converges onto the true shift; with the coarse bound equal to min_update the results are make_lk_setup's.
TEST(LkRules, CoarseLevelsStopAtTheirOwnBound) {
    const HostImage img = test::real_image("graf1.png");
    const test::FloatImage g = test::blurred(img, 0.8);
    const HostImage r = test::moved(g, 0, 0), c = test::moved(g, 5.3, -3.6, 1.1, 6.0);
    LkConfig cfg;
    const std::vector<HostImage> rp = build_pyramid_cpu(r.view(), cfg.pyramid), cp = build_pyramid_cpu(c.view(), cfg.pyramid);
    LkImage rl[kMaxLevels], cl[kMaxLevels];
    for (int k = 0; k < cfg.pyramid.levels; ++k) {
        rl[k] = view_of(rp[static_cast<std::size_t>(k)]);
        cl[k] = view_of(cp[static_cast<std::size_t>(k)]);
    }
    const LkSetup fine = make_lk_setup(cfg);
    EXPECT_EQ(fine.coarse_min_update, fine.min_update);
    EXPECT_EQ(fine.coarse_min_update_sq, fine.min_update_sq);
    LkSetup loose = fine;
    loose.coarse_min_update = 1.0f;
    loose.coarse_min_update_sq = 1.0f;
    int cases = 0, differ = 0, near_fine = 0, near_loose = 0;
    for (const Point2f& p : test::textured_points(r, 23, 40)) {
        const LkGuess guess{p.x, p.y, 1.0f, 0.0f};
        CpuLkEngine e1(fine, rl), e2(loose, rl);
        const LkResult a = lk_track_one(e1, fine, cl, p.x, p.y, guess);
        const LkResult b = lk_track_one(e2, loose, cl, p.x, p.y, guess);
        ++cases;
        differ += std::memcmp(&a, &b, sizeof a) != 0;
        if (a.status == TrackStatus::Tracked) near_fine += std::hypot(a.x - (p.x + 5.3f), a.y - (p.y - 3.6f)) < 0.1f;
        if (b.status == TrackStatus::Tracked) near_loose += std::hypot(b.x - (p.x + 5.3f), b.y - (p.y - 3.6f)) < 0.1f;
    }
    std::printf("[coarse bound] %d cases: %d differ; within 0.1 px: %d (min_update), %d (coarse 1 px)\n", cases, differ,
                near_fine, near_loose);
    EXPECT_GT(cases, 100);
    EXPECT_GT(differ, cases / 4);  // the coarse bound is used
    EXPECT_GT(near_fine, cases * 3 / 4);
    EXPECT_GT(near_loose, cases * 3 / 4);  // level 0 still converges
}

}  // namespace
}  // namespace kestrel
