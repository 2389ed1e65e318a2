// kestrel_eval_tracking: tracking accuracy on sequences with exact ground truth, Kestrel beside OpenCV's
// GFTT + pyramidal LK in the same run (docs/tracker.md, "Accuracy evaluation").
//
//   kestrel_eval_tracking [--data DIR] [--set full|quick] [--photos a.jpg,b.png] [--seeds 1,2]
//                         [--drift both|on|off] [--frames N] [--features N] [--blur S] [--noise S]
//                         [--tracker NAME[:key=value,...]]... [--backend cpu|cuda] [--jobs N]
//                         [--json FILE] [--plot FILE.svg] [--baseline NAME] [--require TRACKER:BOUNDS]...
//
// Trackers: "kestrel" (FeatureTracker, its defaults unless keys override them) and "opencv"
// (cv::goodFeaturesToTrack(quality 0.01, min distance 10) on the first frame, then
// cv::calcOpticalFlowPyrLK frame to frame, 21x21 window, maxLevel 3; it never re-detects). Any name
// starting with "opencv" is an OpenCV tracker (keys win, levels, keep_outside=1: keep the points LK follows
// outside the frame, which otherwise end their track there like Kestrel's), any other a Kestrel one.
// --photos: file names in --data, or paths (absolute, or holding a '/': taken as they are).
// --require TRACKER:BOUNDS: a gate on TRACKER's overall row, BOUNDS a comma-separated list of METRIC<=VALUE or
// METRIC>=VALUE, METRIC one of median, p90 (px), over_1px (a fraction: 0.15 = 15 %), good_per_frame, length,
// s30, s60, s120 (as in the JSON's "overall"). Each bound is printed as met or NOT MET; the exit status is 1
// when any is not met (0 when all are), 2 on a usage error.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/video/tracking.hpp>

#include "kestrel/device_image.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/opencv.hpp"
#include "metrics.hpp"
#include "sequence.hpp"

using namespace kestrel_eval;

namespace {

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "kestrel_eval_tracking: " << what << " (see the header of tools/eval_tracking/main.cpp)\n";
    std::exit(2);
}

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream is(s);
    while (std::getline(is, cur, sep))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

double number(const std::string& key, const std::string& v) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d)) usage_error("'" + key + "=" + v + "': not a number");
    return d;
}

struct TrackerSpec {
    std::string name;
    bool opencv = false;
    int cv_window = 21, cv_levels = 3;  // calcOpticalFlowPyrLK winSize, maxLevel
    bool cv_keep_outside = false;
    bool cv_kestrel_births = false;      // start from Kestrel's first-frame features instead of GFTT's        // keep points LK still follows outside the frame (up to half a window)
    kestrel::TrackerConfig cfg{};
};

// Kestrel keys: template=prev|first, mode=t|to|tg|tgo, patch, coarse_patch, coarse_from, levels, iters,
// min_update, max_residual, min_eig, fb=0|1, fb_err, redetect, anchor=0|1, reanchor=0|1, anchor_iters, anchor_residual,
// anchor_distance, anchor_interval, cv=0|1, fewer_levels=0|1, level_reach (TrackerConfig::motion), score=sadb|sada|mt|harris, threshold, per_cell, cell, border, select=grid|pyca, pyca_cell
// (every level), pyca_levels, pyca_scale (the re-detection pyramid, e.g. 8 levels of 1.2 for PyCA), pyca_q.
TrackerSpec parse_tracker(const std::string& text, int features) {
    TrackerSpec t;
    const auto colon = text.find(':');
    t.name = text.substr(0, colon);
    if (t.name.empty()) usage_error("--tracker needs a name");
    t.opencv = t.name.rfind("opencv", 0) == 0;
    t.cfg.target_features = features;
    if (colon == std::string::npos) return t;
    for (const std::string& kv : split(text.substr(colon + 1), ',')) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos) usage_error("'" + kv + "': expected key=value");
        const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
        auto i = [&] { return static_cast<int>(number(k, v)); };
        auto f = [&] { return static_cast<float>(number(k, v)); };
        kestrel::LkConfig& lk = t.cfg.lk;
        if (t.opencv) {
            if (k == "win") t.cv_window = i();
            else if (k == "levels") t.cv_levels = i();
            else if (k == "keep_outside") t.cv_keep_outside = i() != 0;
            else if (k == "births") t.cv_kestrel_births = v == "kestrel";
            else usage_error("unknown OpenCV tracker key '" + k + "' (win, levels, keep_outside)");
            continue;
        }
        if (k == "template") {
            if (v == "prev") lk.template_source = kestrel::TemplateSource::PreviousFrame;
            else if (v == "first") lk.template_source = kestrel::TemplateSource::FirstFrame;
            else usage_error("template=" + v + ": prev or first");
        } else if (k == "mode") {
            if (v == "t") lk.mode = kestrel::LkMode::Translation;
            else if (v == "to") lk.mode = kestrel::LkMode::TranslationOffset;
            else if (v == "tg") lk.mode = kestrel::LkMode::TranslationGain;
            else if (v == "tgo") lk.mode = kestrel::LkMode::TranslationGainOffset;
            else usage_error("mode=" + v + ": t, to, tg or tgo");
        } else if (k == "patch") lk.patch_size = i();
        else if (k == "coarse_patch") lk.coarse_patch_size = i();
        else if (k == "coarse_from") lk.coarse_from_level = i();
        else if (k == "levels") lk.pyramid.levels = i();
        else if (k == "iters") lk.max_iterations = i();
        else if (k == "min_update") lk.min_update = f();
        else if (k == "max_residual") lk.max_residual = f();
        else if (k == "min_eig") lk.min_eigenvalue = f();
        else if (k == "fb") t.cfg.forward_backward = i() != 0;
        else if (k == "fb_err") t.cfg.fb_max_error = f();
        else if (k == "redetect") t.cfg.redetect_fraction = f();
        else if (k == "anchor") t.cfg.anchor.enabled = i() != 0;
        else if (k == "anchor_iters") t.cfg.anchor.max_iterations = i();
        else if (k == "reanchor") t.cfg.anchor.reanchor = i() != 0;
        else if (k == "anchor_residual") t.cfg.anchor.max_residual = f();
        else if (k == "anchor_distance") t.cfg.anchor.max_distance = f();
        else if (k == "anchor_interval") t.cfg.anchor.interval = i();
        else if (k == "cv") t.cfg.motion.constant_velocity = i() != 0;
        else if (k == "fewer_levels") t.cfg.motion.fewer_levels = i() != 0;
        else if (k == "level_reach") t.cfg.motion.level_reach = f();
        else if (k == "threshold") t.cfg.detector.fast.threshold = i();
        else if (k == "per_cell") t.cfg.detector.per_cell = i();
        else if (k == "border") t.cfg.detector.border = i();
        else if (k == "cell") t.cfg.detector.cell_width = t.cfg.detector.cell_height = i();
        else if (k == "select") {
            if (v == "grid") t.cfg.detector.selection = kestrel::SelectionPolicy::Grid;
            else if (v == "pyca") t.cfg.detector.selection = kestrel::SelectionPolicy::PyCA;
            else usage_error("select=" + v + ": grid or pyca");
        } else if (k == "pyca_cell") t.cfg.detector.pyca.cell.fill(i());
        else if (k == "pyca_levels") t.cfg.detector.pyramid.levels = i();
        else if (k == "pyca_scale") t.cfg.detector.pyramid.scale = f();
        else if (k == "pyca_q") t.cfg.detector.pyca.q = i();
        else if (k == "score") {
            if (v == "sadb") t.cfg.detector.fast.score = kestrel::ScoreType::SadCircle;
            else if (v == "sada") t.cfg.detector.fast.score = kestrel::ScoreType::SadArc;
            else if (v == "mt") t.cfg.detector.fast.score = kestrel::ScoreType::MaxThreshold;
            else if (v == "harris") t.cfg.detector.fast.score = kestrel::ScoreType::Harris;
            else usage_error("score=" + v + ": sadb, sada, mt or harris");
        } else usage_error("unknown Kestrel tracker key '" + k + "'");
    }
    kestrel::validate(t.cfg, ("--tracker " + t.name).c_str());
    return t;
}

struct Options {
    std::string data = "/usr/share/doc/opencv-doc/examples/data";
    std::vector<std::string> photos;
    std::vector<std::uint32_t> seeds{1, 2};
    std::vector<bool> drift{false, true};
    int frames = 121, features = 200, jobs = 2;
    double blur = 0, noise = 0;
    std::vector<TrackerSpec> trackers;
    kestrel::Backend backend = kestrel::Backend::Cpu;
    std::string json, plot, baseline = "opencv";
    std::vector<std::string> require;  // TRACKER:BOUNDS
};

/// One bound of --require: metric <= value or metric >= value.
struct Bound {
    std::string metric;
    bool at_most = true;
    double value = 0;
};

const std::vector<std::string> kMetrics{"median", "p90", "over_1px", "good_per_frame", "length", "s30", "s60", "s120"};

std::vector<Bound> parse_bounds(const std::string& text) {
    std::vector<Bound> out;
    for (const std::string& b : split(text, ',')) {
        const auto le = b.find("<="), ge = b.find(">=");
        if ((le == std::string::npos) == (ge == std::string::npos))
            usage_error("--require bound '" + b + "': expected METRIC<=VALUE or METRIC>=VALUE");
        const auto at = le != std::string::npos ? le : ge;
        Bound k{b.substr(0, at), le != std::string::npos, number(b.substr(0, at), b.substr(at + 2))};
        if (std::find(kMetrics.begin(), kMetrics.end(), k.metric) == kMetrics.end())
            usage_error("--require metric '" + k.metric +
                        "': median, p90, over_1px, good_per_frame, length, s30, s60 or s120");
        out.push_back(k);
    }
    if (out.empty()) usage_error("--require " + text + ": no bound");
    return out;
}

/// The photo's path: a name in --data, or a path as given (absolute, or holding a '/').
std::string photo_path(const Options& o, const std::string& photo) {
    if (std::filesystem::path(photo).is_absolute() || photo.find('/') != std::string::npos) return photo;
    return o.data + "/" + photo;
}

const std::vector<std::string> kFullSet{"graf1.png",    "aloeL.jpg",        "building.jpg",  "leuvenA.jpg",
                                        "starry_night.jpg", "baboon.jpg",   "fruits.jpg",    "home.jpg",
                                        "board.jpg",    "ela_original.jpg", "rubberwhale1.png", "basketball1.png"};

std::vector<Observation> run_frame_kestrel(kestrel::FeatureTracker& tr, const cv::Mat& f, std::map<std::string, long>& lost) {
    std::vector<Observation> out;
    for (const kestrel::Track& t : tr.track(kestrel::host_view(f))) out.push_back({t.id, t.x, t.y});
    for (const kestrel::Track& t : tr.lost_tracks()) ++lost[kestrel::to_string(t.status)];
    return out;
}

struct SequenceResult {
    SequenceSpec spec;
    double max_step = 0;
    std::vector<SequenceMetrics> metrics;  // per tracker
    std::vector<std::map<std::string, long>> lost;  // per tracker: why tracks were lost (Kestrel)
};

SequenceResult run_sequence(const Options& o, const SequenceSpec& spec) {
    const std::string path = photo_path(o, spec.photo);
    const cv::Mat photo = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (photo.empty()) throw std::runtime_error("cannot read " + path);
    const HomographySequence seq(photo, spec);
    std::vector<cv::Mat> frames(static_cast<std::size_t>(spec.frames));
    for (int t = 0; t < spec.frames; ++t) frames[static_cast<std::size_t>(t)] = seq.render(t);
    SequenceResult r;
    r.spec = spec;
    r.max_step = seq.max_step();
    const GroundTruth truth = [&seq](int a, int b, double x, double y, double& ox, double& oy) { seq.map(a, b, x, y, ox, oy); };
    for (const TrackerSpec& ts : o.trackers) {
        Recorder rec(truth);
        r.lost.emplace_back();
        if (ts.opencv) {
            std::vector<cv::Point2f> pts, next;
            std::vector<std::uint64_t> ids;
            if (ts.cv_kestrel_births) {
                kestrel::TrackerConfig c;
                c.target_features = o.features;
                kestrel::FeatureTracker first(spec.width, spec.height, c, kestrel::Backend::Cpu);
                for (const kestrel::Track& k : first.track(kestrel::host_view(frames[0]))) pts.emplace_back(k.x, k.y);
            } else {
                cv::goodFeaturesToTrack(frames[0], pts, o.features, 0.01, 10);
            }
            std::vector<Observation> live;
            for (std::size_t i = 0; i < pts.size(); ++i) {
                ids.push_back(i + 1);
                live.push_back({i + 1, pts[i].x, pts[i].y});
            }
            rec.frame(0, live);
            for (int t = 1; t < spec.frames && !pts.empty(); ++t) {
                std::vector<std::uint8_t> status;
                std::vector<float> err;
                cv::calcOpticalFlowPyrLK(frames[static_cast<std::size_t>(t - 1)], frames[static_cast<std::size_t>(t)], pts, next,
                                         status, err, cv::Size(ts.cv_window, ts.cv_window), ts.cv_levels);
                std::vector<cv::Point2f> kept;
                std::vector<std::uint64_t> kept_ids;
                live.clear();
                for (std::size_t i = 0; i < pts.size(); ++i) {
                    if (!status[i]) {
                        ++r.lost.back()["LK status 0"];
                        continue;
                    }
                    // A point outside the frame is no observation: it ends the track (as VIO frontends such
                    // as VINS-Mono's drop points off the image; Kestrel's tracks end there by their border rule).
                    if (!ts.cv_keep_outside && !(next[i].x >= 0.0f && next[i].y >= 0.0f && next[i].x <= spec.width - 1.0f &&
                                                 next[i].y <= spec.height - 1.0f)) {
                        ++r.lost.back()["left the image"];
                        continue;
                    }
                    kept.push_back(next[i]);
                    kept_ids.push_back(ids[i]);
                    live.push_back({ids[i], next[i].x, next[i].y});
                }
                pts.swap(kept);
                ids.swap(kept_ids);
                rec.frame(t, live);
            }
        } else {
            kestrel::FeatureTracker tr(spec.width, spec.height, ts.cfg, o.backend);
            for (int t = 0; t < spec.frames; ++t) rec.frame(t, run_frame_kestrel(tr, frames[static_cast<std::size_t>(t)], r.lost.back()));
        }
        r.metrics.push_back(rec.finish(spec.frames));
    }
    return r;
}

std::string seq_name(const SequenceSpec& s) {
    const std::string file = std::filesystem::path(s.photo).filename().string();
    std::string n = file.substr(0, file.find('.'));
    return n + "/" + to_string(s.motion) + "/s" + std::to_string(s.seed) + (s.drift ? "/drift" : "");
}

std::string num(double v, int prec = 4) {
    if (!std::isfinite(v)) return "null";
    std::ostringstream os;
    os.precision(prec);
    os << v;
    return os.str();
}

struct Overall {
    double median, p90, over, good, length, length_all;
    std::array<double, 3> survival;
};

Overall overall(const std::vector<SequenceResult>& rs, std::size_t k) {
    std::vector<double> med, p90, over;
    Overall o{};
    std::array<int, 3> ns{};
    for (const auto& r : rs) {
        const SequenceMetrics& m = r.metrics[k];
        med.push_back(m.median);
        p90.push_back(m.p90);
        over.push_back(m.over_1px);
        o.good += m.good_per_frame / rs.size();
        o.length += m.mean_length / rs.size();
        o.length_all += m.mean_length_all / rs.size();
        for (std::size_t a = 0; a < 3; ++a)
            if (std::isfinite(m.survival[a])) {
                o.survival[a] += m.survival[a];
                ++ns[a];
            }
    }
    for (std::size_t a = 0; a < 3; ++a) o.survival[a] = ns[a] ? o.survival[a] / ns[a] : NAN;
    o.median = geometric_mean(med);
    o.p90 = geometric_mean(p90);
    o.over = geometric_mean(over);
    return o;
}

void write_plot(const std::string& path, const std::vector<TrackerSpec>& ts, const std::vector<std::vector<std::array<double, 3>>>& curves, int max_age) {
    std::ofstream f(path);
    if (!f) usage_error("cannot write " + path);
    const double W = 760, H = 440, L = 60, R = 160, T = 20, B = 50;
    double ymax = 0.25;
    for (const auto& c : curves)
        for (const auto& p : c)
            if (std::isfinite(p[1])) ymax = std::max(ymax, p[1]);
    ymax = std::ceil(ymax * 4.0) / 4.0;
    auto X = [&](double a) { return L + (W - L - R) * (a - 1) / std::max(1, max_age - 1); };
    auto Y = [&](double e) { return H - B - (H - T - B) * e / ymax; };
    const char* colours[] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
    f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H << "' font-family='sans-serif' font-size='12'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n";
    for (int i = 0; i <= 4; ++i) {
        const double e = ymax * i / 4;
        f << "<line x1='" << L << "' x2='" << W - R << "' y1='" << Y(e) << "' y2='" << Y(e) << "' stroke='#ddd'/>"
          << "<text x='" << L - 6 << "' y='" << Y(e) + 4 << "' text-anchor='end'>" << num(e, 3) << "</text>\n";
    }
    for (int a = 0; a <= max_age; a += 20) {
        const int aa = std::max(a, 1);
        f << "<text x='" << X(aa) << "' y='" << H - B + 16 << "' text-anchor='middle'>" << a << "</text>\n";
    }
    f << "<text x='" << (L + W - R) / 2 << "' y='" << H - 12 << "' text-anchor='middle'>track age (frames since birth)</text>\n"
      << "<text transform='translate(16," << (T + H - B) / 2 << ") rotate(-90)' text-anchor='middle'>endpoint error (px): median solid, p90 dashed</text>\n";
    for (std::size_t k = 0; k < curves.size(); ++k) {
        for (int q = 1; q <= 2; ++q) {
            f << "<polyline fill='none' stroke='" << colours[k % 8] << "' stroke-width='1.5'" << (q == 2 ? " stroke-dasharray='5,3'" : "") << " points='";
            for (const auto& p : curves[k])
                if (std::isfinite(p[q])) f << X(p[0]) << "," << Y(std::min(p[q], ymax)) << " ";
            f << "'/>\n";
        }
        f << "<text x='" << W - R + 10 << "' y='" << T + 16 + 18 * k << "' fill='" << colours[k % 8] << "'>" << ts[k].name << "</text>\n";
    }
    f << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::vector<std::string> tracker_texts;
    std::string set = "full";
    std::string drift = "both", photos, seeds;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--data") o.data = val();
        else if (a == "--set") set = val();
        else if (a == "--photos") photos = val();
        else if (a == "--seeds") seeds = val();
        else if (a == "--drift") drift = val();
        else if (a == "--frames") o.frames = static_cast<int>(number(a, val()));
        else if (a == "--features") o.features = static_cast<int>(number(a, val()));
        else if (a == "--blur") o.blur = number(a, val());
        else if (a == "--noise") o.noise = number(a, val());
        else if (a == "--tracker") tracker_texts.push_back(val());
        else if (a == "--jobs") {
            const double j = number(a, val());
            if (j < 1 || j > 256 || j != std::floor(j)) usage_error("--jobs must be a whole number in [1, 256]");
            o.jobs = static_cast<int>(j);
        } else if (a == "--require") o.require.push_back(val());
        else if (a == "--json") o.json = val();
        else if (a == "--plot") o.plot = val();
        else if (a == "--baseline") o.baseline = val();
        else if (a == "--backend") {
            const std::string b = val();
            if (b == "cpu") o.backend = kestrel::Backend::Cpu;
            else if (b == "cuda") o.backend = kestrel::Backend::Cuda;
            else usage_error("--backend " + b + ": cpu or cuda");
            if (b == "cuda" && !kestrel::cuda_available()) usage_error("--backend cuda: no usable CUDA device on this machine (use --backend cpu)");
        } else if (a == "--help" || a == "-h") {
            std::cout << "see the header of tools/eval_tracking/main.cpp and docs/tracker.md\n";
            return 0;
        } else usage_error("unknown option " + a);
    }
    if (set == "full") o.photos = kFullSet;
    else if (set == "quick") {
        o.photos = {"graf1.png", "baboon.jpg", "home.jpg", "board.jpg"};
        o.seeds = {1};
    } else usage_error("--set " + set + ": full or quick");
    if (!photos.empty()) o.photos = split(photos, ',');
    if (!seeds.empty()) {
        o.seeds.clear();
        for (const auto& s : split(seeds, ',')) o.seeds.push_back(static_cast<std::uint32_t>(number("--seeds", s)));
    }
    if (drift == "on") o.drift = {true};
    else if (drift == "off") o.drift = {false};
    else if (drift != "both") usage_error("--drift " + drift + ": both, on or off");
    if (o.frames < 2) usage_error("--frames must be >= 2");
    if (tracker_texts.empty()) tracker_texts = {"kestrel", "opencv"};
    try {
        for (const auto& t : tracker_texts) o.trackers.push_back(parse_tracker(t, o.features));
    } catch (const std::exception& e) {
        usage_error(e.what());
    }
    std::vector<std::pair<std::size_t, std::vector<Bound>>> gates;  // tracker index, bounds
    for (const std::string& r : o.require) {
        const auto colon = r.find(':');
        if (colon == std::string::npos) usage_error("--require " + r + ": expected TRACKER:BOUNDS");
        const std::string name = r.substr(0, colon);
        std::size_t k = 0;
        while (k < o.trackers.size() && o.trackers[k].name != name) ++k;
        if (k == o.trackers.size()) usage_error("--require " + r + ": no tracker named '" + name + "'");
        gates.emplace_back(k, parse_bounds(r.substr(colon + 1)));
    }

    std::vector<SequenceSpec> specs;
    for (std::size_t p = 0; p < o.photos.size(); ++p)
        for (const std::uint32_t seed : o.seeds)
            for (const bool d : o.drift) {
                SequenceSpec s;
                s.photo = o.photos[p];
                s.motion = static_cast<Motion>((p + seed) % 4);
                s.seed = seed;
                s.drift = d;
                s.frames = o.frames;
                s.blur_sigma = o.blur;
                s.noise_sigma = o.noise;
                specs.push_back(s);
            }
    std::vector<SequenceResult> results(specs.size());
    std::atomic<std::size_t> next{0};
    std::mutex io;
    std::string failure;
    auto worker = [&] {
        for (std::size_t k; (k = next++) < specs.size();) {
            try {
                results[k] = run_sequence(o, specs[k]);
                std::lock_guard<std::mutex> lock(io);
                std::cerr << "  " << seq_name(specs[k]) << " done\n";
            } catch (const std::exception& e) {
                std::lock_guard<std::mutex> lock(io);
                failure = seq_name(specs[k]) + ": " + e.what();
            }
        }
    };
    std::vector<std::thread> pool;
    for (int j = 0; j < std::min<int>(o.jobs, static_cast<int>(specs.size())); ++j) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
    if (!failure.empty()) {
        std::cerr << "kestrel_eval_tracking: " << failure << "\n";
        return 1;
    }

    // Table per sequence.
    std::printf("%-34s %-14s %7s %7s %7s %7s %7s %6s %6s %6s  (step px)\n", "sequence", "tracker", "median", "p90",
                ">1px%", "good/f", "length", "s30", "s60", "s120");
    for (const auto& r : results) {
        for (std::size_t k = 0; k < o.trackers.size(); ++k) {
            const SequenceMetrics& m = r.metrics[k];
            std::printf("%-34s %-14s %7.3f %7.3f %7.2f %7.1f %7.1f %6.2f %6.2f %6.2f  %s\n", k ? "" : seq_name(r.spec).c_str(),
                        o.trackers[k].name.c_str(), m.median, m.p90, 100 * m.over_1px, m.good_per_frame, m.mean_length,
                        m.survival[0], m.survival[1], m.survival[2], k ? "" : num(r.max_step, 3).c_str());
        }
    }
    std::size_t base = o.trackers.size();
    for (std::size_t k = 0; k < o.trackers.size(); ++k)
        if (o.trackers[k].name == o.baseline) base = k;
    std::printf("\noverall (%zu sequences; median, p90, >1px: geometric means; the rest arithmetic)\n", results.size());
    std::printf("%-20s %7s %7s %7s %7s %7s %7s %6s %6s %6s   wins vs %s: median, >1px, length, s120\n", "tracker", "median", "p90", ">1px%",
                "good/f", "length", "all", "s30", "s60", "s120", o.baseline.c_str());
    std::vector<Overall> ov;
    for (std::size_t k = 0; k < o.trackers.size(); ++k) {
        const Overall v = overall(results, k);
        ov.push_back(v);
        std::string wins;
        if (base < o.trackers.size() && base != k) {
            int w[4] = {0, 0, 0, 0};
            for (const auto& r : results) {
                const auto &a = r.metrics[k], &b = r.metrics[base];
                w[0] += a.median < b.median;
                w[1] += a.over_1px <= b.over_1px;
                w[2] += a.mean_length >= b.mean_length;
                w[3] += !(a.survival[2] < b.survival[2]);
            }
            wins = std::to_string(w[0]) + ", " + std::to_string(w[1]) + ", " + std::to_string(w[2]) + ", " + std::to_string(w[3]) + " of " +
                   std::to_string(results.size());
        }
        std::printf("%-20s %7.4f %7.3f %7.2f %7.1f %7.1f %7.1f %6.3f %6.3f %6.3f   %s\n", o.trackers[k].name.c_str(), v.median, v.p90,
                    100 * v.over, v.good, v.length, v.length_all, v.survival[0], v.survival[1], v.survival[2], wins.c_str());
    }

    std::printf("\ntracks lost, by reason (every sequence):\n");
    for (std::size_t k = 0; k < o.trackers.size(); ++k) {
        std::map<std::string, long> sum;
        for (const auto& r : results)
            for (const auto& [why, n] : r.lost[k]) sum[why] += n;
        std::printf("  %-20s", o.trackers[k].name.c_str());
        for (const auto& [why, n] : sum) std::printf(" %s %ld;", why.c_str(), n);
        std::printf("\n");
    }

    // Error against age over every sequence.
    int max_age = o.frames - 1;
    std::vector<std::vector<std::array<double, 3>>> curves(o.trackers.size());
    for (std::size_t k = 0; k < o.trackers.size(); ++k)
        for (int a = 1; a <= max_age; ++a) {
            std::vector<float> v;
            for (const auto& r : results) {
                const auto& ba = r.metrics[k].error_by_age;
                if (static_cast<std::size_t>(a) < ba.size()) v.insert(v.end(), ba[a].begin(), ba[a].end());
            }
            curves[k].push_back({double(a), quantile(v, 0.5), quantile(v, 0.9)});
        }
    if (!o.plot.empty()) write_plot(o.plot, o.trackers, curves, max_age);
    if (!o.json.empty()) {
        std::ofstream j(o.json);
        if (!j) usage_error("cannot write " + o.json);
        j << "{\n  \"frames\": " << o.frames << ", \"features\": " << o.features << ", \"blur\": " << o.blur << ", \"noise\": " << o.noise
          << ",\n  \"trackers\": [";
        for (std::size_t k = 0; k < o.trackers.size(); ++k) j << (k ? ", " : "") << "\"" << o.trackers[k].name << "\"";
        j << "],\n  \"sequences\": [\n";
        for (std::size_t s = 0; s < results.size(); ++s) {
            const auto& r = results[s];
            j << "    {\"name\": \"" << seq_name(r.spec) << "\", \"photo\": \"" << r.spec.photo << "\", \"motion\": \"" << to_string(r.spec.motion)
              << "\", \"seed\": " << r.spec.seed << ", \"drift\": " << (r.spec.drift ? "true" : "false") << ", \"max_step_px\": " << num(r.max_step)
              << ", \"results\": {";
            for (std::size_t k = 0; k < o.trackers.size(); ++k) {
                const auto& m = r.metrics[k];
                j << (k ? ", " : "") << "\"" << o.trackers[k].name << "\": {\"median\": " << num(m.median) << ", \"p90\": " << num(m.p90)
                  << ", \"over_1px\": " << num(m.over_1px) << ", \"good_per_frame\": " << num(m.good_per_frame) << ", \"mean_length\": "
                  << num(m.mean_length) << ", \"mean_length_all\": " << num(m.mean_length_all) << ", \"survival\": [" << num(m.survival[0])
                  << ", " << num(m.survival[1]) << ", " << num(m.survival[2]) << "], \"observations\": " << m.observations
                  << ", \"tracks\": " << m.tracks << "}";
            }
            j << "}}" << (s + 1 < results.size() ? "," : "") << "\n";
        }
        j << "  ],\n  \"overall\": {";
        for (std::size_t k = 0; k < o.trackers.size(); ++k) {
            const Overall& v = ov[k];
            j << (k ? ", " : "") << "\"" << o.trackers[k].name << "\": {\"median\": " << num(v.median) << ", \"p90\": " << num(v.p90)
              << ", \"over_1px\": " << num(v.over) << ", \"good_per_frame\": " << num(v.good) << ", \"mean_length\": " << num(v.length)
              << ", \"survival\": [" << num(v.survival[0]) << ", " << num(v.survival[1]) << ", " << num(v.survival[2]) << "]}";
        }
        j << "},\n  \"error_by_age\": {";
        for (std::size_t k = 0; k < o.trackers.size(); ++k) {
            j << (k ? ", " : "") << "\"" << o.trackers[k].name << "\": [";
            for (std::size_t a = 0; a < curves[k].size(); ++a)
                j << (a ? ", " : "") << "[" << curves[k][a][0] << ", " << num(curves[k][a][1]) << ", " << num(curves[k][a][2]) << "]";
            j << "]";
        }
        j << "}\n}\n";
    }

    // --require: the gates on the overall rows.
    bool all_met = true;
    for (const auto& [k, bounds] : gates) {
        const Overall& v = ov[k];
        for (const Bound& b : bounds) {
            const double x = b.metric == "median" ? v.median : b.metric == "p90" ? v.p90 : b.metric == "over_1px" ? v.over
                           : b.metric == "good_per_frame" ? v.good : b.metric == "length" ? v.length
                           : b.metric == "s30" ? v.survival[0] : b.metric == "s60" ? v.survival[1] : v.survival[2];
            const bool met = b.at_most ? x <= b.value : x >= b.value;  // NaN (no such age) is never met
            all_met = all_met && met;
            std::printf("require %s: %s %.4g %s %.4g: %s\n", o.trackers[k].name.c_str(), b.metric.c_str(), x,
                        b.at_most ? "<=" : ">=", b.value, met ? "met" : "NOT MET");
        }
    }
    if (!gates.empty()) std::printf("requirements: %s\n", all_met ? "MET" : "NOT MET");
    return all_met ? 0 : 1;
}
