// track_sequence: Kestrel's frontend on a whole sequence. Reads a EuRoC folder, an image folder, a
// video, the vtest.avi frames, or by default a moving camera over a real photo (a known motion:
// the tracking error is measured against exact ground truth); detects and tracks with
// FeatureTracker; writes an annotated video (or PNG sequence: tracks coloured by age with trails,
// tracks born and lost marked) and a CSV of tracks; prints per-stage timings and a summary of the run.
// Stereo (--stereo on a EuRoC folder with cam0 and cam1, or --right DIR): StereoTracker; both images side by
// side with the matches drawn, and the CSV gains the right position, disparity, depth and stereo status.
// GPU when one is usable, else the CPU reference (said in one line).

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/canvas.hpp"
#include "common/cli.hpp"
#include "common/frame_source.hpp"
#include "common/imu.hpp"
#include "common/image_io.hpp"
#include "common/options.hpp"
#include "common/synthetic.hpp"
#include "common/timing.hpp"
#include "kestrel/device_image.hpp"
#include "kestrel/error.hpp"
#include "kestrel/feature_tracker.hpp"
#include "kestrel/stereo_tracker.hpp"
#include "common/sensor_yaml.hpp"

namespace fs = std::filesystem;
using namespace kestrel_examples;

namespace {

const char* kUsage =
    "usage: track_sequence [SOURCE] [options]\n"
    "Detects and tracks features through a sequence; writes an annotated video (or PNG sequence) and\n"
    "a CSV of tracks (frame,timestamp,id,x,y,level,status); prints per-stage timings and a summary.\n"
    "SOURCE: a EuRoC folder (<dir>/mav0/cam0/data.csv), a folder of images (sorted by name), a video\n"
    "        file, 'vtest' (60 frames of opencv-doc's vtest.avi, a fixed camera), or nothing: a camera\n"
    "        moving over a real photo (pan, roll, zoom; see --synthetic), tracked against exact ground truth\n"
    "  --synthetic            the camera moving over a photo (what runs when no SOURCE is given); prints\n"
    "                         the tracking error against the exact ground truth\n"
    "  --photo PATH           photo for the synthetic sequence (default: graf1.png of the test data)\n"
    "  --synthetic-frames N   frames of the synthetic sequence (default 200)\n"
    "  --max-median-error E   synthetic: exit with status 3 when the median error exceeds E px\n"
    "  --sort-timestamps      EuRoC: sort data.csv's lines by timestamp (said on stderr) instead of\n"
    "                         rejecting a timestamp that does not increase\n"
    "  --out DIR              output folder (default out/track_sequence): tracks.csv, and tracks.avi or\n"
    "                         frames/NNNNNN.png\n"
    "  --video NAME           video file name inside DIR (default tracks.avi; .avi or .mp4; needs OpenCV)\n"
    "  --png                  write a PNG sequence instead of a video (the default without OpenCV)\n"
    "  --no-draw              write only the CSV\n"
    "  --max-frames N         stop after N frames (default: all)\n"
    "  --fps F                frame rate of an image folder (default 20; vtest: 10)\n"
    "  --trail N              trail length in frames (default 10)\n"
    "  --print-every N        one progress line every N frames (default 10; 0 = none)\n"
    "  --reject-outliers      the geometric check (TrackerConfig::geometric_check): tracks that disagree\n"
    "                         with the frame's relative pose end with status Outlier (CSV; drawn as a\n"
    "                         cyan cross); the camera from --sensor FILE, else the EuRoC folder's\n"
    "                         cam0/sensor.yaml (stereo: the rig's left camera)\n"
    "  --sensor FILE          the camera of --reject-outliers (a EuRoC/Kalibr sensor.yaml)\n"
    "  --outlier-threshold P  px, the check's threshold (default 1)\n"
    "  --gyro                 EuRoC: the gyro of mav0/imu0/data.csv (with the IMU's and cam0's T_BS from their\n"
    "                         sensor.yaml) integrated between frames: every track's predicted position, and\n"
    "                         with --reject-outliers the frame's rotation prior (the check's two-point model)\n"
    "  --outlier-method M     two-point (default: with --gyro, the prior's rotation and a two-point\n"
    "                         translation) or five-point (the gyro only predicts positions)\n"
    "Stereo (StereoTracker: the left camera's tracks, each matched into the right image):\n"
    "  --stereo               SOURCE is a EuRoC folder with mav0/cam0 and mav0/cam1: frames paired by\n"
    "                         timestamp (one on one side only is an error naming it); the rig from the two\n"
    "                         cameras' sensor.yaml (T_BS, intrinsics, distortion), unless --rectified\n"
    "  --right DIR            SOURCE is the left image folder, DIR the right one (paired in name order);\n"
    "                         needs --rectified\n"
    "  --rectified F,CX,CY,B  a rectified rig: focal and principal point (px), baseline (m)\n"
    "  --epipolar-tolerance P px off the epipolar line accepted (default 1)\n"
    "  --max-round-trip P     px, right-to-left round trip accepted (default 0.5)\n"
    "  --min-disparity D      px (default 0)       --max-disparity D  px (default 256)\n"
    "  The matching runs on 5 pyramid levels (StereoMatchConfig's default) at --lk-scale; --lk-* set the\n"
    "  left tracking.\n"
    "  Stereo output: both images side by side, each match a line from the left track to its right\n"
    "  position (green Matched, orange rejected: Inconsistent, OffEpipolar, OutOfRange; none for NoMatch);\n"
    "  the CSV gains right_x,right_y,disparity,depth,stereo_status (lost tracks: nan and 'none').\n"
    "  The mono CSV and video are unchanged.\n"
    "Drawing: each live track is a circle with its trail, coloured by age (red when new, through yellow\n"
    "and green, to blue after 30 frames); a white ring marks a track born by re-detection in this\n"
    "frame, a magenta cross a track lost in this frame (at the border: out of bounds), a cyan cross a\n"
    "track ended as Outlier by --reject-outliers.\n"
    "Images are read as cv::imread(IMREAD_GRAYSCALE) reads them; 16-bit frames are reduced to 8 bits\n"
    "(v >> 8), said once on stderr.\n";

struct Birth {
    int frame;
    kestrel::Point2f at;
};

struct Summary {
    long long track_frames = 0;
    long long redetections = 0;
    std::size_t live_min = ~std::size_t{0}, live_max = 0;
    long long born_first = 0, born_redetected = 0;
    std::map<std::string, long long> lost;
    std::vector<float> lengths;  // frames tracked: of every lost track, and of the live ones at the end
    std::vector<double> tracker_ms;
    std::vector<float> errors;  // synthetic: |tracked - ground truth| per track and frame (age >= 1)
    std::vector<std::vector<float>> errors_by_age = std::vector<std::vector<float>>(5);
    int frames_16bit = 0;
    std::string first_16bit;
    int gyro_frames = 0, gyro_missing = 0;  // --gyro: frames with the gyro's rotation, frames the IMU did not cover
};

void draw(Canvas& c, const std::vector<kestrel::Track>& live, const std::vector<kestrel::Track>& lost,
          const std::unordered_map<std::uint64_t, std::deque<kestrel::Point2f>>& trails, int frame) {
    for (const kestrel::Track& t : live) {
        const Rgb col = age_colour(t.age);
        const auto it = trails.find(t.id);
        if (it != trails.end())
            for (std::size_t i = 1; i < it->second.size(); ++i)
                c.line(it->second[i - 1].x, it->second[i - 1].y, it->second[i].x, it->second[i].y, col);
    }
    for (const kestrel::Track& t : live) {
        const Rgb col = age_colour(t.age);
        c.circle(t.x, t.y, 3.0f, col);
        c.set(static_cast<int>(std::lround(t.x)), static_cast<int>(std::lround(t.y)), col);
        if (t.age == 0 && frame > 0) c.circle(t.x, t.y, 6.0f, {255, 255, 255});  // born by re-detection
    }
    for (const kestrel::Track& t : lost) {  // an X: two diagonal strokes (cyan: the geometric check's Outlier)
        const Rgb m = t.status == kestrel::TrackStatus::Outlier ? Rgb{0, 255, 255} : Rgb{255, 0, 255};
        c.line(t.x - 4, t.y - 4, t.x + 4, t.y + 4, m);
        c.line(t.x - 4, t.y + 4, t.x + 4, t.y - 4, m);
    }
}

template <typename T>
T percentile(std::vector<T> v, double q) {
    if (v.empty()) return T(0);
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

/// --reject-outliers: the geometric check's camera, from --sensor, else the source's sensor.yaml (stereo: the rig's
/// left camera).
struct CheckOptions {
    bool on = false;
    std::string sensor;  // --sensor
};

/// The check's camera for a mono source: --sensor, else the EuRoC folder's cam0/sensor.yaml.
void enable_check(kestrel::TrackerConfig& cfg, const CheckOptions& co, const std::string& source_yaml) {
    if (!co.on) return;
    const std::string path = !co.sensor.empty() ? co.sensor : source_yaml;
    if (path.empty())
        throw UsageError("--reject-outliers needs the camera: --sensor SENSOR.yaml, or a EuRoC folder with "
                         "cam0/sensor.yaml");
    cfg.geometric_check.enabled = true;
    cfg.geometric_check.camera = read_sensor_yaml(path).camera;
    std::printf("geometric check: camera %s (%s %dx%d), threshold %.3g px\n", path.c_str(),
                kestrel::to_string(cfg.geometric_check.camera.model), cfg.geometric_check.camera.width,
                cfg.geometric_check.camera.height, cfg.geometric_check.threshold_px);
}

struct StereoOptions {
    bool stereo = false;      // --stereo or --right
    std::string right_dir;
    bool have_rectified = false;
    double rect[4] = {0, 0, 0, 0};
    kestrel::StereoMatchConfig match{};
};

std::array<double, 16> pose16(const double* T) {
    std::array<double, 16> a{};
    for (int i = 0; i < 16; ++i) a[i] = T[i];
    return a;
}

/// The rig: --rectified, else the two sensor.yaml files of a EuRoC folder.
kestrel::StereoRig stereo_rig(const StereoOptions& so, const StereoFrameSource& src) {
    if (so.have_rectified) return kestrel::rectified_rig(so.rect[0], so.rect[1], so.rect[2], so.rect[3]);
    const std::string y0 = src.sensor_yaml(0), y1 = src.sensor_yaml(1);
    if (y0.empty() || y1.empty())
        throw UsageError("the stereo rig is needed: --rectified F,CX,CY,B, or a EuRoC folder with cam0/sensor.yaml and "
                         "cam1/sensor.yaml");
    const SensorYaml a = read_sensor_yaml(y0), b = read_sensor_yaml(y1);
    for (const auto& [yaml, path] : {std::pair<const SensorYaml&, const std::string&>{a, y0}, {b, y1}})
        if (const std::string why = rigid_transform_problem(yaml.T_BS); !why.empty())
            throw std::runtime_error(path + ":" + std::to_string(yaml.T_BS_line) + ": T_BS " + why);
    std::printf("rig: %s and %s (%s / %s, T_rl = inv(T_BS1) * T_BS0)\n", y0.c_str(), y1.c_str(),
                kestrel::to_string(a.camera.model), kestrel::to_string(b.camera.model));
    try {
        return kestrel::rig_from_body_poses(a.camera, pose16(a.T_BS), b.camera, pose16(b.T_BS));
    } catch (const kestrel::InvalidArgument& e) {
        throw std::runtime_error("the rig of " + y0 + " and " + y1 + " (their T_BS and cameras): " + e.what());
    }
}

Rgb stereo_colour(kestrel::StereoStatus s) {
    return s == kestrel::StereoStatus::Matched ? Rgb{40, 230, 60} : Rgb{255, 150, 0};
}

/// The output folder (with frames/ for PNG output) and the tracks CSV at csv_path with its header line.
std::FILE* open_output(const std::string& out_dir, const std::string& csv_path, const char* header, bool png_frames) {
    fs::create_directories(out_dir);
    std::FILE* csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) throw std::runtime_error("cannot write " + csv_path);
    std::fprintf(csv, "%s\n", header);
    if (png_frames) fs::create_directories(fs::path(out_dir) / "frames");
    return csv;
}

/// A number as the library's messages print it (%g-like: 5000, 639.5, -320.5).
std::string num_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}

std::string csv_float(float v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", v);
    return buf;
}

int run_stereo(const std::string& source_spec, const StereoOptions& so, const CheckOptions& co,
               kestrel::TrackerConfig tcfg,
               kestrel::Backend backend, bool explicit_backend, const SourceOptions& source_opt,
               const std::string& out_dir, bool want_png, const std::string& video_name, bool draw_output,
               int max_frames, int print_every) {
    std::unique_ptr<StereoFrameSource> source = open_stereo_source(source_spec, so.right_dir, source_opt);
    std::printf("source: %s\n", source->describe().c_str());
    if (const std::string note = source->notice(); !note.empty())
        std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
    const kestrel::StereoRig rig = stereo_rig(so, *source);
    if (co.on && (!co.sensor.empty() || rig.type == kestrel::RigType::Raw)) {
        if (co.sensor.empty()) {  // the rig's left camera
            tcfg.geometric_check.enabled = true;
            tcfg.geometric_check.camera = rig.left;
            std::printf("geometric check: the rig's left camera, threshold %.3g px\n", tcfg.geometric_check.threshold_px);
        } else {
            enable_check(tcfg, co, "");
        }
    }
    kestrel::StereoConfig cfg;
    cfg.tracker = tcfg;
    cfg.match = so.match;  // its LK: stereo_match_lk_config() (5 levels), on the tracking pyramid's scale
    cfg.match.lk.pyramid.scale = tcfg.lk.pyramid.scale;
    kestrel::validate(cfg, "command line");
    std::printf("%s\n", backend_line(backend, explicit_backend).c_str());

    const std::string csv_path = (fs::path(out_dir) / "tracks.csv").string();
    std::FILE* csv = open_output(out_dir, csv_path,
                                 "frame,timestamp,id,x,y,level,status,right_x,right_y,disparity,depth,stereo_status",
                                 draw_output && want_png);

    std::optional<kestrel::CudaStream> own_stream;
    if (backend == kestrel::Backend::Cuda) own_stream.emplace();
    const kestrel::StreamHandle stream = own_stream ? own_stream->get() : nullptr;
    std::unique_ptr<kestrel::StereoTracker> tracker;
    std::unique_ptr<VideoOut> video;
    kestrel::PinnedImage pinned_l, pinned_r;
    StageTimes times;
    Frame left, right;
    std::map<std::string, long long> by_status;
    std::vector<float> disparities, tracker_ms;
    long long track_frames = 0;
    int frames_16bit = 0;  // pairs with a 16-bit image (either side), and the first such file
    std::string first_16bit;
    int n = 0;
    Stopwatch total;
    for (;; ++n) {
        if (max_frames > 0 && n >= max_frames) break;
        Stopwatch sw;
        if (!source->next(left, right)) break;
        times.add("read + decode (both images)", sw.lap());
        if ((left.source_bits > 8 || right.source_bits > 8) && frames_16bit++ == 0) {
            const Frame& f = left.source_bits > 8 ? left : right;
            first_16bit = f.path;
            std::fprintf(stderr, "track_sequence: note: %s; every 16-bit image is reduced the same way\n",
                         depth_notice(f.path, GreyInfo{f.source_bits, 1, "", ""}).c_str());
        }
        const int w = left.image.width(), h = left.image.height();
        if (right.image.width() != w || right.image.height() != h)
            throw std::runtime_error("right image '" + right.path + "' is " + std::to_string(right.image.width()) + "x" +
                                     std::to_string(right.image.height()) + ", its left image '" + left.path + "' " +
                                     std::to_string(w) + "x" + std::to_string(h));
        if (!tracker) {
            check_frame_size(w, h, tcfg, "frame '" + left.path + "'");
            if (const std::string note = orb_border_note(w, h, tcfg.detector, "det-"); !note.empty())
                std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
            // The principal point: where kestrel::validate(Camera) accepts it, the image extended by half its size.
            const kestrel::PrincipalPointRange rx = kestrel::principal_point_range(w), ry = kestrel::principal_point_range(h);
            if (so.have_rectified && !(so.rect[1] >= rx.lo && so.rect[1] <= rx.hi && so.rect[2] >= ry.lo && so.rect[2] <= ry.hi))
                throw UsageError("--rectified: the principal point (" + num_text(so.rect[1]) + ", " +
                                 num_text(so.rect[2]) + ") is outside the " + std::to_string(w) + "x" +
                                 std::to_string(h) + " image extended by half its size on each side: CX must be in [" +
                                 num_text(rx.lo) + ", " + num_text(rx.hi) + "] and CY in [" + num_text(ry.lo) + ", " +
                                 num_text(ry.hi) + "]");
            if (co.on && !cfg.tracker.geometric_check.enabled) {  // a rectified rig: its pinhole camera
                kestrel::Camera& c = cfg.tracker.geometric_check.camera;
                c.model = kestrel::CameraModel::Pinhole;
                c.width = w;
                c.height = h;
                c.fx = c.fy = so.rect[0];
                c.cx = so.rect[1];
                c.cy = so.rect[2];
                cfg.tracker.geometric_check.enabled = true;
                std::printf("geometric check: the rectified rig's camera, threshold %.3g px\n",
                            cfg.tracker.geometric_check.threshold_px);
            }
            tracker = std::make_unique<kestrel::StereoTracker>(w, h, rig, cfg, backend);
            std::printf("frames: 2 x %dx%d (%s rig); stereo tracker set up in %.1f ms\n", w, h, kestrel::to_string(rig.type),
                        sw.lap());
        } else if (w != tracker->width() || h != tracker->height()) {
            throw std::runtime_error("frame " + left.name + " is " + std::to_string(w) + "x" + std::to_string(h) +
                                     ", the sequence started at " + std::to_string(tracker->width()) + "x" +
                                     std::to_string(tracker->height()));
        }
        kestrel::HostView in_l = left.image.view(), in_r = right.image.view();
        if (backend == kestrel::Backend::Cuda) {
            if (pinned_l.empty()) {
                pinned_l = kestrel::PinnedImage(w, h);
                pinned_r = kestrel::PinnedImage(w, h);
            }
            std::memcpy(pinned_l.data(), left.image.data(), static_cast<std::size_t>(w) * h);
            std::memcpy(pinned_r.data(), right.image.data(), static_cast<std::size_t>(w) * h);
            in_l = pinned_l.view();
            in_r = pinned_r.view();
            times.add("copy into pinned memory", sw.lap());
        }
        tracker->track_async(in_l, in_r, stream);
        const double t_async = sw.lap();
        const std::vector<kestrel::StereoTrack>& live = tracker->finish();
        const double t_finish = sw.lap();
        if (n > 0) {
            tracker_ms.push_back(static_cast<float>(t_async + t_finish));
            times.add("stereo tracker: track_async (enqueue)", t_async);
            times.add("stereo tracker: finish (matching, bookkeeping)", t_finish);
        } else {
            std::printf("first frame (detection and matching, warm-up): %.2f ms\n", t_async + t_finish);
        }
        track_frames += static_cast<long long>(live.size());

        const std::string ts = seconds_text(left.timestamp_ns);
        std::size_t matched = 0;
        for (const kestrel::StereoTrack& t : live) {
            std::fprintf(csv, "%d,%s,%llu,%.4f,%.4f,%d,%s,%s,%s,%s,%s,%s\n", n, ts.c_str(),
                         static_cast<unsigned long long>(t.left.id), t.left.x, t.left.y, t.left.level,
                         kestrel::to_string(t.left.status), csv_float(t.right_x).c_str(), csv_float(t.right_y).c_str(),
                         csv_float(t.disparity).c_str(), csv_float(t.depth).c_str(), kestrel::to_string(t.status));
            ++by_status[kestrel::to_string(t.status)];
            if (t.status == kestrel::StereoStatus::Matched) {
                ++matched;
                disparities.push_back(t.disparity);
            }
        }
        for (const kestrel::Track& t : tracker->lost_tracks())
            std::fprintf(csv, "%d,%s,%llu,%.4f,%.4f,%d,%s,nan,nan,nan,nan,none\n", n, ts.c_str(),
                         static_cast<unsigned long long>(t.id), t.x, t.y, t.level, kestrel::to_string(t.status));
        times.add("csv", sw.lap());

        if (draw_output) {
            kestrel::HostImage both(2 * w, h);  // left | right
            for (int y = 0; y < h; ++y)
                for (int x = 0; x < w; ++x) {
                    both.at(x, y) = left.image.at(x, y);
                    both.at(w + x, y) = right.image.at(x, y);
                }
            Canvas canvas(both.view(), 0.8f);
            for (const kestrel::StereoTrack& t : live) {
                canvas.circle(t.left.x, t.left.y, 3.0f, age_colour(t.left.age));
                if (t.status == kestrel::StereoStatus::NoMatch) continue;
                const Rgb c = stereo_colour(t.status);
                canvas.line(t.left.x, t.left.y, t.right_x + w, t.right_y, c);
                canvas.circle(t.right_x + w, t.right_y, 3.0f, c);
            }
            for (const kestrel::Track& t : tracker->lost_tracks()) canvas.cross(t.x, t.y, 4, {255, 0, 255});
            times.add("draw", sw.lap());
            if (want_png) {
                char name[32];
                std::snprintf(name, sizeof name, "%06d.png", n);
                write_png((fs::path(out_dir) / "frames" / name).string(), canvas);
            } else {
                if (!video)
                    video = std::make_unique<VideoOut>((fs::path(out_dir) / video_name).string(), source->fps(),
                                                       canvas.width(), canvas.height());
                video->write(canvas);
            }
            times.add(want_png ? "write png" : "encode video", sw.lap());
        }
        if (print_every > 0 && n % print_every == 0)
            std::printf("frame %5d  t=%s  live %4zu  matched %4zu  lost %3zu  stereo tracker %.2f ms\n", n, ts.c_str(),
                        live.size(), matched, tracker->lost_tracks().size(), t_async + t_finish);
    }
    const double total_ms = total.lap();
    std::fclose(csv);
    video.reset();
    tracker.reset();
    if (n == 0) throw std::runtime_error("the source gave no frames");
    std::printf("\n");
    times.print(stdout, "per-stage wall-clock times (frames after the first):");
    std::printf("\nwrote %s", csv_path.c_str());
    if (draw_output) std::printf(" and %s", (fs::path(out_dir) / (want_png ? "frames/" : video_name)).string().c_str());
    std::printf("\n\nsummary of the run (stereo)\n");
    std::printf("  frames            %d pairs in %.2f s: %.1f fps end to end", n, total_ms / 1000.0,
                1000.0 * n / std::max(total_ms, 1e-9));
    if (!tracker_ms.empty())
        std::printf("; stereo tracker alone %.2f ms per frame (median)", percentile(tracker_ms, 0.5));
    std::printf("\n  live tracks       %.1f per frame on average (--features %d)\n",
                static_cast<double>(track_frames) / n, tcfg.target_features);
    std::printf("  stereo status     ");
    const char* sep = "";
    for (const auto& b : by_status) {
        std::printf("%s%s %lld (%.1f%%)", sep, b.first.c_str(), b.second,
                    100.0 * b.second / std::max<long long>(1, track_frames));
        sep = ", ";
    }
    std::printf("\n");
    if (!disparities.empty())
        std::printf("  disparity         Matched: median %.3f px, 5 %% %.3f px, 95 %% %.3f px\n", percentile(disparities, 0.5),
                    percentile(disparities, 0.05), percentile(disparities, 0.95));
    if (frames_16bit > 0)
        std::fprintf(stderr, "track_sequence: note: %d of %d pairs had a 16-bit image (the first: %s), reduced to 8 bits "
                     "(v >> 8)\n", frames_16bit, n, first_16bit.c_str());
    return 0;
}

int run(int argc, char** argv) {
    Args args(argc, argv,
              option_flags({"synthetic", "png", "no-draw", "sort-timestamps", "stereo", "reject-outliers", "gyro"}));
    if (args.flag("help")) {
        std::printf("%s%s%s", kUsage, backend_help(), tracker_help().c_str());
        return 0;
    }
    const bool explicit_backend = args.has("backend");
    const kestrel::Backend backend = parse_backend(args);
    kestrel::TrackerConfig cfg = parse_tracker(args);
    CheckOptions co;
    co.on = args.flag("reject-outliers");
    co.sensor = args.get("sensor", "");
    cfg.geometric_check.threshold_px = args.get_double("outlier-threshold", cfg.geometric_check.threshold_px);
    if (!co.on && (!co.sensor.empty() || args.has("outlier-threshold")))
        throw UsageError("--sensor and --outlier-threshold are options of --reject-outliers");
    const bool use_gyro = args.flag("gyro");
    const std::string outlier_method = args.get("outlier-method", "two-point");
    if (outlier_method != "two-point" && outlier_method != "five-point")
        throw UsageError("--outlier-method must be two-point or five-point, not '" + outlier_method + "'");
    if (args.has("outlier-method") && !(co.on && use_gyro))
        throw UsageError("--outlier-method chooses the check's model with the gyro: it needs --reject-outliers and --gyro");
    bool synthetic = args.flag("synthetic");
    const std::string photo_path = args.get("photo", default_photo());
    const int synthetic_frames = args.get_int("synthetic-frames", 200);
    const float max_median_error = args.get_float("max-median-error", -1.0f);
    SourceOptions source_opt;
    source_opt.sort_timestamps = args.flag("sort-timestamps");
    const std::string out_dir = args.get("out", "out/track_sequence");
    const bool want_png = args.flag("png") || !have_opencv();
    const std::string video_name = args.get("video", "tracks.avi");
    const bool draw_output = !args.flag("no-draw");
    const int max_frames = args.get_int("max-frames", 0);
    if (args.has("max-frames") && max_frames < 1)
        throw UsageError("--max-frames " + std::to_string(max_frames) +
                         " is outside [1, 2147483647] (leave it out to track every frame)");
    source_opt.fps = args.get_float("fps", 0.0f);
    const int trail_len = std::max(1, args.get_int("trail", 10));
    const int print_every = args.get_int("print-every", 10);
    StereoOptions so;
    so.right_dir = args.get("right", "");
    so.stereo = args.flag("stereo") || !so.right_dir.empty();
    const bool stereo_options = args.has("rectified") || args.has("epipolar-tolerance") || args.has("max-round-trip") ||
                                args.has("min-disparity") || args.has("max-disparity");
    if (args.has("rectified")) {
        const std::string r = args.get("rectified", "");
        char tail = 0;
        if (std::sscanf(r.c_str(), "%lf,%lf,%lf,%lf%c", &so.rect[0], &so.rect[1], &so.rect[2], &so.rect[3], &tail) != 4)
            throw UsageError("--rectified takes F,CX,CY,B (four numbers: focal, principal point in px, baseline), not '" + r + "'");
        so.have_rectified = true;
    }
    so.match.epipolar_tolerance = args.get_float("epipolar-tolerance", so.match.epipolar_tolerance);
    so.match.max_round_trip = args.get_float("max-round-trip", so.match.max_round_trip);
    so.match.min_disparity = args.get_float("min-disparity", so.match.min_disparity);
    so.match.max_disparity = args.get_float("max-disparity", so.match.max_disparity);
    args.reject_unknown();
    if (!so.stereo && stereo_options)
        throw UsageError("--rectified, --epipolar-tolerance, --max-round-trip, --min/max-disparity are stereo options: "
                         "add --stereo (EuRoC cam0 + cam1) or --right DIR");
    if (args.flag("stereo") && !so.right_dir.empty())
        throw UsageError("--stereo and --right are two kinds of stereo input: --stereo reads a EuRoC folder's cam0 and "
                         "cam1, --right DIR pairs SOURCE (the left image folder) with DIR; pass one of them");
    if (so.stereo) {
        if (use_gyro) throw UsageError("--gyro is a mono option (a EuRoC folder's cam0 and imu0)");
        if (synthetic || args.positional().size() != 1)
            throw UsageError("stereo input needs one SOURCE: a EuRoC folder (--stereo) or the left image folder (--right DIR)");
        if (!so.right_dir.empty() && !so.have_rectified)
            throw UsageError("--right needs the rig: --rectified F,CX,CY,B");
        return run_stereo(args.positional()[0], so, co, cfg, backend, explicit_backend, source_opt, out_dir, want_png,
                          video_name, draw_output, max_frames, print_every);
    }
    if (args.positional().size() > 1) throw UsageError("at most one SOURCE");
    if (synthetic && !args.positional().empty()) throw UsageError("--synthetic takes no SOURCE");
    if (args.positional().empty()) synthetic = true;  // the default: a moving camera over a real photo
    std::string source_spec = args.positional().empty() ? "" : args.positional()[0];
    if (source_spec == "vtest" && !fs::exists(source_spec)) source_spec = "";  // open_source's default

    // ---- the frames ----
    std::unique_ptr<FrameSource> source;
    std::unique_ptr<SyntheticSequence> syn;
    Summary sum;
    double fps = 10.0;
    if (synthetic) {
        GreyInfo info;
        kestrel::HostImage photo = load_grey(photo_path, &info);
        if (const std::string note = depth_notice(photo_path, info); !note.empty())
            std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
        syn = std::make_unique<SyntheticSequence>(std::move(photo), synthetic_frames);
        fps = 20.0;
        std::printf("source: a camera moving over %s (%d frames of %dx%d at %.0f fps; pan, roll and zoom, up to "
                    "%.1f px per frame), tracked against the exact ground truth\n",
                    photo_path.c_str(), syn->frames(), syn->width(), syn->height(), fps, syn->max_step());
    } else {
        source = open_source(source_spec, source_opt);
        fps = source->fps();
        std::printf("source: %s\n", source->describe().c_str());
        if (const std::string note = source->notice(); !note.empty())
            std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
    }
    enable_check(cfg, co, source ? source->sensor_yaml() : std::string());
    // --gyro: the EuRoC folder's IMU, cam0's camera and T_BS (mav0/cam0/sensor.yaml -> mav0).
    std::optional<Gyro> gyro;
    kestrel::Camera gyro_camera;
    const bool gyro_prior = co.on && outlier_method == "two-point";
    if (use_gyro) {
        const std::string yaml = source ? source->sensor_yaml() : std::string();
        if (yaml.empty())
            throw UsageError("--gyro needs a EuRoC folder with mav0/cam0/sensor.yaml (the camera's T_BS) and "
                             "mav0/imu0/data.csv");
        const SensorYaml cam0 = read_sensor_yaml(yaml);
        gyro_camera = co.on ? cfg.geometric_check.camera : cam0.camera;
        gyro = read_euroc_gyro(fs::path(yaml).parent_path().parent_path().string(), cam0.T_BS);
        std::printf("gyro: %s, %zu samples (%.1f s), the IMU's and cam0's T_BS; predicted positions%s\n",
                    gyro->csv.c_str(), gyro->samples.size(),
                    1e-9 * static_cast<double>(gyro->samples.back().t_ns - gyro->samples.front().t_ns),
                    gyro_prior ? " and the check's rotation prior (two-point)" : "");
    }
    std::printf("%s\n", backend_line(backend, explicit_backend).c_str());

    const std::string csv_path = (fs::path(out_dir) / "tracks.csv").string();
    std::FILE* csv = open_output(out_dir, csv_path, "frame,timestamp,id,x,y,level,status", draw_output && want_png);

    std::optional<kestrel::CudaStream> own_stream;  // a non-default stream lets the detector replay frames as a CUDA graph
    if (backend == kestrel::Backend::Cuda) own_stream.emplace();
    const kestrel::StreamHandle stream = own_stream ? own_stream->get() : nullptr;

    std::unique_ptr<kestrel::FeatureTracker> tracker;
    std::unique_ptr<VideoOut> video;
    kestrel::PinnedImage pinned;
    std::unordered_map<std::uint64_t, std::deque<kestrel::Point2f>> trails;
    std::unordered_map<std::uint64_t, Birth> births;
    StageTimes times;
    Frame frame;
    int n = 0;
    long long last_timestamp = 0;
    std::array<double, 9> gyro_R{};
    std::vector<kestrel::Point2f> predictions;
    predictions.reserve(static_cast<std::size_t>(cfg.target_features));
    Stopwatch total;
    for (;; ++n) {
        if (max_frames > 0 && n >= max_frames) break;
        Stopwatch sw;
        if (syn) {
            if (n >= syn->frames()) break;
            frame.image = syn->render(n);
            frame.timestamp_ns = static_cast<long long>(std::llround(n * 1e9 / fps));
        } else if (!source->next(frame)) {
            if (const std::string note = source->end_notice(); !note.empty())
                std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
            break;
        }
        times.add(syn ? "render synthetic frame" : "read + decode", sw.lap());

        if (frame.source_bits > 8 && sum.frames_16bit++ == 0) {
            sum.first_16bit = frame.path;
            std::fprintf(stderr, "track_sequence: note: %s; every 16-bit frame is reduced the same way\n",
                         depth_notice(frame.path, GreyInfo{frame.source_bits, 1, "", ""}).c_str());
        }
        if (!tracker) {
            check_frame_size(frame.image.width(), frame.image.height(), cfg,
                             syn ? "the synthetic frame" : "frame '" + (frame.path.empty() ? frame.name : frame.path) + "'");
            if (const std::string note = orb_border_note(frame.image.width(), frame.image.height(), cfg.detector, "det-");
                !note.empty())
                std::fprintf(stderr, "track_sequence: note: %s\n", note.c_str());
            tracker = std::make_unique<kestrel::FeatureTracker>(frame.image.width(), frame.image.height(), cfg, backend);
            std::printf("frames: %dx%d; tracker set up in %.1f ms (it allocates here and in the first frame only)\n",
                        frame.image.width(), frame.image.height(), sw.lap());
        } else if (frame.image.width() != tracker->width() || frame.image.height() != tracker->height()) {
            throw std::runtime_error("frame " + frame.name + " is " + std::to_string(frame.image.width()) + "x" +
                                     std::to_string(frame.image.height()) + ", the sequence started at " +
                                     std::to_string(tracker->width()) + "x" + std::to_string(tracker->height()));
        }

        // The tracker: enqueue (CPU backend: does the work), then wait + bookkeeping + re-detection.
        // On the GPU the frame goes through a pinned buffer, so that the upload is truly asynchronous.
        kestrel::HostView input = frame.image.view();
        if (backend == kestrel::Backend::Cuda) {
            if (pinned.empty()) pinned = kestrel::PinnedImage(frame.image.width(), frame.image.height());
            std::memcpy(pinned.data(), frame.image.data(), static_cast<std::size_t>(pinned.width()) * pinned.height());
            input = pinned.view();
            times.add("copy into pinned memory", sw.lap());
        }
        // The gyro between the last frame and this one: every live track's predicted position, the check's prior.
        const std::array<double, 9>* prior = nullptr;
        const std::vector<kestrel::Point2f>* predicted = nullptr;
        if (gyro && n > 0) {
            if (gyro_rotation(*gyro, last_timestamp, frame.timestamp_ns, gyro_R)) {
                predictions.clear();
                for (const kestrel::Track& t : tracker->tracks())
                    predictions.push_back(predict_pixel(gyro_camera, gyro_R, {t.x, t.y}));
                predicted = &predictions;
                if (gyro_prior) prior = &gyro_R;
                ++sum.gyro_frames;
            } else if (sum.gyro_missing++ == 0) {
                std::fprintf(stderr, "track_sequence: note: the IMU does not cover frame %d (%s) and the one before: "
                             "tracked without the gyro there\n", n, frame.name.c_str());
            }
        }
        last_timestamp = frame.timestamp_ns;
        times.add("gyro", sw.lap());
        tracker->track_async(input, stream, predicted, prior);
        const double t_async = sw.lap();
        const std::vector<kestrel::Track>& live = tracker->finish();
        const double t_finish = sw.lap();
        const bool redetected = tracker->redetected();
        if (n > 0) {  // the first frame only detects, and warms up: reported on its own
            sum.tracker_ms.push_back(t_async + t_finish);
            times.add("tracker: track_async (enqueue)", t_async);
            times.add("tracker: finish (wait, bookkeeping)", t_finish);
            times.add(redetected ? "tracker total, with re-detection" : "tracker total, tracking only",
                      t_async + t_finish);
        } else {
            std::printf("first frame (detection only, warm-up): %.2f ms\n", t_async + t_finish);
        }
        sum.redetections += redetected && n > 0;  // frame 0 only detects
        sum.track_frames += static_cast<long long>(live.size());
        sum.live_min = std::min(sum.live_min, live.size());
        sum.live_max = std::max(sum.live_max, live.size());

        // CSV: every live track, then the tracks lost in this frame with the reason.
        const std::string ts = seconds_text(frame.timestamp_ns);
        for (const kestrel::Track& t : live)
            std::fprintf(csv, "%d,%s,%llu,%.4f,%.4f,%d,%s\n", n, ts.c_str(), static_cast<unsigned long long>(t.id),
                         t.x, t.y, t.level, kestrel::to_string(t.status));
        for (const kestrel::Track& t : tracker->lost_tracks()) {
            std::fprintf(csv, "%d,%s,%llu,%.4f,%.4f,%d,%s\n", n, ts.c_str(), static_cast<unsigned long long>(t.id),
                         t.x, t.y, t.level, kestrel::to_string(t.status));
            ++sum.lost[kestrel::to_string(t.status)];
            if (auto b = births.find(t.id); b != births.end()) {
                sum.lengths.push_back(static_cast<float>(n - b->second.frame));
                births.erase(b);
            }
        }
        times.add("csv", sw.lap());

        // Trails and (synthetic) the error against ground truth.
        std::unordered_map<std::uint64_t, std::deque<kestrel::Point2f>> next_trails;
        for (const kestrel::Track& t : live) {
            auto& tr = next_trails[t.id];
            if (auto it = trails.find(t.id); it != trails.end()) tr = std::move(it->second);
            tr.push_back({t.x, t.y});
            while (static_cast<int>(tr.size()) > trail_len) tr.pop_front();
            auto b = births.find(t.id);
            if (b == births.end()) {
                births[t.id] = {n, {t.x, t.y}};
                ++(n == 0 ? sum.born_first : sum.born_redetected);
            } else if (syn) {
                const kestrel::Point2f truth = syn->map(b->second.frame, n, b->second.at);
                const float err = std::hypot(t.x - truth.x, t.y - truth.y);
                sum.errors.push_back(err);
                const int frames_tracked = n - b->second.frame;
                sum.errors_by_age[frames_tracked <= 1 ? 0 : frames_tracked <= 4 ? 1 : frames_tracked <= 9 ? 2
                                  : frames_tracked <= 19 ? 3 : 4].push_back(err);
            }
        }
        trails.swap(next_trails);

        if (draw_output) {
            Canvas canvas(frame.image.view(), 0.8f);
            draw(canvas, live, tracker->lost_tracks(), trails, n);
            times.add("draw", sw.lap());
            if (want_png) {
                char name[32];
                std::snprintf(name, sizeof name, "%06d.png", n);
                write_png((fs::path(out_dir) / "frames" / name).string(), canvas);
            } else {
                if (!video)
                    video = std::make_unique<VideoOut>((fs::path(out_dir) / video_name).string(), fps, canvas.width(),
                                                       canvas.height());
                video->write(canvas);
            }
            times.add(want_png ? "write png" : "encode video", sw.lap());
        }
        if (print_every > 0 && n % print_every == 0)
            std::printf("frame %5d  t=%s  live %4zu  lost %3zu%s  tracker %.2f ms\n", n, ts.c_str(), live.size(),
                        tracker->lost_tracks().size(), redetected ? "  re-detected" : "", t_async + t_finish);
    }
    const double total_ms = total.lap();
    std::fclose(csv);
    video.reset();
    tracker.reset();  // before its stream goes
    if (n == 0) throw std::runtime_error("the source gave no frames");

    // Tracks still live at the end: their length so far.
    for (const auto& b : births) sum.lengths.push_back(static_cast<float>(n - 1 - b.second.frame));
    long long lost_total = 0;
    for (const auto& l : sum.lost) lost_total += l.second;

    std::printf("\n");
    times.print(stdout, "per-stage wall-clock times (frames after the first):");
    std::printf("\nwrote %s", csv_path.c_str());
    if (draw_output)
        std::printf(" and %s", (fs::path(out_dir) / (want_png ? "frames/" : video_name)).string().c_str());
    std::printf("\n");

    std::printf("\nsummary of the run\n");
    const double tracker_median = percentile(sum.tracker_ms, 0.5);
    std::printf("  frames            %d in %.2f s: %.1f fps end to end (reading, drawing and writing included)",
                n, total_ms / 1000.0, 1000.0 * n / std::max(total_ms, 1e-9));
    if (!sum.tracker_ms.empty())
        std::printf("; tracker alone %.2f ms per frame (median), %.0f fps", tracker_median,
                    1000.0 / std::max(tracker_median, 1e-9));
    std::printf("\n  live tracks       %.1f per frame on average (min %zu, max %zu; --features %d)\n",
                static_cast<double>(sum.track_frames) / n, sum.live_min, sum.live_max, cfg.target_features);
    std::printf("  tracks born       %lld: %lld in the first frame, %lld by re-detection (in %lld frames)\n",
                sum.born_first + sum.born_redetected, sum.born_first, sum.born_redetected, sum.redetections);
    std::printf("  tracks lost       %lld", lost_total);
    const char* sep = ":";
    for (const auto& l : sum.lost) {
        std::printf("%s %s %lld", sep, l.first.c_str(), l.second);
        sep = ",";
    }
    std::printf("; %zu live at the end\n", births.size());
    std::printf("  track length      median %.0f frames, mean %.1f, longest %.0f (lost tracks, and live ones so far)\n",
                percentile(sum.lengths, 0.5),
                sum.lengths.empty() ? 0.0
                                    : std::accumulate(sum.lengths.begin(), sum.lengths.end(), 0.0) / sum.lengths.size(),
                percentile(sum.lengths, 1.0));
    if (sum.frames_16bit > 0)
        std::fprintf(stderr, "track_sequence: note: %d of %d frames were 16-bit (the first: %s) and were reduced to 8 bits "
                     "(v >> 8)\n", sum.frames_16bit, n, sum.first_16bit.c_str());
    if (gyro)
        std::printf("  gyro              %d of %d frames with the gyro's rotation (%d not covered by the IMU)\n",
                    sum.gyro_frames, std::max(n - 1, 0), sum.gyro_missing);
    if (!syn) std::printf("  tracking error    no ground truth for this source (the synthetic default has one)\n");
    if (syn) {
        const auto& e = sum.errors;
        if (e.empty()) throw std::runtime_error("synthetic: no track lived two frames: nothing to compare");
        double mean = 0.0;
        std::size_t within = 0;
        for (float v : e) {
            mean += v;
            within += v <= 1.0f;
        }
        mean /= e.size();
        const float median = percentile(e, 0.5);
        std::printf("  tracking error    against the known motion, over %zu track-frames: mean %.3f px, median %.3f px, "
                    "p95 %.3f px, max %.3f px; within 1 px: %.1f%%\n",
                    e.size(), mean, median, percentile(e, 0.95), percentile(e, 1.0), 100.0 * within / e.size());
        std::printf("  drift             median error by frames since detection:");
        const char* buckets[] = {"1", "2-4", "5-9", "10-19", "20+"};
        for (int i = 0; i < 5; ++i)
            if (!sum.errors_by_age[i].empty())
                std::printf("  %s: %.3f px (%zu)", buckets[i], percentile(sum.errors_by_age[i], 0.5),
                            sum.errors_by_age[i].size());
        std::printf("\n");
        if (max_median_error >= 0.0f && !(median <= max_median_error)) {
            std::fprintf(stderr, "median error %.3f px exceeds --max-median-error %.3f\n", median, max_median_error);
            return 3;
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_example("track_sequence", kUsage, run, argc, argv); }
