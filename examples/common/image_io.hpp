// Image and video I/O for the examples. Still images are read and PNGs written with stb (always
// available); with OpenCV (KESTREL_EXAMPLES_WITH_OPENCV) any format OpenCV reads is accepted as a
// fallback, and videos can be read and written.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "canvas.hpp"
#include "kestrel/image.hpp"

namespace kestrel_examples {

/// True when the examples were built with OpenCV's imgcodecs/videoio (video in and out).
bool have_opencv();

/// What load_grey found in the file and did to make it 8-bit grey.
struct GreyInfo {
    int bits = 8;          ///< bits per sample in the file (16: reduced to 8, see load_grey)
    int channels = 1;      ///< channels in the file after palette expansion: 1 grey, 2 grey + alpha, 3 RGB, 4 RGBA
    std::string format;    ///< "PNG", "BMP", "PNM", "JPEG" or "other"
    std::string decoder;   ///< "stb" or "OpenCV"
};

/// Reads an image as 8-bit grey, exactly as OpenCV's cv::imread(path, cv::IMREAD_GRAYSCALE) does, so
/// that corners found on it can be compared with OpenCV's pixel for pixel:
///  - PNG (decoded with stb, converted as libpng does for OpenCV): colour and palette images by
///    libpng's rgb_to_gray (R, G, B weights 9797, 19234, 3737 / 32768; truncated; a pixel with
///    R = G = B keeps its value), or, when the file has a gAMA or sRGB chunk, libpng's gamma-correct
///    version of it (linearise, weigh, rounded, re-encode, through libpng's 8-bit tables);
///    alpha (RGBA, grey + alpha, tRNS) is dropped, not composited; 16-bit samples are reduced to
///    8 bits by keeping the high byte (v >> 8), after the grey conversion for 16-bit colour;
///  - BMP and binary PGM/PPM: OpenCV's BT.601 fixed point (R 4899, G 9617, B 1868 / 16384, rounded),
///    alpha dropped; PGM/PPM samples as stored (maxval does not scale them), 16-bit ones >> 8 first;
///  - JPEG and anything else: cv::imread itself when the examples are built with OpenCV; without
///    OpenCV, JPEGs are decoded by stb, whose IDCT differs from libjpeg's by one grey level on about
///    1 % of the pixels.
/// One documented exception (docs/troubleshooting.md): 16-bit colour PNGs with a gAMA or sRGB chunk
/// may differ from OpenCV by one grey level. Throws std::runtime_error naming the file when it
/// cannot read it, or when it is larger than Kestrel's largest image side.
kestrel::HostImage load_grey(const std::string& path, GreyInfo* info = nullptr);

/// One line for stderr when load_grey changed the depth (empty when the file was 8-bit), e.g.
/// "x.png is a 16-bit image: reduced to 8 bits by keeping the high byte of each sample (v >> 8, as
/// OpenCV's IMREAD_GRAYSCALE does)".
std::string depth_notice(const std::string& path, const GreyInfo& info);

void write_png(const std::string& path, const Canvas& canvas);    ///< throws on failure
void write_png(const std::string& path, kestrel::HostView grey);  ///< throws on failure

/// Files of `dir` whose extension is an image format, sorted by name.
std::vector<std::string> list_images(const std::string& dir);
bool is_image_file(const std::string& path);

/// Annotated video output (OpenCV only: MJPG for .avi, mp4v for .mp4).
class VideoOut {
public:
    VideoOut(const std::string& path, double fps, int width, int height);  ///< throws when it cannot
    ~VideoOut();
    void write(const Canvas& frame);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

/// Video input (OpenCV only): frames converted to grey.
class VideoIn {
public:
    explicit VideoIn(const std::string& path);  ///< throws when it cannot open the file
    ~VideoIn();
    /// Next frame as grey and its timestamp in nanoseconds; false at the end.
    bool read(kestrel::HostImage& grey, long long& timestamp_ns);
    double fps() const;
    /// The frame count the file's header announces (CAP_PROP_FRAME_COUNT); -1 when it gives none.
    long long frame_count() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel_examples
