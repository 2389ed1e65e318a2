#include "synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kestrel_examples {

namespace {
constexpr double kPi = 3.14159265358979323846;
constexpr double kMaxRoll = 4.0 * kPi / 180.0;  // +-4 degrees
constexpr double kMaxZoom = 0.12;               // s in [1 - 0.12, 1]
}  // namespace

SyntheticSequence::SyntheticSequence(kestrel::HostImage photo, int frames, int width, int height,
                                     const SyntheticMotion& motion)
    : photo_(std::move(photo)), frames_(frames), width_(width), height_(height), mag_(motion.magnification) {
    if (frames_ < 2) throw std::runtime_error("synthetic sequence: need at least 2 frames");
    if (!(mag_ >= 1.0 && mag_ <= 16.0)) throw std::runtime_error("synthetic sequence: magnification must be in [1, 16]");
    if (!(motion.max_speed_x > 0.0 && motion.max_speed_y > 0.0))
        throw std::runtime_error("synthetic sequence: the pan speeds must be positive");
    if (width_ <= 0) width_ = static_cast<int>(photo_.width() * mag_) / 2;
    if (height_ <= 0) height_ = static_cast<int>(photo_.height() * mag_) / 2;
    // Half extent of the rotated window in photo pixels (s <= 1), plus a 2-pixel safety margin.
    const double hw = 0.5 * width_ / mag_, hh = 0.5 * height_ / mag_;
    const double ex = std::cos(kMaxRoll) * hw + std::sin(kMaxRoll) * hh + 2.0;
    const double ey = std::sin(kMaxRoll) * hw + std::cos(kMaxRoll) * hh + 2.0;
    amp_x_ = 0.5 * (photo_.width() - 1) - ex;
    amp_y_ = 0.5 * (photo_.height() - 1) - ey;
    if (amp_x_ < 0 || amp_y_ < 0) throw std::runtime_error("synthetic sequence: window larger than the photo");
    // Pan speed in frame pixels at most max_speed_x per frame in x (m amp * 2 pi / frames) and max_speed_y in
    // y (m amp * 4 pi / frames); the demo's: 8 and 5.
    amp_x_ = std::min(amp_x_, motion.max_speed_x * frames_ / (2.0 * kPi * mag_));
    amp_y_ = std::min(amp_y_, motion.max_speed_y * frames_ / (4.0 * kPi * mag_));
}

SyntheticSequence::Pose SyntheticSequence::pose(int t) const {
    const double u = static_cast<double>(t) / frames_;  // one period over the sequence
    Pose p;
    p.cx = 0.5 * (photo_.width() - 1) + amp_x_ * std::sin(2.0 * kPi * u);
    p.cy = 0.5 * (photo_.height() - 1) + amp_y_ * std::sin(4.0 * kPi * u + 0.5);
    p.theta = kMaxRoll * std::sin(2.0 * kPi * u + 1.0);
    p.s = 1.0 - kMaxZoom * 0.5 * (1.0 - std::cos(2.0 * kPi * u));
    return p;
}

kestrel::HostImage SyntheticSequence::render(int t) const {
    const Pose p = pose(t);
    const double c = std::cos(p.theta) * p.s / mag_, s = std::sin(p.theta) * p.s / mag_;
    kestrel::HostImage out(width_, height_);
    const int pw = photo_.width(), ph = photo_.height();
    for (int y = 0; y < height_; ++y) {
        for (int x = 0; x < width_; ++x) {
            const double dx = x - 0.5 * width_, dy = y - 0.5 * height_;
            const double X = c * dx - s * dy + p.cx, Y = s * dx + c * dy + p.cy;
            // Bilinear interpolation; the window stays inside the photo by construction (clamped anyway).
            const int x0 = std::clamp(static_cast<int>(std::floor(X)), 0, pw - 2);
            const int y0 = std::clamp(static_cast<int>(std::floor(Y)), 0, ph - 2);
            const double fx = std::clamp(X - x0, 0.0, 1.0), fy = std::clamp(Y - y0, 0.0, 1.0);
            const double v = (1 - fy) * ((1 - fx) * photo_.at(x0, y0) + fx * photo_.at(x0 + 1, y0)) +
                             fy * ((1 - fx) * photo_.at(x0, y0 + 1) + fx * photo_.at(x0 + 1, y0 + 1));
            out.at(x, y) = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
        }
    }
    return out;
}

kestrel::Point2f SyntheticSequence::map(int from, int to, kestrel::Point2f q) const {
    const Pose a = pose(from), b = pose(to);
    const double dx = q.x - 0.5 * width_, dy = q.y - 0.5 * height_;
    const double ca = std::cos(a.theta) * a.s / mag_, sa = std::sin(a.theta) * a.s / mag_;
    const double X = ca * dx - sa * dy + a.cx - b.cx, Y = sa * dx + ca * dy + a.cy - b.cy;
    const double cb = std::cos(b.theta) / b.s * mag_, sb = std::sin(b.theta) / b.s * mag_;  // (s R / m)^-1 = m R^T / s
    return {static_cast<float>(cb * X + sb * Y + 0.5 * width_), static_cast<float>(-sb * X + cb * Y + 0.5 * height_)};
}

float SyntheticSequence::max_step() const {
    float best = 0.0f;
    for (int t = 0; t + 1 < frames_; ++t)
        for (const kestrel::Point2f c : {kestrel::Point2f{0, 0}, kestrel::Point2f{float(width_), 0},
                                         kestrel::Point2f{0, float(height_)}, kestrel::Point2f{float(width_), float(height_)}}) {
            const kestrel::Point2f m = map(t, t + 1, c);
            best = std::max(best, std::hypot(m.x - c.x, m.y - c.y));
        }
    return best;
}

}  // namespace kestrel_examples
