// Stereo test helpers: pairs cut from one real image (the right image is the left one's crop moved by a known
// whole number of pixels: a rectified pair with a known, constant disparity) and short panning sequences of them.
#pragma once
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

}  // namespace kestrel::test
