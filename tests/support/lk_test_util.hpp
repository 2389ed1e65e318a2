// Test helpers for the LK tracker: real images moved by known sub-pixel translations (and gain and
// offset), textured points to track, error statistics. Header-only; used by tests/test_lk_*.cpp,
// tests/test_feature_tracker*.cpp and tests/track/test_lk_vs_opencv.cpp.
//
// How the shifted images are made: the real image is first low-passed (Gaussian, sigma = 1 px) so that
// it is close to band-limited, then both frames are resampled from that one float image with a
// normalized Lanczos-3 kernel (separable, 6 x 6 taps): ref(x) = G(x), cur(x) = gain * G(x - d) + offset,
// each rounded to 8 bits. For a band-limited image Lanczos-3 reconstruction is accurate to a small
// fraction of a grey level, so the true motion of every point is d to well below 0.01 px; the 8-bit
// rounding adds the quantization noise a camera would. Both frames go through the same resampler,
// so any residual blur of the kernel is identical in the two and does not bias the displacement.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kestrel/image.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel::test {

struct FloatImage {
    int width = 0, height = 0;
    std::vector<float> v;
    float at(int x, int y) const {
        x = std::clamp(x, 0, width - 1);
        y = std::clamp(y, 0, height - 1);
        return v[static_cast<std::size_t>(y) * width + x];
    }
};

/// Separable Gaussian blur (clamped borders) of an 8-bit image into floats.
inline FloatImage blurred(const HostImage& img, double sigma) {
    const int r = static_cast<int>(std::ceil(3 * sigma));
    std::vector<double> k(2 * r + 1);
    double sum = 0;
    for (int i = -r; i <= r; ++i) sum += k[i + r] = std::exp(-0.5 * i * i / (sigma * sigma));
    for (double& w : k) w /= sum;
    const int w = img.width(), h = img.height();
    std::vector<float> tmp(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double a = 0;
            for (int i = -r; i <= r; ++i) a += k[i + r] * img.at(std::clamp(x + i, 0, w - 1), y);
            tmp[static_cast<std::size_t>(y) * w + x] = static_cast<float>(a);
        }
    FloatImage out{w, h, std::vector<float>(tmp.size())};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            double a = 0;
            for (int i = -r; i <= r; ++i) a += k[i + r] * tmp[static_cast<std::size_t>(std::clamp(y + i, 0, h - 1)) * w + x];
            out.v[static_cast<std::size_t>(y) * w + x] = static_cast<float>(a);
        }
    return out;
}

inline double lanczos3(double x) {
    if (x == 0.0) return 1.0;
    if (std::fabs(x) >= 3.0) return 0.0;
    const double pi = 3.14159265358979323846;
    return 3.0 * std::sin(pi * x) * std::sin(pi * x / 3.0) / (pi * pi * x * x);
}

/// Normalized Lanczos-3 weights for sampling at fractional position f in [0, 1): taps -2..3.
inline void lanczos_weights(double f, double* w) {
    double s = 0;
    for (int i = 0; i < 6; ++i) s += w[i] = lanczos3(f - (i - 2));
    for (int i = 0; i < 6; ++i) w[i] /= s;
}

/// Lanczos-3 sample of the float image at (x, y) (clamped borders).
inline double sample_lanczos(const FloatImage& g, double x, double y) {
    const double fx = std::floor(x), fy = std::floor(y);
    double wx[6], wy[6];
    lanczos_weights(x - fx, wx);
    lanczos_weights(y - fy, wy);
    double a = 0;
    for (int j = 0; j < 6; ++j) {
        double row = 0;
        for (int i = 0; i < 6; ++i) row += wx[i] * g.at(static_cast<int>(fx) + i - 2, static_cast<int>(fy) + j - 2);
        a += wy[j] * row;
    }
    return a;
}

/// out(x, y) = round(gain * G(x - dx, y - dy) + offset), clamped to [0, 255]: content moves by +d.
inline HostImage moved(const FloatImage& g, double dx, double dy, double gain = 1.0, double offset = 0.0) {
    HostImage out(g.width, g.height);
    // The shift is the same for every pixel: one set of weights per axis.
    const double sx = -dx, sy = -dy;
    const double fx = std::floor(sx), fy = std::floor(sy);
    double wx[6], wy[6];
    lanczos_weights(sx - fx, wx);
    lanczos_weights(sy - fy, wy);
    const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
    std::vector<double> tmp(static_cast<std::size_t>(g.width) * g.height);
    for (int y = 0; y < g.height; ++y)
        for (int x = 0; x < g.width; ++x) {
            double a = 0;
            for (int i = 0; i < 6; ++i) a += wx[i] * g.at(x + ix + i - 2, y);
            tmp[static_cast<std::size_t>(y) * g.width + x] = a;
        }
    for (int y = 0; y < g.height; ++y)
        for (int x = 0; x < g.width; ++x) {
            double a = 0;
            for (int j = 0; j < 6; ++j)
                a += wy[j] * tmp[static_cast<std::size_t>(std::clamp(y + iy + j - 2, 0, g.height - 1)) * g.width + x];
            out.at(x, y) = static_cast<std::uint8_t>(std::clamp(std::lround(gain * a + offset), 0L, 255L));
        }
    return out;
}

/// Points on a grid (step px, at least margin px from the border, and never less than 8: the 15x15
/// neighbourhood and its central differences stay inside the image) whose 15x15 neighbourhood has a
/// structure tensor with smaller eigenvalue per pixel >= min_eig (central differences): trackable.
inline std::vector<Point2f> textured_points(const HostImage& img, int step, int margin, double min_eig = 30.0) {
    margin = std::max(margin, 8);
    std::vector<Point2f> pts;
    for (int y = margin; y < img.height() - margin; y += step)
        for (int x = margin; x < img.width() - margin; x += step) {
            double a = 0, b = 0, c = 0;
            for (int v = -7; v <= 7; ++v)
                for (int u = -7; u <= 7; ++u) {
                    const double gx = 0.5 * (img.at(x + u + 1, y + v) - img.at(x + u - 1, y + v));
                    const double gy = 0.5 * (img.at(x + u, y + v + 1) - img.at(x + u, y + v - 1));
                    a += gx * gx; b += gx * gy; c += gy * gy;
                }
            const double n = 225.0;
            const double lmin = 0.5 * (a + c - std::sqrt((a - c) * (a - c) + 4 * b * b)) / n;
            if (lmin >= min_eig) pts.push_back({static_cast<float>(x), static_cast<float>(y)});
        }
    return pts;
}

/// Median of endpoint errors; a feature that was not tracked counts as an infinite error.
inline double median_epe(const std::vector<LkResult>& res, const std::vector<Point2f>& pts, double dx, double dy) {
    std::vector<double> e;
    for (std::size_t i = 0; i < res.size(); ++i)
        e.push_back(res[i].status == TrackStatus::Tracked
                        ? std::hypot(res[i].x - (pts[i].x + dx), res[i].y - (pts[i].y + dy))
                        : std::numeric_limits<double>::infinity());
    if (e.empty()) return std::numeric_limits<double>::infinity();
    std::nth_element(e.begin(), e.begin() + e.size() / 2, e.end());
    return e[e.size() / 2];
}

/// The tail of a tracking run, not only its middle: median and 90th percentile of the endpoint errors (a lost
/// feature counts as an infinite error, so that losing a tenth of them shows), the share of features that are
/// *tracked* more than 1 px from the truth (claimed good, but wrong: what a VIO back end cannot tell from a good
/// track), the largest error of a tracked feature, and the share lost.
struct EpeStats {
    double median = 0, p90 = 0, over1 = 0, max_tracked = 0, lost = 0;
    std::size_t n = 0;
};

/// Quantile q of v (nearest rank: the value at index ceil(q n) - 1 of the sorted values); infinity when empty.
inline double quantile_of(std::vector<double> v, double q) {
    if (v.empty()) return std::numeric_limits<double>::infinity();
    std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    k = k == 0 ? 0 : k - 1;
    if (k >= v.size()) k = v.size() - 1;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
    return v[k];
}

/// Statistics of errors of tracked features (e) among n features of which `lost` were not tracked.
inline EpeStats epe_stats_of(const std::vector<double>& e, std::size_t lost) {
    EpeStats s;
    s.n = e.size() + lost;
    std::vector<double> all = e;
    all.insert(all.end(), lost, std::numeric_limits<double>::infinity());
    s.median = quantile_of(all, 0.5);
    s.p90 = quantile_of(all, 0.9);
    std::size_t over = 0;
    for (double v : e) {
        over += v > 1.0;
        s.max_tracked = std::max(s.max_tracked, v);
    }
    s.over1 = s.n ? static_cast<double>(over) / static_cast<double>(s.n) : 0.0;
    s.lost = s.n ? static_cast<double>(lost) / static_cast<double>(s.n) : 0.0;
    return s;
}

/// epe_stats_of for an LK run: result i against pts[i] + (dx, dy); tracked: status Tracked (NotConverged, which
/// FeatureTracker keeps, is not a claim of success here: tests/track/test_feature_tracker.cpp covers the tracker).
inline EpeStats epe_stats(const std::vector<LkResult>& res, const std::vector<Point2f>& pts, double dx, double dy) {
    std::vector<double> e;
    std::size_t lost = 0;
    for (std::size_t i = 0; i < res.size(); ++i) {
        if (res[i].status == TrackStatus::Tracked)
            e.push_back(std::hypot(res[i].x - (pts[i].x + dx), res[i].y - (pts[i].y + dy)));
        else
            ++lost;
    }
    return epe_stats_of(e, lost);
}

inline double median_of(std::vector<double> v) {
    if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

}  // namespace kestrel::test
