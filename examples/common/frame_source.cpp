#include "frame_source.hpp"

#include <algorithm>
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

/// A list of image files with their timestamps. `origins`: where each file was listed (for
/// EuRoC, "<data.csv>:<line>"), put before read errors; empty for folders.
class FileList : public FrameSource {
public:
    FileList(std::vector<std::string> files, std::vector<long long> stamps, std::string what, double fps,
             std::vector<std::string> origins = {}, std::string notice = "")
        : files_(std::move(files)), stamps_(std::move(stamps)), what_(std::move(what)), fps_(fps),
          origins_(std::move(origins)), notice_(std::move(notice)) {}
    bool next(Frame& f) override {
        if (i_ >= files_.size()) return false;
        GreyInfo info;
        try {
            f.image = load_grey(files_[i_], &info);
        } catch (const std::exception& e) {
            if (origins_.empty()) throw;
            throw std::runtime_error(origins_[i_] + ": " + e.what());
        }
        f.timestamp_ns = stamps_[i_];
        f.name = fs::path(files_[i_]).filename().string();
        f.path = files_[i_];
        f.source_bits = info.bits;
        ++i_;
        return true;
    }
    std::string describe() const override {
        return what_ + " (" + std::to_string(files_.size()) + " frames)";
    }
    double fps() const override { return fps_; }
    std::string notice() const override { return notice_; }
    std::string sensor_yaml() const override { return sensor_; }
    std::string sensor_;  ///< EuRoC: <cam>/sensor.yaml when it exists

private:
    std::vector<std::string> files_;
    std::vector<long long> stamps_;
    std::string what_;
    double fps_;
    std::vector<std::string> origins_;
    std::string notice_;
    std::size_t i_ = 0;
};

class Video : public FrameSource {
public:
    explicit Video(const std::string& path) : in_(path), path_(path), announced_(in_.frame_count()) {}
    bool next(Frame& f) override {
        if (!in_.read(f.image, f.timestamp_ns)) {
            if (n_ == 0)
                throw std::runtime_error("video '" + path_ + "': no frame could be decoded" +
                                         (announced_ > 0 ? " (its header announces " + std::to_string(announced_) +
                                                               " frames)"
                                                         : std::string()) +
                                         ": the file opens, but its frames are missing or damaged (a truncated or "
                                         "incomplete file?)");
            return false;
        }
        f.name = "frame " + std::to_string(n_++);
        return true;
    }
    std::string describe() const override {
        return "video " + path_ + (announced_ > 0 ? " (" + std::to_string(announced_) + " frames)" : std::string());
    }
    double fps() const override { return in_.fps(); }
    std::string end_notice() const override {
        if (announced_ <= 0 || n_ >= announced_) return "";
        return "video '" + path_ + "' ended early: frame " + std::to_string(n_ - 1) + " was the last that could be "
               "decoded, " + std::to_string(n_) + " of the " + std::to_string(announced_) +
               " frames its header announces (the file is cut short there, or its next frame is damaged or in a form this "
               "OpenCV cannot decode)";
    }

private:
    VideoIn in_;
    std::string path_;
    long long announced_;
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

/// A EuRoC timestamp field: a whole, non-negative number of nanoseconds that fits in a signed 64-bit
/// integer. Returns "" and sets `ns`, or says what is wrong.
std::string parse_timestamp(const std::string& field, long long& ns) {
    if (field.empty()) return "empty timestamp (expected 'timestamp,filename', the timestamp in nanoseconds)";
    const std::string quoted = "'" + (field.size() > 40 ? field.substr(0, 40) + "..." : field) + "'";
    std::size_t i = 0;
    if (field[0] == '-') return "timestamp " + quoted + " is negative";
    if (field[0] == '+') i = 1;
    if (i == field.size()) return "timestamp " + quoted + " is not a whole number of nanoseconds";
    unsigned long long v = 0;
    bool too_large = false;
    for (; i < field.size(); ++i) {
        const char c = field[i];
        if (c < '0' || c > '9') return "timestamp " + quoted + " is not a whole number of nanoseconds";
        const unsigned d = static_cast<unsigned>(c - '0');
        if (v > (9223372036854775807ull - d) / 10) too_large = true;
        else v = v * 10 + d;
    }
    if (too_large)
        return "timestamp " + quoted + " does not fit in 64 bits (the largest is 9223372036854775807 ns)";
    ns = static_cast<long long>(v);
    return "";
}

/// A EuRoC camera folder's frames, checked: files, timestamps, where each was listed ("<csv>:<line>").
struct EurocList {
    std::string csv;
    std::vector<std::string> files, origins;
    std::vector<long long> stamps;
    std::string notice;
};

/// EuRoC camera folder: <cam>/data.csv ("#timestamp [ns],filename") and <cam>/data/<filename>.
EurocList read_euroc(const fs::path& cam, bool sort_timestamps) {
    const std::string csv = (cam / "data.csv").string();
    std::ifstream in(csv, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + csv);
    struct Row {
        long long ns;
        int line;
        std::string file;
    };
    std::vector<Row> rows;
    std::string line;
    int line_no = 0;
    const auto fail = [&csv](int at, const std::string& what) {
        throw std::runtime_error(csv + ":" + std::to_string(at) + ": " + what);
    };
    while (std::getline(in, line)) {
        ++line_no;
        if (line_no == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // UTF-8 byte order mark
        line = trim(line);
        if (line.empty() || line[0] == '#') continue;
        const auto comma = line.find(',');
        if (comma == std::string::npos)
            fail(line_no, "expected 'timestamp,filename', got '" + (line.size() > 60 ? line.substr(0, 60) + "..." : line) + "'");
        const std::string file = trim(line.substr(comma + 1));
        if (file.empty()) fail(line_no, "no file name after the timestamp");
        if (file.find(',') != std::string::npos)
            fail(line_no, "expected 2 fields 'timestamp,filename', got more: '" + line + "'");
        long long ns = 0;
        const std::string err = parse_timestamp(trim(line.substr(0, comma)), ns);
        if (!err.empty()) fail(line_no, err);
        rows.push_back({ns, line_no, file});
    }
    if (rows.empty()) throw std::runtime_error(csv + " lists no frames");

    std::string notice;
    std::size_t out_of_order = 0;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        if (rows[i].ns > rows[i - 1].ns) continue;
        if (rows[i].ns == rows[i - 1].ns)
            fail(rows[i].line, "timestamp " + std::to_string(rows[i].ns) + " repeats line " +
                                   std::to_string(rows[i - 1].line) + "'s: two frames at the same time");
        if (!sort_timestamps)
            fail(rows[i].line, "timestamp " + std::to_string(rows[i].ns) + " is not after line " +
                                   std::to_string(rows[i - 1].line) + "'s " + std::to_string(rows[i - 1].ns) +
                                   ": camera time must increase (--sort-timestamps sorts the frames instead)");
        ++out_of_order;
    }
    if (out_of_order > 0) {
        std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns < b.ns; });
        for (std::size_t i = 1; i < rows.size(); ++i)
            if (rows[i].ns == rows[i - 1].ns)
                fail(std::max(rows[i].line, rows[i - 1].line),
                     "timestamp " + std::to_string(rows[i].ns) + " repeats line " +
                         std::to_string(std::min(rows[i].line, rows[i - 1].line)) + "'s: two frames at the same time");
        notice = csv + ": " + std::to_string(out_of_order) + " line" + (out_of_order == 1 ? "" : "s") +
                 " out of timestamp order; the frames are sorted by timestamp (--sort-timestamps)";
    }
    EurocList list;
    list.csv = csv;
    list.notice = notice;
    for (const Row& r : rows) {
        list.files.push_back((cam / "data" / r.file).string());
        list.stamps.push_back(r.ns);
        list.origins.push_back(csv + ":" + std::to_string(r.line));
    }
    return list;
}

double euroc_fps(const std::vector<long long>& stamps) {
    if (stamps.size() > 1 && stamps.back() > stamps.front())
        return 1e9 * static_cast<double>(stamps.size() - 1) / static_cast<double>(stamps.back() - stamps.front());
    return 20.0;
}

std::unique_ptr<FrameSource> open_euroc(const fs::path& cam, bool sort_timestamps) {
    EurocList l = read_euroc(cam, sort_timestamps);
    const double fps = euroc_fps(l.stamps);
    auto src = std::make_unique<FileList>(std::move(l.files), std::move(l.stamps), "EuRoC folder " + cam.string(), fps,
                                          std::move(l.origins), l.notice);
    if (fs::exists(cam / "sensor.yaml")) src->sensor_ = (cam / "sensor.yaml").string();
    return src;
}

/// Two frame sources read in step.
class PairedSource : public StereoFrameSource {
public:
    PairedSource(std::unique_ptr<FrameSource> left, std::unique_ptr<FrameSource> right, std::string what,
                 std::string notice, std::string yaml0 = "", std::string yaml1 = "")
        : left_(std::move(left)), right_(std::move(right)), what_(std::move(what)), notice_(std::move(notice)),
          yaml_{std::move(yaml0), std::move(yaml1)} {}
    bool next(Frame& l, Frame& r) override {
        const bool a = left_->next(l), b = right_->next(r);
        return a && b;  // the lists were paired when opened: both end together
    }
    std::string describe() const override { return what_; }
    double fps() const override { return left_->fps(); }
    std::string notice() const override { return notice_; }
    std::string sensor_yaml(int camera) const override { return yaml_[camera == 0 ? 0 : 1]; }

private:
    std::unique_ptr<FrameSource> left_, right_;
    std::string what_, notice_;
    std::string yaml_[2];
};

std::unique_ptr<FrameSource> open_folder(const fs::path& dir, double fps, const std::string& prefix = "") {
    std::vector<std::string> files;
    for (const std::string& f : list_images(dir.string()))
        if (fs::path(f).filename().string().rfind(prefix, 0) == 0) files.push_back(f);
    if (files.empty()) return nullptr;
    auto stamps = uniform_stamps(files.size(), fps);
    return std::make_unique<FileList>(std::move(files), std::move(stamps), "image folder " + dir.string(), fps);
}

}  // namespace

std::unique_ptr<StereoFrameSource> open_stereo_source(const std::string& left, const std::string& right,
                                                      const SourceOptions& opt) {
    const fs::path p(left);
    if (!fs::is_directory(p)) throw std::runtime_error("'" + left + "' is not a folder (stereo input: a EuRoC folder, or two image folders)");
    if (right.empty()) {
        fs::path cam0, cam1;
        for (const fs::path& root : {p / "mav0", p})
            if (fs::exists(root / "cam0" / "data.csv") && fs::exists(root / "cam1" / "data.csv")) {
                cam0 = root / "cam0";
                cam1 = root / "cam1";
                break;
            }
        if (cam0.empty()) {
            // Name the missing camera when the other one is there.
            for (const fs::path& root : {p / "mav0", p}) {
                const bool has0 = fs::exists(root / "cam0" / "data.csv"), has1 = fs::exists(root / "cam1" / "data.csv");
                if (has0 != has1)
                    throw std::runtime_error("'" + left + "' is not a stereo EuRoC folder: " +
                                             (root / (has0 ? "cam0" : "cam1") / "data.csv").string() + " is there but " +
                                             (root / (has0 ? "cam1" : "cam0") / "data.csv").string() +
                                             " is missing (--stereo needs both cameras; without --stereo the folder is "
                                             "read as a mono sequence of cam0)");
            }
            throw std::runtime_error("'" + left + "' is not a stereo EuRoC folder: no mav0/cam0/data.csv and mav0/cam1/data.csv "
                                     "(for two image folders pass the right one with --right)");
        }
        EurocList a = read_euroc(cam0, opt.sort_timestamps), b = read_euroc(cam1, opt.sort_timestamps);
        // Pair by timestamp: both lists are sorted and strictly increasing; the first timestamp that one side
        // lacks is the error, naming where the other side lists it.
        std::size_t i = 0, j = 0;
        while (i < a.stamps.size() || j < b.stamps.size()) {
            if (j >= b.stamps.size() || (i < a.stamps.size() && a.stamps[i] < b.stamps[j]))
                throw std::runtime_error(a.origins[i] + ": timestamp " + std::to_string(a.stamps[i]) + " has no cam1 frame (" +
                                         b.csv + " does not list it): stereo frames are paired by timestamp");
            if (i >= a.stamps.size() || b.stamps[j] < a.stamps[i])
                throw std::runtime_error(b.origins[j] + ": timestamp " + std::to_string(b.stamps[j]) + " has no cam0 frame (" +
                                         a.csv + " does not list it): stereo frames are paired by timestamp");
            ++i;
            ++j;
        }
        std::string notice = a.notice;
        if (!b.notice.empty()) notice += (notice.empty() ? "" : "\n") + b.notice;
        const double fps = euroc_fps(a.stamps);
        const std::string what = "EuRoC folder " + cam0.parent_path().string() + " (cam0 + cam1, " +
                                 std::to_string(a.files.size()) + " pairs paired by timestamp)";
        const auto yaml = [](const fs::path& cam) {
            return fs::exists(cam / "sensor.yaml") ? (cam / "sensor.yaml").string() : std::string();
        };
        auto la = std::make_unique<FileList>(std::move(a.files), a.stamps, "cam0", fps, std::move(a.origins));
        auto lb = std::make_unique<FileList>(std::move(b.files), std::move(b.stamps), "cam1", fps, std::move(b.origins));
        return std::make_unique<PairedSource>(std::move(la), std::move(lb), what, notice, yaml(cam0), yaml(cam1));
    }
    if (!fs::is_directory(right)) throw std::runtime_error("--right '" + right + "' is not a folder");
    const std::vector<std::string> a = list_images(left), b = list_images(right);
    for (const fs::path& root : {p / "mav0", p})
        if (a.empty() && fs::exists(root / "cam0" / "data.csv"))
            throw std::runtime_error("'" + left + "' is a EuRoC folder, not a folder of left images: read its cam0 and "
                                     "cam1 with --stereo (without --right), or give the left image folder with --right");
    if (a.empty()) throw std::runtime_error("folder '" + left + "' holds no images");
    if (b.empty()) throw std::runtime_error("folder '" + right + "' holds no images");
    if (a.size() != b.size()) {
        const bool more_left = a.size() > b.size();
        const std::string& extra = more_left ? a[b.size()] : b[a.size()];
        throw std::runtime_error("the left folder has " + std::to_string(a.size()) + " images, the right one " +
                                 std::to_string(b.size()) + ": '" + extra + "' has no " + (more_left ? "right" : "left") +
                                 " image (the folders' images are paired in name order)");
    }
    const double fps = opt.fps > 0.0 ? opt.fps : 20.0;
    auto la = std::make_unique<FileList>(a, uniform_stamps(a.size(), fps), "left", fps);
    auto lb = std::make_unique<FileList>(b, uniform_stamps(b.size(), fps), "right", fps);
    return std::make_unique<PairedSource>(std::move(la), std::move(lb),
                                          "image folders " + left + " (left) and " + right + " (right), " +
                                              std::to_string(a.size()) + " pairs in name order",
                                          "");
}

std::unique_ptr<FrameSource> open_source(const std::string& spec, const SourceOptions& opt) {
    const double fps = opt.fps;
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
            if (fs::exists(cam / "data.csv") && fs::is_directory(cam / "data")) return open_euroc(cam, opt.sort_timestamps);
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
