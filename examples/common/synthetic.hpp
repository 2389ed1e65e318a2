// A synthetic sequence with exact ground truth: a window onto a real photo, moved by a known camera
// motion (pan along a Lissajous curve, roll, zoom), rendered with bilinear interpolation. The demo
// (examples/track_sequence, scripts/demo.sh) and kestrel_bench's default input both play it.
//
// Frame t shows the photo point P = (s_t / m) R(theta_t) (x - w/2, y - h/2)^T + c_t at frame pixel (x, y)
// (pixel centres at integer coordinates in both images; m the magnification, 1 = the photo's own scale).
// A point p seen in frame a is therefore at q = m R(theta_b)^T (P - c_b) / s_b + (w/2, h/2) in frame b,
// with P from p and frame a: the ground truth the tracking error is measured against. The motion is
// periodic: frame t and frame t + frames show the same view.
#pragma once
#include "kestrel/image.hpp"
#include "kestrel/lk_tracker.hpp"

namespace kestrel_examples {

/// How the window moves. The defaults are the demo's: the photo at its own scale, the pan at most
/// 8 px per frame in x and 5 in y.
struct SyntheticMotion {
    double magnification = 1.0;  ///< frame pixels per photo pixel (> 1: a larger window fits with room to move)
    double max_speed_x = 8.0;    ///< the pan's largest step in x, frame pixels per frame
    double max_speed_y = 5.0;    ///< the same in y
};

class SyntheticSequence {
public:
    /// A width x height window (0 = half the photo's size at the given magnification) moving over
    /// `frames` frames (one period of the motion); the amplitude is chosen so the window never leaves
    /// the photo and the pan never exceeds the motion's speeds. Throws std::runtime_error when the
    /// window does not fit in the photo.
    SyntheticSequence(kestrel::HostImage photo, int frames, int width = 0, int height = 0,
                      const SyntheticMotion& motion = {});

    int frames() const { return frames_; }
    int width() const { return width_; }
    int height() const { return height_; }

    /// Frame t (any t >= 0; the motion repeats every frames() frames).
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
    double mag_ = 1.0;
    double amp_x_ = 0, amp_y_ = 0;
};

}  // namespace kestrel_examples
