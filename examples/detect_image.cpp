// detect_image: one image in, Kestrel's keypoints out: drawn on the image (PNG), as CSV (x, y, level,
// score; with --orb also each keypoint's ORB angle and descriptor), and optionally every corner pixel of every pyramid level before non-maximum suppression
// (x, y, level, score), plus the pyramid levels themselves, so that Kestrel can be checked against
// any other FAST implementation on exactly the same pixels.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "common/canvas.hpp"
#include "common/cli.hpp"
#include "common/image_io.hpp"
#include "common/options.hpp"
#include "common/timing.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/fast.hpp"
#include "kestrel/feature_detector.hpp"
#include "kestrel/pyramid.hpp"

namespace fs = std::filesystem;
using namespace kestrel_examples;

namespace {

const char* kUsage =
    "usage: detect_image IMAGE [options]\n"
    "Runs Kestrel's FeatureDetector on one image; draws the keypoints (colour = pyramid level, circle =\n"
    "the FAST circle on its level) and writes them as CSV. Colour images are converted to grey exactly\n"
    "as OpenCV's cv::imread(IMREAD_GRAYSCALE) does; 16-bit images are reduced to 8 bits (v >> 8, said\n"
    "on stderr).\n"
    "  --out PATH             annotated PNG (default: out/<image stem>_keypoints.png)\n"
    "  --csv PATH             final keypoints: x,y,level,score; x, y in level-0 pixels, in the detector's\n"
    "                         output order (default: out/<image stem>_keypoints.csv)\n"
    "  --corners-csv PATH     every corner pixel of every level before NMS: x,y,level,score with x, y\n"
    "                         in that level's own pixels (score > 0 in the score maps; the detector's\n"
    "                         border and masks are applied later, at selection)\n"
    "  --save-levels DIR      write the pyramid levels (level_0.png ...) the detector ran on\n"
    "  --repeat N             detect N times and report the time of the first and of the others\n"
    "  --orb                  also compute ORB angles and descriptors: the CSV gains the columns angle\n"
    "                         (degrees, [0, 360]) and descriptor (64 hex digits, byte 0 first)\n";

void write_keypoints(const std::string& path, const std::vector<kestrel::Keypoint>& kps,
                     const float* angles = nullptr, const kestrel::OrbDescriptor* descriptors = nullptr) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + path);
    const bool orb = angles && descriptors;
    std::fprintf(f, orb ? "x,y,level,score,angle,descriptor\n" : "x,y,level,score\n");
    for (std::size_t i = 0; i < kps.size(); ++i) {
        const kestrel::Keypoint& k = kps[i];
        std::fprintf(f, "%.9g,%.9g,%d,%.9g", k.x, k.y, k.level, k.score);
        if (orb) {
            std::fprintf(f, ",%.9g,", angles[i]);
            for (const std::uint8_t b : descriptors[i].bytes) std::fprintf(f, "%02x", b);
        }
        std::fprintf(f, "\n");
    }
    std::fclose(f);
}

/// Every pixel with a non-zero score (a corner), level by level, in raster order.
std::size_t write_corners(const std::string& path, const std::vector<kestrel::ScoreMap>& maps) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + path);
    std::fprintf(f, "x,y,level,score\n");
    std::size_t n = 0;
    for (std::size_t k = 0; k < maps.size(); ++k)
        for (int y = 0; y < maps[k].height; ++y)
            for (int x = 0; x < maps[k].width; ++x)
                if (const float s = maps[k].at(x, y); s > 0.0f) {
                    std::fprintf(f, "%d,%d,%zu,%.9g\n", x, y, k, s);
                    ++n;
                }
    std::fclose(f);
    return n;
}

/// Pyramid levels and score maps from the backend that runs: the CPU reference, or the GPU stages
/// (DevicePyramid + DeviceScoreMaps, downloaded).
void levels_and_maps(kestrel::HostView img, const kestrel::DetectorConfig& cfg, kestrel::Backend backend,
                     std::vector<kestrel::HostImage>& levels, std::vector<kestrel::ScoreMap>& maps) {
    if (backend == kestrel::Backend::Cpu) {
        levels = kestrel::build_pyramid_cpu(img, cfg.pyramid);
        maps = kestrel::fast_score_maps_cpu(levels, cfg.fast);
        return;
    }
    kestrel::DevicePyramid pyr(img.width, img.height, cfg.pyramid);
    kestrel::copy_async(img, pyr.level0(), nullptr);
    pyr.build(nullptr);
    kestrel::DeviceScoreMaps dmaps(kestrel::pyramid_sizes(img.width, img.height, cfg.pyramid), cfg.fast);
    dmaps.compute(pyr, nullptr);
    kestrel::synchronize(nullptr, "detect_image: score maps");
    levels.clear();
    maps.clear();
    for (int k = 0; k < pyr.levels(); ++k) {
        levels.push_back(kestrel::download(pyr.level(k)));
        maps.push_back(dmaps.download(k));
    }
}

/// How the keypoints were selected, for the summary line: the grid (and PyCA's culling before it), or the per-level
/// policies' budget.
std::string selection_text(int width, int height, const kestrel::DetectorConfig& cfg) {
    const kestrel::Size2 g = kestrel::grid_size(width, height, cfg);
    char b[256];
    switch (cfg.selection) {
        case kestrel::SelectionPolicy::OrbSlam:
        case kestrel::SelectionPolicy::LevelHarris:
            std::snprintf(b, sizeof b, "%s: a budget of %d over %d levels, cells of %d px, border %d px per level",
                          cfg.selection == kestrel::SelectionPolicy::OrbSlam ? "ORB-SLAM's extractor"
                                                                             : "cv::ORB's per-level Harris ranking",
                          cfg.max_features, cfg.pyramid.levels, cfg.orbslam.cell, cfg.orbslam.border);
            return b;
        case kestrel::SelectionPolicy::PyCA:
            std::snprintf(b, sizeof b, "PyCA: culling cells of %d px on level 0, %dx%d aggregation, then grid %dx%d "
                          "cells of %dx%d px, %d per cell", cfg.pyca.cell[0], cfg.pyca.q, cfg.pyca.q, g.width, g.height,
                          cfg.cell_width, cfg.cell_height, cfg.per_cell);
            return b;
        case kestrel::SelectionPolicy::Grid: break;
    }
    std::snprintf(b, sizeof b, "grid %dx%d cells of %dx%d px, %d per cell", g.width, g.height, cfg.cell_width,
                  cfg.cell_height, cfg.per_cell);
    return b;
}

int run(int argc, char** argv) {
    Args args(argc, argv, option_flags({"orb"}));
    if (args.flag("help")) {
        std::printf("%s%s%s", kUsage, backend_help(), detector_help().c_str());
        return 0;
    }
    const bool explicit_backend = args.has("backend");
    const kestrel::Backend backend = parse_backend(args);
    kestrel::DetectorConfig cfg = parse_detector(args);
    cfg.orb_descriptors = args.flag("orb");
    if (args.positional().size() != 1) throw UsageError("expected exactly one IMAGE");
    const std::string image_path = args.positional()[0];
    const std::string stem = fs::path(image_path).stem().string();
    const std::string out_png = args.get("out", "out/" + stem + "_keypoints.png");
    const std::string out_csv = args.get("csv", "out/" + stem + "_keypoints.csv");
    const std::string corners_csv = args.get("corners-csv", "");
    const std::string levels_dir = args.get("save-levels", "");
    const int repeat = args.get_int("repeat", 1);
    args.reject_unknown();
    if (repeat < 1) throw UsageError("--repeat must be >= 1");

    for (const std::string& p : {out_png, out_csv, corners_csv})  // create the outputs' folders
        if (!p.empty() && fs::path(p).has_parent_path()) fs::create_directories(fs::path(p).parent_path());
    GreyInfo info;
    const kestrel::HostImage img = load_grey(image_path, &info);
    if (const std::string note = depth_notice(image_path, info); !note.empty())
        std::fprintf(stderr, "detect_image: note: %s\n", note.c_str());
    check_image_size(img.width(), img.height(), cfg, "image '" + image_path + "'");
    if (const std::string note = orb_border_note(img.width(), img.height(), cfg); !note.empty())
        std::fprintf(stderr, "detect_image: note: %s\n", note.c_str());
    std::printf("image: %s (%dx%d%s)\n%s\n", image_path.c_str(), img.width(), img.height(),
                info.channels >= 3 ? ", colour converted to grey as cv::imread IMREAD_GRAYSCALE does" : "",
                backend_line(backend, explicit_backend).c_str());

    kestrel::FeatureDetector detector(cfg, backend);
    std::vector<kestrel::Keypoint> kps;
    StageTimes times;
    for (int i = 0; i < repeat; ++i) {
        Stopwatch sw;
        kps = detector.detect(img.view());
        times.add(i == 0 ? "detect (first call: allocates)" : "detect (steady state)", sw.lap());
    }

    std::vector<int> per_level(cfg.pyramid.levels, 0);
    for (const kestrel::Keypoint& k : kps) ++per_level[k.level];
    std::printf("%zu keypoints (%s):", kps.size(), selection_text(img.width(), img.height(), cfg).c_str());
    for (int k = 0; k < cfg.pyramid.levels; ++k) std::printf("  level %d: %d", k, per_level[k]);
    std::printf("\n");

    write_keypoints(out_csv, kps, detector.host_angles(), detector.host_descriptors());
    Canvas canvas(img.view(), 0.7f);
    for (const kestrel::Keypoint& k : kps) {
        const float s = kestrel::level_scale(cfg.pyramid, k.level);
        canvas.circle(k.x, k.y, 3.0f * s, level_colour(k.level));
        canvas.dot(k.x, k.y, 1, level_colour(k.level));
    }
    write_png(out_png, canvas);
    std::printf("wrote %s and %s\n", out_csv.c_str(), out_png.c_str());

    if (!corners_csv.empty() || !levels_dir.empty()) {
        std::vector<kestrel::HostImage> levels;
        std::vector<kestrel::ScoreMap> maps;
        levels_and_maps(img.view(), cfg, backend, levels, maps);
        if (!corners_csv.empty()) {
            const std::size_t n = write_corners(corners_csv, maps);
            std::printf("wrote %s: %zu corner pixels before NMS over %zu levels\n", corners_csv.c_str(), n,
                        maps.size());
        }
        if (!levels_dir.empty()) {
            fs::create_directories(levels_dir);
            for (std::size_t k = 0; k < levels.size(); ++k)
                write_png((fs::path(levels_dir) / ("level_" + std::to_string(k) + ".png")).string(), levels[k].view());
            std::printf("wrote %zu pyramid levels to %s\n", levels.size(), levels_dir.c_str());
        }
    }
    times.print(stdout, "timing (wall clock, includes the download of the keypoints):");
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_example("detect_image", kUsage, run, argc, argv); }
