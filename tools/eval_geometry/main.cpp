// kestrel_eval_geometry: the tracker's geometric check on generated sequences with known answers, beside
// OpenCV's per-frame findFundamentalMat RANSAC on the same tracks (docs/geometry.md, "Tracks against one
// motion").
//
//   kestrel_eval_geometry [--frames N] [--features N] [--threshold PX] [--baseline L] [--backend cpu|cuda] [--small]
//                         [--motion translate|rotate|static|slow|epipole|fast-turn|all] [--write DIR]
//                         [--cache DIR] [--verbose] [--require]
//
// The sequences (tests/support/motion_scenes.hpp): textured rectangles at 3.5 to 9 m and a floor, seen by EuRoC
// cam0's 752x480 radial-tangential camera; three textured cards stand still, then move on their own from frames
// 8, 18 and 28. Camera motion: "translate" (2.5 cm sideways and 1 cm forward per frame, 0.15 degrees of yaw),
// "rotate" (0.4 degrees of yaw per frame, no translation) or "static"; --small: the tests' 376x240 pinhole version
// (20 frames: --frames applies to the EuRoC-size sequences only).
// Harder sequences (not in "all"; 60 frames unless --frames): "slow" (the translating camera, the cards moving 0.6
// to 0.9 px per frame across the epipolar lines: below the threshold on any one frame pair), "epipole" (a camera
// moving forward, the epipole on the middle card, cards moving 0.6 to 1.2 px per frame) and "fast-turn" (3 degrees
// of yaw per frame, about 24 px of image motion; 14 frames), which adds rows with the gyro's predicted positions
// and the mean tracking error against the truth. --cache DIR keeps the rendered frames (PGM) for later runs.
// --baseline L: the check's baseline_frames (default 3; 1: each frame pair alone).
// Every track is labelled at birth by the surface under it (a card: moving; "edge" when a surface boundary is
// within 3 px: left out) and followed against the truth (a track whose true point gets hidden is left out).
// Rows:
//   Kestrel check            FeatureTracker with TrackerConfig::geometric_check (five-point + rotation-only);
//   Kestrel check + gyro     the same with the true frame-to-frame rotation passed as the prior (two-point; the
//                            gyro of the written IMU file integrated between frames gives exactly it);
//   ... + predictions        (fast-turn) also every track's predicted position from that rotation;
//   OpenCV F-RANSAC          FeatureTracker without the check; every frame the live tracks not yet rejected go
//                            through cv::findFundamentalMat(FM_RANSAC, 1 px, 0.99) on points undistorted to a
//                            460 px pinhole (what VINS-Fusion's feature tracker does), outliers rejected;
//   LK alone                 FeatureTracker without any check.
// Columns: moving tracks (alive when their card started to move), of those still Tracked 3 frames after the
// start (target <= 5 %); static tracks checked at least once, of those ended as Outlier (target <= 1 % of those
// within 1 px of the truth: the column "(> 1 px off)" counts the right rejections of drifted tracks); the static
// tracks' mean length (frames; those live at the end count so far) and mean error against the truth (px, every
// frame of every static track).
// --require: exit 1 unless, on every sequence run, both Kestrel check rows meet the targets: at least 5 moving
// tracks, at most 5 % of them still Tracked 3 frames on and still on their card (one that LK dragged off its card
// by more than 1 px follows a static point: the check is right to keep it); at least 50 static tracks, at most 1 %
// of them ended as Outlier while within 1 px of the truth (the drifted ones are right to end); and the LK-alone
// row keeps at least half of the moving tracks 3 frames on (the sequence does test the check). Each bound is printed
// as met or NOT MET; exit status 1 when any is not met, 2 on a usage error.
// --write DIR: the sequence in the EuRoC layout (mav0/cam0/data.csv, data/*.png, sensor.yaml; the camera poses in
// mav0/state_groundtruth_estimate0/data.csv; per-frame surface labels in mav0/cam0/labels/*.png: 0 static,
// 1..3 the cards, 255 nothing; the IMU in mav0/imu0/data.csv at 200 Hz, its gyro exact (the camera's turn) in the
// body frame of cam0's T_BS, EuRoC's, and the specific force of gravity), for track_sequence --reject-outliers. --verbose: every card track still live 3
// frames on and every static track ended as Outlier, with the frames and its distance to the truth.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <opencv2/calib3d.hpp>
#include <opencv2/imgcodecs.hpp>

#include "kestrel/device_image.hpp"
#include "kestrel/camera.hpp"
#include "kestrel/feature_tracker.hpp"
#include "motion_scenes.hpp"

namespace fs = std::filesystem;
using namespace kestrel;

namespace {

[[noreturn]] void usage_error(const std::string& what) {
    std::cerr << "kestrel_eval_geometry: " << what << " (see the header of tools/eval_geometry/main.cpp)\n";
    std::exit(2);
}

double number(const std::string& key, const std::string& v) {
    char* end = nullptr;
    const double d = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(d)) usage_error(key + " " + v + ": not a number");
    return d;
}

struct Options {
    int frames = 40;
    int features = 200;
    double threshold = 1.0;
    int baseline = GeometricCheckConfig{}.baseline_frames;
    Backend backend = Backend::Cpu;
    bool small = false;
    std::vector<std::string> motions{"translate", "rotate", "static"};
    std::string write;
    std::string cache;
    bool verbose = false;
    bool require = false;
    bool frames_given = false;
};

test::MotionScene make_scene(const Options& o, const std::string& motion) {
    if (motion == "slow" || motion == "epipole" || motion == "fast-turn") {
        if (o.small) usage_error("--small has only the translate, rotate and static sequences");
        if (motion == "slow") return test::motion_scene_slow(o.frames_given ? o.frames : 60);
        if (motion == "epipole") return test::motion_scene_epipole(o.frames_given ? o.frames : 60);
        return test::motion_scene_fast_turn(o.frames_given ? o.frames : 14);
    }
    test::MotionScene s = o.small ? test::motion_scene_small() : test::motion_scene_euroc(o.frames);
    if (!o.small) s.frames = o.frames;
    if (motion == "rotate") {
        s.step = {{0, 0, 0}};
        s.yaw_deg = 0.4;
    } else if (motion == "static") {
        s.step = {{0, 0, 0}};
        s.yaw_deg = 0.0;
    }
    return s;
}

TrackerConfig tracker_config(const Options& o, const test::MotionScene& s, bool check) {
    TrackerConfig c;
    c.target_features = o.features;
    c.geometric_check.enabled = check;
    c.geometric_check.camera = s.camera;
    c.geometric_check.threshold_px = o.threshold;
    c.geometric_check.baseline_frames = o.baseline;
    return c;
}

struct Row {
    std::string name;
    test::LabelSummary sum;
    std::string models;  // frames decided per model
    double ms = 0;       // mean tracker (+ check) time per frame
    double length = 0;   // static tracks' mean length, frames
    double error = 0;    // static tracks' mean error against the truth, px
};

/// The static tracks' mean length and mean error against the truth (followed frame by frame).
struct StaticStats {
    std::map<std::uint64_t, std::pair<int, int>> span;  // id -> (first, last frame seen)
    double error_sum = 0;
    long long error_count = 0;
    void update(const test::MotionScene& s, const test::TrackLabels& labels, int k, const std::vector<Track>& live) {
        for (const Track& t : live) {
            auto it = labels.tracks().find(t.id);
            if (it == labels.tracks().end() || it->second.edge || it->second.moving || it->second.occluded) continue;
            auto sp = span.find(t.id);
            if (sp == span.end()) {
                span[t.id] = {k, k};
                continue;
            }
            sp->second.second = k;
            const Point2d p = s.project_point(k, it->second.rect, it->second.local);
            if (!std::isfinite(p.x)) continue;
            error_sum += std::hypot(t.x - p.x, t.y - p.y);
            ++error_count;
        }
    }
    double mean_length() const {
        double sum = 0;
        for (const auto& kv : span) sum += kv.second.second - kv.second.first;
        return span.empty() ? 0.0 : sum / static_cast<double>(span.size());
    }
    double mean_error() const { return error_count ? error_sum / static_cast<double>(error_count) : 0.0; }
};

/// The gyro's predicted position of a track: its bearing turned by the frame's rotation prior, projected.
Point2f predict(const Camera& cam, const std::array<double, 9>& R, const Track& t) {
    const BearingUnprojection u = unproject_bearing(cam, {t.x, t.y});
    if (u.status != UnprojectStatus::Ok) return {t.x, t.y};
    const double* b = u.bearing;
    const double q[3] = {R[0] * b[0] + R[1] * b[1] + R[2] * b[2], R[3] * b[0] + R[4] * b[1] + R[5] * b[2],
                         R[6] * b[0] + R[7] * b[1] + R[8] * b[2]};
    if (!(q[2] > 1e-6)) return {t.x, t.y};
    const Point2d p = project(cam, {q[0] / q[2], q[1] / q[2]});
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) return {t.x, t.y};
    return {static_cast<float>(p.x), static_cast<float>(p.y)};
}

/// The frames of a sequence, rendered or read from --cache (PGM files named by the sequence and the frame).
std::vector<HostImage> scene_frames(const Options& o, const test::MotionScene& s, const std::string& motion) {
    std::vector<HostImage> frames;
    const std::string tag = motion + (o.small ? "-small" : "") + "-" + std::to_string(s.camera.width) + "x" +
                            std::to_string(s.camera.height);
    for (int k = 0; k < s.frames; ++k) {
        const fs::path file = o.cache.empty() ? fs::path() : fs::path(o.cache) / (tag + "-" + std::to_string(k) + ".pgm");
        if (!o.cache.empty() && fs::exists(file)) {
            const cv::Mat m = cv::imread(file.string(), cv::IMREAD_GRAYSCALE);
            if (m.cols == s.camera.width && m.rows == s.camera.height) {
                HostImage im(m.cols, m.rows);
                for (int y = 0; y < m.rows; ++y)
                    for (int x = 0; x < m.cols; ++x) im.at(x, y) = m.at<uchar>(y, x);
                frames.push_back(std::move(im));
                continue;
            }
        }
        frames.push_back(s.render(k));
        if (!o.cache.empty()) {
            fs::create_directories(o.cache);
            const HostImage& im = frames.back();
            cv::Mat m(im.height(), im.width(), CV_8U);
            for (int y = 0; y < im.height(); ++y)
                for (int x = 0; x < im.width(); ++x) m.at<uchar>(y, x) = im.at(x, y);
            cv::imwrite(file.string(), m);
        }
    }
    return frames;
}

std::string pct(int a, int b) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d (%.1f %%)", a, b > 0 ? 100.0 * a / b : 0.0);
    return buf;
}

Row run_kestrel(const Options& o, const test::MotionScene& s, const std::vector<HostImage>& frames, bool check,
                bool gyro, const std::string& name, bool predictions = false) {
    FeatureTracker tr(s.camera.width, s.camera.height, tracker_config(o, s, check), o.backend);
    test::TrackLabels labels(s);
    StaticStats stats;
    int decided[4] = {0, 0, 0, 0};
    double total = 0;
    std::vector<Point2f> pred;
    for (int k = 0; k < s.frames; ++k) {
        std::array<double, 9> R{};
        test::MVec3 t{};
        if (k > 0) s.relative_pose(k, &R, &t);
        const bool use_pred = predictions && k > 0;
        if (use_pred) {
            pred.clear();
            for (const Track& tk : tr.tracks()) pred.push_back(predict(s.camera, R, tk));
        }
        const auto t0 = std::chrono::steady_clock::now();
        tr.track(frames[static_cast<std::size_t>(k)].view(), use_pred ? &pred : nullptr, gyro && k > 0 ? &R : nullptr);
        total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        labels.update(k, tr.tracks(), tr.lost_tracks());
        stats.update(s, labels, k, tr.tracks());
        if (k > 0) ++decided[static_cast<int>(tr.geometric_check().model)];
    }
    Row r{name, labels.summary(), "", total / s.frames, stats.mean_length(), stats.mean_error()};
    if (o.verbose)
        for (const auto& kv : labels.tracks()) {
            const test::TrackLabels::Info& in = kv.second;
            if (!in.edge && in.moving && in.alive_after_3)
                std::printf("  %s: track %llu on card %d (born frame %d) alive 3 frames after its card started (frame %d), "
                            "%.2f px from the card point it was born on\n",
                            name.c_str(), static_cast<unsigned long long>(kv.first),
                            s.rects[static_cast<std::size_t>(in.rect)].object, in.born, in.move_start, in.error_after_3);
            if (!in.edge && !in.moving && in.outlier && !in.occluded_at_end)
                std::printf("  %s: static track %llu (born frame %d) ended as Outlier at frame %d, %.2f px from the truth\n",
                            name.c_str(), static_cast<unsigned long long>(kv.first), in.born, in.ended, in.end_error);
        }
    if (check) {
        const char* names[4] = {"none", "essential", "two-point", "rotation-only"};
        for (int m = 0; m < 4; ++m)
            if (decided[m]) r.models += std::string(r.models.empty() ? "" : ", ") + names[m] + " " + std::to_string(decided[m]);
    }
    return r;
}

/// VINS-Fusion's rejectWithF on the tracker's tracks: undistorted to a 460 px pinhole, findFundamentalMat RANSAC.
Row run_opencv(const Options& o, const test::MotionScene& s, const std::vector<HostImage>& frames, bool use_f) {
    FeatureTracker tr(s.camera.width, s.camera.height, tracker_config(o, s, false), o.backend);
    test::TrackLabels labels(s);
    StaticStats stats;
    const cv::Matx33d K(s.camera.fx, 0, s.camera.cx, 0, s.camera.fy, s.camera.cy, 0, 0, 1);
    cv::Mat dist = (cv::Mat_<double>(1, 4) << s.camera.d[0], s.camera.d[1], s.camera.d[2], s.camera.d[3]);  // 0 for Pinhole
    std::set<std::uint64_t> rejected;
    std::map<std::uint64_t, cv::Point2f> prev;  // undistorted previous positions
    double total = 0;
    for (int k = 0; k < s.frames; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        tr.track(frames[static_cast<std::size_t>(k)].view());
        std::vector<Track> live, lost_ok, now_rejected;
        for (const Track& t : tr.lost_tracks())
            if (!rejected.count(t.id)) lost_ok.push_back(t);
        for (const Track& t : tr.tracks())
            if (!rejected.count(t.id)) live.push_back(t);
        // Undistort every live track's current position to the 460 px virtual pinhole (VINS: FOCAL_LENGTH 460).
        std::vector<cv::Point2f> raw(live.size()), und;
        for (std::size_t i = 0; i < live.size(); ++i) raw[i] = {live[i].x, live[i].y};
        if (!raw.empty()) cv::undistortPoints(raw, und, K, dist);
        std::map<std::uint64_t, cv::Point2f> cur;
        for (std::size_t i = 0; i < live.size(); ++i)
            cur[live[i].id] = {static_cast<float>(460.0 * und[i].x + s.camera.width / 2.0),
                               static_cast<float>(460.0 * und[i].y + s.camera.height / 2.0)};
        if (use_f) {
            std::vector<cv::Point2f> a, b;
            std::vector<const Track*> ids;
            for (const Track& t : live) {
                auto it = prev.find(t.id);
                if (it == prev.end() || t.age == 0) continue;
                a.push_back(it->second);
                b.push_back(cur[t.id]);
                ids.push_back(&t);
            }
            if (a.size() >= 8) {
                std::vector<uchar> status;
                cv::findFundamentalMat(a, b, cv::FM_RANSAC, o.threshold, 0.99, status);
                for (std::size_t i = 0; i < ids.size(); ++i)
                    if (!status[i]) {
                        rejected.insert(ids[i]->id);
                        now_rejected.push_back(*ids[i]);
                    }
            }
        }
        total += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::vector<Track> kept;
        for (const Track& t : live)
            if (!rejected.count(t.id)) kept.push_back(t);
        labels.update_ids(k, kept, lost_ok, now_rejected);
        stats.update(s, labels, k, kept);
        prev = cur;
    }
    return {use_f ? "OpenCV findFundamentalMat RANSAC" : "LK alone (no check)", labels.summary(), "", total / s.frames,
            stats.mean_length(), stats.mean_error()};
}

/// cam0's pose in the body (IMU) frame of the written sequences: EuRoC's cam0 T_BS (row-major 4x4).
const double kBodyFromCam[16] = {0.0148655429818, -0.999880929698, 0.00414029679422, -0.0216401454975,
                                 0.999557249008,  0.0149672133247, 0.025715529948,   -0.064676986768,
                                 -0.0257744366974, 0.00375618835797, 0.999660727178, 0.00981073058949,
                                 0.0, 0.0, 0.0, 1.0};

/// mav0/imu0: data.csv at 200 Hz from the first frame to the last (EuRoC's columns), the gyro exact: the camera
/// turns by yaw_deg per frame about its own y axis, w_cam = (0, yaw rate, 0), w_body = R_BC w_cam; the
/// accelerometer the specific force of gravity (world y down) in the body frame, ignoring the small translation's
/// acceleration (constant velocity: none). sensor.yaml: T_BS identity (the IMU is the body).
void write_imu(const test::MotionScene& s, const fs::path& mav0, long long t0) {
    fs::create_directories(mav0 / "imu0");
    std::ofstream csv(mav0 / "imu0" / "data.csv");
    csv << "#timestamp [ns],w_RS_S_x [rad s^-1],w_RS_S_y [rad s^-1],w_RS_S_z [rad s^-1],a_RS_S_x [m s^-2],"
           "a_RS_S_y [m s^-2],a_RS_S_z [m s^-2]\n";
    csv.precision(17);
    const double rate = s.yaw_deg * M_PI / 180.0 * s.fps;  // rad/s about the camera's y axis
    const long long frame_ns = static_cast<long long>(1e9 / s.fps);
    const long long end = t0 + static_cast<long long>(s.frames - 1) * frame_ns;
    const long long step = 5000000;  // 200 Hz
    for (long long ts = t0; ts <= end; ts += step) {
        const double w_c[3] = {0.0, rate, 0.0};
        double w_b[3], f_b[3];
        // Gravity's specific force in the world is (0, -9.81, 0) (y down); in the camera R_wc^T f, the same (the
        // camera turns about y only); in the body R_BC f_c.
        const double f_c[3] = {0.0, -9.81, 0.0};
        for (int i = 0; i < 3; ++i) {
            w_b[i] = kBodyFromCam[4 * i] * w_c[0] + kBodyFromCam[4 * i + 1] * w_c[1] + kBodyFromCam[4 * i + 2] * w_c[2];
            f_b[i] = kBodyFromCam[4 * i] * f_c[0] + kBodyFromCam[4 * i + 1] * f_c[1] + kBodyFromCam[4 * i + 2] * f_c[2];
        }
        csv << ts << "," << w_b[0] << "," << w_b[1] << "," << w_b[2] << "," << f_b[0] << "," << f_b[1] << "," << f_b[2]
            << "\n";
    }
    std::ofstream y(mav0 / "imu0" / "sensor.yaml");
    y << "# Generated by kestrel_eval_geometry: the IMU of the sequence (its frame is the body frame)\n"
      << "sensor_type: imu\ncomment: generated IMU, exact gyro\nT_BS:\n  cols: 4\n  rows: 4\n"
      << "  data: [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]\n"
      << "rate_hz: 200\ngyroscope_noise_density: 0.0\naccelerometer_noise_density: 0.0\n";
}

void write_euroc(const test::MotionScene& s, const std::vector<HostImage>& frames, const std::string& dir) {
    const fs::path cam = fs::path(dir) / "mav0" / "cam0";
    fs::create_directories(cam / "data");
    fs::create_directories(cam / "labels");
    fs::create_directories(fs::path(dir) / "mav0" / "state_groundtruth_estimate0");
    std::ofstream csv(cam / "data.csv"), gt(fs::path(dir) / "mav0" / "state_groundtruth_estimate0" / "data.csv");
    csv << "#timestamp [ns],filename\n";
    gt << "#timestamp [ns], p_RS_R_x [m], p_RS_R_y [m], p_RS_R_z [m], q_RS_w [], q_RS_x [], q_RS_y [], q_RS_z []\n";
    const long long t0 = 1403636579763555584LL;
    for (int k = 0; k < s.frames; ++k) {
        const long long ts = t0 + static_cast<long long>(k) * static_cast<long long>(1e9 / s.fps);
        const std::string name = std::to_string(ts) + ".png";
        const HostImage& im = frames[static_cast<std::size_t>(k)];
        cv::Mat m(im.height(), im.width(), CV_8U);
        cv::Mat lab(im.height(), im.width(), CV_8U);
        for (int y = 0; y < im.height(); ++y)
            for (int x = 0; x < im.width(); ++x) {
                m.at<uchar>(y, x) = im.at(x, y);
                const int r = s.cast(k, x, y, nullptr);
                lab.at<uchar>(y, x) = static_cast<uchar>(r < 0 ? 255 : s.rects[static_cast<std::size_t>(r)].object);
            }
        cv::imwrite((cam / "data" / name).string(), m);
        cv::imwrite((cam / "labels" / name).string(), lab);
        csv << ts << "," << name << "\n";
        // Pose of the camera in the world (frame 0's camera frame): R_wc(k) as a quaternion (rotation about y).
        const double a = s.yaw_deg * k * M_PI / 180.0;
        const test::MVec3 c = s.centre(k);
        gt.precision(12);
        gt << ts << "," << c[0] << "," << c[1] << "," << c[2] << "," << std::cos(a / 2) << ",0," << std::sin(a / 2)
           << ",0\n";
    }
    write_imu(s, fs::path(dir) / "mav0", t0);
    std::ofstream y(cam / "sensor.yaml");
    y.precision(12);
    y << "# Generated by kestrel_eval_geometry (tests/support/motion_scenes.hpp)\nsensor_type: camera\n"
      << "comment: generated scene camera\nT_BS:\n  cols: 4\n  rows: 4\n  data: [";
    for (int i = 0; i < 16; ++i) y << (i ? ", " : "") << kBodyFromCam[i];
    y << "]\n"
      << "rate_hz: " << s.fps << "\nresolution: [" << s.camera.width << ", " << s.camera.height << "]\n"
      << "camera_model: pinhole\nintrinsics: [" << s.camera.fx << ", " << s.camera.fy << ", " << s.camera.cx << ", "
      << s.camera.cy << "]\n";
    if (s.camera.model == CameraModel::PinholeRadtan)
        y << "distortion_model: radial-tangential\ndistortion_coefficients: [" << s.camera.d[0] << ", " << s.camera.d[1]
          << ", " << s.camera.d[2] << ", " << s.camera.d[3] << "]\n";
    else
        y << "distortion_model: radial-tangential\ndistortion_coefficients: [0.0, 0.0, 0.0, 0.0]\n";
    std::printf("wrote %d frames in the EuRoC layout to %s\n", s.frames, dir.c_str());
}

/// --require on one sequence's rows (rows 0 and 1: the Kestrel check, without and with the gyro prior; row 3: LK
/// alone). Prints every bound; true when all are met.
bool require(const std::string& motion, const std::vector<Row>& rows) {
    bool ok = true;
    const auto bound = [&](const std::string& row, const std::string& what, double value, bool at_most, double limit) {
        const bool met = at_most ? value <= limit : value >= limit;
        ok = ok && met;
        std::printf("require %s, %s: %s %.4g %s %.4g: %s\n", motion.c_str(), row.c_str(), what.c_str(), value,
                    at_most ? "<=" : ">=", limit, met ? "met" : "NOT MET");
    };
    const auto share = [](int a, int b) { return b > 0 ? static_cast<double>(a) / b : 1.0; };
    for (std::size_t k = 0; k < 2; ++k) {
        const test::LabelSummary& s = rows[k].sum;
        bound(rows[k].name, "moving tracks", s.moving_tracks, false, 5);
        bound(rows[k].name, "share of moving tracks Tracked 3 frames on, on their card",
              share(s.moving_still_tracked_after_3 - s.moving_still_drifted, s.moving_tracks), true, 0.05);
        bound(rows[k].name, "static tracks", s.static_tracks, false, 50);
        bound(rows[k].name, "share of static tracks within 1 px ended as Outlier",
              share(s.static_outliers - s.static_outliers_drifted, s.static_tracks), true, 0.01);
    }
    const test::LabelSummary& lk = rows.back().sum;  // LK alone, the last row
    bound(rows.back().name, "share of moving tracks Tracked 3 frames on", share(lk.moving_still_tracked_after_3, lk.moving_tracks),
          false, 0.5);
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage_error(a + " needs a value");
            return argv[++i];
        };
        if (a == "--frames") {
            o.frames = static_cast<int>(number(a, value()));
            if (o.frames < 5 || o.frames > 10000) usage_error("--frames must be in [5, 10000]");
            o.frames_given = true;
        } else if (a == "--features") {
            o.features = static_cast<int>(number(a, value()));
        } else if (a == "--threshold") {
            o.threshold = number(a, value());
        } else if (a == "--baseline") {
            const double b = number(a, value());
            if (!(b >= 1 && b <= 16 && b == static_cast<int>(b))) usage_error("--baseline must be an integer in [1, 16]");
            o.baseline = static_cast<int>(b);
        } else if (a == "--backend") {
            const std::string b = value();
            if (b == "cpu") o.backend = Backend::Cpu;
            else if (b == "cuda") o.backend = Backend::Cuda;
            else usage_error("--backend must be cpu or cuda");
            if (b == "cuda" && !kestrel::cuda_available()) usage_error("--backend cuda: no usable CUDA device on this machine (use --backend cpu)");
        } else if (a == "--small") {
            o.small = true;
        } else if (a == "--motion") {
            const std::string m = value();
            if (m == "all") continue;
            if (m != "translate" && m != "rotate" && m != "static" && m != "slow" && m != "epipole" && m != "fast-turn")
                usage_error("--motion must be translate, rotate, static, slow, epipole, fast-turn or all");
            o.motions = {m};
        } else if (a == "--write") {
            o.write = value();
        } else if (a == "--cache") {
            o.cache = value();
        } else if (a == "--verbose") {
            o.verbose = true;
        } else if (a == "--require") {
            o.require = true;
        } else {
            usage_error("unknown option " + a);
        }
    }
    if (o.small && o.frames_given)
        usage_error("--frames does not apply to --small (its sequence has 20 frames); leave out one of them");
    bool all_met = true;
    try {
        for (const std::string& motion : o.motions) {
            const test::MotionScene s = make_scene(o, motion);
            std::vector<HostImage> frames;
            const auto t0 = std::chrono::steady_clock::now();
            frames = scene_frames(o, s, motion);
            std::printf("\nsequence: %s, %dx%d %s camera, %d frames (rendered in %.1f s), threshold %.2f px, baseline %d "
                        "frames, %s backend\n",
                        motion.c_str(), s.camera.width, s.camera.height, to_string(s.camera.model), s.frames,
                        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), o.threshold,
                        o.baseline, o.backend == Backend::Cpu ? "CPU" : "CUDA");
            if (!o.write.empty() && motion == o.motions.front()) write_euroc(s, frames, o.write);
            std::vector<Row> rows;
            rows.push_back(run_kestrel(o, s, frames, true, false, "Kestrel geometric check"));
            rows.push_back(run_kestrel(o, s, frames, true, true, "Kestrel geometric check + gyro prior"));
            if (motion == "fast-turn") {
                rows.push_back(run_kestrel(o, s, frames, true, true, "Kestrel check + gyro prior + predictions", true));
                rows.push_back(run_kestrel(o, s, frames, false, false, "LK + gyro predictions (no check)", true));
            }
            rows.push_back(run_opencv(o, s, frames, true));
            rows.push_back(run_opencv(o, s, frames, false));
            std::printf("%-38s %8s %22s %14s %8s %20s %14s %7s %7s %7s  %s\n", "method", "moving", "Tracked 3 frames on",
                        "(> 1 px off)", "static", "ended as Outlier", "(> 1 px off)", "ms", "length", "error",
                        "models (frames)");
            for (const Row& r : rows)
                std::printf("%-38s %8d %22s %14d %8d %20s %14d %7.2f %7.1f %7.3f  %s\n", r.name.c_str(), r.sum.moving_tracks,
                            pct(r.sum.moving_still_tracked_after_3, r.sum.moving_tracks).c_str(),
                            r.sum.moving_still_drifted, r.sum.static_tracks,
                            pct(r.sum.static_outliers, r.sum.static_tracks).c_str(), r.sum.static_outliers_drifted,
                            r.ms, r.length, r.error, r.models.c_str());
            std::printf("(edge tracks left out: %d)\n", rows.front().sum.edge_tracks);
            if (o.require) all_met = require(motion, rows) && all_met;
        }
    } catch (const std::exception& e) {
        std::cerr << "kestrel_eval_geometry: " << e.what() << "\n";
        return 1;
    }
    if (o.require) std::printf("\nrequirements: %s\n", all_met ? "MET" : "NOT MET");
    return all_met ? 0 : 1;
}
