// Stereo test helpers: pairs cut from one real image (the right image is the left one's crop moved by a known
// whole number of pixels: a rectified pair with a known, constant disparity) and short panning sequences of them.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kestrel/stereo_tracker.hpp"
#include "test_data.hpp"

namespace kestrel::test {

struct StereoPair {
    HostImage left, right;
};

/// left = img[x0, x0 + w) x [y0, y0 + h), right = the crop at (x0 + disparity, y0 + dy): a left pixel (x, y) is
/// the right pixel (x - disparity, y - dy).
inline StereoPair shifted_pair(const HostImage& img, int x0, int y0, int w, int h, int disparity, int dy = 0) {
    return {crop(img, x0, y0, w, h), crop(img, x0 + disparity, y0 + dy, w, h)};
}

/// `frames` pairs of a camera panning `step` px per frame over `name`.
inline std::vector<StereoPair> panning_pairs(const std::string& name, int frames, int w, int h, int disparity,
                                             int step = 2) {
    const HostImage img = real_image(name);
    std::vector<StereoPair> out;
    for (int f = 0; f < frames; ++f) out.push_back(shifted_pair(img, 8 + step * f, 8 + f, w, h, disparity));
    return out;
}

/// A tracker configuration small enough for the sanitizer builds: 120 tracks.
inline StereoConfig small_stereo_config() {
    StereoConfig c;
    c.tracker.target_features = 120;
    c.tracker.threads = 2;
    return c;
}

/// Every field of two track lists equal, bit for bit (NaN equals NaN), in the same order: id, x, y, prev_x, prev_y,
/// age, gain, offset, residual, status, score, level. Reports the first few differing tracks and, per field, how
/// many differ. Returns the number of differing tracks.
inline int expect_same_tracks(const std::vector<Track>& a, const std::vector<Track>& b, const std::string& what,
                              const char* a_name = "a", const char* b_name = "b") {
    EXPECT_EQ(a.size(), b.size()) << what << ": track count";
    const auto same = [](float x, float y) { return std::memcmp(&x, &y, sizeof x) == 0 || (std::isnan(x) && std::isnan(y)); };
    const char* fields[] = {"id", "x", "y", "prev_x", "prev_y", "age", "gain", "offset", "residual", "status", "score",
                            "level"};
    int per_field[12] = {}, bad = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
        const Track &p = a[i], &q = b[i];
        const bool eq[12] = {p.id == q.id,         same(p.x, q.x),           same(p.y, q.y),
                             same(p.prev_x, q.prev_x), same(p.prev_y, q.prev_y), p.age == q.age,
                             same(p.gain, q.gain), same(p.offset, q.offset), same(p.residual, q.residual),
                             p.status == q.status, same(p.score, q.score),   p.level == q.level};
        bool ok = true;
        for (int k = 0; k < 12; ++k)
            if (!eq[k]) {
                ++per_field[k];
                ok = false;
            }
        if (!ok && ++bad <= 3)
            ADD_FAILURE() << what << ": track " << i << ": " << a_name << " {id " << p.id << ", (" << p.x << ", " << p.y
                          << ") from (" << p.prev_x << ", " << p.prev_y << "), age " << p.age << ", gain " << p.gain
                          << ", offset " << p.offset << ", residual " << p.residual << ", " << to_string(p.status)
                          << ", score " << p.score << ", level " << p.level << "} vs " << b_name << " {id " << q.id
                          << ", (" << q.x << ", " << q.y << ") from (" << q.prev_x << ", " << q.prev_y << "), age "
                          << q.age << ", gain " << q.gain << ", offset " << q.offset << ", residual " << q.residual
                          << ", " << to_string(q.status) << ", score " << q.score << ", level " << q.level << "}";
    }
    if (bad) {
        std::string fs;
        for (int k = 0; k < 12; ++k)
            if (per_field[k]) fs += std::string(fs.empty() ? "" : ", ") + fields[k] + " " + std::to_string(per_field[k]);
        ADD_FAILURE() << what << ": " << bad << " of " << a.size() << " tracks differ (by field: " << fs << ")";
    }
    return bad;
}

}  // namespace kestrel::test
