// The MaxThreshold score's closed form (detail::score_max_threshold, fast_rules.hpp) against its definition
// (detail::score_max_threshold_search: the largest threshold t' >= t at which the segment test, by the lookup
// table, still holds) on millions of circles: every arc bound pair 1 <= arc_min <= arc_max <= 16, thresholds
// over 0..254, both lane types of the closed form; every 16-bit bright/dark pattern; hand-built cases with
// known answers. And the test's power: closed forms broken in the ways one would break them (a window one
// pixel short or long, no "- 1", one polarity only, the upper ends of empty intervals) must each disagree
// with the definition on these circles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"

namespace kestrel {
namespace {

struct Rng {
    std::uint64_t s;
    std::uint32_t next() {  // splitmix64, upper bits
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return static_cast<std::uint32_t>((z ^ (z >> 31)) >> 32);
    }
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint32_t>(n)); }
};

struct Circle {
    int p[16];
    int c, t;
};

/// One random circle of `mode` (0..6): values near the centre, uniform, saturated 0/255 (with a centre at
/// either end too), an arc of arc_min pixels well away from the centre, two levels, a ramp around the circle,
/// few distinct values (ties everywhere). Thresholds mostly small (where corners are), sometimes anywhere.
Circle random_circle(Rng& r, int mode, int arc_min) {
    Circle k{};
    k.c = r.below(256);
    if (mode == 2 && r.below(4) == 0) k.c = r.below(2) ? 255 : 0;
    const int base = r.below(256), spread = 1 + r.below(120), start = r.below(16), sign = r.below(2) ? 1 : -1;
    const int lo = r.below(256), hi = r.below(256);
    for (int i = 0; i < 16; ++i) {
        int v = 0;
        switch (mode) {
            case 0: v = base + r.below(2 * spread + 1) - spread; break;
            case 1: v = r.below(256); break;
            case 2: v = r.below(2) ? 255 : 0; break;
            case 3: v = ((i - start) & 15) < arc_min ? k.c + sign * (1 + r.below(255)) : r.below(256); break;
            case 4: v = r.below(3) ? hi : lo; break;
            case 5: v = k.c + sign * (((i - start) & 15) * spread / 16) + r.below(5) - 2; break;
            default: v = k.c + (r.below(5) - 2) * (1 + spread / 8); break;
        }
        k.p[i] = std::clamp(v, 0, 255);
    }
    const int tm = r.below(8);
    k.t = tm == 0 ? r.below(255) : tm == 1 ? (r.below(2) ? 0 : 254) : r.below(std::max(2, spread));
    k.t = std::min(k.t, 254);
    return k;
}

/// A closed form under test: (p, c, t, arc_min, arc_max) -> MT.
using MtFn = std::function<int(const int*, int, int, int, int)>;

/// Runs `fn` against the definition on `per_pair` random circles of every arc bound pair; returns the
/// number of disagreements (stops at the first when `stop`), and counts corners (definition > 0) per pair.
long compare_on_random_circles(const MtFn& fn, int per_pair, std::uint64_t seed, bool stop,
                               std::vector<long>* corners_per_pair = nullptr) {
    Rng r{seed};
    long bad = 0;
    for (int arc_min = 1; arc_min <= 16; ++arc_min)
        for (int arc_max = arc_min; arc_max <= 16; ++arc_max) {
            const auto lut = corner_lut(arc_min, arc_max);
            long corners = 0;
            for (int n = 0; n < per_pair; ++n) {
                const Circle k = random_circle(r, n % 7, arc_min);
                const int want = detail::score_max_threshold_search(lut.data(), k.p, k.c, k.t, arc_min);
                corners += want > 0;
                const int got = fn(k.p, k.c, k.t, arc_min, arc_max);
                if (got != want) {
                    ++bad;
                    if (stop) {
                        ADD_FAILURE() << "arc [" << arc_min << ", " << arc_max << "] c " << k.c << " t " << k.t
                                      << " circle " << ::testing::PrintToString(std::vector<int>(k.p, k.p + 16))
                                      << ": closed form " << got << ", definition " << want;
                        return bad;
                    }
                }
            }
            if (corners_per_pair) corners_per_pair->push_back(corners);
        }
    return bad;
}

int closed_int(const int* p, int c, int t, int lo, int hi) {
    return detail::score_max_threshold_lanes<detail::MtLaneInt>(p, c, t, lo, hi);
}
int closed_packed(const int* p, int c, int t, int lo, int hi) {
    return detail::score_max_threshold_lanes<detail::MtLanesPacked>(p, c, t, lo, hi);
}

TEST(FastMaxThreshold, ClosedFormEqualsDefinitionOnRandomCirclesForEveryArcBoundPair) {
    constexpr int kPerPair = 16000;  // 136 pairs: 2.2 M circles per form
    std::vector<long> corners;
    EXPECT_EQ(compare_on_random_circles(detail::score_max_threshold, kPerPair, 1, true, &corners), 0);
    EXPECT_EQ(compare_on_random_circles(closed_int, kPerPair, 2, true), 0);
    EXPECT_EQ(compare_on_random_circles(closed_packed, kPerPair, 3, true), 0);
    // Every pair saw corners and non-corners.
    for (std::size_t i = 0; i < corners.size(); ++i) {
        EXPECT_GT(corners[i], kPerPair / 50) << "pair " << i;
        EXPECT_LT(corners[i], kPerPair) << "pair " << i;
    }
}

TEST(FastMaxThreshold, ClosedFormEqualsDefinitionForEveryBrightDarkPattern) {
    // Every 16-bit pattern m: pixel i bright (above the centre) where bit i is set, else dark or equal, by
    // random margins; each pattern with every arc_min, arc_max 16 and one arc_max below it.
    Rng r{42};
    std::vector<std::vector<std::uint32_t>> luts(17 * 17);
    for (int lo = 1; lo <= 16; ++lo)
        for (int hi = lo; hi <= 16; ++hi) luts[lo * 17 + hi] = corner_lut(lo, hi);
    long corners = 0, cases = 0;
    for (std::uint32_t m = 0; m < 65536u; ++m) {
        int p[16];
        const int c = 40 + r.below(176), t = r.below(30);
        for (int i = 0; i < 16; ++i)
            p[i] = std::clamp((m >> i) & 1u ? c + 1 + r.below(40) : c - r.below(41), 0, 255);
        for (int lo = 1; lo <= 16; ++lo)
            for (const int hi : {16, lo + r.below(17 - lo)}) {
                const int want = detail::score_max_threshold_search(luts[lo * 17 + hi].data(), p, c, t, lo);
                ++cases;
                corners += want > 0;
                ASSERT_EQ(detail::score_max_threshold(p, c, t, lo, hi), want)
                    << "pattern " << m << " arc [" << lo << ", " << hi << "] c " << c << " t " << t;
                ASSERT_EQ(closed_packed(p, c, t, lo, hi), want) << "pattern " << m << " arc [" << lo << ", " << hi << "]";
            }
    }
    EXPECT_GT(corners, cases / 10);
}

TEST(FastMaxThreshold, KnownAnswers) {
    auto mt = [](const int (&p)[16], int c, int t, int lo, int hi) { return detail::score_max_threshold(p, c, t, lo, hi); };
    int flat[16];
    std::fill(flat, flat + 16, 150);
    EXPECT_EQ(mt(flat, 100, 10, 9, 16), 49);  // bright everywhere by 50: a corner up to t' = 49
    EXPECT_EQ(mt(flat, 100, 49, 9, 16), 49);
    EXPECT_EQ(mt(flat, 100, 50, 9, 16), 0);   // not a corner at t = 50
    EXPECT_EQ(mt(flat, 100, 10, 9, 13), 0);   // a run of 16 is above arc_max 13 at every t'
    EXPECT_EQ(mt(flat, 100, 10, 16, 16), 49);
    int sat[16];
    std::fill(sat, sat + 16, 255);
    EXPECT_EQ(mt(sat, 0, 254, 9, 16), 254);   // the largest score there is
    std::fill(sat, sat + 16, 0);
    EXPECT_EQ(mt(sat, 255, 0, 12, 16), 254);  // dark
    // An arc of 9 pixels at c + 20, one of them c + 12, the rest at c: the arc's least margin decides.
    int arc[16] = {120, 120, 120, 112, 120, 120, 120, 120, 120, 100, 100, 100, 100, 100, 100, 100};
    EXPECT_EQ(mt(arc, 100, 5, 9, 16), 11);
    EXPECT_EQ(mt(arc, 100, 5, 10, 16), 0);
    // A bright arc of 9 (margins 30..38) and a dark arc of 7 (margin 60): with arc_min 7 the dark one wins,
    // also with arc bounds [7, 8] (bright then only for t' in [30, 31], dark up to 59).
    int two[16] = {130, 131, 132, 133, 134, 135, 136, 137, 138, 40, 40, 40, 40, 40, 40, 40};
    EXPECT_EQ(mt(two, 100, 5, 9, 16), 29);
    EXPECT_EQ(mt(two, 100, 5, 7, 16), 59);
    EXPECT_EQ(mt(two, 100, 5, 7, 8), 59);
    // Bounded above: the bright run of 9 is too long for [5, 8] until t' = 30 drops pixel 0 (margin 30)...
    int ramp[16] = {130, 131, 132, 133, 134, 135, 136, 137, 138, 100, 100, 100, 100, 100, 100, 100};
    EXPECT_EQ(mt(ramp, 100, 5, 5, 8), 0);    // at t = 5 the run is 9: not a corner
    EXPECT_EQ(mt(ramp, 100, 30, 5, 8), 33);  // at t' = 30..33 the run is 8..5 (pixels 1.. / 5..8 left)
}

TEST(FastMaxThreshold, BrokenClosedFormsDisagreeWithTheDefinition) {
    // The comparison above has the power to see each of these mistakes.
    auto score = [](const int* p, int c, int t, int lo, int hi, int shift_n, int minus, bool dark, bool empty_ok) {
        int wb, wd;
        detail::best_window_mins<detail::MtLaneInt>(p, std::clamp(lo + shift_n, 1, 16), wb, wd);
        const int ub = wb - c - minus, ud = dark ? wd - (255 - c) - minus : -1000;
        if (hi >= 16) {
            const int u = std::max(ub, ud);
            return u >= t ? u : 0;
        }
        detail::best_window_mins<detail::MtLaneInt>(p, hi + 1, wb, wd);
        const int lb = wb - c, ld = dark ? wd - (255 - c) : 1000;
        if (!((lb <= t && t <= ub) || (ld <= t && t <= ud))) return 0;
        return std::max(empty_ok || lb <= ub ? ub : -1, empty_ok || ld <= ud ? ud : -1);
    };
    const std::vector<std::pair<const char*, MtFn>> broken = {
        {"window one short", [&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, lo > 1 ? -1 : 1, 1, true, false); }},
        {"window one long", [&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, lo < 16 ? 1 : -1, 1, true, false); }},
        {"no - 1", [&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, 0, 0, true, false); }},
        {"bright only", [&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, 0, 1, false, false); }},
        {"empty intervals count", [&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, 0, 1, true, true); }},
    };
    // The correct form written the same way agrees (so the mutants differ by their mistake only).
    EXPECT_EQ(compare_on_random_circles([&](const int* p, int c, int t, int lo, int hi) { return score(p, c, t, lo, hi, 0, 1, true, false); },
                                        2000, 7, true),
              0);
    for (const auto& [name, fn] : broken)
        EXPECT_GT(compare_on_random_circles(fn, 2000, 7, false), 0) << name << " was not caught";
}

}  // namespace
}  // namespace kestrel
