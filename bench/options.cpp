// kestrel_bench's command line parser (see options.hpp).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "options.hpp"

namespace kestrel::bench {
namespace {

// The usage text; {--option} stands for that option's default (option_defaults(), from the config structs).
const char* kUsage = R"(kestrel_bench: Kestrel's detector and tracker against OpenCV on a real sequence.

usage: kestrel_bench [INPUT] [options]

input (default: a camera moving over a real photo, the demo's sequence: opencv-doc's graf1.png seen
       through a 752x480 window that pans, rolls and zooms, fast enough that tracks leave the view and the
       tracker re-detects)
  INPUT                 an EuRoC folder, an image folder or a video file (detected), or `vtest`: the
                        vtest.avi frames of the test data (a fixed camera), played forwards and backwards
  --euroc DIR           EuRoC/ASL folder (mav0/cam0/data.csv + data/*.png; DIR may be mav0 or cam0)
  --images DIR          every .png/.jpg/.pgm/.ppm of DIR in name order
  --video FILE          a video file (only in builds with OpenCV videoio: KESTREL_BENCH_VIDEO)
  --data DIR            test-data folder holding graf1.png and vtest_000.png ... (default:
                        $KESTREL_TEST_DATA, else the build tree's testdata/; the photo also from opencv-doc)
  --photo PATH          the default input's photo (default graf1.png; e.g. opencv-doc's starry_night.jpg
                        for dense texture)
  --size WxH            the default input's frame size (default {--size})
  --magnify F           the photo's magnification in the default input, in [1, 16] (default {--magnify})
  --period N            frames of one period of the default input's motion, >= 20 (default {--period}, the
                        demo's; longer runs loop it)
  --speed PX            the pan's speed cap in x, px per frame, in (0, 64] (default {--speed}, the demo's 8 at
                        2x; y: 5/8 of it)
  --crop WxH            centre crop of every frame (e.g. 752x480, EuRoC's size)
  --resize WxH          resize (bilinear) after the crop (e.g. --crop 768x432 --resize 1280x720)
  --max-width N, --max-height N
                        scale down, keeping the aspect ratio, until the frame fits
  --frames N            measured frames (default {--frames}; statistics want >= 300)
  --warmup N            frames run first and not recorded (default {--warmup})

Kestrel
  --backend B           cuda | cpu | auto (default {--backend}; auto = cuda when a GPU is usable)
  --device N            CUDA device (default {--device})
  --zero-copy M         auto | on | off: frames in mapped pinned memory read in place by the GPU
                        (default {--zero-copy}; auto = tried on integrated GPUs such as Jetson, kept when faster)
  --spin-us US          GPU spin before each event-timed stage sequence (default {--spin-us})
  --rate HZ[,HZ...]     paced passes after the back-to-back run: frames released on a fixed schedule at
                        each rate, as a camera delivers them (the GPU idles between frames); latency
                        median, p99 and max of the floor, detection and the tracker frame, from release
                        to results on the host (e.g. --rate 20,30; each rate in (0, 1000])
  --sm-count N          run all GPU work on a green context of N SMs (CUDA 12.4+; rounded up to the
                        split's granularity, 8 on sm_90): 16 approximates Orin AGX, 8 Orin NX / Xavier
 detector (also the tracker's re-detection)
  --threshold T         FAST threshold (default {--threshold})
  --arc-min N, --arc-max N   bounded rectification (defaults {--arc-min}, {--arc-max})
  --score S             sad-b | sad-a | mt | harris (default {--score})
  --levels N            detector pyramid levels (default {--levels})
  --scale F             pyramid factor in (1, 2] (default {--scale})
  --cell WxH            grid cell in level-0 pixels (default {--cell})
  --per-cell K          best K per cell (default {--per-cell})
  --nms-radius N        n in [1, 4] (default {--nms-radius})
  --max-features N      global cap, best by score (default {--max-features}; 0 = none)
  --border N            extra level-0 margin (default {--border}, the tracker's: new tracks start that far
                        from the edges)
  --no-graph            do not replay the detector's frame as a CUDA graph
 tracker
  --features N          target live tracks (default {--features})
  --lk-levels N         tracking pyramid levels (default {--lk-levels})
  --lk-scale F          tracking pyramid factor in (1, 2] (default {--lk-scale})
  --lk-mode M           translation | offset | gain | gain-offset (default {--lk-mode})
  --template S          previous | first (default {--template})
  --patch N, --coarse-patch N, --coarse-from K   patch sides and first coarse level
                        (defaults {--patch}, {--coarse-patch}, {--coarse-from})
  --iterations N        Gauss-Newton iterations per level (default {--iterations})
  --min-update F        stop below this update, px (default {--min-update})
  --max-residual F      lost when mean |residual| exceeds it (default {--max-residual})
  --redetect-fraction F re-detect when live < F * features (default {--redetect-fraction})
  --fb [--fb-max-error PX]   forward-backward check (default off; the round trip's bound
                        defaults to {--fb-max-error} px)

baselines
  --baselines LIST      comma list of opencv, opencv-mt, opencv-cuda, none (default: all available)
  --cv-threads N        threads of the multi-threaded OpenCV baselines (default {--cv-threads}: all cores)
  --gftt-quality F, --gftt-min-distance PX   goodFeaturesToTrack settings
                        (defaults {--gftt-quality}, {--gftt-min-distance})

output
  --json FILE           everything measured, per frame and summarised (bench/plot_bench.py plots it)
  --csv FILE            one row per measured frame
  -h, --help
)";

struct Bad : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// "WxH" into w, h: false when `s` is not two integers around an x; Bad when a size is not positive.
bool parse_size(const std::string& opt, const std::string& s, int& w, int& h) {
    const auto x = s.find_first_of("xX");
    if (x == std::string::npos) return false;
    try {
        std::size_t a = 0, b = 0;
        w = std::stoi(s.substr(0, x), &a);
        h = std::stoi(s.substr(x + 1), &b);
        if (a != x || b != s.size() - x - 1) return false;
    } catch (...) {
        return false;
    }
    if (w < 1 || h < 1)
        throw Bad(opt + " " + s + ": each size must be at least 1 pixel (WxH, e.g. 752x480)");
    return true;
}

int to_int(const std::string& opt, const std::string& v) {
    try {
        std::size_t n = 0;
        const int r = std::stoi(v, &n);
        if (n == v.size()) return r;
    } catch (...) {
    }
    throw Bad(opt + " expects an integer, got '" + v + "'");
}

double to_double(const std::string& opt, const std::string& v) {
    try {
        std::size_t n = 0;
        const double r = std::stod(v, &n);
        if (n == v.size()) return r;
    } catch (...) {
    }
    throw Bad(opt + " expects a number, got '" + v + "'");
}

ScoreType to_score(const std::string& v) {
    if (v == "sad-b" || v == "sad-circle") return ScoreType::SadCircle;
    if (v == "sad-a" || v == "sad-arc") return ScoreType::SadArc;
    if (v == "mt" || v == "max-threshold") return ScoreType::MaxThreshold;
    if (v == "harris") return ScoreType::Harris;
    throw Bad("--score expects sad-b, sad-a, mt or harris, got '" + v + "'");
}

LkMode to_mode(const std::string& v) {
    if (v == "translation" || v == "t") return LkMode::Translation;
    if (v == "offset" || v == "translation-offset") return LkMode::TranslationOffset;
    if (v == "gain" || v == "translation-gain") return LkMode::TranslationGain;
    if (v == "gain-offset" || v == "translation-gain-offset") return LkMode::TranslationGainOffset;
    throw Bad("--lk-mode expects translation, offset, gain or gain-offset, got '" + v + "'");
}

const char* score_option(ScoreType t) {  // the --score spelling
    switch (t) {
        case ScoreType::SadCircle: return "sad-b";
        case ScoreType::SadArc: return "sad-a";
        case ScoreType::MaxThreshold: return "mt";
        case ScoreType::Harris: return "harris";
    }
    return "?";
}

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

std::string wxh(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

std::vector<std::pair<std::string, std::string>> option_defaults() {
    const Options o;  // the values a run uses when the option is not given
    const DetectorConfig& d = o.tracker.detector;
    const LkConfig& lk = o.tracker.lk;
    return {
        {"--size", wxh(o.camera.width, o.camera.height)},
        {"--magnify", num(o.camera.magnification)},
        {"--period", std::to_string(o.camera.period)},
        {"--speed", num(o.camera.max_speed)},
        {"--frames", std::to_string(o.frames)},
        {"--warmup", std::to_string(o.warmup)},
        {"--backend", o.backend},
        {"--device", std::to_string(o.device)},
        {"--zero-copy", o.zero_copy},
        {"--spin-us", num(o.spin_us)},
        {"--threshold", std::to_string(d.fast.threshold)},
        {"--arc-min", std::to_string(d.fast.arc_min)},
        {"--arc-max", std::to_string(d.fast.arc_max)},
        {"--score", score_option(d.fast.score)},
        {"--levels", std::to_string(d.pyramid.levels)},
        {"--scale", num(d.pyramid.scale)},
        {"--cell", wxh(d.cell_width, d.cell_height)},
        {"--per-cell", std::to_string(d.per_cell)},
        {"--nms-radius", std::to_string(d.nms_radius)},
        {"--max-features", std::to_string(d.max_features)},
        {"--border", std::to_string(d.border)},
        {"--features", std::to_string(o.tracker.target_features)},
        {"--lk-levels", std::to_string(lk.pyramid.levels)},
        {"--lk-scale", num(lk.pyramid.scale)},
        {"--lk-mode", lk_mode_name(lk.mode)},
        {"--template", lk.template_source == TemplateSource::FirstFrame ? "first" : "previous"},
        {"--patch", std::to_string(lk.patch_size)},
        {"--coarse-patch", std::to_string(lk.coarse_patch_size)},
        {"--coarse-from", std::to_string(lk.coarse_from_level)},
        {"--iterations", std::to_string(lk.max_iterations)},
        {"--min-update", num(lk.min_update)},
        {"--max-residual", num(lk.max_residual)},
        {"--redetect-fraction", num(o.tracker.redetect_fraction)},
        {"--fb-max-error", num(o.tracker.fb_max_error)},
        {"--cv-threads", std::to_string(o.cv_threads)},
        {"--gftt-quality", num(o.gftt_quality)},
        {"--gftt-min-distance", num(o.gftt_min_distance)},
    };
}

namespace {

// kUsage with every {--option} replaced by its default.
std::string usage() {
    std::string text = kUsage;
    for (const auto& [opt, value] : option_defaults()) {
        const std::string key = "{" + opt + "}";
        for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
            text.replace(at, key.size(), value);
    }
    return text;
}

}  // namespace

const char* lk_mode_name(LkMode m) {
    switch (m) {
        case LkMode::Translation: return "translation";
        case LkMode::TranslationOffset: return "offset";
        case LkMode::TranslationGain: return "gain";
        case LkMode::TranslationGainOffset: return "gain-offset";
    }
    return "?";
}

std::string rate_text(double hz) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", hz);
    return b;
}

std::string describe_detector(const DetectorConfig& d) {
    std::ostringstream os;
    os << d.pyramid.levels << " levels x" << d.pyramid.scale << ", FAST t=" << d.fast.threshold << " arc "
       << d.fast.arc_min << ".." << d.fast.arc_max << " " << to_string(d.fast.score) << ", NMS n=" << d.nms_radius
       << ", cells " << d.cell_width << "x" << d.cell_height << ", K=" << d.per_cell << ", cap "
       << (d.max_features > 0 ? std::to_string(d.max_features) : std::string("none")) << ", border " << d.border
       << ", CUDA graph " << (d.cuda_graph ? "on" : "off");
    return os.str();
}

std::string describe_tracker(const TrackerConfig& t) {
    std::ostringstream os;
    os << t.target_features << " features, LK " << t.lk.pyramid.levels << " levels x" << t.lk.pyramid.scale << ", mode "
       << lk_mode_name(t.lk.mode) << ", templates " << to_string(t.lk.template_source) << ", patch "
       << t.lk.patch_size << "/" << t.lk.coarse_patch_size << " from level " << t.lk.coarse_from_level << ", "
       << t.lk.max_iterations << " it, min update " << t.lk.min_update << " px, re-detect below "
       << static_cast<int>(t.redetect_fraction * 100 + 0.5) << " %"
       << (t.forward_backward ? ", forward-backward " + std::to_string(t.fb_max_error) + " px" : std::string());
    return os.str();
}

int parse_options(int argc, char** argv, Options& o) {
    for (int i = 0; i < argc; ++i) o.command_line += (i ? " " : "") + std::string(argv[i]);
    DetectorConfig& d = o.tracker.detector;
    LkConfig& lk = o.tracker.lk;
    std::string positional;
    std::string default_input_option;  // the last option that shapes the default input (refused with another input)
    try {
        for (int i = 1; i < argc; ++i) {
            std::string a = argv[i], v;
            const bool has_eq = a.rfind("--", 0) == 0 && a.find('=') != std::string::npos;
            if (has_eq) {
                v = a.substr(a.find('=') + 1);
                a = a.substr(0, a.find('='));
            }
            const auto val = [&]() -> std::string {
                if (has_eq) return v;
                if (i + 1 >= argc) throw Bad(a + " needs a value");
                return argv[++i];
            };
            if (a == "-h" || a == "--help") {
                std::fputs(usage().c_str(), stdout);
                return 1;
            }
            if (a == "--print-defaults") {  // for the help's test: `option value`, one a line
                for (const auto& [opt, value] : option_defaults()) std::printf("%s %s\n", opt.c_str(), value.c_str());
                return 1;
            }
            if (a == "--euroc") o.euroc = val();
            else if (a == "--images") o.images = val();
            else if (a == "--video") o.video = val();
            else if (a == "--data") o.data = val();
            else if (a == "--photo") o.camera.photo = val();
            else if (a == "--size") {
                if (!parse_size(a, val(), o.camera.width, o.camera.height)) throw Bad("--size expects WxH");
                default_input_option = a;
            } else if (a == "--magnify") {
                o.camera.magnification = to_double(a, val());
                if (!(o.camera.magnification >= 1 && o.camera.magnification <= 16))
                    throw Bad("--magnify must be in [1, 16], got " + rate_text(o.camera.magnification));
                default_input_option = a;
            } else if (a == "--period") {
                o.camera.period = to_int(a, val());
                if (o.camera.period < 20) throw Bad("--period must be >= 20 frames, got " + std::to_string(o.camera.period));
                default_input_option = a;
            } else if (a == "--speed") {
                o.camera.max_speed = to_double(a, val());
                if (!(o.camera.max_speed > 0 && o.camera.max_speed <= 64))
                    throw Bad("--speed must be in (0, 64] px per frame, got " + rate_text(o.camera.max_speed));
                default_input_option = a;
            }
            else if (a == "--crop") {
                if (!parse_size(a, val(), o.geometry.crop_width, o.geometry.crop_height)) throw Bad("--crop expects WxH");
            } else if (a == "--resize") {
                if (!parse_size(a, val(), o.geometry.resize_width, o.geometry.resize_height))
                    throw Bad("--resize expects WxH");
            } else if (a == "--max-width") o.geometry.max_width = to_int(a, val());
            else if (a == "--max-height") o.geometry.max_height = to_int(a, val());
            else if (a == "--frames") o.frames = to_int(a, val());
            else if (a == "--warmup") o.warmup = to_int(a, val());
            else if (a == "--backend") o.backend = val();
            else if (a == "--device") o.device = to_int(a, val());
            else if (a == "--zero-copy") o.zero_copy = val();
            else if (a == "--spin-us") o.spin_us = to_double(a, val());
            else if (a == "--rate") {
                o.rates.clear();
                std::stringstream ss(val());
                for (std::string x; std::getline(ss, x, ',');) {
                    const double hz = to_double(a, x);
                    if (!(hz > 0 && hz <= kMaxRateHz))
                        throw Bad("--rate must be in (0, " + rate_text(kMaxRateHz) + "] Hz, got '" + x + "'");
                    o.rates.push_back(hz);
                }
                if (o.rates.empty()) throw Bad("--rate expects a rate in Hz (e.g. 30, or 20,30)");
            } else if (a == "--sm-count") {
                o.sm_count = to_int(a, val());
                if (o.sm_count < 1) throw Bad("--sm-count must be >= 1 (the SMs of the green context), got " +
                                              std::to_string(o.sm_count));
            }
            else if (a == "--threshold") d.fast.threshold = to_int(a, val());
            else if (a == "--arc-min") d.fast.arc_min = to_int(a, val());
            else if (a == "--arc-max") d.fast.arc_max = to_int(a, val());
            else if (a == "--score") d.fast.score = to_score(val());
            else if (a == "--levels") d.pyramid.levels = to_int(a, val());
            else if (a == "--scale") d.pyramid.scale = static_cast<float>(to_double(a, val()));
            else if (a == "--cell") {
                if (!parse_size(a, val(), d.cell_width, d.cell_height)) throw Bad("--cell expects WxH");
            } else if (a == "--per-cell") d.per_cell = to_int(a, val());
            else if (a == "--nms-radius") d.nms_radius = to_int(a, val());
            else if (a == "--max-features") d.max_features = to_int(a, val());
            else if (a == "--border") d.border = to_int(a, val());
            else if (a == "--no-graph") d.cuda_graph = false;
            else if (a == "--features") o.tracker.target_features = to_int(a, val());
            else if (a == "--lk-levels") lk.pyramid.levels = to_int(a, val());
            else if (a == "--lk-scale") lk.pyramid.scale = static_cast<float>(to_double(a, val()));
            else if (a == "--lk-mode") lk.mode = to_mode(val());
            else if (a == "--template") {
                const std::string s = val();
                if (s == "previous") lk.template_source = TemplateSource::PreviousFrame;
                else if (s == "first") lk.template_source = TemplateSource::FirstFrame;
                else throw Bad("--template expects previous or first");
            } else if (a == "--patch") lk.patch_size = to_int(a, val());
            else if (a == "--coarse-patch") lk.coarse_patch_size = to_int(a, val());
            else if (a == "--coarse-from") lk.coarse_from_level = to_int(a, val());
            else if (a == "--iterations") lk.max_iterations = to_int(a, val());
            else if (a == "--min-update") lk.min_update = static_cast<float>(to_double(a, val()));
            else if (a == "--max-residual") lk.max_residual = static_cast<float>(to_double(a, val()));
            else if (a == "--redetect-fraction") o.tracker.redetect_fraction = static_cast<float>(to_double(a, val()));
            else if (a == "--fb") o.tracker.forward_backward = true;
            else if (a == "--fb-max-error") o.tracker.fb_max_error = static_cast<float>(to_double(a, val()));
            else if (a == "--baselines") {
                o.cv = o.cv_mt = o.cv_cuda = false;
                std::stringstream ss(val());
                for (std::string b; std::getline(ss, b, ',');) {
                    if (b == "opencv") o.cv = true;
                    else if (b == "opencv-mt") o.cv_mt = true;
                    else if (b == "opencv-cuda") o.cv_cuda = true;
                    else if (b != "none") throw Bad("--baselines: unknown baseline '" + b + "' (opencv, opencv-mt, opencv-cuda, none)");
                }
            } else if (a == "--cv-threads") o.cv_threads = to_int(a, val());
            else if (a == "--gftt-quality") o.gftt_quality = to_double(a, val());
            else if (a == "--gftt-min-distance") o.gftt_min_distance = to_double(a, val());
            else if (a == "--json") o.json = val();
            else if (a == "--csv") o.csv = val();
            else if (a.size() > 1 && a[0] == '-') throw Bad("unknown option '" + a + "' (see --help)");
            else if (positional.empty()) positional = a;
            else throw Bad("more than one input given: '" + positional + "' and '" + a + "'");
        }
        if (!o.camera.photo.empty() && default_input_option.empty()) default_input_option = "--photo";
        std::error_code ec;
        if (positional == "vtest" && !std::filesystem::exists(positional, ec)) {
            o.vtest = true;
            positional.clear();
            if (!o.euroc.empty() || !o.images.empty() || !o.video.empty())
                throw Bad("give one input: vtest, --euroc, --images or --video");
        }
        if (!positional.empty()) {
            if (!std::filesystem::exists(positional, ec))
                throw Bad("input '" + positional + "' does not exist (an EuRoC folder, an image folder or a video file)");
            if (!o.euroc.empty() || !o.images.empty() || !o.video.empty())
                throw Bad("give the input either as INPUT or with --euroc/--images/--video, not both");
            if (is_euroc(positional)) o.euroc = positional;
            else if (std::filesystem::is_directory(positional)) o.images = positional;
            else o.video = positional;
        }
        if ((!o.euroc.empty()) + (!o.images.empty()) + (!o.video.empty()) > 1)
            throw Bad("give one input: --euroc, --images or --video");
        if (!default_input_option.empty() && (o.vtest || !o.euroc.empty() || !o.images.empty() || !o.video.empty()))
            throw Bad(default_input_option + " shapes the default input (the moving camera): not with another input");
        if (o.frames < 1) throw Bad("--frames must be >= 1");
        if (o.warmup < 0) throw Bad("--warmup must be >= 0");
        if (o.backend != "auto" && o.backend != "cuda" && o.backend != "cpu")
            throw Bad("--backend expects cuda, cpu or auto");
        if (o.zero_copy != "auto" && o.zero_copy != "on" && o.zero_copy != "off")
            throw Bad("--zero-copy expects auto, on or off");
        if (!(o.spin_us >= 0 && o.spin_us <= 1e6)) throw Bad("--spin-us must be in [0, 1e6]");
        if (!o.rates.empty() && o.rates.size() != std::set<double>(o.rates.begin(), o.rates.end()).size())
            throw Bad("--rate: each rate once");
        if (o.sm_count > 0 && o.backend == "cpu") throw Bad("--sm-count limits the GPU: not with --backend cpu");
        if (o.cv_threads < 0) throw Bad("--cv-threads must be >= 0");
        if (o.geometry.max_width < 0 || o.geometry.max_height < 0) throw Bad("--max-width/--max-height must be >= 0");
    } catch (const Bad& e) {
        std::fprintf(stderr, "kestrel_bench: %s\n", e.what());
        return 2;
    }
    return 0;
}

}  // namespace kestrel::bench
