// Test oracle: the straightforward CPU ORB (smoothing, angle, descriptor) kept verbatim as it was before the CPU
// backend was restructured for speed (row ring, fixed-width disc sums, the pattern steered in one pass). The
// library's orb_*_cpu must equal these bit for bit (tests/features/test_orb_cpu_oracle.cpp, compiled without
// floating-point contraction as the library's ORB is); compiled into the tests only, never changed with the
// library.
#pragma once
#include <string>
#include <vector>

#include "kestrel/detail/orb_rules.hpp"
#include "kestrel/detail/validate.hpp"
#include "kestrel/orb.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel::test::oracle {

namespace o = detail::orb;

inline HostImage orb_smooth(HostView level) {
    validate_view("orb_smooth_cpu", "level", level);
    const int w = level.width, h = level.height;
    // Rows first (float sums), then columns and one rounding.
    std::vector<float> rows(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* src = level.row(y);
        for (int x = 0; x < w; ++x) {
            int p[7];
            for (int k = 0; k < 7; ++k) p[k] = src[o::reflect101(x + k - 3, w)];
            rows[static_cast<std::size_t>(y) * w + x] = o::orb_blur_row(p);
        }
    }
    HostImage out(w, h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float c[7];
            for (int k = 0; k < 7; ++k) c[k] = rows[static_cast<std::size_t>(o::reflect101(y + k - 3, h)) * w + x];
            out.at(x, y) = o::orb_blur_col(c);
        }
    return out;
}

inline float orb_angle(HostView level, int x, int y) {
    validate_view("orb_angle_cpu", "level", level);
    const auto at = [&](int u, int v) {
        return static_cast<int>(level.row(o::clampi(v, level.height))[o::clampi(u, level.width)]);
    };
    int m10 = 0, m01 = 0;
    for (int v = -o::kOrbHalfPatch; v <= o::kOrbHalfPatch; ++v) {
        const int d = o::orb_umax(v < 0 ? -v : v);
        for (int u = -d; u <= d; ++u) {
            const int p = at(x + u, y + v);
            m10 += u * p;
            m01 += v * p;
        }
    }
    return o::orb_atan2_deg(static_cast<float>(m01), static_cast<float>(m10));
}

inline OrbDescriptor orb_descriptor(HostView smoothed, int x, int y, float angle_deg) {
    validate_view("orb_descriptor_cpu", "smoothed", smoothed);
    const auto at = [&](int u, int v) {
        return static_cast<int>(smoothed.row(o::clampi(v, smoothed.height))[o::clampi(u, smoothed.width)]);
    };
    float c = 0.0f, s = 0.0f;
    o::orb_cos_sin_deg(angle_deg, c, s);
    OrbDescriptor d;
    for (int i = 0; i < kOrbDescriptorBits; ++i) {
        int ax = 0, ay = 0, bx = 0, by = 0;
        o::orb_steer(2 * i, c, s, ax, ay);
        o::orb_steer(2 * i + 1, c, s, bx, by);
        const bool bit = at(x + ax, y + ay) < at(x + bx, y + by);
        d.bytes[i / 8] = static_cast<std::uint8_t>(d.bytes[i / 8] | (bit ? 1u << (i % 8) : 0u));
    }
    return d;
}

inline OrbFeatures orb_compute(const std::vector<HostImage>& pyramid, const PyramidConfig& cfg,
                            const std::vector<Keypoint>& keypoints) {
    const char* where = "orb_compute_cpu";
    validate(cfg, where);
    if (pyramid.size() != static_cast<std::size_t>(cfg.levels))
        detail::fail(where, "pyramid", "has " + detail::to_text(pyramid.size()) + " levels, cfg.levels = " +
                                           detail::to_text(cfg.levels));
    std::vector<HostImage> smoothed;
    std::vector<float> scale;
    for (int k = 0; k < cfg.levels; ++k) {
        smoothed.push_back(orb_smooth(pyramid[static_cast<std::size_t>(k)].view()));
        scale.push_back(level_scale(cfg, k));
    }
    OrbFeatures f;
    f.angles.resize(keypoints.size());
    f.descriptors.resize(keypoints.size());
    for (std::size_t i = 0; i < keypoints.size(); ++i) {
        const Keypoint& kp = keypoints[i];
        if (kp.level < 0 || kp.level >= cfg.levels)
            detail::check_range(where, ("keypoints[" + std::to_string(i) + "].level").c_str(), kp.level, 0,
                                cfg.levels - 1);
        const float s = scale[static_cast<std::size_t>(kp.level)];
        const int x = o::orb_level_coord(kp.x, s), y = o::orb_level_coord(kp.y, s);
        f.angles[i] = orb_angle(pyramid[static_cast<std::size_t>(kp.level)].view(), x, y);
        f.descriptors[i] = orb_descriptor(smoothed[static_cast<std::size_t>(kp.level)].view(), x, y, f.angles[i]);
    }
    return f;
}


}  // namespace kestrel::test::oracle
