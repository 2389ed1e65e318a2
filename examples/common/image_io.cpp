#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_PNM
#define STBI_ONLY_BMP
#include <stb_image.h>
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb_image_write.h>

#include "image_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#if KESTREL_EXAMPLES_WITH_OPENCV
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#endif

namespace fs = std::filesystem;

namespace kestrel_examples {

bool have_opencv() { return KESTREL_EXAMPLES_WITH_OPENCV != 0; }

#if KESTREL_EXAMPLES_WITH_OPENCV
static kestrel::HostImage from_mat(const cv::Mat& m) {
    cv::Mat grey;
    if (m.channels() == 3) cv::cvtColor(m, grey, cv::COLOR_BGR2GRAY);
    else if (m.channels() == 4) cv::cvtColor(m, grey, cv::COLOR_BGRA2GRAY);
    else grey = m;
    if (grey.depth() != CV_8U) grey.convertTo(grey, CV_8U);
    const kestrel::HostView v{grey.data, grey.cols, grey.rows, grey.step[0]};
    return kestrel::HostImage::copy_of(v);
}
#endif

kestrel::HostImage load_grey(const std::string& path) {
    int w = 0, h = 0, n = 0;
    if (unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1)) {
        kestrel::HostImage img(w, h);
        std::memcpy(img.data(), px, static_cast<std::size_t>(w) * h);
        stbi_image_free(px);
        return img;
    }
    const std::string reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
#if KESTREL_EXAMPLES_WITH_OPENCV
    const cv::Mat m = cv::imread(path, cv::IMREAD_GRAYSCALE);
    if (!m.empty()) return from_mat(m);
#endif
    throw std::runtime_error("cannot read image '" + path + "' (" + reason + ")");
}

// Fast rather than small: level 8 (stb's default) costs ~10x the time for ~20 % smaller files.
static void png_speed() {
    stbi_write_png_compression_level = 2;
    stbi_write_force_png_filter = 1;  // "sub" on every row: no per-row search over the five filters
}

void write_png(const std::string& path, const Canvas& c) {
#if KESTREL_EXAMPLES_WITH_OPENCV  // libpng + zlib: several times faster than stb's encoder
    const cv::Mat rgb(c.height(), c.width(), CV_8UC3, const_cast<std::uint8_t*>(c.data()));
    cv::Mat bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    if (!cv::imwrite(path, bgr, {cv::IMWRITE_PNG_COMPRESSION, 1})) throw std::runtime_error("cannot write '" + path + "'");
    return;
#endif
    png_speed();
    if (!stbi_write_png(path.c_str(), c.width(), c.height(), 3, c.data(), c.width() * 3))
        throw std::runtime_error("cannot write '" + path + "'");
}

void write_png(const std::string& path, kestrel::HostView g) {
    png_speed();
    if (!stbi_write_png(path.c_str(), g.width, g.height, 1, g.data, static_cast<int>(g.pitch)))
        throw std::runtime_error("cannot write '" + path + "'");
}

bool is_image_file(const std::string& path) {
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
    for (const char* e : {".png", ".jpg", ".jpeg", ".pgm", ".ppm", ".bmp"})
        if (ext == e) return true;
    return have_opencv() && (ext == ".tif" || ext == ".tiff" || ext == ".webp");
}

std::vector<std::string> list_images(const std::string& dir) {
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && is_image_file(e.path().string())) files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

#if KESTREL_EXAMPLES_WITH_OPENCV
struct VideoOut::Impl {
    cv::VideoWriter writer;
    cv::Mat bgr;
};

VideoOut::VideoOut(const std::string& path, double fps, int width, int height) : impl_(new Impl) {
    const std::string ext = fs::path(path).extension().string();
    const int fourcc = ext == ".mp4" ? cv::VideoWriter::fourcc('m', 'p', '4', 'v')
                                     : cv::VideoWriter::fourcc('M', 'J', 'P', 'G');
    if (!impl_->writer.open(path, fourcc, fps, cv::Size(width, height)))
        throw std::runtime_error("cannot open video '" + path + "' for writing (use .avi or .mp4)");
}

void VideoOut::write(const Canvas& c) {
    const cv::Mat rgb(c.height(), c.width(), CV_8UC3, const_cast<std::uint8_t*>(c.data()));
    cv::cvtColor(rgb, impl_->bgr, cv::COLOR_RGB2BGR);
    impl_->writer.write(impl_->bgr);
}

struct VideoIn::Impl {
    cv::VideoCapture cap;
    cv::Mat frame;
    long long index = 0;
};

VideoIn::VideoIn(const std::string& path) : impl_(new Impl) {
    if (!impl_->cap.open(path)) throw std::runtime_error("cannot open video '" + path + "'");
}

bool VideoIn::read(kestrel::HostImage& grey, long long& timestamp_ns) {
    if (!impl_->cap.read(impl_->frame) || impl_->frame.empty()) return false;
    grey = from_mat(impl_->frame);
    // Frame index / fps: exact and monotonic (CAP_PROP_POS_MSEC is not, for every container).
    const double f = fps();
    timestamp_ns = static_cast<long long>(std::llround(static_cast<double>(impl_->index++) * 1e9 / f));
    return true;
}

double VideoIn::fps() const {
    const double f = impl_->cap.get(cv::CAP_PROP_FPS);
    return f > 0.0 && std::isfinite(f) ? f : 30.0;
}
#else
struct VideoOut::Impl {};
VideoOut::VideoOut(const std::string& path, double, int, int) {
    throw std::runtime_error("cannot write video '" + path +
                             "': the examples were built without OpenCV (write a PNG sequence instead)");
}
void VideoOut::write(const Canvas&) {}
struct VideoIn::Impl {};
VideoIn::VideoIn(const std::string& path) {
    throw std::runtime_error("cannot read video '" + path +
                             "': the examples were built without OpenCV (use an image folder or EuRoC folder)");
}
bool VideoIn::read(kestrel::HostImage&, long long&) { return false; }
double VideoIn::fps() const { return 30.0; }
#endif

VideoOut::~VideoOut() = default;
VideoIn::~VideoIn() = default;

}  // namespace kestrel_examples
