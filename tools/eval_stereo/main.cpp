// kestrel_eval_stereo: the stereo tracker's disparity accuracy beside OpenCV's (docs/stereo.md).
//
//   kestrel_eval_stereo [--data DIR] [--backend cpu|cuda|both] [--levels N] [--gt-scale S] [--features N]
//                       [--refine-levels N] [--trust-distance PX] [--no-scenes] [--no-aloe] [--require]
//
// Middlebury's aloe pair from opencv-doc (DIR, default /usr/share/doc/opencv-doc/examples/data: aloeL.jpg,
// aloeR.jpg, aloeGT.png, the ground-truth disparity of the left image, 0 = unknown, scale S px per grey level,
// default 1): the StereoTracker's first frame detects the features in aloeL and matches them into aloeR;
// OpenCV's pyramidal LK matches the same points left to right, and OpenCV's SGBM disparity map is sampled at
// them. Then the generated scenes of the tests (tests/support/stereo_scenes.hpp), where the truth is exact, and
// three sequences of them with the rig moving (the tracks seeded by their previous matches; scored over every frame
// but the first), where Kestrel is also shown with every track matched back (trust_distance 0).
// Printed per method: points with a known truth, matched, median |error|, % over 1 px, % unmatched.
// Kestrel: unmatched = not StereoStatus::Matched. OpenCV LK: status 0 or |right y - left y| > 1 px (the epipolar
// tolerance of both). SGBM: an invalid disparity at any of the four pixels around the point.
// Aloe: Kestrel's first frame (every track seeded at zero disparity) and its fifth on the same pair (the tracks
// seeded by their previous disparity or their neighbours'); the disparities at the features are 44 to 139 px.
// --refine-levels, --trust-distance: StereoMatchConfig's fields for every Kestrel row (default: its defaults).
// --levels: Kestrel's pyramid levels (default 5, StereoConfig's) and those of the "Kestrel's settings" LK row
// (window 16, maxLevel levels - 1); OpenCV's own defaults (21x21, maxLevel 3) are the other LK row.
// --require: exit 1 unless every Kestrel row (each backend) meets its table's bounds: the median error, the share
// over 1 px and the share unmatched at most those stated per table (kBounds below: the figures of the CPU
// backend at 200 features, 5 levels, plus a margin), and printed as met or NOT MET; exit status 2 on a usage error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>

#include "kestrel/device_image.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "stereo_eval.hpp"
#include "stereo_scenes.hpp"

using namespace kestrel_eval;

namespace {

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "kestrel_eval_stereo: " << what << " (see the header of tools/eval_stereo/main.cpp)\n";
    std::exit(2);
}

double number(const std::string& key, const std::string& v) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d)) usage_error(key + " " + v + ": not a number");
    return d;
}

struct Options {
    std::string data = "/usr/share/doc/opencv-doc/examples/data";
    std::vector<kestrel::Backend> backends;
    int levels = 5;
    double gt_scale = 1.0;
    int features = 200;
    int refine_levels = -1;         // -1: StereoMatchConfig's default
    double trust_distance = -1.0;   // < 0: StereoMatchConfig's default
    bool scenes = true, aloe = true;
    bool require = false;
};

/// --require: the bounds of the Kestrel rows of one table.
struct Bounds {
    double median;     ///< median |error|, px
    double over_1px;   ///< share of the matched points over 1 px
    double unmatched;  ///< share of the points not matched
};

// Today's figures (CPU backend, 200 features, 5 levels) and the bounds --require holds them to. Generated scenes
// (exact truth): the median plus half of it and 0.005 px; at most 1 % over 1 px (2 of 200 points) where none is
// today; the unmatched share plus 1 % (2 points).
//   frontal 12.37 px: 0.008 px, 0 %, 0 %      slanted: 0.021 px, 0 %, 0 %      frontal 0.43 px: 0.008 px, 0 %, 0 %
//   frontal 33.7 px:  0.008 px, 0 %, 2.5 %    raw rig: 0.042 px, 0 %, 0 %
// Aloe (195 points with a known truth, in whole grey levels): frame 1 (every track seeded at zero disparity: most
// of the 44-139 px disparities are out of reach) 0.314 px, 0 % over 1 px, 69.2 % unmatched; frame 5 (seeded)
// 0.310 px, 1.0 %, 46.2 %. Bounds: the median plus 0.06 px, the shares over 1 px plus 1.5 % (3 points), the
// unmatched shares plus 3 % (6 points).
const Bounds kAloeFrame1{0.375, 0.015, 0.722}, kAloeFrame5{0.37, 0.025, 0.492};
const Bounds kScene[5] = {{0.017, 0.01, 0.01}, {0.037, 0.01, 0.01}, {0.017, 0.01, 0.01}, {0.017, 0.01, 0.035},
                          {0.068, 0.01, 0.01}};
// The moving-rig sequences (every frame but the first pooled; the same bounds' rule as the scenes): 4 cm a frame
// 0.015 px, 0 %, 2.2 % (1692 points); 15 cm a frame 0.015 px, 0 %, 0.1 % (801 points); 40 cm a frame (the
// disparity grows by 2 to 5 px a frame) 0.020 px, 0 %, 1.3 % (620 points).
const Bounds kSequence[3] = {{0.028, 0.01, 0.032}, {0.028, 0.01, 0.012}, {0.035, 0.01, 0.023}};

/// Checks one Kestrel row against its bounds; prints each; false when one is not met.
bool check(const std::string& table, const StereoScore& r, const Bounds& b) {
    bool ok = true;
    const auto one = [&](const char* what, double v, double limit) {
        const bool met = v <= limit;  // NaN (nothing matched) is never met
        ok = ok && met;
        std::printf("require %s, %s: %s %.4g <= %.4g: %s\n", table.c_str(), r.method.c_str(), what, v, limit,
                    met ? "met" : "NOT MET");
    };
    one("median error (px)", r.points ? r.median_error : NAN, b.median);
    one("share over 1 px", r.points ? r.over_1px : NAN, b.over_1px);
    one("share unmatched", r.points ? r.unmatched : NAN, b.unmatched);
    return ok;
}

kestrel::StereoConfig config(const Options& o, int levels) {
    kestrel::StereoConfig c;
    c.match.lk.pyramid.levels = levels;  // the matching's levels (the temporal tracking keeps its own)
    if (o.refine_levels >= 0) c.match.refine_levels = o.refine_levels;
    c.match.refine_levels = std::min(c.match.refine_levels, levels);  // a carried seed refines on at most all of them
    if (o.trust_distance >= 0) c.match.trust_distance = static_cast<float>(o.trust_distance);
    c.tracker.target_features = o.features;
    return c;
}

const char* name(kestrel::Backend b) { return b == kestrel::Backend::Cuda ? "CUDA" : "CPU"; }

cv::Mat as_mat(const kestrel::HostImage& img) {
    cv::Mat m(img.height(), img.width(), CV_8UC1);
    for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x) m.at<unsigned char>(y, x) = img.at(x, y);
    return m;
}

kestrel::HostImage as_image(const cv::Mat& m) {
    kestrel::HostImage img(m.cols, m.rows);
    for (int y = 0; y < m.rows; ++y)
        for (int x = 0; x < m.cols; ++x) img.at(x, y) = m.at<unsigned char>(y, x);
    return img;
}

std::vector<double> kestrel_disparities(const std::vector<kestrel::StereoTrack>& t) {
    std::vector<double> d(t.size(), NAN);
    for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i].status == kestrel::StereoStatus::Matched) d[i] = t[i].disparity;
    return d;
}

std::vector<cv::Point2f> left_points(const std::vector<kestrel::StereoTrack>& t) {
    std::vector<cv::Point2f> p;
    for (const auto& s : t) p.emplace_back(s.left.x, s.left.y);
    return p;
}

bool aloe(const Options& o) {
    const cv::Mat L = cv::imread(o.data + "/aloeL.jpg", cv::IMREAD_GRAYSCALE);
    const cv::Mat R = cv::imread(o.data + "/aloeR.jpg", cv::IMREAD_GRAYSCALE);
    const cv::Mat GT = cv::imread(o.data + "/aloeGT.png", cv::IMREAD_UNCHANGED);
    if (L.empty() || R.empty() || GT.empty() || GT.type() != CV_8UC1)
        usage_error("cannot read aloeL.jpg, aloeR.jpg and an 8-bit grey aloeGT.png in " + o.data +
                    " (Debian's opencv-doc; or --data)");
    std::printf("Middlebury aloe (opencv-doc), %dx%d, ground truth: aloeGT.png x %.3g px\n", L.cols, L.rows, o.gt_scale);
    // The rig only scales depth, which is not scored here: Middlebury 2006's full-size focal and baseline.
    const kestrel::StereoRig rig = kestrel::rectified_rig(3740.0, (L.cols - 1) * 0.5, (L.rows - 1) * 0.5, 0.160);
    const kestrel::HostImage left = as_image(L), right = as_image(R);
    std::vector<cv::Point2f> pts;  // the first tracker's first-frame features: the points of OpenCV's rows
    std::vector<StereoScore> rows;
    for (kestrel::Backend b : o.backends) {
        kestrel::StereoTracker t(L.cols, L.rows, rig, config(o, o.levels), b);
        // Frame 1: every track new, seeded at zero disparity. Then the same pair again (frames 2 to 5): the tracks
        // seed with their previous disparity or their matched neighbours' median, as in a sequence.
        for (int frame = 1; frame <= 5; ++frame) {
            const auto& tracks = t.track(left.view(), right.view());
            if (frame != 1 && frame != 5) continue;
            if (pts.empty()) pts = left_points(tracks);
            rows.push_back(score("Kestrel " + std::string(name(b)) + ", frame " + std::to_string(frame),
                                 kestrel_disparities(tracks), ground_truth_at(GT, left_points(tracks), o.gt_scale)));
        }
    }
    const auto gt = ground_truth_at(GT, pts, o.gt_scale);
    rows.push_back(score("OpenCV LK 21x21, maxLevel 3", opencv_lk_disparities(L, R, pts, 21, 3), gt));
    rows.push_back(score("OpenCV LK 16x16, maxLevel " + std::to_string(o.levels - 1),
                         opencv_lk_disparities(L, R, pts, 16, o.levels - 1), gt));
    const cv::Mat sgbm = sgbm_map(L, R, SgbmSettings{});
    const auto sgbm_d = sample_disparities(sgbm, pts);
    rows.push_back(score("OpenCV SGBM (HH, block 5, 256 disp.)", sgbm_d, gt));
    std::printf("%s\n", table_header().c_str());
    for (const auto& r : rows) std::printf("%s\n", table_row(r).c_str());
    bool ok = true;
    if (o.require)
        for (std::size_t k = 0; k < 2 * o.backends.size(); ++k)
            ok = check("aloe", rows[k], k % 2 ? kAloeFrame5 : kAloeFrame1) && ok;
    // The ground truth's scale, from the data: SGBM's disparity over the ground truth's grey level at every
    // pixel where both are known (integer grey levels: the ratio's median is the scale within ~1 %).
    std::vector<double> ratio;
    for (int y = 0; y < GT.rows; y += 2)
        for (int x = 0; x < GT.cols; x += 2) {
            const int g = GT.at<unsigned char>(y, x);
            const short s = sgbm.at<short>(y, x);
            if (g > 0 && s > 0) ratio.push_back(s / 16.0 / g);
        }
    if (!ratio.empty()) {
        std::nth_element(ratio.begin(), ratio.begin() + ratio.size() / 2, ratio.end());
        std::printf("ground-truth scale check: median SGBM disparity / GT grey level = %.4f over %zu pixels "
                    "(1: the grey level is the disparity in pixels of these %dx%d images)\n",
                    ratio[ratio.size() / 2], ratio.size(), L.cols, L.rows);
    }
    return ok;
}

// The rig moving in front of the slanted plane (frame k: translated by k * step, yawed by k * yaw): Kestrel's
// matches of frames 2 to N pooled (the tracks seeded by their previous matches), with its settings and with every
// track matched back (trust_distance 0). Error: |disparity - truth|.
bool sequences(const Options& o) {
    struct Sequence {
        std::string what;
        kestrel::test::Vec3 step;
        double yaw;
        int frames;
    };
    const Sequence list[3] = {
        {"moving rig, slanted plane, 752x480, 10 frames of 4 cm forward, 0.25 deg yaw", {{0.006, -0.003, 0.04}}, 0.25, 10},
        {"moving rig, slanted plane, 752x480, 10 frames of 15 cm forward, 1 deg yaw", {{0.02, -0.01, 0.15}}, 1.0, 10},
        {"moving rig, slanted plane, 752x480, 6 frames of 40 cm forward (16 to 31 px), 1 deg yaw", {{0.02, -0.01, 0.4}},
         1.0, 6}};
    bool ok = true;
    for (std::size_t n = 0; n < 3; ++n) {
        const auto frames =
            kestrel::test::stereo_sequence(kestrel::test::slanted_scene(752, 480, 16.0, 0.015, 0.008, 9),
                                           list[n].frames, list[n].step, list[n].yaw);
        std::printf("\n%s (%d levels), frames 2 to %zu: error = |disparity - truth|\n", list[n].what.c_str(), o.levels,
                    frames.size());
        std::vector<StereoScore> rows;
        for (const bool every_back : {false, true}) {
            kestrel::StereoConfig cfg = config(o, o.levels);
            cfg.match.min_disparity = -1.0f;
            if (every_back) cfg.match.trust_distance = 0.0f;
            for (kestrel::Backend b : o.backends) {
                kestrel::StereoTracker t(752, 480, frames[0].rig, cfg, b);
                std::vector<cv::Point2d> right, truth;
                for (std::size_t k = 0; k < frames.size(); ++k) {
                    const auto& tracks = t.track(frames[k].left.view(), frames[k].right.view());
                    if (k == 0) continue;
                    for (const auto& s : tracks) {
                        const kestrel::Point2d tr = frames[k].right_of(s.left.x, s.left.y);
                        truth.emplace_back(tr.x, s.left.y);  // the disparity's error (the row is checked, not scored)
                        right.push_back(s.status == kestrel::StereoStatus::Matched ? cv::Point2d(s.right_x, s.left.y)
                                                                                  : cv::Point2d(NAN, NAN));
                    }
                }
                char trust[48];
                std::snprintf(trust, sizeof trust, ", trust_distance %g", static_cast<double>(cfg.match.trust_distance));
                rows.push_back(score_points(std::string("Kestrel ") + name(b) + trust, right, truth));
            }
        }
        std::printf("%s\n", table_header().c_str());
        for (const auto& r : rows) std::printf("%s\n", table_row(r).c_str());
        if (o.require)
            for (std::size_t k = 0; k < o.backends.size(); ++k) ok = check(list[n].what, rows[k], kSequence[n]) && ok;
    }
    return ok;
}

bool scenes(const Options& o) {
    using kestrel::test::StereoScene;
    struct Scene {
        std::string what;
        StereoScene s;
        int levels;
    };
    std::vector<Scene> list;
    const int L = o.levels;
    list.push_back({"frontal plane, 752x480, disparity 12.37 px", kestrel::test::frontal_scene(752, 480, 12.37), L});
    list.push_back({"slanted plane, 641x479, 11.6 .. 24.4 px", kestrel::test::slanted_scene(641, 479, 18.0, 0.02, -0.01), L});
    list.push_back({"frontal plane, 752x480, disparity 0.43 px", kestrel::test::frontal_scene(752, 480, 0.43, 1232), L});
    list.push_back({"frontal plane, 752x480, disparity 33.7 px", kestrel::test::frontal_scene(752, 480, 33.7, 1232), L});
    list.push_back({"raw rig, radtan, rotated 3 deg, 752x480", kestrel::test::raw_scene(752, 480, 3.0, true), L});
    bool ok = true;
    for (std::size_t n = 0; n < list.size(); ++n) {
        const Scene& sc = list[n];
        const StereoScene& s = sc.s;
        const bool raw = s.rig.type == kestrel::RigType::Raw;
        std::printf("\n%s (%d levels)%s\n", sc.what.c_str(), sc.levels,
                    raw ? ": error = |right pixel - truth|" : ": error = |disparity - truth|");
        kestrel::StereoConfig cfg = config(o, sc.levels);
        cfg.match.min_disparity = raw ? -200.0f : -1.0f;
        cfg.match.max_disparity = raw ? 400.0f : 256.0f;
        std::vector<cv::Point2f> pts;
        std::vector<StereoScore> rows;
        for (kestrel::Backend b : o.backends) {
            kestrel::StereoTracker t(s.left.width(), s.left.height(), s.rig, cfg, b);
            const auto& tracks = t.track(s.left.view(), s.right.view());
            if (pts.empty()) pts = left_points(tracks);
            std::vector<cv::Point2d> right, truth;
            for (const auto& k : tracks) {
                const kestrel::Point2d tr = s.right_of(k.left.x, k.left.y);
                truth.emplace_back(tr.x, tr.y);
                right.push_back(k.status == kestrel::StereoStatus::Matched ? cv::Point2d(k.right_x, k.right_y)
                                                                            : cv::Point2d(NAN, NAN));
            }
            rows.push_back(score_points(std::string("Kestrel ") + name(b), right, truth));
        }
        const cv::Mat L = as_mat(s.left), R = as_mat(s.right);
        std::vector<cv::Point2d> truth;
        std::vector<double> truth_d;
        for (const auto& p : pts) {
            const kestrel::Point2d tr = s.right_of(p.x, p.y);
            truth.emplace_back(tr.x, tr.y);
            truth_d.push_back(p.x - tr.x);
        }
        for (const auto& lk : {std::make_pair(21, 3), std::make_pair(16, sc.levels - 1)}) {
            const std::string what = "OpenCV LK " + std::to_string(lk.first) + "x" + std::to_string(lk.first) +
                                     ", maxLevel " + std::to_string(lk.second);
            if (raw) {
                rows.push_back(score_points(what, opencv_lk_points(L, R, pts, lk.first, lk.second), truth));
            } else {
                const auto d = opencv_lk_disparities(L, R, pts, lk.first, lk.second);
                std::vector<cv::Point2d> right;
                for (std::size_t i = 0; i < pts.size(); ++i) right.emplace_back(pts[i].x - d[i], std::isfinite(d[i]) ? pts[i].y : NAN);
                std::vector<cv::Point2d> truth_x;  // disparity error only (the y of LK's match is checked, not scored)
                for (std::size_t i = 0; i < pts.size(); ++i) truth_x.emplace_back(truth[i].x, pts[i].y);
                rows.push_back(score_points(what, right, truth_x));
            }
        }
        if (!raw) {
            SgbmSettings ss;
            ss.min_disparity = -16;
            ss.num_disparities = 96;
            const auto d = sample_disparities(sgbm_map(L, R, ss), pts, ss.min_disparity);
            rows.push_back(score("OpenCV SGBM (HH, block 5)", d, truth_d));
        }
        std::printf("%s\n", table_header().c_str());
        for (const auto& r : rows) std::printf("%s\n", table_row(r).c_str());
        if (o.require)
            for (std::size_t k = 0; k < o.backends.size(); ++k) ok = check(sc.what, rows[k], kScene[n]) && ok;
    }
    return sequences(o) && ok;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::string backend = kestrel::cuda_available() ? "both" : "cpu";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto val = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--data") o.data = val();
        else if (a == "--backend") backend = val();
        else if (a == "--levels") o.levels = static_cast<int>(number(a, val()));
        else if (a == "--gt-scale") o.gt_scale = number(a, val());
        else if (a == "--features") o.features = static_cast<int>(number(a, val()));
        else if (a == "--refine-levels") o.refine_levels = static_cast<int>(number(a, val()));
        else if (a == "--trust-distance") o.trust_distance = number(a, val());
        else if (a == "--no-scenes") o.scenes = false;
        else if (a == "--no-aloe") o.aloe = false;
        else if (a == "--require") o.require = true;
        else if (a == "--help" || a == "-h") {
            std::cout << "see the header of tools/eval_stereo/main.cpp and docs/stereo.md\n";
            return 0;
        } else usage_error("unknown option " + a);
    }
    if (backend == "cpu") o.backends = {kestrel::Backend::Cpu};
    else if (backend == "cuda") o.backends = {kestrel::Backend::Cuda};
    else if (backend == "both") o.backends = {kestrel::Backend::Cpu, kestrel::Backend::Cuda};
    else usage_error("--backend " + backend + ": cpu, cuda or both");
    if (backend != "cpu" && !kestrel::cuda_available())
        usage_error("--backend " + backend + ": no usable CUDA device on this machine (use --backend cpu)");
    if (o.levels < 1 || o.levels > 8) usage_error("--levels must be in [1, 8]");
    if (!(o.gt_scale > 0)) usage_error("--gt-scale must be > 0");
    if (!o.aloe && !o.scenes) usage_error("--no-scenes and --no-aloe leave nothing to evaluate");
    bool ok = true;
    try {
        if (o.aloe) ok = aloe(o) && ok;
        if (o.scenes) ok = scenes(o) && ok;
    } catch (const std::exception& e) {
        std::cerr << "kestrel_eval_stereo: " << e.what() << "\n";
        return 1;
    }
    if (o.require) std::printf("\nrequirements: %s\n", ok ? "MET" : "NOT MET");
    return ok ? 0 : 1;
}
