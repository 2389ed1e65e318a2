// Tracking accuracy metrics against ground truth (docs/tracker.md, "Accuracy evaluation").
//
// A tracker reports, per frame, its live tracks as (id, x, y). A track is born in the frame where its id
// first appears; its ground truth in a later frame is the birth position carried by the sequence's exact
// motion (GroundTruth::map). Every later observation contributes its endpoint error |p - truth| (errors
// are relative to the birth position, so drift accumulates into them); the track's length is the number
// of frames it was followed after its birth. No OpenCV here: tests/track checks these definitions.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kestrel_eval {

struct Observation {
    std::uint64_t id = 0;
    float x = 0.0f, y = 0.0f;
};

/// Where the scene point seen at (x, y) in frame `from` is in frame `to` (exact).
using GroundTruth = std::function<void(int from, int to, double x, double y, double& ox, double& oy)>;

constexpr std::array<int, 3> kSurvivalAges{30, 60, 120};

struct SequenceMetrics {
    double median = 0.0, p90 = 0.0;    ///< endpoint error over every observation after birth (px)
    double over_1px = 0.0;             ///< fraction of those observations with error > 1 px
    double good_per_frame = 0.0;       ///< observations with error <= 1 px, per tracked frame
    double mean_length = 0.0;          ///< mean frames followed, tracks born in the first frame
    double mean_length_all = 0.0;      ///< same over every track (later births are cut by the end)
    std::array<double, 3> survival{};  ///< first-frame tracks still live at kSurvivalAges (NaN past the end)
    long observations = 0;
    long tracks = 0, first_tracks = 0;
    std::vector<std::vector<float>> error_by_age;  ///< [age] -> errors (age >= 1), for the plot
};

/// Collects one tracker's output over one sequence.
class Recorder {
public:
    explicit Recorder(GroundTruth truth) : truth_(std::move(truth)) {}
    /// The live tracks after frame `frame` (frames in increasing order, starting at 0).
    void frame(int frame, const std::vector<Observation>& live);
    /// Metrics after the last frame; `frames` is the sequence length.
    SequenceMetrics finish(int frames) const;

private:
    struct Life {
        int birth = 0, last = 0;
        double bx = 0, by = 0;
    };
    GroundTruth truth_;
    std::map<std::uint64_t, Life> lives_;
    std::vector<std::pair<int, float>> errors_;  // (age, error)
    int frames_seen_ = 0;
};

/// Quantile by linear interpolation between order statistics (q in [0, 1]); NaN when empty.
double quantile(std::vector<float> v, double q);

/// Geometric mean with a floor (fractions may be 0).
double geometric_mean(const std::vector<double>& v, double floor = 1e-4);

}  // namespace kestrel_eval
