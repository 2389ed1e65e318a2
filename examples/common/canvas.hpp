// A small RGB canvas for the examples' annotated output: grey frame in, circles, lines and trails
// drawn on top, written as PNG (image_io.hpp) or as a video frame. No OpenCV needed.
#pragma once
#include <cstdint>
#include <vector>

#include "kestrel/image.hpp"

namespace kestrel_examples {

struct Rgb {
    std::uint8_t r = 0, g = 0, b = 0;
};

class Canvas {
public:
    Canvas() = default;
    /// The grey image as RGB, optionally dimmed (0..1) so the drawing stands out.
    explicit Canvas(kestrel::HostView grey, float brightness = 1.0f);

    int width() const { return width_; }
    int height() const { return height_; }
    const std::uint8_t* data() const { return rgb_.data(); }  ///< width*height*3 bytes, RGB, packed

    void set(int x, int y, Rgb c);  ///< ignores pixels outside
    Rgb get(int x, int y) const;
    void line(float x0, float y0, float x1, float y1, Rgb c);
    void circle(float cx, float cy, float radius, Rgb c);
    void dot(float cx, float cy, int radius, Rgb c);  ///< filled disc
    void cross(float cx, float cy, int half, Rgb c);

private:
    int width_ = 0, height_ = 0;
    std::vector<std::uint8_t> rgb_;
};

/// Colour of a track of `age` frames: red when new, through yellow and green, to blue at >= max_age.
Rgb age_colour(int age, int max_age = 30);
/// A distinct colour per pyramid level.
Rgb level_colour(int level);

}  // namespace kestrel_examples
