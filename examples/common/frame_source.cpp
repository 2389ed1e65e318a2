#include "frame_source.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "image_io.hpp"

#ifndef KESTREL_EXAMPLES_TESTDATA
#define KESTREL_EXAMPLES_TESTDATA ""
#endif
#ifndef KESTREL_EXAMPLES_OPENCV_DATA
#define KESTREL_EXAMPLES_OPENCV_DATA "/usr/share/doc/opencv-doc/examples/data"
#endif

namespace fs = std::filesystem;

namespace kestrel_examples {

std::string testdata_dir() {
    if (const char* env = std::getenv("KESTREL_TEST_DATA"); env && *env) return env;
    return KESTREL_EXAMPLES_TESTDATA;
}

std::string default_photo() {
    const std::string td = testdata_dir();
    if (!td.empty() && fs::exists(fs::path(td) / "graf1.png")) return (fs::path(td) / "graf1.png").string();
    return std::string(KESTREL_EXAMPLES_OPENCV_DATA) + "/graf1.png";
}

std::string seconds_text(long long ns) {
    const bool neg = ns < 0;
    const unsigned long long a = neg ? 0ull - static_cast<unsigned long long>(ns) : static_cast<unsigned long long>(ns);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%s%llu.%09llu", neg ? "-" : "", a / 1000000000ull, a % 1000000000ull);
    return buf;
}

namespace {

/// A list of image files with their timestamps.
class FileList : public FrameSource {
public:
    FileList(std::vector<std::string> files, std::vector<long long> stamps, std::string what, double fps)
        : files_(std::move(files)), stamps_(std::move(stamps)), what_(std::move(what)), fps_(fps) {}
    bool next(Frame& f) override {
        if (i_ >= files_.size()) return false;
        f.image = load_grey(files_[i_]);
        f.timestamp_ns = stamps_[i_];
        f.name = fs::path(files_[i_]).filename().string();
        ++i_;
        return true;
    }
    std::string describe() const override {
        return what_ + " (" + std::to_string(files_.size()) + " frames)";
    }
    double fps() const override { return fps_; }

private:
    std::vector<std::string> files_;
    std::vector<long long> stamps_;
    std::string what_;
    double fps_;
    std::size_t i_ = 0;
};

class Video : public FrameSource {
public:
    explicit Video(const std::string& path) : in_(path), path_(path) {}
    bool next(Frame& f) override {
        if (!in_.read(f.image, f.timestamp_ns)) return false;
        f.name = "frame " + std::to_string(n_++);
        return true;
    }
    std::string describe() const override { return "video " + path_; }
    double fps() const override { return in_.fps(); }

private:
    VideoIn in_;
    std::string path_;
    long long n_ = 0;
};

std::vector<long long> uniform_stamps(std::size_t n, double fps) {
    std::vector<long long> s(n);
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<long long>(std::llround(static_cast<double>(i) * 1e9 / fps));
    return s;
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\r' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
    std::size_t b = 0;
    while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
    return s.substr(b);
}

/// EuRoC camera folder: <cam>/data.csv ("#timestamp [ns],filename") and <cam>/data/<filename>.
std::unique_ptr<FrameSource> open_euroc(const fs::path& cam) {
    std::ifstream in(cam / "data.csv");
    std::vector<std::string> files;
    std::vector<long long> stamps;
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
        ++line_no;
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        const auto comma = line.find(',');
        if (comma == std::string::npos)
            throw std::runtime_error((cam / "data.csv").string() + ":" + std::to_string(line_no) +
                                     ": expected 'timestamp,filename'");
        stamps.push_back(std::stoll(line.substr(0, comma)));
        files.push_back((cam / "data" / trim(line.substr(comma + 1))).string());
    }
    if (files.empty()) throw std::runtime_error((cam / "data.csv").string() + " lists no frames");
    double fps = 20.0;
    if (stamps.size() > 1 && stamps.back() > stamps.front())
        fps = 1e9 * static_cast<double>(stamps.size() - 1) / static_cast<double>(stamps.back() - stamps.front());
    return std::make_unique<FileList>(std::move(files), std::move(stamps), "EuRoC folder " + cam.string(), fps);
}

std::unique_ptr<FrameSource> open_folder(const fs::path& dir, double fps, const std::string& prefix = "") {
    std::vector<std::string> files;
    for (const std::string& f : list_images(dir.string()))
        if (fs::path(f).filename().string().rfind(prefix, 0) == 0) files.push_back(f);
    if (files.empty()) return nullptr;
    auto stamps = uniform_stamps(files.size(), fps);
    return std::make_unique<FileList>(std::move(files), std::move(stamps), "image folder " + dir.string(), fps);
}

}  // namespace

std::unique_ptr<FrameSource> open_source(const std::string& spec, double fps) {
    if (spec.empty()) {  // the embedded default: vtest.avi (10 frames per second)
        const double f = fps > 0.0 ? fps : 10.0;
        const std::string td = testdata_dir();
        if (!td.empty() && fs::is_directory(td))
            if (auto s = open_folder(td, f, "vtest_")) return s;
        const std::string avi = std::string(KESTREL_EXAMPLES_OPENCV_DATA) + "/vtest.avi";
        if (have_opencv() && fs::exists(avi)) return std::make_unique<Video>(avi);
        throw std::runtime_error(
            "no default sequence found: build the test data (ninja kestrel_testdata, which needs Debian's "
            "opencv-doc) or set KESTREL_TEST_DATA, or pass a EuRoC folder, an image folder or a video");
    }
    const fs::path p(spec);
    if (fs::is_directory(p)) {
        for (const fs::path& cam : {p / "mav0" / "cam0", p / "cam0", p})
            if (fs::exists(cam / "data.csv") && fs::is_directory(cam / "data")) return open_euroc(cam);
        if (auto s = open_folder(p, fps > 0.0 ? fps : 20.0)) return s;
        throw std::runtime_error("folder '" + spec + "' holds no images and no EuRoC data.csv");
    }
    if (!fs::exists(p)) throw std::runtime_error("'" + spec + "' does not exist");
    if (is_image_file(spec)) {
        return std::make_unique<FileList>(std::vector<std::string>{spec}, std::vector<long long>{0},
                                          "image " + spec, fps > 0.0 ? fps : 20.0);
    }
    return std::make_unique<Video>(spec);
}

}  // namespace kestrel_examples
