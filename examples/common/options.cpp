#include "options.hpp"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <sstream>
#include <vector>

#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/pyramid.hpp"

namespace kestrel_examples {

std::set<std::string> option_flags(std::set<std::string> extra) {
    extra.insert({"help", "no-cuda-graph", "det-no-cuda-graph", "fb", "full-search", "no-motion-prediction"});
    return extra;
}

namespace {
template <typename T>
std::string num(T v) {
    std::ostringstream os;
    os << v;
    return os.str();
}
}  // namespace

kestrel::Backend parse_backend(Args& args) {
    const std::string b = args.get("backend", "auto");
    if (b == "cuda") {
        if (!kestrel::cuda_available())
            throw kestrel::NoDeviceError("--backend cuda: no usable CUDA device on this machine");
        return kestrel::Backend::Cuda;
    }
    if (b == "cpu") return kestrel::Backend::Cpu;
    if (b == "auto") return kestrel::default_backend();
    throw UsageError("--backend must be auto, cuda or cpu (got '" + b + "')");
}

int run_example(const char* name, const char* usage, int (*body)(int, char**), int argc, char** argv) {
    try {
        return body(argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: %s\n%s", name, e.what(), usage);
        return 2;
    } catch (const kestrel::InvalidArgument& e) {
        std::fprintf(stderr, "%s: invalid option: %s\n", name, e.what());
        return 2;
    } catch (const kestrel::NoDeviceError& e) {
        std::fprintf(stderr, "%s: %s (use --backend cpu or auto)\n", name, e.what());
        return no_device_exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", name, e.what());
        return 1;
    }
}

int no_device_exit_code() {
    const char* req = std::getenv("KESTREL_REQUIRE_GPU");
    return req && std::string(req) == "1" ? 1 : kNoDeviceExitCode;
}

std::string backend_line(kestrel::Backend b, bool requested_explicitly) {
    if (b == kestrel::Backend::Cuda) return "backend: CUDA (GPU)";
    if (requested_explicitly) return "backend: CPU reference (requested with --backend cpu)";
    return "backend: CPU reference (no CUDA device found; the results are identical, only slower)";
}

kestrel::ScoreType parse_score(const std::string& s) {
    if (s == "sad-circle") return kestrel::ScoreType::SadCircle;
    if (s == "sad-arc") return kestrel::ScoreType::SadArc;
    if (s == "max-threshold") return kestrel::ScoreType::MaxThreshold;
    if (s == "harris") return kestrel::ScoreType::Harris;
    throw UsageError("--score must be sad-circle, sad-arc, max-threshold or harris (got '" + s + "')");
}

static const char* score_name(kestrel::ScoreType t) {
    switch (t) {
        case kestrel::ScoreType::SadCircle: return "sad-circle";
        case kestrel::ScoreType::SadArc: return "sad-arc";
        case kestrel::ScoreType::MaxThreshold: return "max-threshold";
        case kestrel::ScoreType::Harris: return "harris";
    }
    return "?";
}

/// --selection grid|pyca|orb-slam|level-harris, --pyca-cell C or C0,C1,... (per level; the last repeats),
/// --pyca-q Q, --orb-threshold T, --orb-threshold-min T, --orb-cell C, --orb-border B.
static void parse_selection(Args& args, const std::string& p, kestrel::DetectorConfig& c) {
    if (args.has(p + "selection")) {
        const std::string s = args.get(p + "selection", "");
        if (s == "grid") c.selection = kestrel::SelectionPolicy::Grid;
        else if (s == "pyca") c.selection = kestrel::SelectionPolicy::PyCA;
        else if (s == "orb-slam") c.selection = kestrel::SelectionPolicy::OrbSlam;
        else if (s == "level-harris") c.selection = kestrel::SelectionPolicy::LevelHarris;
        else throw UsageError("--" + p + "selection must be grid, pyca, orb-slam or level-harris (got '" + s + "')");
        const bool per_level = c.selection == kestrel::SelectionPolicy::OrbSlam ||
                               c.selection == kestrel::SelectionPolicy::LevelHarris;
        // Their budget: 1000 unless --max-features gives another (a given 0 is left to validate(), which rejects it).
        if (per_level && c.max_features == 0 && !args.has(p + "max-features")) c.max_features = 1000;
    }
    c.orbslam.threshold_initial = args.get_int(p + "orb-threshold", c.orbslam.threshold_initial);
    c.orbslam.threshold_min = args.get_int(p + "orb-threshold-min", c.orbslam.threshold_min);
    c.orbslam.cell = args.get_int(p + "orb-cell", c.orbslam.cell);
    c.orbslam.border = args.get_int(p + "orb-border", c.orbslam.border);
    if (args.has(p + "pyca-cell")) {
        std::stringstream list(args.get(p + "pyca-cell", ""));
        std::string item;
        std::size_t k = 0;
        int last = 0;
        while (std::getline(list, item, ',') && k < c.pyca.cell.size()) {
            try {
                last = std::stoi(item);
            } catch (const std::exception&) {
                throw UsageError("--" + p + "pyca-cell must be a number or a comma-separated list (got '" + item + "')");
            }
            c.pyca.cell[k++] = last;
        }
        for (; k < c.pyca.cell.size(); ++k) c.pyca.cell[k] = last;
    }
    c.pyca.q = args.get_int(p + "pyca-q", c.pyca.q);
}

kestrel::DetectorConfig parse_detector(Args& args, const std::string& p, kestrel::DetectorConfig c) {
    c.pyramid.levels = args.get_int(p + "levels", c.pyramid.levels);
    c.pyramid.scale = args.get_float(p + "scale", c.pyramid.scale);
    c.fast.threshold = args.get_int(p + "threshold", c.fast.threshold);
    c.fast.arc_min = args.get_int(p + "arc-min", c.fast.arc_min);
    c.fast.arc_max = args.get_int(p + "arc-max", c.fast.arc_max);
    if (args.has(p + "score")) c.fast.score = parse_score(args.get(p + "score", ""));
    c.nms_radius = args.get_int(p + "nms-radius", c.nms_radius);
    c.cell_width = args.get_int(p + "cell-width", c.cell_width);
    c.cell_height = args.get_int(p + "cell-height", c.cell_height);
    c.per_cell = args.get_int(p + "per-cell", c.per_cell);
    c.max_features = args.get_int(p + "max-features", c.max_features);
    c.border = args.get_int(p + "border", c.border);
    if (args.flag(p + "no-cuda-graph")) c.cuda_graph = false;
    parse_selection(args, p, c);
    kestrel::validate(c, "command line");
    return c;
}

static kestrel::LkMode parse_mode(const std::string& s) {
    if (s == "t") return kestrel::LkMode::Translation;
    if (s == "to") return kestrel::LkMode::TranslationOffset;
    if (s == "tg") return kestrel::LkMode::TranslationGain;
    if (s == "tgo") return kestrel::LkMode::TranslationGainOffset;
    throw UsageError("--lk-mode must be t, to, tg or tgo (got '" + s + "')");
}

kestrel::LkConfig parse_lk(Args& args, kestrel::LkConfig lk) {
    lk.pyramid.levels = args.get_int("lk-levels", lk.pyramid.levels);
    lk.pyramid.scale = args.get_float("lk-scale", lk.pyramid.scale);
    if (args.has("lk-mode")) lk.mode = parse_mode(args.get("lk-mode", ""));
    if (args.has("template")) {
        const std::string tmpl = args.get("template", "");
        if (tmpl == "first") lk.template_source = kestrel::TemplateSource::FirstFrame;
        else if (tmpl == "previous") lk.template_source = kestrel::TemplateSource::PreviousFrame;
        else throw UsageError("--template must be previous or first (got '" + tmpl + "')");
    }
    lk.patch_size = args.get_int("patch", lk.patch_size);
    lk.coarse_patch_size = args.get_int("coarse-patch", lk.coarse_patch_size);
    lk.coarse_from_level = args.get_int("coarse-from-level", lk.coarse_from_level);
    lk.max_iterations = args.get_int("iterations", lk.max_iterations);
    lk.min_update = args.get_float("min-update", lk.min_update);
    lk.max_residual = args.get_float("max-residual", lk.max_residual);
    lk.min_eigenvalue = args.get_float("min-eigenvalue", lk.min_eigenvalue);
    kestrel::validate(lk, "command line");
    return lk;
}

namespace {
bool detector_fits(int w, int h, const kestrel::DetectorConfig& cfg) {
    try {
        kestrel::validate_image_size(w, h, cfg, "check");
        return true;
    } catch (const kestrel::InvalidArgument&) {
        return false;
    }
}
}  // namespace

std::string too_small_text(int width, int height, int need, const std::string& what, const std::string& rules) {
    return what + " is " + std::to_string(width) + "x" + std::to_string(height) +
           " pixels: too small for this configuration, which needs at least " + std::to_string(need) + "x" +
           std::to_string(need) + " (" + rules + "); use a larger image, or fewer levels or a smaller border";
}

std::string detector_rules(const kestrel::DetectorConfig& cfg, const std::string& p) {
    return "each of the " + num(cfg.pyramid.levels) + " pyramid levels of --" + p + "levels at --" + p + "scale " +
           num(cfg.pyramid.scale) + " at least 7x7, and each side at least 2 * --" + p + "border + 7 = " +
           num(2 * cfg.border + 7);
}

int smallest_side(const std::function<bool(int)>& fits) {
    int lo = 7, hi = 16383;  // fits() is monotonic in the side
    if (!fits(hi)) return hi;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(mid)) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void check_image_size(int width, int height, const kestrel::DetectorConfig& cfg, const std::string& what,
                      const std::string& prefix) {
    if (detector_fits(width, height, cfg)) return;
    const int need = smallest_side([&cfg](int s) { return detector_fits(s, s, cfg); });
    throw std::runtime_error(too_small_text(width, height, need, what, detector_rules(cfg, prefix)));
}

std::string orb_border_note(int width, int height, const kestrel::DetectorConfig& cfg, const std::string& p) {
    if (cfg.selection != kestrel::SelectionPolicy::OrbSlam && cfg.selection != kestrel::SelectionPolicy::LevelHarris)
        return "";
    const std::vector<kestrel::Size2> sizes = kestrel::pyramid_sizes(width, height, cfg.pyramid);
    const int b = cfg.orbslam.border;
    std::vector<int> empty;
    for (std::size_t k = 0; k < sizes.size(); ++k)
        if (sizes[k].width <= 2 * b || sizes[k].height <= 2 * b) empty.push_back(static_cast<int>(k));
    if (empty.empty()) return "";
    std::string levels;
    for (std::size_t i = 0; i < empty.size(); ++i) levels += (i ? ", " : "") + std::to_string(empty[i]);
    const kestrel::Size2 s0 = sizes[static_cast<std::size_t>(empty.front())];
    std::string out = "--" + p + "orb-border " + num(b) + " leaves no room on level" + (empty.size() > 1 ? "s " : " ") +
                      levels + " of " + num(sizes.size()) + " (level " + num(empty.front()) + " is " + num(s0.width) +
                      "x" + num(s0.height) + " px: a margin of " + num(b) + " px on each side covers it)";
    if (empty.size() == sizes.size()) {
        const int most = (std::min(sizes[0].width, sizes[0].height) - 1) / 2;
        out += ": no keypoint can be found; use --" + p + "orb-border " +
               (most >= 4 ? "at most " + num(most) : std::string("4 (its least)")) + ", or a larger image";
    } else {
        out += ": those levels give no keypoint";
    }
    return out;
}

std::string detector_help(const std::string& p, const kestrel::DetectorConfig& d) {
    std::string out;
    const auto o = [&](const char* name, const std::string& text) {
        std::string left = "  --" + p + name;
        left.resize(left.size() < 25 ? 25 : left.size() + 1, ' ');
        out += left + text + "\n";
    };
    o("levels N", "pyramid levels, 1..8 (default " + num(d.pyramid.levels) + ")");
    o("scale S", "factor between levels, (1, 2] (default " + num(d.pyramid.scale) + ")");
    o("threshold T", "FAST threshold t, 0..254: bright p > c + t, dark p < c - t (default " + num(d.fast.threshold) + ")");
    o("arc-min A", "shortest accepted arc, 1..16 (default " + num(d.fast.arc_min) + ")");
    o("arc-max A", "longest accepted arc (bounded rectification), arc-min..16 (default " + num(d.fast.arc_max) + ")");
    o("score S", std::string("sad-circle | sad-arc | max-threshold | harris (default ") + score_name(d.fast.score) + ")");
    o("nms-radius N", "non-maximum suppression radius, 1..4 (default " + num(d.nms_radius) + ")");
    o("cell-width W", "grid cell width, a multiple of 32 in [32, 1024] (default " + num(d.cell_width) + ")");
    o("cell-height H", "grid cell height, 8..1024 (default " + num(d.cell_height) + ")");
    o("per-cell K", "features kept per cell over all levels, 1..8 (default " + num(d.per_cell) + ")");
    o("max-features N", "global cap by score, 0 = none (default " + num(d.max_features) + ")");
    o("border B", "extra level-0 margin without detections, 0..64 (default " + num(d.border) + ")");
    o("no-cuda-graph", "CUDA backend: do not replay the frame as a CUDA graph");
    o("selection P", std::string("grid | pyca | orb-slam | level-harris: grid NMS, pyramidal culling and "
                                 "aggregation, ORB-SLAM's extractor, or cv::ORB's per-level Harris ranking (default ") +
                         kestrel::to_string(d.selection) + "; the last two spread max-features, 1000 unless given, "
                         "over the levels)");
    o("orb-threshold T", "orb-slam, level-harris: FAST threshold of every cell, 1..254 (default " +
                             num(d.orbslam.threshold_initial) + ")");
    o("orb-threshold-min T", "orb-slam: threshold of a cell where the first found nothing, 1..254 (default " +
                                 num(d.orbslam.threshold_min) + ")");
    o("orb-cell C", "orb-slam, level-harris: cell side on every level, 16..256 (default " + num(d.orbslam.cell) + ")");
    o("orb-border B", "orb-slam, level-harris: margin of every level, 4..64 (default " + num(d.orbslam.border) + ")");
    o("pyca-cell C", "pyca: culling cell side per level in level pixels, C or C0,C1,... (last repeats), powers "
                     "of two in [8, 128] (default " + num(d.pyca.cell[0]) + ")");
    o("pyca-q Q", "pyca: the aggregation's q x q NMS window, odd, 1..9 (default " + num(d.pyca.q) + ")");
    return out;
}

std::string lk_help(const kestrel::LkConfig& l) {
    const char* modes[] = {"t", "to", "tg", "tgo"};
    return "  --lk-levels N          tracking pyramid levels (default " + num(l.pyramid.levels) + ")\n" +
           "  --lk-scale S           tracking pyramid factor, (1, 2] (default " + num(l.pyramid.scale) + ")\n" +
           "  --lk-mode M            t | to | tg | tgo: translation [+ offset] [+ gain] (default " +
           modes[static_cast<int>(l.mode)] + ")\n" +
           "  --template T           previous | first: template from the previous frame or from the frame\n"
           "                         where the feature was detected (default " +
           (l.template_source == kestrel::TemplateSource::FirstFrame ? "first" : "previous") + ")\n" +
           "  --patch P              patch side on fine levels, 4..16 (default " + num(l.patch_size) + ")\n" +
           "  --coarse-patch P       patch side on coarse levels, 4..16 (default " + num(l.coarse_patch_size) + ")\n" +
           "  --coarse-from-level L  first level using the coarse patch (default " + num(l.coarse_from_level) + ")\n" +
           "  --iterations N         Gauss-Newton iterations per level, 1..100 (default " + num(l.max_iterations) + ")\n" +
           "  --min-update U         convergence step in level pixels (default " + num(l.min_update) + ")\n" +
           "  --max-residual R       largest accepted mean |residual|, grey levels (default " + num(l.max_residual) + ")\n" +
           "  --min-eigenvalue E     smallest accepted Hessian eigenvalue per pixel (default " + num(l.min_eigenvalue) + ")\n";
}

const char* backend_help() {
    return "  --backend B            auto | cuda | cpu (default auto: CUDA when a device is usable, else\n"
           "                         the CPU reference, which gives the same results)\n";
}

}  // namespace kestrel_examples
