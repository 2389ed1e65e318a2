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

/// Reads any PNG/JPEG/PGM/BMP (or, with OpenCV, anything cv::imread reads) as 8-bit grey; throws
/// std::runtime_error naming the file when it cannot.
kestrel::HostImage load_grey(const std::string& path);

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

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace kestrel_examples
