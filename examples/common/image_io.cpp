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
#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

namespace {

enum class Format { Png, Bmp, Pnm, Jpeg, Other };

Format sniff(const std::string& path) {
    unsigned char b[8] = {};
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return Format::Other;
    const std::size_t n = std::fread(b, 1, sizeof b, f);
    std::fclose(f);
    static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n == 8 && std::memcmp(b, png, 8) == 0) return Format::Png;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M') return Format::Bmp;
    if (n >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6')) return Format::Pnm;
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return Format::Jpeg;
    return Format::Other;
}

const char* format_name(Format f) {
    switch (f) {
        case Format::Png: return "PNG";
        case Format::Bmp: return "BMP";
        case Format::Pnm: return "PNM";
        case Format::Jpeg: return "JPEG";
        case Format::Other: break;
    }
    return "other";
}

/// The file gamma libpng works with (PNG fixed point, 100000 = 1.0): 45455 when the file has an sRGB
/// chunk, else its gAMA value when libpng accepts it, else 0 (none). Chunks before the first IDAT.
long png_file_gamma(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char sig[8];
    if (!in.read(reinterpret_cast<char*>(sig), 8)) return 0;
    long gamma = 0;
    bool srgb = false;
    for (int guard = 0; guard < 4096; ++guard) {
        unsigned char hdr[8];
        if (!in.read(reinterpret_cast<char*>(hdr), 8)) break;
        const std::uint32_t len = (std::uint32_t(hdr[0]) << 24) | (std::uint32_t(hdr[1]) << 16) |
                                  (std::uint32_t(hdr[2]) << 8) | hdr[3];
        const std::string type(reinterpret_cast<char*>(hdr + 4), 4);
        if (type == "IDAT" || type == "IEND") break;
        if (type == "gAMA" && len == 4) {
            unsigned char g[4];
            if (!in.read(reinterpret_cast<char*>(g), 4)) break;
            const long v = (long(g[0]) << 24) | (long(g[1]) << 16) | (long(g[2]) << 8) | g[3];
            if (v >= 16 && v <= 625000000) gamma = v;  // libpng ignores gamma values outside this range
            in.seekg(4, std::ios::cur);                  // CRC
            continue;
        }
        if (type == "sRGB") srgb = true;
        in.seekg(static_cast<std::streamoff>(len) + 4, std::ios::cur);
    }
    return srgb ? 45455 : gamma;
}

/// libpng's png_reciprocal and png_gamma_significant (PNG fixed point).
long png_reciprocal(long a) { return static_cast<long>(std::floor(1e10 / static_cast<double>(a) + 0.5)); }
bool png_gamma_significant(long g) { return g < 100000 - 5000 || g > 100000 + 5000; }

/// libpng's 8-bit gamma table (png_build_8bit_table with png_gamma_8bit_correct).
void png_gamma_table(long gamma, std::uint8_t table[256]) {
    for (int i = 0; i < 256; ++i) {
        if (i > 0 && i < 255 && png_gamma_significant(gamma))
            table[i] = static_cast<std::uint8_t>(std::floor(255.0 * std::pow(i / 255.0, gamma * 0.00001) + 0.5));
        else
            table[i] = static_cast<std::uint8_t>(i);
    }
}

// libpng's rgb_to_gray weights for OpenCV's png_set_rgb_to_gray(png, 1, 0.299, 0.587): 29900 and
// 58700 in PNG fixed point, times 32768 / 100000 without rounding; blue takes the rest.
constexpr std::uint32_t kPngR = 9797, kPngG = 19234, kPngB = 32768 - kPngR - kPngG;
// OpenCV's BT.601 weights (imgcodecs' icvCvt_BGR2Gray and imgproc's cvtColor), 14-bit fixed point.
constexpr std::uint32_t kCvR = 4899, kCvG = 9617, kCvB = 1868;

std::string size_error(const std::string& path, int w, int h) {
    return "image '" + path + "' is " + std::to_string(w) + "x" + std::to_string(h) +
           ": larger than Kestrel's largest image side, " + std::to_string(kestrel::kMaxImageSide) + " pixels";
}

/// PNG through stb, converted to grey as libpng converts it for cv::imread(IMREAD_GRAYSCALE).
bool load_png(const std::string& path, kestrel::HostImage& out, GreyInfo& info) {
    int w = 0, h = 0, n = 0;
    if (!stbi_info(path.c_str(), &w, &h, &n)) return false;
    const bool colour = n >= 3;
    const int req = colour ? 4 : 2;  // always ask for an alpha channel: a known layout, alpha dropped
    info.channels = n;
    info.bits = stbi_is_16_bit(path.c_str()) ? 16 : 8;
    if (w > kestrel::kMaxImageSide || h > kestrel::kMaxImageSide) throw std::runtime_error(size_error(path, w, h));
    out = kestrel::HostImage(w, h);
    std::uint8_t* dst = out.data();
    const std::size_t count = static_cast<std::size_t>(w) * h;
    const long gamma = colour ? png_file_gamma(path) : 0;
    const bool use_gamma = gamma != 0 && png_gamma_significant(gamma);
    if (info.bits == 16) {
        stbi_us* px = stbi_load_16(path.c_str(), &w, &h, &n, req);
        if (!px) return false;
        for (std::size_t i = 0; i < count; ++i) {
            const stbi_us* p = px + i * req;
            std::uint32_t v = p[0];
            if (colour) {
                if (use_gamma) {  // libpng's 16-bit tables are not reproduced: the exact curve (within one level)
                    const double g = gamma * 0.00001;
                    const auto to1 = [g](double c) { return std::pow(c / 65535.0, 1.0 / g); };
                    const double y = (kPngR * to1(p[0]) + kPngG * to1(p[1]) + kPngB * to1(p[2])) / 32768.0;
                    v = static_cast<std::uint32_t>(std::lround(65535.0 * std::pow(y, g)));
                } else {
                    v = (kPngR * p[0] + kPngG * p[1] + kPngB * p[2] + 16384) >> 15;  // libpng: 16-bit rounds
                }
            }
            dst[i] = static_cast<std::uint8_t>(v >> 8);  // png_set_strip_16: the high byte
        }
        stbi_image_free(px);
        return true;
    }
    stbi_uc* px = stbi_load(path.c_str(), &w, &h, &n, req);
    if (!px) return false;
    if (!colour) {
        for (std::size_t i = 0; i < count; ++i) dst[i] = px[i * 2];
    } else if (!use_gamma) {
        for (std::size_t i = 0; i < count; ++i) {
            const stbi_uc* p = px + i * 4;
            dst[i] = (p[0] == p[1] && p[0] == p[2]) ? p[0]
                                                     : static_cast<std::uint8_t>((kPngR * p[0] + kPngG * p[1] + kPngB * p[2]) >> 15);
        }
    } else {
        // libpng: screen gamma = 1 / file gamma; to linear with 1 / file gamma, back with 1 / screen gamma.
        std::uint8_t to1[256], from1[256];
        const long screen = png_reciprocal(gamma);
        png_gamma_table(png_reciprocal(gamma), to1);
        png_gamma_table(png_reciprocal(screen), from1);
        for (std::size_t i = 0; i < count; ++i) {
            const stbi_uc* p = px + i * 4;
            dst[i] = (p[0] == p[1] && p[0] == p[2])
                         ? p[0]
                         : from1[(kPngR * to1[p[0]] + kPngG * to1[p[1]] + kPngB * to1[p[2]] + 16384) >> 15];
        }
    }
    stbi_image_free(px);
    return true;
}

/// Binary PGM / PPM (P5 / P6), read here: stb reads 16-bit PNM samples wrongly. As OpenCV: samples are
/// taken as they are (maxval does not scale them), 16-bit samples (maxval > 255) keep their high byte,
/// then colour is converted with BT.601 fixed point.
bool load_pnm(const std::string& path, kestrel::HostImage& out, GreyInfo& info, std::string& reason) {
    std::ifstream in(path, std::ios::binary);
    const auto fail = [&reason](const std::string& r) {
        reason = r;
        return false;
    };
    char magic[2] = {};
    if (!in.read(magic, 2) || magic[0] != 'P' || (magic[1] != '5' && magic[1] != '6')) return fail("not a binary PGM/PPM");
    const auto number = [&in](long& v) {  // skips whitespace and # comments
        int c = in.get();
        for (;;) {
            while (c != EOF && std::isspace(c)) c = in.get();
            if (c != '#') break;
            while (c != EOF && c != '\n') c = in.get();
        }
        if (c == EOF || !std::isdigit(c)) return false;
        v = 0;
        for (; c != EOF && std::isdigit(c); c = in.get())
            if ((v = v * 10 + (c - '0')) > 1000000000L) return false;
        return c != EOF && std::isspace(c);  // exactly one whitespace before the samples
    };
    long w = 0, h = 0, maxval = 0;
    if (!number(w) || !number(h) || !number(maxval) || w < 1 || h < 1 || maxval < 1 || maxval > 65535)
        return fail("bad PGM/PPM header");
    const int channels = magic[1] == '6' ? 3 : 1, bytes = maxval > 255 ? 2 : 1;
    info.channels = channels;
    info.bits = bytes * 8;
    if (w > kestrel::kMaxImageSide || h > kestrel::kMaxImageSide)
        throw std::runtime_error(size_error(path, static_cast<int>(w), static_cast<int>(h)));
    std::vector<unsigned char> buf(static_cast<std::size_t>(w) * h * channels * bytes);
    if (!in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size())))
        return fail("PGM/PPM file is shorter than its header says");
    out = kestrel::HostImage(static_cast<int>(w), static_cast<int>(h));
    std::uint8_t* dst = out.data();
    const std::size_t count = static_cast<std::size_t>(w) * h;
    for (std::size_t i = 0; i < count; ++i) {
        const unsigned char* p = buf.data() + i * channels * bytes;  // 16 bit: big-endian, high byte first
        if (channels == 1) dst[i] = p[0];
        else dst[i] = static_cast<std::uint8_t>((kCvR * p[0] + kCvG * p[bytes] + kCvB * p[2 * bytes] + 8192) >> 14);
    }
    return true;
}

/// BMP through stb, converted with OpenCV's BT.601 fixed point (imgcodecs' icvCvt_BGR2Gray), alpha dropped.
bool load_bt601(const std::string& path, kestrel::HostImage& out, GreyInfo& info) {
    int w = 0, h = 0, n = 0;
    if (!stbi_info(path.c_str(), &w, &h, &n)) return false;
    info.channels = n;
    if (w > kestrel::kMaxImageSide || h > kestrel::kMaxImageSide) throw std::runtime_error(size_error(path, w, h));
    out = kestrel::HostImage(w, h);
    std::uint8_t* dst = out.data();
    const std::size_t count = static_cast<std::size_t>(w) * h;
    stbi_uc* px = stbi_load(path.c_str(), &w, &h, &n, 0);
    if (!px) return false;
    const bool colour = n >= 3;
    const int req = n;
    for (std::size_t i = 0; i < count; ++i) {
        const stbi_uc* p = px + i * req;
        dst[i] = colour ? static_cast<std::uint8_t>((kCvR * p[0] + kCvG * p[1] + kCvB * p[2] + 8192) >> 14) : p[0];
    }
    stbi_image_free(px);
    return true;
}


}  // namespace

kestrel::HostImage load_grey(const std::string& path, GreyInfo* info_out) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) {
        throw std::runtime_error("cannot read image '" + path + "' (" +
                                 (fs::exists(path, ec) ? "not a regular file" : "no such file") + ")");
    }
    GreyInfo info;
    const Format fmt = sniff(path);
    info.format = format_name(fmt);
    info.decoder = "stb";
    kestrel::HostImage img;
    bool ok = false;
    if (fmt == Format::Png) ok = load_png(path, img, info);
    else if (fmt == Format::Bmp) ok = load_bt601(path, img, info);
    std::string reason;
    if (fmt == Format::Pnm) ok = load_pnm(path, img, info, reason);
    else if (!ok) reason = fmt == Format::Other ? "not a PNG, JPEG, BMP, PGM or PPM file"
                         : stbi_failure_reason() ? stbi_failure_reason() : "unknown";

#if KESTREL_EXAMPLES_WITH_OPENCV
    if (!ok) {  // JPEG (libjpeg, as cv::imread), and the formats or variants stb does not read
        const cv::Mat m = cv::imread(path, cv::IMREAD_GRAYSCALE);
        if (!m.empty()) {
            if (m.cols > kestrel::kMaxImageSide || m.rows > kestrel::kMaxImageSide)
                throw std::runtime_error(size_error(path, m.cols, m.rows));
            img = from_mat(m);
            info.decoder = "OpenCV";
            info.channels = 1;
            info.bits = 8;
            ok = true;
        }
    }
#endif
    if (!ok && fmt == Format::Jpeg) {  // without OpenCV: stb's JPEG decoder, its luma channel
        int w = 0, h = 0, n = 0;
        if (stbi_info(path.c_str(), &w, &h, &n) && (w > kestrel::kMaxImageSide || h > kestrel::kMaxImageSide))
            throw std::runtime_error(size_error(path, w, h));
        if (unsigned char* px = stbi_load(path.c_str(), &w, &h, &n, 1)) {
            img = kestrel::HostImage(w, h);
            std::memcpy(img.data(), px, static_cast<std::size_t>(w) * h);
            stbi_image_free(px);
            info.channels = n;
            ok = true;
        } else {
            reason = stbi_failure_reason() ? stbi_failure_reason() : "unknown";
        }
    }
    if (!ok) throw std::runtime_error("cannot read image '" + path + "' (" + reason + ")");
    if (info_out) *info_out = info;
    return img;
}

std::string depth_notice(const std::string& path, const GreyInfo& info) {
    if (info.bits <= 8) return "";
    return path + " is a " + std::to_string(info.bits) +
           "-bit image: reduced to 8 bits by keeping the high byte of each sample (v >> 8, as OpenCV's "
           "IMREAD_GRAYSCALE does)";
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

long long VideoIn::frame_count() const {
    const double n = impl_->cap.get(cv::CAP_PROP_FRAME_COUNT);
    return n >= 1.0 && n < 1e12 ? static_cast<long long>(std::llround(n)) : -1;
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
long long VideoIn::frame_count() const { return -1; }
#endif

VideoOut::~VideoOut() = default;
VideoIn::~VideoIn() = default;

}  // namespace kestrel_examples
