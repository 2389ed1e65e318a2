// Test helpers of the detector suites: an independent oracle of the selection (sorting with an explicit
// comparator, no packed keys, no top-K registers), synthetic score maps and list comparison.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"

namespace kestrel::test {

inline std::string describe(const DetectorConfig& c) {
    std::ostringstream os;
    os << "levels=" << c.pyramid.levels << " scale=" << c.pyramid.scale << " t=" << c.fast.threshold << " arc=["
       << c.fast.arc_min << "," << c.fast.arc_max << "] score=" << to_string(c.fast.score) << " n=" << c.nms_radius
       << " cell=" << c.cell_width << "x" << c.cell_height << " K=" << c.per_cell << " cap=" << c.max_features
       << " border=" << c.border << " graph=" << c.cuda_graph;
    return os.str();
}

inline std::string describe(const Keypoint& k) {
    std::ostringstream os;
    os << "(" << k.x << ", " << k.y << ") level " << k.level << " score " << k.score;
    return os.str();
}

inline void expect_same_keypoints(const std::vector<Keypoint>& got, const std::vector<Keypoint>& want,
                                  const std::string& what) {
    EXPECT_EQ(got.size(), want.size()) << what;
    int shown = 0;
    for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i)
        if (got[i] != want[i] && ++shown <= 5)
            ADD_FAILURE() << what << ": keypoint " << i << " is " << describe(got[i]) << ", expected "
                          << describe(want[i]);
}

/// Zero score maps of the pyramid geometry of a width x height image.
inline std::vector<ScoreMap> blank_maps(int width, int height, const DetectorConfig& cfg) {
    std::vector<ScoreMap> maps;
    for (const Size2& s : pyramid_sizes(width, height, cfg.pyramid)) {
        ScoreMap m;
        m.width = s.width;
        m.height = s.height;
        m.scores.assign(static_cast<std::size_t>(s.width) * s.height, 0.0f);
        maps.push_back(std::move(m));
    }
    return maps;
}

/// Random sparse score maps with few distinct scores (1..6): plateaus and ties everywhere, every level
/// populated; `density` of the pixels are positive. Deterministic for a seed (xorshift).
inline std::vector<ScoreMap> random_maps(int w, int h, const DetectorConfig& cfg, std::uint32_t seed, float density) {
    auto maps = blank_maps(w, h, cfg);
    std::uint32_t s = seed * 747796405u + 2891336453u;
    for (auto& m : maps)
        for (float& v : m.scores) {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            if ((s & 0xFFFF) < density * 65536.0f) v = static_cast<float>(1 + (s >> 16) % 6);
        }
    return maps;
}

inline void set_score(ScoreMap& m, int x, int y, float s) { m.scores[static_cast<std::size_t>(y) * m.width + x] = s; }

/// Independent oracle of the selection rules (docs/detector.md), written without the library's helpers.
inline std::vector<Keypoint> oracle_select(const std::vector<ScoreMap>& maps, const DetectorConfig& cfg,
                                           const DetectionMasks& masks = {}) {
    struct Cand {
        float score;
        int level, x, y;
    };
    const auto better = [](const Cand& a, const Cand& b) {
        if (a.score != b.score) return a.score > b.score;
        if (a.level != b.level) return a.level < b.level;
        if (a.y != b.y) return a.y < b.y;
        return a.x < b.x;
    };
    const int W = maps[0].width, H = maps[0].height, n = cfg.nms_radius;
    const int cols = (W + cfg.cell_width - 1) / cfg.cell_width, rows = (H + cfg.cell_height - 1) / cfg.cell_height;
    std::vector<std::vector<Cand>> cells(static_cast<std::size_t>(cols) * rows);
    for (int k = 0; k < static_cast<int>(maps.size()); ++k) {
        const ScoreMap& m = maps[static_cast<std::size_t>(k)];
        const float s = level_scale(cfg.pyramid, k);
        for (int y = 0; y < m.height; ++y)
            for (int x = 0; x < m.width; ++x) {
                const float sp = m.at(x, y);
                if (sp <= 0.0f) continue;
                const int X0 = std::min(static_cast<int>(static_cast<float>(x) * s), W - 1);
                const int Y0 = std::min(static_cast<int>(static_cast<float>(y) * s), H - 1);
                if (X0 < cfg.border || X0 > W - 1 - cfg.border || Y0 < cfg.border || Y0 > H - 1 - cfg.border) continue;
                const int cell = (Y0 / cfg.cell_height) * cols + X0 / cfg.cell_width;
                if (masks.cell_skip && masks.cell_skip[cell]) continue;
                if (masks.pixel_mask.data && masks.pixel_mask.row(Y0)[X0] == 0) continue;
                bool suppressed = false;
                for (int dy = -n; dy <= n && !suppressed; ++dy)
                    for (int dx = -n; dx <= n && !suppressed; ++dx) {
                        const int qx = x + dx, qy = y + dy;
                        if ((dx == 0 && dy == 0) || qx < 0 || qy < 0 || qx >= m.width || qy >= m.height) continue;
                        const float sq = m.at(qx, qy);
                        const bool q_after = dy > 0 || (dy == 0 && dx > 0);
                        suppressed = q_after ? sq > sp : sq >= sp;
                    }
                if (!suppressed) cells[static_cast<std::size_t>(cell)].push_back({sp, k, x, y});
            }
    }
    std::vector<Cand> all;
    for (auto& c : cells) {
        std::sort(c.begin(), c.end(), better);
        if (static_cast<int>(c.size()) > cfg.per_cell) c.resize(static_cast<std::size_t>(cfg.per_cell));
        all.insert(all.end(), c.begin(), c.end());
    }
    const bool capped = cfg.max_features > 0 && static_cast<int>(all.size()) > cfg.max_features;
    Cand last{};
    if (capped) {
        std::sort(all.begin(), all.end(), better);
        last = all[static_cast<std::size_t>(cfg.max_features) - 1];
    }
    std::vector<Keypoint> out;
    for (const auto& c : cells)
        for (const Cand& p : c) {
            if (capped && better(last, p)) continue;
            const float s = level_scale(cfg.pyramid, p.level);
            out.push_back({static_cast<float>(p.x) * s, static_cast<float>(p.y) * s, p.score, p.level});
        }
    return out;
}

}  // namespace kestrel::test
