// Checks that the examples read images as OpenCV does: load_grey (examples/common/image_io.hpp)
// against cv::imread(path, cv::IMREAD_GRAYSCALE), pixel for pixel, and FAST corners found by the
// examples against cv::FAST on the same file. Built only when OpenCV (imgcodecs, features2d) is found.
//
//   check_grey --images DIR...      every PNG/BMP/PPM/PGM/JPEG of each DIR: load_grey == cv::imread
//   --generated WORKDIR             writes colour test images of every PNG variant (RGB, RGBA,
//                                   grey + alpha, palette with transparency, 1-bit grey, gAMA 1/2.2,
//                                   0.8 and 1.0, sRGB, 16-bit grey / RGB / grey + alpha) and BMP,
//                                   PPM, PGM files, then compares them the same way; 16-bit files
//                                   must be reported as 16-bit (GreyInfo::bits) for the notice
//   --fast IMAGE THRESHOLD          level-0 FAST (arc 9..16, no NMS) of Kestrel's CPU reference on
//                                   load_grey(IMAGE) == cv::FAST(imread GRAYSCALE, t, false, 9_16)
//   --corners-match IMAGE CSV T     the level-0 rows of detect_image's --corners-csv == cv::FAST's set
// Prints one line per file; exits 1 when anything differs.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/features2d.hpp>
#include <opencv2/imgcodecs.hpp>
#include <stb_image.h>

#include "common/image_io.hpp"
#include "png_raw.hpp"
#include "kestrel/fast.hpp"

namespace fs = std::filesystem;
using kestrel_examples::GreyInfo;
using kestrel_examples::load_grey;
using namespace kestrel_examples::png_raw;

namespace {

int failures = 0;

/// load_grey against cv::imread(IMREAD_GRAYSCALE); `want_bits` > 0: GreyInfo::bits must equal it.
void compare_file(const std::string& path, int want_bits = 0) {
    const cv::Mat ref = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (ref.empty()) {
        std::printf("  skip   %s (OpenCV cannot read it)\n", path.c_str());
        return;
    }
    GreyInfo info;
    kestrel::HostImage img;
    try {
        img = load_grey(path, &info);
    } catch (const std::exception& e) {
        std::printf("  FAIL   %s: load_grey threw: %s\n", path.c_str(), e.what());
        ++failures;
        return;
    }
    if (img.width() != ref.cols || img.height() != ref.rows) {
        std::printf("  FAIL   %s: %dx%d, OpenCV %dx%d\n", path.c_str(), img.width(), img.height(), ref.cols, ref.rows);
        ++failures;
        return;
    }
    long diff = 0, first = -1;
    for (int y = 0; y < ref.rows; ++y)
        for (int x = 0; x < ref.cols; ++x)
            if (img.at(x, y) != ref.at<std::uint8_t>(y, x) && diff++ == 0) first = static_cast<long>(y) * ref.cols + x;
    const bool bits_ok = want_bits == 0 || info.bits == want_bits;
    std::printf("  %s %s (%s, %d-bit, %d channel%s, %s): %ld of %d pixels differ from cv::imread GRAYSCALE%s\n",
                diff == 0 && bits_ok ? "ok    " : "FAIL  ", path.c_str(), info.format.c_str(), info.bits,
                info.channels, info.channels == 1 ? "" : "s", info.decoder.c_str(), diff, ref.cols * ref.rows,
                bits_ok ? "" : " (bit depth not reported)");
    if (diff) {
        const int x = static_cast<int>(first % ref.cols), y = static_cast<int>(first / ref.cols);
        std::printf("         first at (%d, %d): ours %d, OpenCV %d\n", x, y, img.at(x, y), ref.at<std::uint8_t>(y, x));
    }
    if (diff || !bits_ok) ++failures;
}

/// Deterministic colour content: gradients, a few saturated patches, grey pixels and noise.
struct Pattern {
    std::uint32_t s = 12345;
    std::uint32_t rnd() { return s = s * 1664525u + 1013904223u; }
    void rgb(int x, int y, int& r, int& g, int& b) {
        r = (x * 7 + y * 3) & 255;
        g = (x * 2 + y * 11 + 40) & 255;
        b = ((x ^ y) * 5) & 255;
        if ((x / 16 + y / 16) % 5 == 0) g = b = r;  // grey: R = G = B keeps its value in libpng
        if ((x / 24) % 7 == 3) r = 255, g = 0;     // saturated
        const int n = static_cast<int>(rnd() >> 28) - 8;
        r = std::clamp(r + n, 0, 255), g = std::clamp(g - n, 0, 255), b = std::clamp(b + n / 2, 0, 255);
    }
};

void generated(const fs::path& dir) {
    fs::create_directories(dir);
    const int w = 97, h = 61;  // odd sizes: no row padding assumptions
    Pattern pat;
    std::vector<std::vector<int>> R(h, std::vector<int>(w)), G = R, B = R, A = R;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            pat.rgb(x, y, R[y][x], G[y][x], B[y][x]);
            A[y][x] = (x * 3 + y) & 255;
        }
    const auto rows8 = [&](int channels) {
        std::vector<std::vector<std::uint8_t>> rows(h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const int px[4] = {R[y][x], G[y][x], B[y][x], A[y][x]};
                if (channels <= 2) rows[y].push_back(static_cast<std::uint8_t>(G[y][x]));
                else for (int c = 0; c < 3; ++c) rows[y].push_back(static_cast<std::uint8_t>(px[c]));
                if (channels == 2 || channels == 4) rows[y].push_back(static_cast<std::uint8_t>(A[y][x]));
            }
        return rows;
    };
    const auto rows16 = [&](int channels) {
        std::vector<std::vector<std::uint8_t>> rows(h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                // 16-bit samples whose low byte matters (v * 257 + noise): a >> 8 vs / 257 difference shows
                const int px[4] = {R[y][x] * 256 + (x * 37 & 255), G[y][x] * 256 + (y * 53 & 255),
                                   B[y][x] * 256 + ((x + y) * 91 & 255), A[y][x] * 257};
                const auto push = [&](int v) {
                    rows[y].push_back(static_cast<std::uint8_t>(v >> 8));
                    rows[y].push_back(static_cast<std::uint8_t>(v));
                };
                if (channels <= 2) push(px[1]);
                else for (int c = 0; c < 3; ++c) push(px[c]);
                if (channels == 2 || channels == 4) push(px[3]);
            }
        return rows;
    };
    const auto gama = [](std::uint32_t g) {
        std::vector<std::uint8_t> v;
        put32(v, g);
        return std::make_pair("gAMA", v);
    };
    const std::string d = dir.string() + "/";
    write_png_raw(d + "rgb.png", w, h, 8, 2, rows8(3), {});
    write_png_raw(d + "rgba.png", w, h, 8, 6, rows8(4), {});
    write_png_raw(d + "grey_alpha.png", w, h, 8, 4, rows8(2), {});
    write_png_raw(d + "rgb_gamma_045455.png", w, h, 8, 2, rows8(3), {gama(45455)});
    write_png_raw(d + "rgb_gamma_080000.png", w, h, 8, 2, rows8(3), {gama(80000)});
    write_png_raw(d + "rgb_gamma_100000.png", w, h, 8, 2, rows8(3), {gama(100000)});
    write_png_raw(d + "rgba_srgb.png", w, h, 8, 6, rows8(4), {{"sRGB", {0}}});
    write_png_raw(d + "rgb16.png", w, h, 16, 2, rows16(3), {});
    write_png_raw(d + "grey16.png", w, h, 16, 0, rows16(1), {});
    write_png_raw(d + "grey_alpha16.png", w, h, 16, 4, rows16(2), {});
    {  // palette of 200 colours with transparency on some entries, 8-bit indices
        std::vector<std::uint8_t> plte, trns;
        Pattern p2;
        for (int i = 0; i < 200; ++i) {
            int r, g, b;
            p2.rgb(i * 5, i * 3, r, g, b);
            plte.insert(plte.end(), {static_cast<std::uint8_t>(r), static_cast<std::uint8_t>(g), static_cast<std::uint8_t>(b)});
            if (i < 50) trns.push_back(static_cast<std::uint8_t>(i * 5));
        }
        std::vector<std::vector<std::uint8_t>> rows(h);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) rows[y].push_back(static_cast<std::uint8_t>((x * 13 + y * 7) % 200));
        write_png_raw(d + "palette.png", w, h, 8, 3, rows, {{"PLTE", plte}, {"tRNS", trns}});
    }
    {  // 1-bit grey
        std::vector<std::vector<std::uint8_t>> rows(h, std::vector<std::uint8_t>((w + 7) / 8));
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x)
                if ((x / 3 + y / 5) % 2) rows[y][x / 8] |= static_cast<std::uint8_t>(0x80 >> (x % 8));
        write_png_raw(d + "grey1bit.png", w, h, 1, 0, rows, {});
    }
    // BMP, PPM, PGM written by OpenCV (BGR order in the Mat).
    cv::Mat bgr(h, w, CV_8UC3), bgra(h, w, CV_8UC4), g16(h, w, CV_16UC1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            bgr.at<cv::Vec3b>(y, x) = cv::Vec3b(B[y][x], G[y][x], R[y][x]);
            bgra.at<cv::Vec4b>(y, x) = cv::Vec4b(B[y][x], G[y][x], R[y][x], A[y][x]);
            g16.at<std::uint16_t>(y, x) = static_cast<std::uint16_t>(G[y][x] * 256 + (x * 41 & 255));
        }
    cv::imwrite(d + "rgb.bmp", bgr);
    cv::imwrite(d + "rgba.bmp", bgra);
    cv::imwrite(d + "rgb.ppm", bgr);
    cv::imwrite(d + "grey16.pgm", g16);
    cv::Mat rgb16;
    cv::Mat(bgr).convertTo(rgb16, CV_16U, 257.0, 3.0);
    cv::imwrite(d + "rgb16.ppm", rgb16);
    {  // maxval below 255: OpenCV keeps the samples as stored
        std::ofstream f(d + "grey_maxval100.pgm", std::ios::binary);
        f << "P5\n# a comment\n" << w << " " << h << "\n100\n";
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) f.put(static_cast<char>(G[y][x] * 100 / 255));
    }

    for (const char* f : {"rgb.png", "rgba.png", "grey_alpha.png", "rgb_gamma_045455.png", "rgb_gamma_080000.png",
                          "rgb_gamma_100000.png", "rgba_srgb.png", "palette.png", "grey1bit.png", "rgb.bmp", "rgba.bmp",
                          "rgb.ppm", "grey_maxval100.pgm"})
        compare_file(d + f, 8);
    for (const char* f : {"rgb16.png", "grey16.png", "grey_alpha16.png", "grey16.pgm", "rgb16.ppm"}) compare_file(d + f, 16);
}

using Corner = std::pair<int, int>;

std::set<Corner> cv_fast(const std::string& path, int t) {
    const cv::Mat g = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (g.empty()) {
        std::printf("FAIL: OpenCV cannot read %s\n", path.c_str());
        std::exit(1);
    }
    std::vector<cv::KeyPoint> kps;
    cv::FAST(g, kps, t, false, cv::FastFeatureDetector::TYPE_9_16);
    std::set<Corner> s;
    for (const cv::KeyPoint& k : kps) s.insert({static_cast<int>(k.pt.x), static_cast<int>(k.pt.y)});
    return s;
}

std::set<Corner> kestrel_fast(const kestrel::HostImage& img, int t) {
    kestrel::FastConfig cfg;
    cfg.threshold = t;
    cfg.arc_min = 9;
    cfg.arc_max = 16;
    const kestrel::ScoreMap m = kestrel::fast_score_map_cpu(img.view(), cfg);
    std::set<Corner> s;
    for (int y = 0; y < m.height; ++y)
        for (int x = 0; x < m.width; ++x)
            if (m.at(x, y) > 0.0f) s.insert({x, y});
    return s;
}

std::size_t sym_diff(const std::set<Corner>& a, const std::set<Corner>& b) {
    std::size_t n = 0;
    for (const Corner& c : a) n += !b.count(c);
    for (const Corner& c : b) n += !a.count(c);
    return n;
}

void report_sets(const char* what, const std::set<Corner>& ours, const std::set<Corner>& ref) {
    const std::size_t d = sym_diff(ours, ref);
    std::printf("  %s %s: %zu corners, cv::FAST %zu; %zu in one set only\n", d == 0 ? "ok    " : "FAIL  ", what,
                ours.size(), ref.size(), d);
    if (d) ++failures;
}

}  // namespace

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--images") {
            for (; i + 1 < argc && argv[i + 1][0] != '-'; ++i) {
                std::vector<fs::path> files;
                for (const auto& e : fs::directory_iterator(argv[i + 1])) {
                    std::string ext = e.path().extension().string();
                    for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    if (ext == ".png" || ext == ".bmp" || ext == ".ppm" || ext == ".pgm" || ext == ".jpg")
                        files.push_back(e.path());
                }
                std::sort(files.begin(), files.end());
                std::printf("%s: %zu images\n", argv[i + 1], files.size());
                for (const fs::path& f : files) compare_file(f.string());
            }
        } else if (a == "--generated" && i + 1 < argc) {
            std::printf("generated images in %s:\n", argv[i + 1]);
            generated(argv[++i]);
        } else if (a == "--fast" && i + 2 < argc) {
            const std::string path = argv[i + 1];
            const int t = std::atoi(argv[i + 2]);
            i += 2;
            std::printf("level-0 FAST-9 (t=%d, no NMS) on %s:\n", t, path.c_str());
            const std::set<Corner> ref = cv_fast(path, t);
            report_sets("Kestrel on load_grey", kestrel_fast(load_grey(path), t), ref);
            // For the record: stb's own grey conversion ((77 R + 150 G + 29 B) >> 8), which the examples used before.
            int w = 0, h = 0, n = 0;
            if (unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1)) {
                kestrel::HostImage stb(w, h);
                std::copy(px, px + static_cast<std::size_t>(w) * h, stb.data());
                stbi_image_free(px);
                std::printf("         (for comparison, on stb's own grey conversion: %zu corners in one set only)\n",
                            sym_diff(kestrel_fast(stb, t), ref));
            }
        } else if (a == "--corners-match" && i + 3 < argc) {
            const std::string path = argv[i + 1], csv = argv[i + 2];
            const int t = std::atoi(argv[i + 3]);
            i += 3;
            std::ifstream in(csv);
            std::string line;
            std::getline(in, line);  // header x,y,level,score
            std::set<Corner> ours;
            while (std::getline(in, line)) {
                std::istringstream ls(line);
                int x = 0, y = 0, level = 0;
                char c1 = 0, c2 = 0;
                if (ls >> x >> c1 >> y >> c2 >> level && level == 0) ours.insert({x, y});
            }
            std::printf("detect_image --corners-csv %s (level 0) against cv::FAST on %s:\n", csv.c_str(), path.c_str());
            report_sets("detect_image", ours, cv_fast(path, t));
        } else {
            std::fprintf(stderr, "check_grey: unknown or incomplete argument '%s'\n", a.c_str());
            return 2;
        }
    }
    std::printf(failures ? "check_grey: %d FAILED\n" : "check_grey: all identical to OpenCV\n", failures);
    return failures ? 1 : 0;
}
