#include "sequence.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include <opencv2/imgproc.hpp>

namespace kestrel_eval {

namespace {
constexpr double kPi = 3.14159265358979323846;
}

const char* to_string(Motion m) {
    switch (m) {
        case Motion::Rotation: return "rotation";
        case Motion::Zoom: return "zoom";
        case Motion::Perspective: return "perspective";
        case Motion::Translation: return "translation";
    }
    return "?";
}

HomographySequence::HomographySequence(const cv::Mat& photo, const SequenceSpec& spec) : spec_(spec) {
    if (photo.empty() || photo.type() != CV_8UC1) throw std::runtime_error("sequence: photo must be 8-bit grey: " + spec.photo);
    if (spec.frames < 2 || spec.width < 32 || spec.height < 32)
        throw std::runtime_error("sequence: need at least 2 frames of at least 32x32");
    // A frame covers 80 % of the photo at rest. Photos larger than that are first shrunk (area
    // averaging) so that rendering never minifies by more than the zoom amplitude.
    double s = 0.8 * std::min(static_cast<double>(photo.cols) / spec.width, static_cast<double>(photo.rows) / spec.height);
    if (s > 1.0) {
        cv::resize(photo, photo_, cv::Size(), 1.0 / s, 1.0 / s, cv::INTER_AREA);
        s = 0.8 * std::min(static_cast<double>(photo_.cols) / spec.width, static_cast<double>(photo_.rows) / spec.height);
    } else {
        photo_ = photo.clone();
    }
    s0_ = s;
    std::mt19937 rng(spec.seed * 7919u + static_cast<std::uint32_t>(spec.motion) * 104729u + 17u);
    std::uniform_real_distribution<double> f(0.5, 1.0), ph(0.0, 2.0 * kPi);
    for (double& v : freq_) v = f(rng);
    for (double& v : phase_) v = ph(rng);
    const double a = spec.amplitude;
    const double q = 0.25;  // the non-dominant motions
    auto amp = [&](Motion m) { return spec.motion == m ? a : q * a; };
    amp_[0] = amp(Motion::Rotation) * 12.0 * kPi / 180.0;              // +-12 degrees
    amp_[1] = amp(Motion::Zoom) * std::log(1.25);                      // x 0.8 .. 1.25
    amp_[2] = amp(Motion::Perspective) * 0.35 / (0.5 * spec.width);    // w = 1 +- 0.35 at the frame's edge
    amp_[3] = amp(Motion::Translation) * 80.0;                         // frame px
    amp_[4] = amp(Motion::Translation) * 50.0;
}

cv::Matx33d HomographySequence::homography(int t) const {
    const double u = 2.0 * kPi * static_cast<double>(t) / (spec_.frames - 1);
    auto wave = [&](int k) { return std::sin(freq_[k] * u + phase_[k]) - std::sin(phase_[k]); };  // 0 at t = 0
    const double theta = amp_[0] * wave(0);
    const double s = s0_ * std::exp(amp_[1] * wave(1));
    const double p1 = amp_[2] * wave(2), p2 = amp_[2] * 0.6 * wave(3);
    const double tx = amp_[3] * wave(4) * s0_, ty = amp_[4] * wave(5) * s0_;
    const double fcx = 0.5 * (spec_.width - 1), fcy = 0.5 * (spec_.height - 1);
    const double pcx = 0.5 * (photo_.cols - 1), pcy = 0.5 * (photo_.rows - 1);
    const cv::Matx33d Tf(1, 0, -fcx, 0, 1, -fcy, 0, 0, 1);
    const cv::Matx33d P(1, 0, 0, 0, 1, 0, p1, p2, 1);
    const cv::Matx33d S(s, 0, 0, 0, s, 0, 0, 0, 1);
    const double c = std::cos(theta), sn = std::sin(theta);
    const cv::Matx33d R(c, -sn, 0, sn, c, 0, 0, 0, 1);
    const cv::Matx33d Tp(1, 0, pcx + tx, 0, 1, pcy + ty, 0, 0, 1);
    return Tp * R * S * P * Tf;
}

void HomographySequence::map(int from, int to, double x, double y, double& ox, double& oy) const {
    const cv::Matx33d M = homography(to).inv() * homography(from);
    const cv::Vec3d v = M * cv::Vec3d(x, y, 1.0);
    ox = v[0] / v[2];
    oy = v[1] / v[2];
}

double HomographySequence::max_step() const {
    double best = 0;
    const double w = spec_.width - 1, h = spec_.height - 1;
    for (int t = 0; t + 1 < spec_.frames; ++t)
        for (const cv::Point2d c : {cv::Point2d(0, 0), cv::Point2d(w, 0), cv::Point2d(0, h), cv::Point2d(w, h)}) {
            double x, y;
            map(t, t + 1, c.x, c.y, x, y);
            best = std::max(best, std::hypot(x - c.x, y - c.y));
        }
    return best;
}

cv::Mat HomographySequence::render(int t) const {
    cv::Mat f;
    cv::warpPerspective(photo_, f, cv::Mat(homography(t)), cv::Size(spec_.width, spec_.height),
                        cv::INTER_CUBIC | cv::WARP_INVERSE_MAP, cv::BORDER_REFLECT_101);
    if (spec_.blur_sigma > 0) cv::GaussianBlur(f, f, cv::Size(), spec_.blur_sigma);
    if (spec_.drift || spec_.noise_sigma > 0) {
        const double u = 2.0 * kPi * static_cast<double>(t) / (spec_.frames - 1);
        const double gain = spec_.drift ? 1.0 + 0.25 * std::sin(1.7 * freq_[6] * u + phase_[6]) : 1.0;
        const double offset = spec_.drift ? 20.0 * std::sin(2.3 * freq_[6] * u + phase_[7]) : 0.0;
        cv::Mat g;
        f.convertTo(g, CV_32F, gain, offset);
        if (spec_.noise_sigma > 0) {
            cv::Mat n(g.size(), CV_32F);
            cv::RNG rng(static_cast<std::uint64_t>(spec_.seed) * 1000003u + static_cast<std::uint64_t>(t) + 1);
            rng.fill(n, cv::RNG::NORMAL, 0.0, spec_.noise_sigma);
            g += n;
        }
        g.convertTo(f, CV_8U);  // rounds and saturates
    }
    return f;
}

}  // namespace kestrel_eval
