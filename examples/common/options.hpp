// Command-line options shared by the examples: backend choice, every DetectorConfig field and the
// main TrackerConfig / LkConfig fields. Values are checked by Kestrel's own validate() calls, whose
// InvalidArgument messages name the parameter and its bound.
#pragma once
#include <functional>
#include <set>
#include <string>

#include "cli.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/feature_tracker.hpp"

namespace kestrel_examples {

/// The flags (options without a value) of the parsers below plus --help and `extra`.
std::set<std::string> option_flags(std::set<std::string> extra = {});

/// Exit status of an example asked for --backend cuda on a machine without a CUDA device (ctest
/// counts it as skipped), unless KESTREL_REQUIRE_GPU=1, where a missing device is a failure (1).
constexpr int kNoDeviceExitCode = 4;
int no_device_exit_code();

/// An example's main(): runs body(argc, argv) and maps errors to exit codes, each with one line on
/// stderr prefixed by `name`: 2 for a usage error (then `usage`) or an invalid option,
/// no_device_exit_code() when --backend cuda finds no device, 1 for any other error.
int run_example(const char* name, const char* usage, int (*body)(int, char**), int argc, char** argv);

/// --backend auto|cuda|cpu (default auto: CUDA when a device is usable, else the CPU reference);
/// cuda without a usable device throws kestrel::NoDeviceError.
kestrel::Backend parse_backend(Args& args);
/// One line saying which backend runs and why (e.g. "backend: CPU reference (no CUDA device found)").
std::string backend_line(kestrel::Backend b, bool requested_explicitly);

/// Detector options (prefix "" for detect_image, "det-" inside the tracker examples).
kestrel::DetectorConfig parse_detector(Args& args, const std::string& prefix = "",
                                       kestrel::DetectorConfig base = {});
kestrel::LkConfig parse_lk(Args& args, kestrel::LkConfig base = {});
kestrel::TrackerConfig parse_tracker(Args& args);

/// Throws std::runtime_error when a width x height image is too small for the detector configuration
/// (each pyramid level at least 7x7, each side at least 2 * border + 7), saying so and giving the
/// smallest size that works: "image 'a.png' is 1x1 pixels: too small for this configuration, which
/// needs at least 7x7 ...". `what` names the image; `prefix` is the options' prefix ("det-").
void check_image_size(int width, int height, const kestrel::DetectorConfig& cfg, const std::string& what,
                      const std::string& prefix = "");
/// A legal but useless --orb-border (selection orb-slam or level-harris): the levels whose region inside the border
/// is empty (a side <= 2 * border) can give no keypoint; the note names them and the largest border that leaves
/// level 0 some room. "" when every level has room (or another selection runs).
std::string orb_border_note(int width, int height, const kestrel::DetectorConfig& cfg, const std::string& prefix = "");
/// The same for a tracker: its detector and its LK pyramid.
void check_frame_size(int width, int height, const kestrel::TrackerConfig& cfg, const std::string& what);

// Helpers of the two checks above (options.cpp).
std::string too_small_text(int width, int height, int need, const std::string& what, const std::string& rules);
std::string detector_rules(const kestrel::DetectorConfig& cfg, const std::string& prefix);
int smallest_side(const std::function<bool(int)>& fits);  ///< smallest square side in [7, 16383] that fits

std::string detector_help(const std::string& prefix = "", const kestrel::DetectorConfig& defaults = {});
std::string lk_help(const kestrel::LkConfig& defaults = {});
std::string tracker_help();
const char* backend_help();

kestrel::ScoreType parse_score(const std::string& s);

}  // namespace kestrel_examples
