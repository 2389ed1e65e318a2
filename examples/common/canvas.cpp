#include "canvas.hpp"

#include <algorithm>
#include <cmath>

namespace kestrel_examples {

Canvas::Canvas(kestrel::HostView grey, float brightness)
    : width_(grey.width), height_(grey.height), rgb_(static_cast<std::size_t>(grey.width) * grey.height * 3) {
    for (int y = 0; y < height_; ++y) {
        const std::uint8_t* row = grey.row(y);
        for (int x = 0; x < width_; ++x) {
            const auto v = static_cast<std::uint8_t>(std::lround(row[x] * brightness));
            std::uint8_t* p = &rgb_[(static_cast<std::size_t>(y) * width_ + x) * 3];
            p[0] = p[1] = p[2] = v;
        }
    }
}

void Canvas::set(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= width_ || y >= height_) return;
    std::uint8_t* p = &rgb_[(static_cast<std::size_t>(y) * width_ + x) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
}

Rgb Canvas::get(int x, int y) const {
    const std::uint8_t* p = &rgb_[(static_cast<std::size_t>(y) * width_ + x) * 3];
    return {p[0], p[1], p[2]};
}

// Digital differential analyser: one pixel per step along the longer axis.
void Canvas::line(float x0, float y0, float x1, float y1, Rgb c) {
    const float dx = x1 - x0, dy = y1 - y0;
    const int n = static_cast<int>(std::ceil(std::max(std::fabs(dx), std::fabs(dy))));
    if (n == 0 || n > 100000) {  // a point, or a degenerate (non-finite / huge) segment
        set(static_cast<int>(std::lround(x0)), static_cast<int>(std::lround(y0)), c);
        return;
    }
    for (int i = 0; i <= n; ++i) {
        const float t = static_cast<float>(i) / n;
        set(static_cast<int>(std::lround(x0 + t * dx)), static_cast<int>(std::lround(y0 + t * dy)), c);
    }
}

void Canvas::circle(float cx, float cy, float radius, Rgb c) {
    const int steps = std::max(8, static_cast<int>(2.0f * 3.14159265f * radius));
    for (int i = 0; i < steps; ++i) {
        const float a = 2.0f * 3.14159265f * i / steps;
        set(static_cast<int>(std::lround(cx + radius * std::cos(a))),
            static_cast<int>(std::lround(cy + radius * std::sin(a))), c);
    }
}

void Canvas::dot(float cx, float cy, int radius, Rgb c) {
    const int x0 = static_cast<int>(std::lround(cx)), y0 = static_cast<int>(std::lround(cy));
    for (int dy = -radius; dy <= radius; ++dy)
        for (int dx = -radius; dx <= radius; ++dx)
            if (dx * dx + dy * dy <= radius * radius) set(x0 + dx, y0 + dy, c);
}

void Canvas::cross(float cx, float cy, int half, Rgb c) {
    line(cx - half, cy, cx + half, cy, c);
    line(cx, cy - half, cx, cy + half, c);
}

// Hue 0 (red) at age 0 to 240 degrees (blue) at max_age, full saturation and value.
Rgb age_colour(int age, int max_age) {
    const float t = std::min(1.0f, std::max(0.0f, static_cast<float>(age) / std::max(1, max_age)));
    const float h = 240.0f * t / 60.0f;  // sector 0..4
    const int sector = std::min(3, static_cast<int>(h));
    const float f = h - sector;
    const auto u = [](float v) { return static_cast<std::uint8_t>(std::lround(255.0f * v)); };
    switch (sector) {
        case 0: return {255, u(f), 0};         // red -> yellow
        case 1: return {u(1.0f - f), 255, 0};  // yellow -> green
        case 2: return {0, 255, u(f)};         // green -> cyan
        default: return {0, u(1.0f - f), 255};  // cyan -> blue
    }
}

Rgb level_colour(int level) {
    static const Rgb palette[] = {{255, 60, 60}, {60, 255, 60}, {70, 140, 255}, {255, 220, 40},
                                  {255, 60, 255}, {40, 230, 230}, {255, 150, 40}, {200, 200, 200}};
    return palette[((level % 8) + 8) % 8];
}

}  // namespace kestrel_examples
