// Where the examples' frames come from: a EuRoC-format folder (mav0/cam0/data.csv + data/*.png), a
// folder of images (sorted by name), a video file (OpenCV), a single image, or the embedded default
// (the vtest.avi frames that the build prepares in <build>/testdata, or opencv-doc's vtest.avi).
#pragma once
#include <memory>
#include <string>

#include "kestrel/image.hpp"

namespace kestrel_examples {

struct Frame {
    kestrel::HostImage image;    ///< 8-bit grey
    long long timestamp_ns = 0;  ///< EuRoC: the camera timestamp; folders and videos: index / fps
    std::string name;            ///< file name or "frame N"
};

class FrameSource {
public:
    virtual ~FrameSource() = default;
    /// Next frame; false at the end.
    virtual bool next(Frame& f) = 0;
    /// One line saying what is read, e.g. "EuRoC folder /data/MH_01 (cam0, 3682 frames)".
    virtual std::string describe() const = 0;
    /// Frames per second of the source (nominal; used for video output).
    virtual double fps() const = 0;
};

/// `spec` empty = the embedded default. `fps` is used for image folders (0 = 20, or 10 for the
/// default vtest frames). Throws std::runtime_error with advice when nothing can be read.
std::unique_ptr<FrameSource> open_source(const std::string& spec, double fps = 0.0);

/// Folder of the build's prepared test data: $KESTREL_TEST_DATA, else the build tree's testdata/
/// (compiled in), else empty.
std::string testdata_dir();

/// A real photo for synthetic sequences: graf1.png of the test data, else of opencv-doc.
std::string default_photo();

/// Formats nanoseconds as seconds with 9 decimals, exactly ("1403636579.763555584").
std::string seconds_text(long long ns);

}  // namespace kestrel_examples
