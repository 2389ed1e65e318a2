// The NMS test on a neighbourhood reader (detail::nms_is_maximum_radius with a run-time radius, as the
// fused detection kernel kernels/detect/cell_detect.cu uses it on its shared score block; and
// nms_is_maximum_fixed, the grid-NMS kernel's n = 1 path in kernels/detect/grid_nms.cu) must agree with
// nms_is_maximum for every pixel, radius and cell, whether its neighbours come from the map itself
// (MapNeighbours, as in grid_nms.cu) or from a tile staged as cell_detect.cu stages its scores (cell
// rectangle plus an n-pixel halo, 0 outside the level). On the GPU: cell
// geometries from tiny to 1024x1024, up to 8 levels and K = 8, with and without a cap, checked against
// the CPU reference and the oracle.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "detector_test_util.hpp"
#include "kernels/detect/cell_index.hpp"
#include "kestrel/detail/grid_rules.hpp"
#include "kestrel/grid_select.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

std::vector<float> tied_scores(int w, int h, std::uint32_t seed, float density) {
    std::vector<float> v(static_cast<std::size_t>(w) * h, 0.0f);
    std::uint32_t s = seed * 2654435761u + 12345u;
    for (float& x : v) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        if ((s & 0xFFFF) < density * 65536.0f) x = static_cast<float>(1 + (s >> 16) % 4);
    }
    return v;
}

template <int N>
bool tile_maximum(const std::vector<float>& tile, int tw, int tx, int ty, float sp) {
    const auto q = [&](int dx, int dy) { return tile[static_cast<std::size_t>(ty + dy) * tw + tx + dx]; };
    return detail::nms_is_maximum_fixed<N>(q, sp);
}

bool tile_maximum(int n, const std::vector<float>& tile, int tw, int tx, int ty, float sp) {
    switch (n) {
        case 1: return tile_maximum<1>(tile, tw, tx, ty, sp);
        case 2: return tile_maximum<2>(tile, tw, tx, ty, sp);
        case 3: return tile_maximum<3>(tile, tw, tx, ty, sp);
        default: return tile_maximum<4>(tile, tw, tx, ty, sp);
    }
}

bool map_maximum(int n, const std::vector<float>& map, int w, int h, int x, int y, float sp) {
    const detail::MapNeighbours q{map.data(), sizeof(float) * static_cast<std::size_t>(w), w, h, x, y};
    switch (n) {
        case 1: return detail::nms_is_maximum_fixed<1>(q, sp);
        case 2: return detail::nms_is_maximum_fixed<2>(q, sp);
        case 3: return detail::nms_is_maximum_fixed<3>(q, sp);
        default: return detail::nms_is_maximum_fixed<4>(q, sp);
    }
}

TEST(GridTile, TileNmsMatchesNmsIsMaximumOnEveryCell) {
    const int W = 75, H = 53;
    long long maxima = 0, tested = 0;
    for (int n = 1; n <= 4; ++n)
        for (const float density : {0.2f, 0.6f, 1.0f}) {
            const auto map = tied_scores(W, H, static_cast<std::uint32_t>(n * 7 + density * 10), density);
            const std::size_t pitch = sizeof(float) * W;
            for (const int cw : {8, 13, 32})
                for (const int ch : {5, 11}) {
                    for (int x0 = 0; x0 < W; x0 += cw)
                        for (int y0 = 0; y0 < H; y0 += ch) {
                            const int w = x0 + cw <= W ? cw : W - x0, h = y0 + ch <= H ? ch : H - y0;
                            // stage as the kernel does: (w + 2n) x (h + 2n), origin (x0 - n, y0 - n)
                            const int tw = w + 2 * n, th = h + 2 * n;
                            std::vector<float> tile(static_cast<std::size_t>(tw) * th, 0.0f);
                            for (int ty = 0; ty < th; ++ty)
                                for (int tx = 0; tx < tw; ++tx) {
                                    const int x = x0 - n + tx, y = y0 - n + ty;
                                    if (x >= 0 && y >= 0 && x < W && y < H)
                                        tile[static_cast<std::size_t>(ty) * tw + tx] = map[y * W + x];
                                }
                            for (int y = y0; y < y0 + h; ++y)
                                for (int x = x0; x < x0 + w; ++x) {
                                    const float sp = map[y * W + x];
                                    if (!(sp > 0.0f)) continue;
                                    const bool want = detail::nms_is_maximum(map.data(), pitch, W, H, x, y, n, sp);
                                    const bool got = tile_maximum(n, tile, tw, x - x0 + n, y - y0 + n, sp);
                                    ASSERT_EQ(got, want) << "n " << n << " cell " << cw << "x" << ch << " at (" << x
                                                         << ", " << y << ")";
                                    ASSERT_EQ(map_maximum(n, map, W, H, x, y, sp), want)
                                        << "map neighbours, n " << n << " at (" << x << ", " << y << ")";
                                    const std::size_t c = static_cast<std::size_t>(y - y0 + n) * tw + (x - x0 + n);
                                    const auto runtime_q = [&](int dx, int dy) {
                                        return tile[c + static_cast<std::size_t>(static_cast<long>(dy) * tw + dx)];
                                    };
                                    ASSERT_EQ(detail::nms_is_maximum_radius(runtime_q, n, sp), want)
                                        << "run-time radius, n " << n << " at (" << x << ", " << y << ")";
                                    maxima += want ? 1 : 0;
                                    ++tested;
                                }
                        }
                }
        }
    EXPECT_GT(tested, 10000);
    EXPECT_GT(maxima, 1000);  // both outcomes exercised
    EXPECT_LT(maxima, tested);
}

// The kernels' division-free index arithmetic: kernels::div_by_magic(v, div_magic(d)) == v / d for every
// level-0 pixel v < 2^16 and every cell size d the detector accepts (32..1024) and beyond (every d up to
// 2048, a sample up to 2^15 - 1), and for block indices up to 2^22 by tiles per row d <= 256. A magic
// number one smaller is wrong somewhere: the check can fail.
TEST(GridTile, CellIndexWithoutDivisionIsExact) {
    std::vector<int> ds;
    for (int d = 1; d <= 2048; ++d) ds.push_back(d);
    for (int d = 2049; d < 32768; d += 997) ds.push_back(d);
    ds.push_back(32767);
    for (const int d : ds) {
        const std::uint32_t m = kernels::div_magic(d);
        int bad = -1;
        for (int v = 0; v < 65536 && bad < 0; ++v)
            if (kernels::div_by_magic(v, m) != v / d) bad = v;
        ASSERT_EQ(bad, -1) << "d = " << d;
        for (int v = 65536; d <= 256 && v < (1 << 22) && bad < 0; v += 1 + (v & 7))  // block indices, tiles per row
            if (kernels::div_by_magic(v, m) != v / d) bad = v;
        ASSERT_EQ(bad, -1) << "d = " << d;
        if (d > 1 && (d & (d - 1)) != 0) {  // not a power of two: the next smaller magic fails somewhere
            bool off = false;
            for (int v = 0; v < 65536 && !off; ++v) off = kernels::div_by_magic(v, m - 1u) != v / d;
            EXPECT_TRUE(off) << "d = " << d;
        }
    }
}

TEST(GridTile, ZeroAndNanNeighboursNeverSuppress) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> tile = {0.0f, nan, 0.0f, nan, 1.0f, 0.0f, 0.0f, nan, 0.0f};
    EXPECT_TRUE(tile_maximum<1>(tile, 3, 1, 1, 1.0f));
    tile[0] = 1.0f;  // equal score before p suppresses it
    EXPECT_FALSE(tile_maximum<1>(tile, 3, 1, 1, 1.0f));
    tile[0] = 0.0f;
    tile[8] = 1.0f;  // equal score after p does not
    EXPECT_TRUE(tile_maximum<1>(tile, 3, 1, 1, 1.0f));
    tile[5] = 1.5f;  // a larger one does
    EXPECT_FALSE(tile_maximum<1>(tile, 3, 1, 1, 1.0f));
}


// Cell geometries chosen around the tile buffers of an earlier, staging version of the kernel; they still
// cover what the kernel does now: rectangles of several scan batches (96x64, 1024x1024, 1024x8), cells
// shorter than one thread row on their level (32x8), tall cells (32x1024), 8 levels, K up to 8, caps,
// n = 1 (the unrolled path) and n = 2..4 (the reference loop).
TEST(GridTile, GpuMatchesTheReferenceWhateverFitsTheTileBuffer) {
    KESTREL_REQUIRE_GPU();
    struct Case {
        int cw, ch, n, levels;
        float factor;
        int K, cap;
    };
    const Case cases[] = {{96, 64, 4, 2, 2.0f, 2, 0},     {128, 32, 4, 3, 1.2f, 3, 0}, {1024, 1024, 2, 3, 2.0f, 8, 0},
                          {64, 64, 4, 3, 1.5f, 1, 0},     {32, 8, 1, 4, 2.0f, 8, 500}, {1024, 8, 3, 2, 1.3f, 4, 50},
                          {32, 1024, 1, 2, 2.0f, 1, 0},   {32, 32, 2, 8, 1.1f, 1, 0},
                          {64, 64, 2, 3, 2.0f, 3, 0}};
    int trial = 0;
    for (const Case& c : cases) {
        DetectorConfig cfg;
        cfg.pyramid = {c.levels, c.factor};
        cfg.cell_width = c.cw;
        cfg.cell_height = c.ch;
        cfg.nms_radius = c.n;
        cfg.per_cell = c.K;
        cfg.max_features = c.cap;
        cfg.border = trial % 3;
        for (const int w : {301, 1100}) {
            const int h = w == 301 ? 219 : 1070;
            const auto maps = test::random_maps(w, h, cfg, static_cast<std::uint32_t>(++trial), 0.3f);
            const auto want = detail::grid_select_cpu(maps, cfg);
            test::expect_same_keypoints(want, test::oracle_select(maps, cfg, {}), "cpu vs oracle, " + test::describe(cfg));
            test::expect_same_keypoints(detail::grid_select_cuda(maps, cfg), want,
                                        "gpu vs cpu, " + test::describe(cfg) + " size " + std::to_string(w));
        }
    }
}

}  // namespace
}  // namespace kestrel
