// A synthetic sequence with exact ground truth: a window onto a real photo, moved by a known camera
// motion (pan along a Lissajous curve, roll, zoom), rendered with bilinear interpolation.
//
// Frame t shows the photo point P = s_t R(theta_t) (x - w/2, y - h/2)^T + c_t at frame pixel (x, y)
// (pixel centres at integer coordinates in both images). A point p seen in frame a is therefore at
// q = R(theta_b)^T (P - c_b) / s_b + (w/2, h/2) in frame b, with P from p and frame a: the ground truth
// the tracking error is measured against.
#pragma once
#include "kestrel/image.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel_examples {

class SyntheticSequence {
public:
    /// A width x height window (0 = half the photo's size) moving over `frames` frames; the motion
    /// amplitude is chosen so the window never leaves the photo.
    SyntheticSequence(kestrel::HostImage photo, int frames, int width = 0, int height = 0);

    int frames() const { return frames_; }
    int width() const { return width_; }
    int height() const { return height_; }

    kestrel::HostImage render(int t) const;
    /// Where the scene point seen at p in frame `from` appears in frame `to`.
    kestrel::Point2f map(int from, int to, kestrel::Point2f p) const;
    /// Largest displacement of any frame pixel between consecutive frames (px), for the report.
    float max_step() const;

private:
    struct Pose {
        double cx, cy, theta, s;
    };
    Pose pose(int t) const;
    kestrel::HostImage photo_;
    int frames_, width_, height_;
    double amp_x_ = 0, amp_y_ = 0;
};

}  // namespace kestrel_examples
