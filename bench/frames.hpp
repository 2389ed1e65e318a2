// Frame input of the benches: image loading (stb_image, no OpenCV), geometric preparation (crop,
// resize, size cap) and the sequences kestrel_bench reads (the default: a camera moving over a real
// photo, the demo's sequence; EuRoC folder, image folder, video file, the vtest frames). Everything is
// loaded (or rendered) into memory before timing starts.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kestrel/image.hpp"

namespace kestrel::bench {

/// Loads a PNG/JPEG/PGM/PPM file as 8-bit grey; throws std::runtime_error naming the file.
HostImage load_grey(const std::string& path);

/// Bilinear resize (pixel centres aligned); halves by 2x2 averages first while the target is at most
/// half the source, so that strong reductions do not alias.
HostImage resize(const HostImage& img, int width, int height);
/// Centred crop; throws std::runtime_error when the image is smaller than the crop.
HostImage center_crop(const HostImage& img, int width, int height);

/// How each frame is prepared: crop (0 = none), then resize (0 = none), then a cap that scales down
/// (keeping the aspect ratio) until the frame fits max_width x max_height (0 = no cap).
struct FrameGeometry {
    int crop_width = 0, crop_height = 0;
    int resize_width = 0, resize_height = 0;
    int max_width = 0, max_height = 0;
    std::string describe() const;
};
HostImage prepare(const HostImage& img, const FrameGeometry& g);

/// A finite sequence of frames, read on demand in order (index 0, 1, ...).
class FrameSource {
public:
    virtual ~FrameSource() = default;
    virtual std::string describe() const = 0;
    /// Number of frames, or -1 when unknown before reading (video).
    virtual int size() const = 0;
    /// Frame i (grey, as stored), or an empty image past the end.
    virtual HostImage read(int i) = 0;
    /// True when the last frame continues into the first (a periodic motion): a longer sequence loops
    /// instead of playing forwards then backwards.
    virtual bool periodic() const { return false; }
};

/// EuRoC/ASL folder: <dir>/mav0/cam0/data.csv (timestamp,filename) and <dir>/mav0/cam0/data/*.png;
/// `dir` may also be the mav0 or the cam0 folder.
std::unique_ptr<FrameSource> open_euroc(const std::string& dir);
/// Every .png/.jpg/.jpeg/.pgm/.ppm file of a folder, in name order.
std::unique_ptr<FrameSource> open_image_folder(const std::string& dir);
/// vtest_000.png, vtest_001.png ... of the prepared test-data folder (a fixed camera; input `vtest`).
std::unique_ptr<FrameSource> open_vtest_sequence(const std::string& data_dir);

/// The default input: a camera moving over a real photo, the demo's sequence (examples/common/synthetic.hpp:
/// pan along a Lissajous curve, roll +-4 degrees, zoom 0.88..1), rendered at width x height with the photo
/// magnified `magnification` times, one period of the motion in `period` frames, the pan at most
/// `max_speed` px per frame in x (5/8 of it in y). Fast enough that tracks leave the view and the tracker
/// re-detects. Periodic: a longer sequence loops. Throws std::runtime_error naming the photo when it
/// cannot be read or is too small for the window.
struct MovingCamera {
    std::string photo;  ///< empty: default_photo()
    int width = 752, height = 480;
    double magnification = 2.0;
    int period = 200;
    double max_speed = 16.0;
};
std::unique_ptr<FrameSource> open_moving_camera(const MovingCamera& m, const std::string& data_dir);
/// The photo of the default input: graf1.png of the test-data folder `data_dir` (the build's testdata/,
/// prepared from opencv-doc), else opencv-doc's own graf1.png; empty when neither exists.
std::string default_photo(const std::string& data_dir);
/// True when this build reads video files (OpenCV videoio; CMake option KESTREL_BENCH_VIDEO).
bool video_supported();
/// A video file (throws std::runtime_error when this build has no video support).
std::unique_ptr<FrameSource> open_video(const std::string& path);
/// True when `dir` looks like an EuRoC folder (any of the accepted levels).
bool is_euroc(const std::string& dir);

/// Folder of the prepared test data: `flag` when non-empty, else $KESTREL_TEST_DATA, else the build
/// tree's testdata/ (compiled in); empty when none exists.
std::string find_test_data(const std::string& flag);

/// The measured sequence: `count` prepared frames taken from the source in order; when the source is
/// shorter it is repeated when periodic, else played forwards then backwards (ping-pong), so that
/// motion stays continuous and tracks are not cut by a jump. Distinct frames are loaded and prepared once.
class Sequence {
public:
    Sequence(std::unique_ptr<FrameSource> source, const FrameGeometry& geometry, int count,
             const std::function<void(int, int)>& progress = {});
    int size() const { return static_cast<int>(order_.size()); }
    const HostImage& frame(int i) const { return distinct_[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])]; }
    int source_index(int i) const { return order_[static_cast<std::size_t>(i)]; }
    int distinct() const { return static_cast<int>(distinct_.size()); }
    int width() const { return distinct_.front().width(); }
    int height() const { return distinct_.front().height(); }
    int source_width() const { return source_width_; }
    int source_height() const { return source_height_; }
    const std::string& description() const { return description_; }
    bool looped() const { return looped_; }
    /// Whether a looped source was repeated (periodic) rather than played forwards then backwards.
    bool periodic() const { return periodic_; }

private:
    std::vector<HostImage> distinct_;
    std::vector<int> order_;
    std::string description_;
    int source_width_ = 0, source_height_ = 0;
    bool looped_ = false, periodic_ = false;
};

}  // namespace kestrel::bench
