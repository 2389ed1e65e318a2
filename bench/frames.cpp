// Frame loading and preparation for the benches (see frames.hpp).
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC  // private copy: never clashes with another stb_image in the same program
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNM
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "examples/common/synthetic.hpp"
#include "frames.hpp"

#ifndef KESTREL_BENCH_DEFAULT_DATA
#define KESTREL_BENCH_DEFAULT_DATA ""
#endif
#ifndef KESTREL_BENCH_OPENCV_DATA
#define KESTREL_BENCH_OPENCV_DATA "/usr/share/doc/opencv-doc/examples/data"
#endif

namespace fs = std::filesystem;

namespace kestrel::bench {

HostImage load_grey(const std::string& path) {
    int w = 0, h = 0, n = 0;
    unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1);
    if (!px) throw std::runtime_error("cannot read image '" + path + "': " + stbi_failure_reason());
    HostImage img(w, h);
    std::copy(px, px + static_cast<std::size_t>(w) * h, img.data());
    stbi_image_free(px);
    return img;
}

namespace {

// out(x, y) = (in(2x, 2y) + in(2x+1, 2y) + in(2x, 2y+1) + in(2x+1, 2y+1) + 2) / 4
HostImage halve(const HostImage& in) {
    HostImage out(in.width() / 2, in.height() / 2);
    for (int y = 0; y < out.height(); ++y)
        for (int x = 0; x < out.width(); ++x)
            out.at(x, y) = static_cast<std::uint8_t>((in.at(2 * x, 2 * y) + in.at(2 * x + 1, 2 * y) +
                                                      in.at(2 * x, 2 * y + 1) + in.at(2 * x + 1, 2 * y + 1) + 2) / 4);
    return out;
}

bool has_image_extension(const fs::path& p) {
    std::string e = p.extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return e == ".png" || e == ".jpg" || e == ".jpeg" || e == ".pgm" || e == ".ppm";
}

class FileListSource : public FrameSource {
public:
    FileListSource(std::vector<std::string> files, std::string what) : files_(std::move(files)), what_(std::move(what)) {}
    std::string describe() const override { return what_; }
    int size() const override { return static_cast<int>(files_.size()); }
    HostImage read(int i) override {
        if (i < 0 || i >= size()) return {};
        return load_grey(files_[static_cast<std::size_t>(i)]);
    }

private:
    std::vector<std::string> files_;
    std::string what_;
};

// The cam0 folder (holding data.csv and data/) of an EuRoC path at any accepted level, or empty.
fs::path euroc_cam0(const std::string& dir) {
    for (const fs::path& c : {fs::path(dir) / "mav0" / "cam0", fs::path(dir) / "cam0", fs::path(dir)}) {
        std::error_code ec;
        if (fs::is_regular_file(c / "data.csv", ec) && fs::is_directory(c / "data", ec)) return c;
    }
    return {};
}

std::string trim(std::string s) {
    const auto not_space = [](unsigned char c) { return !std::isspace(c); };
    s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
    s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
    return s;
}

}  // namespace

HostImage resize(const HostImage& img, int width, int height) {
    if (width < 1 || height < 1) throw std::runtime_error("resize: target size must be positive");
    if (width == img.width() && height == img.height()) return HostImage::copy_of(img.view());
    HostImage src = HostImage::copy_of(img.view());
    while (2 * width <= src.width() && 2 * height <= src.height()) src = halve(src);
    HostImage out(width, height);
    const double fx = static_cast<double>(src.width()) / width, fy = static_cast<double>(src.height()) / height;
    for (int y = 0; y < height; ++y) {
        const double sy = std::clamp((y + 0.5) * fy - 0.5, 0.0, src.height() - 1.0);
        const int y0 = static_cast<int>(sy), y1 = std::min(y0 + 1, src.height() - 1);
        const double wy = sy - y0;
        for (int x = 0; x < width; ++x) {
            const double sx = std::clamp((x + 0.5) * fx - 0.5, 0.0, src.width() - 1.0);
            const int x0 = static_cast<int>(sx), x1 = std::min(x0 + 1, src.width() - 1);
            const double wx = sx - x0;
            const double v = (1 - wy) * ((1 - wx) * src.at(x0, y0) + wx * src.at(x1, y0)) +
                             wy * ((1 - wx) * src.at(x0, y1) + wx * src.at(x1, y1));
            out.at(x, y) = static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0, 255.0)));
        }
    }
    return out;
}

HostImage center_crop(const HostImage& img, int width, int height) {
    if (width > img.width() || height > img.height())
        throw std::runtime_error("--crop " + std::to_string(width) + "x" + std::to_string(height) +
                                 " is larger than the frame " + std::to_string(img.width()) + "x" +
                                 std::to_string(img.height()) + " (use --resize to enlarge)");
    const int x0 = (img.width() - width) / 2, y0 = (img.height() - height) / 2;
    HostImage out(width, height);
    for (int y = 0; y < height; ++y) std::copy_n(img.view().row(y0 + y) + x0, width, out.data() + static_cast<std::size_t>(y) * width);
    return out;
}

std::string FrameGeometry::describe() const {
    std::string s;
    const auto add = [&s](const std::string& t) { s += (s.empty() ? "" : ", ") + t; };
    if (crop_width > 0) add("centre crop " + std::to_string(crop_width) + "x" + std::to_string(crop_height));
    if (resize_width > 0) add("resized to " + std::to_string(resize_width) + "x" + std::to_string(resize_height));
    if (max_width > 0 || max_height > 0)
        add("capped at " + (max_width > 0 ? std::to_string(max_width) : std::string("any")) + "x" +
            (max_height > 0 ? std::to_string(max_height) : std::string("any")));
    return s.empty() ? "as stored" : s;
}

HostImage prepare(const HostImage& img, const FrameGeometry& g) {
    HostImage out = HostImage::copy_of(img.view());
    if (g.crop_width > 0) out = center_crop(out, g.crop_width, g.crop_height);
    if (g.resize_width > 0) out = resize(out, g.resize_width, g.resize_height);
    double f = 1.0;
    if (g.max_width > 0 && out.width() > g.max_width) f = std::min(f, static_cast<double>(g.max_width) / out.width());
    if (g.max_height > 0 && out.height() > g.max_height) f = std::min(f, static_cast<double>(g.max_height) / out.height());
    if (f < 1.0)
        out = resize(out, std::max(1, static_cast<int>(std::floor(out.width() * f))),
                     std::max(1, static_cast<int>(std::floor(out.height() * f))));
    return out;
}

bool is_euroc(const std::string& dir) { return !euroc_cam0(dir).empty(); }

std::unique_ptr<FrameSource> open_euroc(const std::string& dir) {
    const fs::path cam0 = euroc_cam0(dir);
    if (cam0.empty()) throw std::runtime_error("'" + dir + "' is not an EuRoC folder (no mav0/cam0/data.csv + data/)");
    std::ifstream csv(cam0 / "data.csv");
    std::vector<std::string> files;
    for (std::string line; std::getline(csv, line);) {
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        const auto comma = line.find(',');
        if (comma == std::string::npos) continue;
        files.push_back((cam0 / "data" / trim(line.substr(comma + 1))).string());
    }
    if (files.empty()) throw std::runtime_error("EuRoC folder '" + dir + "': data.csv lists no image");
    return std::make_unique<FileListSource>(std::move(files), "EuRoC " + cam0.string());
}

std::unique_ptr<FrameSource> open_image_folder(const std::string& dir) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file() && has_image_extension(it->path())) files.push_back(it->path().string());
    if (ec) throw std::runtime_error("cannot list folder '" + dir + "': " + ec.message());
    if (files.empty()) throw std::runtime_error("folder '" + dir + "' holds no .png/.jpg/.pgm/.ppm image");
    std::sort(files.begin(), files.end());
    return std::make_unique<FileListSource>(std::move(files), "image folder " + dir);
}

std::unique_ptr<FrameSource> open_vtest_sequence(const std::string& data_dir) {
    std::vector<std::string> files;
    for (int i = 0;; ++i) {
        char name[32];
        std::snprintf(name, sizeof name, "vtest_%03d.png", i);
        const fs::path p = fs::path(data_dir) / name;
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) break;
        files.push_back(p.string());
    }
    if (files.empty())
        throw std::runtime_error("no vtest_000.png in '" + data_dir + "': build the test data (ninja kestrel_testdata) "
                                 "or pass --data DIR / set KESTREL_TEST_DATA");
    return std::make_unique<FileListSource>(std::move(files), "vtest (opencv-doc vtest.avi frames, a fixed camera, " +
                                                                  std::to_string(files.size()) + " frames in " +
                                                                  data_dir + ")");
}

std::string default_photo(const std::string& data_dir) {
    std::error_code ec;
    if (!data_dir.empty() && fs::is_regular_file(fs::path(data_dir) / "graf1.png", ec))
        return (fs::path(data_dir) / "graf1.png").string();
    const fs::path doc = fs::path(KESTREL_BENCH_OPENCV_DATA) / "graf1.png";
    if (fs::is_regular_file(doc, ec)) return doc.string();
    return {};
}

namespace {

// The demo's moving camera (kestrel_examples::SyntheticSequence), frame i = the view at time i mod period.
class MovingCameraSource : public FrameSource {
public:
    MovingCameraSource(const MovingCamera& m, const std::string& photo)
        : seq_(load_grey(photo), m.period, m.width, m.height,
               kestrel_examples::SyntheticMotion{m.magnification, m.max_speed, m.max_speed * 5.0 / 8.0}) {
        char b[512];
        std::snprintf(b, sizeof b,
                      "a camera moving over %s (the demo's sequence: %dx%d, the photo magnified %gx; pan, roll +-4 deg "
                      "and zoom, up to %.1f px per frame; one period in %d frames, looped)",
                      photo.c_str(), m.width, m.height, m.magnification, static_cast<double>(seq_.max_step()), m.period);
        what_ = b;
    }
    std::string describe() const override { return what_; }
    int size() const override { return seq_.frames(); }
    HostImage read(int i) override { return i >= 0 && i < size() ? seq_.render(i) : HostImage{}; }
    bool periodic() const override { return true; }

private:
    kestrel_examples::SyntheticSequence seq_;
    std::string what_;
};

}  // namespace

std::unique_ptr<FrameSource> open_moving_camera(const MovingCamera& m, const std::string& data_dir) {
    const std::string photo = !m.photo.empty() ? m.photo : default_photo(data_dir);
    if (photo.empty())
        throw std::runtime_error("no photo for the default input (a camera moving over graf1.png): build the test data "
                                 "(ninja kestrel_testdata), install opencv-doc, pass --data DIR or --photo PATH, or set "
                                 "KESTREL_TEST_DATA");
    try {
        return std::make_unique<MovingCameraSource>(m, photo);
    } catch (const std::runtime_error& e) {
        const std::string why = e.what();
        if (why.rfind("cannot read image", 0) == 0) throw;
        char b[128];
        std::snprintf(b, sizeof b, " (a %dx%d view of the photo magnified %gx)", m.width, m.height, m.magnification);
        throw std::runtime_error("photo '" + photo + "': " + why + b);
    }
}

std::string find_test_data(const std::string& flag) {
    std::error_code ec;
    if (!flag.empty()) return flag;
    if (const char* env = std::getenv("KESTREL_TEST_DATA"); env && *env) return env;
    const std::string built = KESTREL_BENCH_DEFAULT_DATA;
    if (!built.empty() && fs::is_directory(built, ec)) return built;
    return {};
}

Sequence::Sequence(std::unique_ptr<FrameSource> source, const FrameGeometry& geometry, int count,
                   const std::function<void(int, int)>& progress) {
    if (count < 1) throw std::runtime_error("sequence: at least one frame is needed");
    description_ = source->describe();
    const int known = source->size();
    const int wanted = known < 0 ? count : std::min(known, count);
    for (int i = 0; i < wanted; ++i) {
        HostImage raw = source->read(i);
        if (raw.empty()) break;  // video shorter than announced
        if (i == 0) source_width_ = raw.width(), source_height_ = raw.height();
        HostImage img = prepare(raw, geometry);
        if (!distinct_.empty() && (img.width() != distinct_[0].width() || img.height() != distinct_[0].height()))
            throw std::runtime_error("frame " + std::to_string(i) + " of " + description_ + " has another size (" +
                                     std::to_string(raw.width()) + "x" + std::to_string(raw.height()) +
                                     ") than the first: the bench needs one frame size");
        distinct_.push_back(std::move(img));
        if (progress) progress(i + 1, wanted);
    }
    if (distinct_.empty()) throw std::runtime_error(description_ + ": no frame could be read");
    const int n = distinct();
    looped_ = n < count;
    periodic_ = source->periodic();
    order_.resize(static_cast<std::size_t>(count));
    const int period = periodic_ ? n : n > 1 ? 2 * n - 2 : 1;  // periodic: 0 1 .. n-1 | 0 1 ..; else 0 .. n-1 n-2 .. 1 | 0 ..
    for (int i = 0; i < count; ++i) {
        const int j = i % period;
        order_[static_cast<std::size_t>(i)] = j < n ? j : period - j;
    }
}

}  // namespace kestrel::bench
