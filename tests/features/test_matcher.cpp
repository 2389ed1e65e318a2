// The Hamming matcher's CPU reference against an independent brute force (bitset distances, sorted
// (distance, index) pairs) over generated descriptors with planted matches, ties, radius and band limits,
// the cross-check; HammingMatcher on the CPU backend. Bad input: the bad-input table (tests/core/test_bad_input.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <random>

#include "kestrel/error.hpp"
#include "kestrel/matcher.hpp"

namespace kestrel {
namespace {

int slow_distance(const OrbDescriptor& a, const OrbDescriptor& b) {
    int d = 0;
    for (int i = 0; i < kOrbDescriptorBytes; ++i) d += static_cast<int>(std::bitset<8>(a.bytes[i] ^ b.bytes[i]).count());
    return d;
}

OrbDescriptor random_descriptor(std::mt19937& rng) {
    OrbDescriptor d;
    for (auto& b : d.bytes) b = static_cast<std::uint8_t>(rng() & 0xFF);
    return d;
}

OrbDescriptor flip_bits(OrbDescriptor d, int n, std::mt19937& rng) {
    std::vector<int> bits(kOrbDescriptorBits);
    for (int i = 0; i < kOrbDescriptorBits; ++i) bits[static_cast<std::size_t>(i)] = i;
    std::shuffle(bits.begin(), bits.end(), rng);
    for (int i = 0; i < n; ++i) d.bytes[bits[static_cast<std::size_t>(i)] / 8] ^= static_cast<std::uint8_t>(1u << (bits[static_cast<std::size_t>(i)] % 8));
    return d;
}

// The definition, written out plainly: candidates by the position predicates, sorted by (distance, index).
std::vector<Match> slow_match(const std::vector<OrbDescriptor>& q, const std::vector<OrbDescriptor>& t,
                              const MatcherConfig& cfg, const std::vector<Point2f>& qp,
                              const std::vector<Point2f>& tp) {
    const auto cand = [&](std::size_t i, std::size_t j) {
        if (cfg.radius > 0) {
            const float dx = tp[j].x - qp[i].x, dy = tp[j].y - qp[i].y;
            if (dx * dx + dy * dy > cfg.radius * cfg.radius) return false;
        }
        if (cfg.epipolar_band >= 0 && std::fabs(tp[j].y - qp[i].y) > cfg.epipolar_band) return false;
        return true;
    };
    const auto best_of = [&](bool query_side, std::size_t i) {
        std::vector<std::pair<int, int>> c;
        const std::size_t n = query_side ? t.size() : q.size();
        for (std::size_t j = 0; j < n; ++j) {
            const bool ok = query_side ? cand(i, j) : cand(j, i);
            if (ok) c.push_back({slow_distance(query_side ? q[i] : t[i], query_side ? t[j] : q[j]), static_cast<int>(j)});
        }
        std::sort(c.begin(), c.end());
        return c;
    };
    std::vector<Match> out(q.size());
    for (std::size_t i = 0; i < q.size(); ++i) {
        const auto c = best_of(true, i);
        Match& m = out[i];
        if (c.empty()) continue;
        m.distance = c[0].first;
        m.second = c.size() > 1 ? c[1].first : 257;
        bool ok = m.distance <= cfg.max_distance;
        if (cfg.ratio < 1.0f) ok = ok && static_cast<float>(m.distance) < cfg.ratio * static_cast<float>(m.second);
        if (cfg.cross_check) ok = ok && best_of(false, static_cast<std::size_t>(c[0].second))[0].second == static_cast<int>(i);
        m.train = ok ? c[0].second : -1;
    }
    return out;
}

struct Case {
    std::vector<OrbDescriptor> q, t;
    std::vector<Point2f> qp, tp;
    std::vector<int> truth;  // planted train index of each query, -1 for none
};

// Train: n_train random descriptors at random positions; queries: planted copies with a few bits flipped
// (positions moved by up to 3 px), some exact duplicates among the train (ties), and unrelated queries.
Case make_case(int n_query, int n_train, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> pos(0.0f, 640.0f), jitter(-3.0f, 3.0f);
    Case c;
    for (int j = 0; j < n_train; ++j) {
        c.t.push_back(random_descriptor(rng));
        c.tp.push_back({pos(rng), pos(rng) * 0.75f});
    }
    // Exact duplicate train entries: a query matching one of them ties, and the lower index must win.
    for (int j = 0; j + 1 < n_train && j < 6; j += 2) c.t[static_cast<std::size_t>(j + 1)] = c.t[static_cast<std::size_t>(j)];
    for (int i = 0; i < n_query; ++i) {
        if (i % 5 == 4 || n_train == 0) {
            c.q.push_back(random_descriptor(rng));
            c.qp.push_back({pos(rng), pos(rng) * 0.75f});
            c.truth.push_back(-1);
        } else {
            const int j = static_cast<int>(rng() % static_cast<std::uint32_t>(n_train));
            c.q.push_back(flip_bits(c.t[static_cast<std::size_t>(j)], static_cast<int>(rng() % 40), rng));
            c.qp.push_back({c.tp[static_cast<std::size_t>(j)].x + jitter(rng), c.tp[static_cast<std::size_t>(j)].y + jitter(rng)});
            c.truth.push_back(j);
        }
    }
    return c;
}

std::vector<MatcherConfig> config_grid() {
    std::vector<MatcherConfig> g;
    for (const float ratio : {1.0f, 0.8f, 0.6f})
        for (const bool cross : {false, true})
            for (const int lim : {0, 1, 2, 3}) {
                MatcherConfig c;
                c.ratio = ratio;
                c.cross_check = cross;
                if (lim == 1) c.radius = 40.0f;
                if (lim == 2) c.epipolar_band = 2.5f;
                if (lim == 3) { c.radius = 8.0f; c.epipolar_band = 0.0f; }
                c.max_distance = lim == 0 ? 64 : kOrbDescriptorBits;
                g.push_back(c);
            }
    return g;
}

TEST(MatcherCpu, EqualsTheBruteForceDefinitionOverAGrid) {
    int checked = 0;
    for (const auto& [nq, nt] : {std::pair{0, 5}, {5, 0}, {1, 1}, {33, 17}, {200, 301}}) {
        const Case c = make_case(nq, nt, static_cast<std::uint32_t>(nq * 1000 + nt));
        for (const MatcherConfig& cfg : config_grid()) {
            const auto got = match_cpu(c.q.data(), nq, c.t.data(), nt, cfg, c.qp.data(), c.tp.data());
            const auto want = slow_match(c.q, c.t, cfg, c.qp, c.tp);
            ASSERT_EQ(got.size(), want.size());
            for (std::size_t i = 0; i < got.size(); ++i) {
                EXPECT_EQ(got[i].train, want[i].train) << nq << "x" << nt << " query " << i;
                EXPECT_EQ(got[i].distance, want[i].distance);
                EXPECT_EQ(got[i].second, want[i].second);
            }
            ++checked;
        }
    }
    EXPECT_EQ(checked, 5 * 24);
}

TEST(MatcherCpu, FindsPlantedMatchesAndBreaksTiesByLowerIndex) {
    const Case c = make_case(400, 500, 7);
    MatcherConfig cfg;  // ratio 0.8
    const auto got = match_cpu(c.q.data(), 400, c.t.data(), 500, cfg);
    int planted = 0, found = 0, wrong = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (c.truth[i] < 0) continue;
        ++planted;
        int want = c.truth[i];
        if (want < 6 && want % 2 == 1) want -= 1;  // duplicates: the lower index wins the tie
        if (got[i].train == want) ++found;
        else if (got[i].train >= 0) ++wrong;
        if (want < 6 && got[i].train >= 0) EXPECT_EQ(got[i].train % 2, 0);
    }
    EXPECT_GE(found, planted * 9 / 10);
    EXPECT_EQ(wrong, 0);
    // The duplicate pairs: their queries see d1 == d2, so the ratio test rejects them; without it the
    // lower index is kept.
    MatcherConfig noratio;
    noratio.ratio = 1.0f;
    const auto all = match_cpu(c.q.data(), 400, c.t.data(), 500, noratio);
    for (std::size_t i = 0; i < all.size(); ++i)
        if (c.truth[i] >= 0 && c.truth[i] < 6) EXPECT_EQ(all[i].train, c.truth[i] - c.truth[i] % 2) << i;
}

TEST(MatcherCpu, HammingMatcherOnTheCpuEqualsMatchCpu) {
    const Case c = make_case(120, 90, 11);
    MatcherConfig cfg;
    cfg.cross_check = true;
    cfg.radius = 50.0f;
    HammingMatcher m(cfg, 128, Backend::Cpu);
    EXPECT_EQ(m.capacity(), 128);
    EXPECT_EQ(m.backend(), Backend::Cpu);
    const auto got = m.match(c.q.data(), 120, c.t.data(), 90, c.qp.data(), c.tp.data());
    EXPECT_EQ(got, match_cpu(c.q.data(), 120, c.t.data(), 90, cfg, c.qp.data(), c.tp.data()));
    ASSERT_NE(m.host_matches(), nullptr);
    EXPECT_EQ(m.host_matches()[3], got[3]);
    EXPECT_EQ(m.device_matches(), nullptr);
}

// Bad input (configuration, capacity, counts, null arrays, missing positions, match_async on the CPU, a moved-from
// matcher): rows matcher_* and match_* of the bad-input table (tests/core/test_bad_input.cpp, docs/bad-input.md).

}  // namespace
}  // namespace kestrel
