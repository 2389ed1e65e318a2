// CPU reference of the FAST score stage: the definition kernels/detect/fast_score.cu matches bit for bit.
// All semantics come from include/kestrel/detail/fast_rules.hpp. Per row, a vectorizable pass runs the
// compass pre-test (compass_run_holds: a necessary condition of the segment test, never a rule) on all
// pixels at once; the full segment test and the score then run, as the rules state them, on the pixels
// that pass it only.
#include "fast_cpu.hpp"

#include <cstring>

#include "kestrel/detail/fast_rules.hpp"

namespace kestrel {
namespace detail {
namespace {

int sobel_x(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* b = im.row(y);
    const std::uint8_t* c = im.row(y + 1);
    return (a[x + 1] + 2 * b[x + 1] + c[x + 1]) - (a[x - 1] + 2 * b[x - 1] + c[x - 1]);
}

int sobel_y(const HostView& im, int x, int y) {
    const std::uint8_t* a = im.row(y - 1);
    const std::uint8_t* c = im.row(y + 1);
    return (c[x - 1] + 2 * c[x] + c[x + 1]) - (a[x - 1] + 2 * a[x] + a[x + 1]);
}

float harris_cpu(const HostView& im, int x, int y) {
    std::int64_t sxx = 0, syy = 0, sxy = 0;
    for (int dy = -3; dy <= 3; ++dy)
        for (int dx = -3; dx <= 3; ++dx) {
            const std::int64_t gx = sobel_x(im, x + dx, y + dy), gy = sobel_y(im, x + dx, y + dy);
            sxx += gx * gx;
            syy += gy * gy;
            sxy += gx * gy;
        }
    return harris_from_sums(sxx, syy, sxy);
}

/// flag[x] = 1 where the compass points of (x, y) may hold a bright or dark arc of at least 4 * Q pixels
/// (Q = arc_min / 4, the case of compass_run_holds), for x in [x0, x1). Bright: p > c + t, i.e. p > min(c + t,
/// 255) (no byte exceeds 255); dark: p < c - t, i.e. p < max(c - t, 0). Bytes only, so it vectorizes.
template <int Q>
void compass_row(const std::uint8_t* __restrict up, const std::uint8_t* __restrict mid, const std::uint8_t* __restrict dn,
                 std::uint8_t t, std::uint8_t* __restrict flag, int x0, int x1) {
    for (int x = x0; x < x1; ++x) {
        const std::uint8_t c = mid[x];
        std::uint8_t hi = static_cast<std::uint8_t>(c + t);
        hi = hi < c ? 255 : hi;  // saturating c + t
        std::uint8_t lo = static_cast<std::uint8_t>(c - t);
        lo = lo > c ? 0 : lo;    // saturating c - t
        const std::uint8_t n = up[x], e = mid[x + 3], s = dn[x], w = mid[x - 3];
        const std::uint8_t b = compass_run_holds<std::uint8_t>(n > hi, e > hi, s > hi, w > hi, 1, 4 * Q);
        const std::uint8_t d = compass_run_holds<std::uint8_t>(n < lo, e < lo, s < lo, w < lo, 1, 4 * Q);
        flag[x] = static_cast<std::uint8_t>(b | d);
    }
}

void compass(int arc_min, const std::uint8_t* up, const std::uint8_t* mid, const std::uint8_t* dn, std::uint8_t t,
             std::uint8_t* flag, int x0, int x1) {
    switch (arc_min >> 2) {
        case 0: std::memset(flag + x0, 1, static_cast<std::size_t>(x1 - x0)); break;
        case 1: compass_row<1>(up, mid, dn, t, flag, x0, x1); break;
        case 2: compass_row<2>(up, mid, dn, t, flag, x0, x1); break;
        case 3: compass_row<3>(up, mid, dn, t, flag, x0, x1); break;
        default: compass_row<4>(up, mid, dn, t, flag, x0, x1); break;
    }
}

}  // namespace

void fast_score_rows(HostView image, const FastConfig& cfg, const std::uint32_t* lut, float* scores, int y0, int y1,
                     FastRowScratch& scratch, std::vector<std::uint32_t>* corners) {
    const int b = score_border(cfg.score), t = cfg.threshold, w = image.width;
    if (y0 < b) y0 = b;
    if (y1 > image.height - b) y1 = image.height - b;
    if (w - 2 * b <= 0) return;
    scratch.flag.resize(static_cast<std::size_t>(w) + 8);
    std::uint8_t* flag = scratch.flag.data();
    std::memset(flag + (w - b), 0, static_cast<std::size_t>(b) + 8);  // the word scan may read past w - b
    const bool harris = cfg.score == ScoreType::Harris;
    for (int y = y0; y < y1; ++y) {
        const std::uint8_t* mid = image.row(y);
        compass(cfg.arc_min, image.row(y - 3), mid, image.row(y + 3), static_cast<std::uint8_t>(t), flag, b, w - b);
        float* out = scores + static_cast<std::size_t>(y) * w;
        for (int x = b; x < w - b;) {
            std::uint64_t word;
            std::memcpy(&word, flag + x, sizeof word);
            if (word == 0) {
                x += 8;
                continue;
            }
            const int xe = x + 8 < w - b ? x + 8 : w - b;
            for (; x < xe; ++x) {
                if (!flag[x]) continue;
                const int c = mid[x];
                int p[kCircleSize];
                for (int i = 0; i < kCircleSize; ++i) p[i] = image.row(y + circle_dy(i))[x + circle_dx(i)];
                if (!is_corner(lut, p, c, t, cfg.arc_min)) continue;
                const float s = harris ? harris_cpu(image, x, y)
                                       : static_cast<float>(circle_score(cfg.score, lut, p, c, t, cfg.arc_min,
                                                                         cfg.arc_max == 16));
                out[x] = s;
                if (s > 0.0f && corners) corners->push_back(static_cast<std::uint32_t>(y) << 16 | static_cast<std::uint32_t>(x));
            }
        }
    }
}

}  // namespace detail

ScoreMap fast_score_map_cpu(HostView image, const FastConfig& cfg) {
    validate_view("fast_score_map_cpu", "image", image);
    validate(cfg, "fast_score_map_cpu");
    const auto lut = corner_lut(cfg.arc_min, cfg.arc_max);
    ScoreMap m;
    m.width = image.width;
    m.height = image.height;
    m.scores.assign(static_cast<std::size_t>(m.width) * m.height, 0.0f);
    detail::FastRowScratch scratch;
    detail::fast_score_rows(image, cfg, lut.data(), m.scores.data(), 0, image.height, scratch, nullptr);
    return m;
}

std::vector<ScoreMap> fast_score_maps_cpu(const std::vector<HostImage>& pyramid, const FastConfig& cfg) {
    detail::check(!pyramid.empty(), "fast_score_maps_cpu", "pyramid", "must hold at least one level");
    std::vector<ScoreMap> maps;
    maps.reserve(pyramid.size());
    for (const HostImage& level : pyramid) maps.push_back(fast_score_map_cpu(level.view(), cfg));
    return maps;
}

}  // namespace kestrel
