// Synthetic sequences with exact ground truth: a photo seen through a moving camera, i.e. a plane under a
// known homography per frame, optionally with a gain/offset drift, blur and noise.
//
// Frame pixel x (pixel centres at integers) shows the photo point X ~ H(t) [x; 1], with
//   H(t) = T(photo centre) T(tx, ty) R(theta) S(s) P(p1, p2) T(-frame centre)
// (P = [1 0 0; 0 1 0; p1 p2 1]: the perspective part). The photo is extended past its border by
// reflection (a fixed planar texture, so the homography stays exact there too). One motion dominates
// each sequence (rotation, zoom, perspective or translation: full amplitude; the others at a quarter), every
// parameter a sinusoid of the frame index with a seeded frequency and phase.
#pragma once
#include <cstdint>
#include <string>

#include <opencv2/core.hpp>

namespace kestrel_eval {

enum class Motion { Rotation = 0, Zoom = 1, Perspective = 2, Translation = 3 };
const char* to_string(Motion m);

struct SequenceSpec {
    std::string photo;        ///< file name (for the report)
    Motion motion = Motion::Rotation;
    std::uint32_t seed = 1;
    bool drift = false;       ///< gain in [0.75, 1.25] and offset in [-20, 20] grey levels, smooth
    double blur_sigma = 0.0;  ///< Gaussian blur of each frame (0 = none)
    double noise_sigma = 0.0; ///< additive Gaussian noise per frame, grey levels (0 = none)
    int frames = 121;         ///< frame 0 plus 120 tracked frames
    int width = 752, height = 480;
    double amplitude = 1.0;   ///< scales every motion amplitude
};

class HomographySequence {
public:
    /// `photo`: 8-bit grey. Throws std::runtime_error on an empty photo or a bad spec.
    HomographySequence(const cv::Mat& photo, const SequenceSpec& spec);
    const SequenceSpec& spec() const { return spec_; }
    cv::Mat render(int t) const;  ///< 8-bit grey, width x height
    cv::Matx33d homography(int t) const;  ///< frame t pixel -> working photo pixel
    /// Where the scene point seen at (x, y) in frame `from` appears in frame `to`.
    void map(int from, int to, double x, double y, double& ox, double& oy) const;
    /// Largest displacement of a frame corner between consecutive frames (px).
    double max_step() const;

private:
    SequenceSpec spec_;
    cv::Mat photo_;  // working photo (resized so that a frame pixel is at most one photo pixel)
    double s0_ = 1.0;
    double amp_[5]{};   // theta (rad), log zoom, p (1/px), tx, ty (frame px)
    double freq_[7]{};  // cycles per sequence: theta, zoom, p1, p2, tx, ty, drift
    double phase_[8]{};
};

}  // namespace kestrel_eval
