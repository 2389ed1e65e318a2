// libFuzzer target: the CPU reference pyramid (build_pyramid_cpu) and FAST score maps
// (fast_score_map_cpu) on arbitrary images (1..256 per side, any pitch padding, any pixels) and
// arbitrary parameters. Checked against independent oracles written here:
//   - pyramid: levels and sizes equal pyramid_sizes(); for scale 2 every pixel is the 2x2 average
//     rounded half up, (a + b + c + d + 2) >> 2; for any scale a pixel lies within [min, max] of the
//     level above.
//   - FAST: a brute-force segment test (own circle table, own circular-run count): a pixel with a
//     non-zero score must be a corner; with SadCircle / SadArc every corner has a score > 0, with
//     MaxThreshold its score is >= t; scores are finite, >= 0 and 0 within score_border() of an edge.
#include <algorithm>
#include <vector>

#include "fuzz_input.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/pyramid.hpp"

using namespace kestrel;

namespace {

constexpr int kCircle[16][2] = {{0, -3}, {1, -3}, {2, -2}, {3, -1}, {3, 0},  {3, 1},  {2, 2},  {1, 3},
                                {0, 3},  {-1, 3}, {-2, 2}, {-3, 1}, {-3, 0}, {-3, -1}, {-2, -2}, {-1, -3}};

// Longest run of consecutive true flags around the circle, by trying every start.
int circular_run(const bool* f) {
    int best = 0;
    for (int s = 0; s < 16; ++s) {
        int n = 0;
        while (n < 16 && f[(s + n) % 16]) ++n;
        best = std::max(best, n);
    }
    return best;
}

bool brute_corner(const HostImage& im, int x, int y, const FastConfig& c) {
    const int centre = im.at(x, y);
    bool bright[16], dark[16];
    for (int i = 0; i < 16; ++i) {
        const int p = im.at(x + kCircle[i][0], y + kCircle[i][1]);
        bright[i] = p > centre + c.threshold;
        dark[i] = p < centre - c.threshold;
    }
    const int rb = circular_run(bright), rd = circular_run(dark);
    return (rb >= c.arc_min && rb <= c.arc_max) || (rd >= c.arc_min && rd <= c.arc_max);
}

void check_pyramid(const std::vector<HostImage>& pyr, const PyramidConfig& pc) {
    const auto sizes = pyramid_sizes(pyr[0].width(), pyr[0].height(), pc);
    FUZZ_CHECK(pyr.size() == sizes.size());
    for (std::size_t k = 0; k < pyr.size(); ++k)
        FUZZ_CHECK(pyr[k].width() == sizes[k].width && pyr[k].height() == sizes[k].height);
    for (std::size_t k = 1; k < pyr.size(); ++k) {
        const HostImage &a = pyr[k - 1], &b = pyr[k];
        const auto mm = std::minmax_element(a.data(), a.data() + static_cast<std::size_t>(a.width()) * a.height());
        for (int y = 0; y < b.height(); ++y)
            for (int x = 0; x < b.width(); ++x) {
                const int v = b.at(x, y);
                FUZZ_CHECK(v >= *mm.first && v <= *mm.second);
                if (pc.scale == 2.0f) {
                    const int s = a.at(2 * x, 2 * y) + a.at(2 * x + 1, 2 * y) + a.at(2 * x, 2 * y + 1) +
                                  a.at(2 * x + 1, 2 * y + 1);
                    FUZZ_CHECK(v == (s + 2) >> 2);
                }
            }
    }
}

void check_scores(const HostImage& im, const ScoreMap& m, const FastConfig& c) {
    FUZZ_CHECK(m.width == im.width() && m.height == im.height());
    FUZZ_CHECK(m.scores.size() == static_cast<std::size_t>(m.width) * m.height);
    const int b = score_border(c.score);
    for (int y = 0; y < m.height; ++y)
        for (int x = 0; x < m.width; ++x) {
            const float s = m.at(x, y);
            FUZZ_CHECK(std::isfinite(s) && s >= 0.0f);
            const bool inside = x >= b && y >= b && x < m.width - b && y < m.height - b;
            if (!inside) {
                FUZZ_CHECK(s == 0.0f);
                continue;
            }
            const bool corner = brute_corner(im, x, y, c);
            if (s > 0.0f) FUZZ_CHECK(corner);
            if (corner && (c.score == ScoreType::SadCircle || c.score == ScoreType::SadArc)) FUZZ_CHECK(s > 0.0f);
            if (corner && c.score == ScoreType::MaxThreshold) FUZZ_CHECK(s >= static_cast<float>(c.threshold));
        }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    PyramidConfig pc;
    pc.levels = in.param(1, kMaxLevels);
    pc.scale = in.flag() ? 2.0f : in.fparam(1.0f, 2.0f);
    FastConfig fc;
    fc.threshold = in.param(0, 254);
    fc.arc_min = in.param(1, 16);
    fc.arc_max = in.param(fc.arc_min > 0 && fc.arc_min <= 16 ? fc.arc_min : 1, 16);
    fc.score = static_cast<ScoreType>(in.param(0, 3));
    const int w = in.range(1, 256), h = in.range(1, 256);
    const std::size_t pitch = static_cast<std::size_t>(w) + static_cast<std::size_t>(in.range(0, 8));
    std::vector<std::uint8_t> buf(pitch * static_cast<std::size_t>(h));
    in.fill(buf.data(), w, h, pitch);
    const HostView view{buf.data(), w, h, pitch};

    std::vector<HostImage> pyr;
    try {
        pyr = build_pyramid_cpu(view, pc);
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return 0;
    }
    FUZZ_CHECK(!pyr.empty());
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) FUZZ_CHECK(pyr[0].at(x, y) == view.row(y)[x]);
    check_pyramid(pyr, pc);

    std::vector<ScoreMap> maps;
    try {
        maps = fast_score_maps_cpu(pyr, fc);
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return 0;
    }
    FUZZ_CHECK(maps.size() == pyr.size());
    for (std::size_t k = 0; k < maps.size(); ++k) check_scores(pyr[k], maps[k], fc);
    // The single-image entry point on the caller's (pitched) view gives the same level-0 map.
    const ScoreMap m0 = fast_score_map_cpu(view, fc);
    FUZZ_CHECK(m0.scores == maps[0].scores);
    return 0;
}
