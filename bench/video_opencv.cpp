// Video input through OpenCV videoio (compiled only when KESTREL_BENCH_VIDEO is ON).
#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>
#include <stdexcept>

#include "frames.hpp"

namespace kestrel::bench {
namespace {

class VideoSource : public FrameSource {
public:
    explicit VideoSource(const std::string& path) : path_(path), cap_(path) {
        if (!cap_.isOpened()) throw std::runtime_error("cannot open video '" + path + "' (OpenCV videoio)");
    }
    std::string describe() const override { return "video " + path_; }
    int size() const override { return -1; }
    HostImage read(int i) override {
        if (i != next_) throw std::runtime_error("video frames are read in order");
        cv::Mat bgr, grey;
        if (!cap_.read(bgr) || bgr.empty()) return {};
        ++next_;
        if (bgr.channels() == 1) grey = bgr;
        else cv::cvtColor(bgr, grey, bgr.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
        HostImage img(grey.cols, grey.rows);
        for (int y = 0; y < grey.rows; ++y) std::copy_n(grey.ptr<std::uint8_t>(y), grey.cols, img.data() + static_cast<std::size_t>(y) * grey.cols);
        return img;
    }

private:
    std::string path_;
    cv::VideoCapture cap_;
    int next_ = 0;
};

}  // namespace

bool video_supported() { return true; }
std::unique_ptr<FrameSource> open_video(const std::string& path) { return std::make_unique<VideoSource>(path); }

}  // namespace kestrel::bench
