// kestrel_eval_matching: how well Kestrel's ORB features match, beside cv::ORB on the same image pairs
// (docs/features.md, "Matching quality").
//
//   kestrel_eval_matching [--data DIR] [--set full|quick] [--policies P,P,...] [--features N]
//                         [--require POLICY] [--backend cpu|cuda]
//
// Pairs: photos of opencv-doc (DIR, default /usr/share/doc/opencv-doc/examples/data) each against a copy
// under a generated homography (rotation, scale, perspective, shift), gain, offset and Gaussian noise (a
// deterministic set: pair_transform() below, seeded by the pair's index), and graf1 -> graf3 under the
// published H1to3p. --set quick: two photos and graf (the ctest run).
// Every method: N features (default 1000) on 8 levels of 1.2, ORB descriptors, brute-force Hamming with the
// 2-nearest ratio test 0.8; a match is correct when the first keypoint projected by the homography lies
// within 3 px of the second. Repeatability (on points): the keypoints of image 1 projecting inside image 2
// with a keypoint of image 2 within 3 px, over the smaller of the two counts of keypoints projecting into
// the other image. Sums over the set: correct matches, precision (correct / accepted), repeatability
// (repeated / common).
// Methods: cv::ORB (ORB::create(N, 1.2f, 8): FAST threshold 20, Harris ranking per level, 31 px edge) and the
// Kestrel policies: grid (docs/features.md's cv::ORB comparison configuration), orb-slam, level-harris.
// --require POLICY: exit 1 unless POLICY's sums reach cv::ORB's correct matches, precision and repeatability.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <opencv2/calib3d.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "kestrel/device_image.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/matcher.hpp"
#include "kestrel/orb.hpp"

namespace {

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "kestrel_eval_matching: " << what << " (see the header of tools/eval_matching/main.cpp)\n";
    std::exit(2);
}

struct Options {
    std::string data = "/usr/share/doc/opencv-doc/examples/data";
    bool quick = false;
    std::vector<std::string> policies{"grid", "orb-slam", "level-harris"};
    int features = 1000;
    std::string require;
    kestrel::Backend backend = kestrel::Backend::Cpu;
};

// The photos of the generated pairs (opencv-doc examples/data).
const std::vector<std::string> kPhotos = {"baboon.jpg",  "building.jpg", "fruits.jpg",      "home.jpg",  "messi5.jpg",
                                          "aero1.jpg",   "leuvenA.jpg",  "box_in_scene.png", "board.jpg"};
const std::vector<std::string> kQuickPhotos = {"building.jpg", "box_in_scene.png"};

struct Pair {
    std::string name;
    cv::Mat a, b;  // 8-bit grey
    cv::Mat h;     // 3x3 double: a -> b
};

/// Deterministic uniform numbers in [0, 1) (splitmix64: the same on every platform).
struct Random {
    std::uint64_t s;
    double next() {
        std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
    }
    double uniform(double lo, double hi) { return lo + (hi - lo) * next(); }
    double gauss() {  // Box-Muller
        const double u = std::max(next(), 1e-300), v = next();
        return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
    }
};

/// Pair i of a photo: a homography about the image centre (rotation in [-30, 30] degrees, scale in
/// [0.8, 1.25], perspective terms up to 2e-4 / px, shift up to 5 % of the size), then gain in [0.8, 1.2],
/// offset in [-20, 20] and Gaussian noise of sigma 3 grey levels, rounded and clamped to [0, 255].
Pair generated_pair(const std::string& name, const cv::Mat& a, int index) {
    Random r{0x6B657374ull * 1000003ull + static_cast<std::uint64_t>(index)};
    const double w = a.cols, hgt = a.rows, cx = w / 2, cy = hgt / 2;
    const double th = r.uniform(-30, 30) * 3.141592653589793 / 180, s = std::exp(r.uniform(std::log(0.8), std::log(1.25)));
    const double p1 = r.uniform(-2e-4, 2e-4), p2 = r.uniform(-2e-4, 2e-4);
    const double tx = r.uniform(-0.05, 0.05) * w, ty = r.uniform(-0.05, 0.05) * hgt;
    const cv::Mat to = (cv::Mat_<double>(3, 3) << 1, 0, -cx, 0, 1, -cy, 0, 0, 1);
    const cv::Mat rs = (cv::Mat_<double>(3, 3) << s * std::cos(th), -s * std::sin(th), 0, s * std::sin(th),
                        s * std::cos(th), 0, p1, p2, 1);
    const cv::Mat back = (cv::Mat_<double>(3, 3) << 1, 0, cx + tx, 0, 1, cy + ty, 0, 0, 1);
    Pair p;
    p.name = name;
    p.a = a;
    p.h = back * rs * to;
    cv::Mat warped;
    cv::warpPerspective(a, warped, p.h, a.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT, cv::Scalar(0));
    const double gain = r.uniform(0.8, 1.2), offset = r.uniform(-20, 20);
    p.b.create(a.size(), CV_8UC1);
    for (int y = 0; y < a.rows; ++y)
        for (int x = 0; x < a.cols; ++x) {
            const double v = gain * warped.at<std::uint8_t>(y, x) + offset + 3.0 * r.gauss();
            p.b.at<std::uint8_t>(y, x) = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
    return p;
}

cv::Mat read_grey(const std::string& path) {
    cv::Mat m = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (m.empty()) usage_error("cannot read " + path);
    return m;
}

std::vector<Pair> make_pairs(const Options& o) {
    std::vector<Pair> pairs;
    const std::vector<std::string>& photos = o.quick ? kQuickPhotos : kPhotos;
    for (std::size_t i = 0; i < photos.size(); ++i)
        pairs.push_back(generated_pair(photos[i], read_grey(o.data + "/" + photos[i]), static_cast<int>(i)));
    Pair g;
    g.name = "graf1->graf3";
    g.a = read_grey(o.data + "/graf1.png");
    g.b = read_grey(o.data + "/graf3.png");
    cv::FileStorage fs(o.data + "/H1to3p.xml", cv::FileStorage::READ);
    if (!fs.isOpened()) usage_error("cannot read " + o.data + "/H1to3p.xml");
    fs.getFirstTopLevelNode() >> g.h;
    g.h.convertTo(g.h, CV_64F);
    pairs.push_back(g);
    return pairs;
}

/// One image's features: level-0 positions and 32-byte descriptors.
struct Features {
    std::vector<cv::Point2f> pts;
    cv::Mat desc;  // n x 32, CV_8U
};

struct Score {
    long features = 0, accepted = 0, correct = 0, repeated = 0, common = 0;
    void add(const Score& s) {
        features += s.features;
        accepted += s.accepted;
        correct += s.correct;
        repeated += s.repeated;
        common += s.common;
    }
    double precision() const { return accepted ? static_cast<double>(correct) / accepted : 0.0; }
    double repeatability() const { return common ? static_cast<double>(repeated) / common : 0.0; }
};

cv::Point2d project(const cv::Mat& h, cv::Point2f p) {
    const double x = h.at<double>(0, 0) * p.x + h.at<double>(0, 1) * p.y + h.at<double>(0, 2);
    const double y = h.at<double>(1, 0) * p.x + h.at<double>(1, 1) * p.y + h.at<double>(1, 2);
    const double w = h.at<double>(2, 0) * p.x + h.at<double>(2, 1) * p.y + h.at<double>(2, 2);
    return {x / w, y / w};
}
bool inside(cv::Point2d p, const cv::Mat& im) { return p.x >= 0 && p.y >= 0 && p.x <= im.cols - 1 && p.y <= im.rows - 1; }

constexpr double kTolerance = 3.0;

Score score(const Pair& p, const Features& fa, const Features& fb) {
    Score s;
    s.features = static_cast<long>(fa.pts.size() + fb.pts.size());
    if (!fa.desc.empty() && !fb.desc.empty()) {
        std::vector<std::vector<cv::DMatch>> knn;
        cv::BFMatcher(cv::NORM_HAMMING).knnMatch(fa.desc, fb.desc, knn, 2);
        for (const auto& m : knn) {
            if (m.empty()) continue;
            if (m.size() == 2 && !(m[0].distance < 0.8f * m[1].distance)) continue;
            ++s.accepted;
            const cv::Point2d q = project(p.h, fa.pts[static_cast<std::size_t>(m[0].queryIdx)]);
            const cv::Point2f b = fb.pts[static_cast<std::size_t>(m[0].trainIdx)];
            s.correct += std::hypot(q.x - b.x, q.y - b.y) <= kTolerance;
        }
    }
    const cv::Mat hinv = p.h.inv();
    long na = 0, nb = 0;
    for (const cv::Point2f& a : fa.pts) {
        const cv::Point2d q = project(p.h, a);
        if (!inside(q, p.b)) continue;
        ++na;
        for (const cv::Point2f& b : fb.pts)
            if (std::hypot(q.x - b.x, q.y - b.y) <= kTolerance) {
                ++s.repeated;
                break;
            }
    }
    for (const cv::Point2f& b : fb.pts) nb += inside(project(hinv, b), p.a);
    s.common = std::min(na, nb);
    return s;
}

Features cv_orb(const cv::Mat& im, int n) {
    auto orb = cv::ORB::create(n, 1.2f, 8);
    std::vector<cv::KeyPoint> k;
    Features f;
    orb->detectAndCompute(im, cv::noArray(), k, f.desc);
    for (const cv::KeyPoint& kp : k) f.pts.push_back(kp.pt);
    return f;
}

kestrel::DetectorConfig policy_config(const std::string& name, int n) {
    kestrel::DetectorConfig c;
    c.pyramid = {8, 1.2f};
    c.max_features = n;
    c.orb_descriptors = true;
    if (name == "grid") {  // docs/features.md's cv::ORB comparison configuration
        c.fast = {20, 9, 16, kestrel::ScoreType::MaxThreshold};
        c.nms_radius = 4;
        c.per_cell = 6;
        c.border = 31;
    } else if (name == "orb-slam") {
        c.selection = kestrel::SelectionPolicy::OrbSlam;
    } else if (name == "level-harris") {
        c.selection = kestrel::SelectionPolicy::LevelHarris;
    } else {
        usage_error("unknown policy '" + name + "' (grid, orb-slam, level-harris)");
    }
    return c;
}

Features kestrel_orb(kestrel::FeatureDetector& det, const cv::Mat& im) {
    const kestrel::HostView v{im.data, im.cols, im.rows, im.step[0]};
    const std::vector<kestrel::Keypoint> kp = det.detect(v);
    Features f;
    for (const kestrel::Keypoint& k : kp) f.pts.emplace_back(k.x, k.y);
    if (!kp.empty()) {
        f.desc.create(static_cast<int>(kp.size()), kestrel::kOrbDescriptorBytes, CV_8U);
        std::memcpy(f.desc.data, det.host_descriptors(), kp.size() * kestrel::kOrbDescriptorBytes);
    }
    return f;
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
    return out;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(k + " needs a value");
            return argv[++i];
        };
        if (k == "--data") o.data = value();
        else if (k == "--set") {
            const std::string s = value();
            if (s != "full" && s != "quick") usage_error("--set must be full or quick");
            o.quick = s == "quick";
        } else if (k == "--policies") o.policies = split(value());
        else if (k == "--features") {
            o.features = std::atoi(value().c_str());
            if (o.features < 1 || o.features > 100000) usage_error("--features must be in [1, 100000]");
        } else if (k == "--require") o.require = value();
        else if (k == "--backend") {
            const std::string b = value();
            if (b != "cpu" && b != "cuda") usage_error("--backend must be cpu or cuda");
            if (b == "cuda" && !kestrel::cuda_available()) usage_error("--backend cuda: no usable CUDA device on this machine (use --backend cpu)");
            o.backend = b == "cpu" ? kestrel::Backend::Cpu : kestrel::Backend::Cuda;
        } else usage_error("unknown option " + k);
    }
    for (const std::string& p : o.policies) (void)policy_config(p, 1);
    if (!o.require.empty() && std::find(o.policies.begin(), o.policies.end(), o.require) == o.policies.end())
        usage_error("--require " + o.require + " is not among --policies");
    return o;
}

void print_row(const std::string& method, const Score& s) {
    std::printf("  %-14s %8ld %9ld %8ld %10.3f %14.3f\n", method.c_str(), s.features, s.accepted, s.correct,
                s.precision(), s.repeatability());
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    try {
        const std::vector<Pair> pairs = make_pairs(o);
        std::vector<std::string> methods{"cv::ORB"};
        for (const std::string& p : o.policies) methods.push_back(p);
        std::vector<Score> total(methods.size());
        std::vector<kestrel::FeatureDetector> dets;
        for (const std::string& p : o.policies) dets.emplace_back(policy_config(p, o.features), o.backend);
        std::printf("%d features on 8 levels of 1.2, ratio 0.8, correct within %.0f px\n", o.features, kTolerance);
        for (const Pair& p : pairs) {
            std::printf("%s (%dx%d)\n  %-14s %8s %9s %8s %10s %14s\n", p.name.c_str(), p.a.cols, p.a.rows, "method",
                        "features", "accepted", "correct", "precision", "repeatability");
            for (std::size_t m = 0; m < methods.size(); ++m) {
                const Score s = m == 0 ? score(p, cv_orb(p.a, o.features), cv_orb(p.b, o.features))
                                       : score(p, kestrel_orb(dets[m - 1], p.a), kestrel_orb(dets[m - 1], p.b));
                print_row(methods[m], s);
                total[m].add(s);
            }
        }
        std::printf("sum over %zu pairs\n  %-14s %8s %9s %8s %10s %14s\n", pairs.size(), "method", "features",
                    "accepted", "correct", "precision", "repeatability");
        for (std::size_t m = 0; m < methods.size(); ++m) print_row(methods[m], total[m]);
        if (!o.require.empty()) {
            const std::size_t m = static_cast<std::size_t>(
                std::find(methods.begin(), methods.end(), o.require) - methods.begin());
            const Score& k = total[m];
            const Score& c = total[0];
            const bool ok = k.correct >= c.correct && k.precision() >= c.precision() &&
                            k.repeatability() >= c.repeatability();
            std::printf("%s against cv::ORB: %s\n", o.require.c_str(), ok ? "REACHED" : "NOT REACHED");
            return ok ? 0 : 1;
        }
    } catch (const std::exception& e) {
        std::cerr << "kestrel_eval_matching: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
