// libFuzzer target: detect_cpu, the CPU reference of the whole detector, on arbitrary images
// (1..256 per side, pitch padding, any pixels), arbitrary DetectorConfig fields (in and out of
// bounds), and arbitrary cell / pixel masks (sometimes of the wrong size). Either InvalidArgument
// naming the parameter, or a result equal to an independent brute-force selection written here from
// the rules in include/kestrel/detail/grid_rules.hpp and fast_rules.hpp (every NMS maximum of every
// level's score map, eligibility by border and masks, best per_cell per cell by (score, -level, -y,
// -x), global cap, cell order), plus direct invariants (bounds, capacity, masks respected).
#include <algorithm>
#include <tuple>
#include <vector>

#include "fuzz_input.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyramid.hpp"

using namespace kestrel;

namespace {

struct Cand {
    float score;
    int level, x, y;  // level coordinates
    int cell;
};

// Better first: score desc, then lower level, lower y, lower x.
bool better(const Cand& a, const Cand& b) {
    return std::make_tuple(-a.score, a.level, a.y, a.x) < std::make_tuple(-b.score, b.level, b.y, b.x);
}

bool nms_max(const ScoreMap& m, int x, int y, int n) {
    const float s = m.at(x, y);
    for (int dy = -n; dy <= n; ++dy)
        for (int dx = -n; dx <= n; ++dx) {
            if (!dx && !dy) continue;
            const int qx = x + dx, qy = y + dy;
            const float q = (qx >= 0 && qy >= 0 && qx < m.width && qy < m.height) ? m.at(qx, qy) : 0.0f;
            const bool q_later = dy > 0 || (dy == 0 && dx > 0);
            if (q > s || (q == s && !q_later)) return false;
        }
    return true;
}

std::vector<Keypoint> brute_detect(HostView image, const DetectorConfig& c, const std::uint8_t* skip,
                                   HostView pmask) {
    const auto pyr = build_pyramid_cpu(image, c.pyramid);
    const auto maps = fast_score_maps_cpu(pyr, c.fast);
    const int W = image.width, H = image.height;
    const int cols = (W + c.cell_width - 1) / c.cell_width, rows = (H + c.cell_height - 1) / c.cell_height;
    std::vector<std::vector<Cand>> cells(static_cast<std::size_t>(cols) * rows);
    for (int k = 0; k < c.pyramid.levels; ++k) {
        const float s = level_scale(c.pyramid, k);
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        for (int y = 0; y < m.height; ++y)
            for (int x = 0; x < m.width; ++x) {
                if (!(m.at(x, y) > 0.0f) || !nms_max(m, x, y, c.nms_radius)) continue;
                const int X0 = std::min(static_cast<int>(static_cast<float>(x) * s), W - 1);
                const int Y0 = std::min(static_cast<int>(static_cast<float>(y) * s), H - 1);
                if (X0 < c.border || X0 > W - 1 - c.border || Y0 < c.border || Y0 > H - 1 - c.border) continue;
                const int cell = (Y0 / c.cell_height) * cols + X0 / c.cell_width;
                if (skip && skip[cell]) continue;
                if (pmask.data && pmask.row(Y0)[X0] == 0) continue;
                cells[static_cast<std::size_t>(cell)].push_back({m.at(x, y), k, x, y, cell});
            }
    }
    std::vector<Cand> kept;
    for (auto& v : cells) {
        std::sort(v.begin(), v.end(), better);
        for (std::size_t i = 0; i < v.size() && i < static_cast<std::size_t>(c.per_cell); ++i) kept.push_back(v[i]);
    }
    if (c.max_features > 0 && kept.size() > static_cast<std::size_t>(c.max_features)) {
        std::vector<Cand> order = kept;
        std::sort(order.begin(), order.end(), better);
        const Cand last = order[static_cast<std::size_t>(c.max_features) - 1];
        std::vector<Cand> capped;
        for (const Cand& a : kept)
            if (!better(last, a)) capped.push_back(a);  // a is last or better than it
        kept = capped;
    }
    std::vector<Keypoint> out;
    for (const Cand& a : kept) {
        const float s = level_scale(c.pyramid, a.level);
        out.push_back({static_cast<float>(a.x) * s, static_cast<float>(a.y) * s, a.score, a.level});
    }
    return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    fuzz::Input in(data, size);
    DetectorConfig c;
    c.pyramid.levels = in.param(1, 4);
    c.pyramid.scale = in.flag() ? 2.0f : in.fparam(1.0f, 2.0f);
    c.fast.threshold = in.param(0, 254);
    c.fast.arc_min = in.param(1, 16);
    c.fast.arc_max = in.flag() ? 16 : in.param(1, 16);
    c.fast.score = static_cast<ScoreType>(in.param(0, 3));
    c.nms_radius = in.param(1, 4);
    c.cell_width = in.flag() ? 32 * in.range(0, 5) : in.param(32, 1024);
    c.cell_height = in.param(8, 64);
    c.per_cell = in.param(1, 8);
    c.max_features = in.flag() ? 0 : in.param(0, 32);
    c.border = in.flag() ? 0 : in.param(0, 64);

    const int w = in.range(1, 256), h = in.range(1, 256);
    const std::size_t pitch = static_cast<std::size_t>(w) + static_cast<std::size_t>(in.range(0, 8));
    const std::uint8_t mask_mode = in.byte();

    // Masks: cell grid right or off by one; pixel mask right size or not.
    std::vector<std::uint8_t> skip, pm;
    DetectionMasks masks;
    const bool cfg_ok = c.cell_width >= 32 && c.cell_height >= 8;  // only to size the buffers
    if ((mask_mode & 1) && cfg_ok) {
        const int cols = (w + c.cell_width - 1) / c.cell_width + ((mask_mode & 2) ? 1 : 0);
        const int rows = (h + c.cell_height - 1) / c.cell_height;
        skip.resize(static_cast<std::size_t>(cols) * rows);
        for (auto& b : skip) b = in.byte() & 1;
        masks.cell_skip = skip.data();
        masks.cell_grid = {cols, rows};
    }
    if (mask_mode & 4) {
        const int mw = (mask_mode & 8) ? w + 1 : w;
        pm.resize(static_cast<std::size_t>(mw) * h);
        const std::uint32_t bits = in.u32();  // 16x16 blocks on or off
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < mw; ++x)
                pm[static_cast<std::size_t>(y) * mw + x] = (bits >> ((x / 16 + (y / 16) * 5) % 32)) & 1u;
        masks.pixel_mask = {pm.data(), mw, h, static_cast<std::size_t>(mw)};
    }

    std::vector<std::uint8_t> buf(pitch * static_cast<std::size_t>(h));
    in.fill(buf.data(), w, h, pitch);
    const HostView view{buf.data(), w, h, pitch};

    std::vector<Keypoint> got;
    try {
        got = detect_cpu(view, c, masks);
    } catch (const InvalidArgument& e) {
        fuzz::check_message(e);
        return 0;
    }
    // Accepted: configuration valid, masks consistent.
    FUZZ_CHECK(c.cell_width % 32 == 0 && c.border >= 0 && c.per_cell >= 1);
    const int cols = (w + c.cell_width - 1) / c.cell_width, rows = (h + c.cell_height - 1) / c.cell_height;
    const long long slots = static_cast<long long>(cols) * rows * c.per_cell;
    const long long cap = c.max_features > 0 ? std::min<long long>(slots, c.max_features) : slots;
    FUZZ_CHECK(static_cast<long long>(got.size()) <= cap);
    int prev_cell = -1, in_cell = 0;
    for (const Keypoint& k : got) {
        FUZZ_CHECK(std::isfinite(k.x) && std::isfinite(k.y) && std::isfinite(k.score) && k.score > 0.0f);
        FUZZ_CHECK(k.level >= 0 && k.level < c.pyramid.levels);
        FUZZ_CHECK(k.x >= 0.0f && k.y >= 0.0f);
        const int X0 = std::min(static_cast<int>(k.x), w - 1), Y0 = std::min(static_cast<int>(k.y), h - 1);
        FUZZ_CHECK(X0 >= c.border && X0 <= w - 1 - c.border && Y0 >= c.border && Y0 <= h - 1 - c.border);
        const int cell = (Y0 / c.cell_height) * cols + X0 / c.cell_width;
        FUZZ_CHECK(cell >= prev_cell);
        in_cell = cell == prev_cell ? in_cell + 1 : 1;
        FUZZ_CHECK(in_cell <= c.per_cell);
        prev_cell = cell;
        if (masks.cell_skip) FUZZ_CHECK(masks.cell_skip[cell] == 0);
        if (masks.pixel_mask.data) FUZZ_CHECK(masks.pixel_mask.row(Y0)[X0] != 0);
    }
    const std::vector<Keypoint> want = brute_detect(view, c, masks.cell_skip, masks.pixel_mask);
    FUZZ_CHECK(got == want);
    // Deterministic, and the Backend::Cpu detector returns the same.
    FUZZ_CHECK(detect_cpu(view, c, masks) == got);
    return 0;
}
