// The tracker's options (kept apart from options.cpp so that detector-only examples do not link the tracker).
#include <functional>
#include <sstream>
#include <stdexcept>

#include "options.hpp"

#include "kestrel/error.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel_examples {

namespace {
template <typename T>
std::string num(T v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
}  // namespace

kestrel::TrackerConfig parse_tracker(Args& args) {
    kestrel::TrackerConfig c;
    c.target_features = args.get_int("features", c.target_features);
    c.redetect_fraction = args.get_float("redetect-fraction", c.redetect_fraction);
    c.forward_backward = args.flag("fb");
    c.fb_max_error = args.get_float("fb-max-error", c.fb_max_error);
    c.motion.constant_velocity = !args.flag("no-motion-prediction");
    c.motion.fewer_levels = !args.flag("full-search");
    c.lk = parse_lk(args, c.lk);
    c.detector = parse_detector(args, "det-", c.detector);
    kestrel::validate(c, "command line");
    return c;
}

void check_frame_size(int width, int height, const kestrel::TrackerConfig& cfg, const std::string& what) {
    const auto fits = [&cfg](int w, int h) {
        try {
            kestrel::validate_image_size(w, h, cfg.detector, "check");
            kestrel::pyramid_sizes(w, h, cfg.lk.pyramid);
            return true;
        } catch (const kestrel::InvalidArgument&) {
            return false;
        }
    };
    if (fits(width, height)) return;
    const int need = smallest_side([&fits](int s) { return fits(s, s); });
    throw std::runtime_error(too_small_text(width, height, need, what,
                                            detector_rules(cfg.detector, "det-") + "; each of the " +
                                                num(cfg.lk.pyramid.levels) + " levels of --lk-levels at least 7x7"));
}

std::string tracker_help() {
    const kestrel::TrackerConfig t;
    return "  --features N           wanted live tracks, 1..65536 (default " + num(t.target_features) + ")\n" +
           "  --redetect-fraction F  re-detect when live < F * features, [0, 1] (default " + num(t.redetect_fraction) + ")\n" +
           "  --fb                   forward-backward check (drop tracks whose round trip misses)\n" +
           "  --fb-max-error E       largest accepted round-trip error in px (default " + num(t.fb_max_error) + ")\n" +
           "  --full-search          search every pyramid level for every track, not only the levels its predicted\n"
           "                         motion needs (for a camera that jerks by more than a few px between frames)\n" +
           "  --no-motion-prediction start LK at the track's last position, not at its constant-velocity prediction\n" +
           lk_help(t.lk) +
           "  Re-detection uses the detector options with the prefix det- (e.g. --det-threshold 20):\n" +
           detector_help("det-", t.detector);
}

}  // namespace kestrel_examples
