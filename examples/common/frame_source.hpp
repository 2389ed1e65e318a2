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
    std::string path;            ///< the file read ("" for video frames)
    int source_bits = 8;         ///< bits per sample in the file (16: reduced to 8 by load_grey)
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
    /// A note for stderr about how the source was read (e.g. frames sorted by timestamp); "" if none.
    virtual std::string notice() const { return ""; }
    /// After next() returned false: a note for stderr when the source ended before its end (a video whose
    /// header announces more frames than could be decoded: a truncated file); "" if none.
    virtual std::string end_notice() const { return ""; }
    /// EuRoC: the camera's sensor.yaml (<cam0>/sensor.yaml; "" when the file is not there); others: "".
    virtual std::string sensor_yaml() const { return ""; }
};

struct SourceOptions {
    double fps = 0.0;              ///< frame rate of image folders (0 = 20, or 10 for the default vtest frames)
    bool sort_timestamps = false;  ///< EuRoC: sort data.csv's lines by timestamp instead of rejecting disorder
};

/// `spec` empty = the embedded default (the vtest frames). Throws std::runtime_error with advice when
/// nothing can be read. A EuRoC data.csv is checked line by line: every error names the file, the
/// line and what is wrong ("<dir>/data.csv:7: timestamp ... is not after line 6's ..."): a line that
/// is not "timestamp,filename", a timestamp that is not a whole number of nanoseconds or does not fit
/// in 64 bits, a timestamp not greater than the line before (unless `sort_timestamps`: then the
/// frames are sorted, notice() says so, and only equal timestamps are an error).
std::unique_ptr<FrameSource> open_source(const std::string& spec, const SourceOptions& opt = {});

/// Stereo frames: left and right images of the same instant.
class StereoFrameSource {
public:
    virtual ~StereoFrameSource() = default;
    /// Next pair; false at the end.
    virtual bool next(Frame& left, Frame& right) = 0;
    /// One line saying what is read, e.g. "EuRoC folder /data/MH_01 (cam0 + cam1, 3682 pairs)".
    virtual std::string describe() const = 0;
    virtual double fps() const = 0;
    virtual std::string notice() const { return ""; }
    /// EuRoC: the two cameras' sensor.yaml (<cam>/sensor.yaml; "" when the file is not there); folders: "".
    virtual std::string sensor_yaml(int camera) const {
        (void)camera;
        return "";
    }
};

/// Stereo input. `right` empty: `left` is a EuRoC folder (<dir>/mav0/cam0 and cam1, or <dir>/cam0 and cam1) whose
/// frames are paired by timestamp: a timestamp present on one side only is an error naming the file and line
/// that lists it, the timestamp and the camera that lacks it ("<dir>/mav0/cam1/data.csv:9: timestamp
/// 1403636580163555584 has no cam0 frame"). Both data.csv files are checked as open_source checks one.
/// `right` given: `left` and `right` are image folders (sorted by name) paired in order; a different count is
/// an error naming the first image without a partner. Throws std::runtime_error with the reason.
std::unique_ptr<StereoFrameSource> open_stereo_source(const std::string& left, const std::string& right,
                                                      const SourceOptions& opt = {});

/// Folder of the build's prepared test data: $KESTREL_TEST_DATA, else the build tree's testdata/
/// (compiled in), else empty.
std::string testdata_dir();

/// A real photo for synthetic sequences: graf1.png of the test data, else of opencv-doc.
std::string default_photo();

/// Formats nanoseconds as seconds with 9 decimals, exactly ("1403636579.763555584").
std::string seconds_text(long long ns);

}  // namespace kestrel_examples
