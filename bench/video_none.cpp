// Video input disabled (KESTREL_BENCH_VIDEO=OFF or OpenCV videoio not found): GPU-side builds carry
// no imgcodecs/videoio. Convert the video to an image folder instead.
#include <stdexcept>

#include "frames.hpp"

namespace kestrel::bench {

bool video_supported() { return false; }
std::unique_ptr<FrameSource> open_video(const std::string& path) {
    throw std::runtime_error("cannot read video '" + path + "': this kestrel_bench was built without video support "
                             "(KESTREL_BENCH_VIDEO=OFF or OpenCV videoio not found); extract the frames to PNG files "
                             "(e.g. ffmpeg -i video.avi frames/%06d.png) and pass the folder");
}

}  // namespace kestrel::bench
