// CPU reference of the FAST score stage: the definition kernels/detect/fast_score.cu matches bit for bit.
// All semantics come from include/kestrel/detail/fast_rules.hpp.
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"

namespace kestrel {
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
    return detail::harris_from_sums(sxx, syy, sxy);
}

}  // namespace

ScoreMap fast_score_map_cpu(HostView image, const FastConfig& cfg) {
    validate_view("fast_score_map_cpu", "image", image);
    validate(cfg, "fast_score_map_cpu");
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
            for (int i = 0; i < detail::kCircleSize; ++i) p[i] = image.row(y + detail::circle_dy(i))[x + detail::circle_dx(i)];
            if (!detail::is_corner(lut.data(), p, c, t, cfg.arc_min)) continue;
            float s = 0.0f;
            if (cfg.score == ScoreType::Harris)
                s = harris_cpu(image, x, y);
            else
                s = static_cast<float>(detail::circle_score(cfg.score, lut.data(), p, c, t, cfg.arc_min, cfg.arc_max == 16));
            m.scores[static_cast<std::size_t>(y) * m.width + x] = s;
        }
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
