// The CPU score stage's restatements of the FAST rules (src/detect/fast_cpu.cpp), each against the rule it
// restates: the MaxThreshold closed form (max_threshold_full_arc, SSE2 and portable forms) against the rules'
// definition (score_max_threshold_search) for every arc_min, and the row pass's run test (exact for arc_max = 16) through whole score maps
// against the straightforward oracle for every arc_min, with arc_max = 16 and arc_max = arc_min.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "cpu_oracle.hpp"
#include "kestrel/detail/fast_rules.hpp"
#include "kestrel/fast.hpp"
#include "src/detect/fast_cpu.hpp"
#include "test_data.hpp"

namespace kestrel {
namespace {

TEST(FastCpuRestated, MaxThresholdClosedFormEqualsDefinitionForEveryArcMin) {
    std::uint32_t s = 987654321u;
    auto next = [&s] { s = s * 1664525u + 1013904223u; return s >> 8; };
    for (int arc = 1; arc <= 16; ++arc) {
        const auto lut = corner_lut(arc, 16);
        int corners = 0;
        for (int n = 0; n < 40000; ++n) {
            int p[16];
            const int c = static_cast<int>(next() % 256);
            const int mode = n % 4;  // near the centre, anywhere, saturated extremes, a bright/dark arc
            const int base = static_cast<int>(next() % 256);
            for (int i = 0; i < 16; ++i) {
                int v = 0;
                if (mode == 0) v = base + static_cast<int>(next() % 61) - 30;
                else if (mode == 1) v = static_cast<int>(next() % 256);
                else if (mode == 2) v = (next() & 1) ? 255 : 0;
                else v = ((i + static_cast<int>(base % 16)) % 16 < arc) ? c + 40 + static_cast<int>(next() % 200)
                                                                      : static_cast<int>(next() % 256);
                p[i] = std::clamp(v, 0, 255);
            }
            const int t = static_cast<int>(next() % 80);
            if (!detail::is_corner(lut.data(), p, c, t, arc)) continue;
            ++corners;
            const int want = detail::score_max_threshold_search(lut.data(), p, c, t, arc);
            ASSERT_EQ(detail::max_threshold_full_arc(p, c, arc), want) << "arc_min " << arc << " case " << n;
            ASSERT_EQ(detail::max_threshold_full_arc_portable(p, c, arc), want) << "arc_min " << arc << " case " << n;
        }
        EXPECT_GT(corners, 2000) << "arc_min " << arc;
    }
}

TEST(FastCpuRestated, ScoreMapsEqualOracleForEveryArcMin) {
    const HostImage graf = test::real_image("graf1.png");
    const HostImage imgs[] = {test::crop(graf, 211, 143, 161, 97), test::random_image(83, 59, 5)};
    long corners = 0;
    for (const HostImage& img : imgs)
        for (int arc = 1; arc <= 16; ++arc)
            for (const int arc_max : {16, arc})
                for (ScoreType score : {ScoreType::MaxThreshold, ScoreType::SadCircle})
                    for (int t : {5, 25}) {
                        FastConfig cfg;
                        cfg.score = score;
                        cfg.threshold = t;
                        cfg.arc_min = arc;
                        cfg.arc_max = arc_max;
                        const ScoreMap want = test::oracle::fast_score_map(img.view(), cfg);
                        const ScoreMap got = fast_score_map_cpu(img.view(), cfg);
                        ASSERT_EQ(got.scores.size(), want.scores.size());
                        ASSERT_EQ(std::memcmp(got.scores.data(), want.scores.data(), want.scores.size() * sizeof(float)), 0)
                            << img.width() << "x" << img.height() << " arc [" << arc << ", " << arc_max << "] score "
                            << static_cast<int>(score) << " t " << t;
                        for (float v : want.scores) corners += v > 0.0f;
                    }
    EXPECT_GT(corners, 20000);
}

}  // namespace
}  // namespace kestrel
