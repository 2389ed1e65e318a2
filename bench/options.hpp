// kestrel_bench's command line (parse_options prints the usage for --help).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "frames.hpp"
#include "kestrel/feature_tracker.hpp"

namespace kestrel::bench {

struct Options {
    // input: at most one of these; none = the default, a camera moving over a photo (`camera`; the photo from `data`)
    std::string euroc, images, video, data;
    bool vtest = false;  ///< input `vtest`: the vtest.avi frames of the test data (a fixed camera)
    MovingCamera camera;  ///< the default input's photo, view size and motion
    FrameGeometry geometry;
    int frames = 300;  ///< measured frames (statistics need >= 300)
    int warmup = 30;   ///< frames run before measuring (not recorded)

    std::string backend = "auto";  ///< auto | cuda | cpu
    int device = 0;
    std::string zero_copy = "auto";  ///< auto | on | off (mapped pinned frames; auto: integrated GPUs, when faster)
    double spin_us = 1000;           ///< GPU spin that precedes each event-timed stage sequence
    std::vector<double> rates;       ///< --rate: paced passes, frames released at each of these rates (Hz)
    int sm_count = 0;                ///< --sm-count: all GPU work on a green context of this many SMs (0 = all)
    TrackerConfig tracker;           ///< tracker.detector is the detector measured alone as well

    bool cv = true, cv_mt = true, cv_cuda = true;  ///< --baselines
    int cv_threads = 0;                            ///< multi-threaded baselines: 0 = all cores
    double gftt_quality = 0.01, gftt_min_distance = 8.0;

    std::string json, csv;
    std::string command_line;  ///< as typed, for the report
};

constexpr double kMaxRateHz = 1000;  ///< --rate bound (a period of 1 ms)

/// Parses argv. Returns 0 to run, 1 after printing --help, 2 on a usage error (message printed).
int parse_options(int argc, char** argv, Options& o);

/// The default of every option that has one, as `--option` and the value in the option's own spelling, taken
/// from a default-constructed Options (the config structs): --help states these, --print-defaults lists them.
std::vector<std::pair<std::string, std::string>> option_defaults();

std::string describe_detector(const DetectorConfig& d);
std::string describe_tracker(const TrackerConfig& t);
/// "20" for 20 Hz, "12.5" for 12.5 Hz: the rate as the series keys and labels name it.
std::string rate_text(double hz);
const char* lk_mode_name(LkMode m);

}  // namespace kestrel::bench
