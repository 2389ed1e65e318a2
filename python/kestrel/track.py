"""python -m kestrel.track BAG --topic /cam0/image_raw [options]: Kestrel's frontend on a ROS bag.

The same frontend as the C++ example ``track_sequence`` (FeatureTracker, or StereoTracker with --right-topic), with
its options where they apply, writing ``DIR/tracks.csv`` in its columns: the same frames give the same tracks
through either tool. docs/ros.md is the guide; ``--help`` lists the options.
"""
from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
import types
from pathlib import Path

import numpy as np

import kestrel
from kestrel import ros

USAGE_EXIT, ERROR_EXIT, NO_DEVICE_EXIT, INTERRUPT_EXIT = 2, 1, 4, 130

DESCRIPTION = """\
Detects and tracks features through the images of a ROS bag (ROS 1 .bag, ROS 2 bag folder, .db3 or .mcap; read
with the rosbags package, no ROS installation needed) and writes DIR/tracks.csv with the columns of track_sequence
(frame,timestamp,id,x,y,level,status; stereo adds right_x,right_y,disparity,depth,stereo_status). The timestamp is
the image message's header stamp. Prints progress and track_sequence's summary. Without --topic: lists the bag's
topics and their types. Ctrl-C stops after the current frame, leaving a complete CSV of the frames done."""

EPILOG = """\
Images: sensor_msgs/Image (mono8, mono16 and 16UC1 reduced to 8 bits as v >> 8, rgb8, bgr8, rgba8, bgra8 converted
to grey with OpenCV's BT.601 weights) or sensor_msgs/CompressedImage (PNG, JPEG; decoded with OpenCV when installed,
else Pillow). The stamps must increase; a gap (an interval over 1.5 times the usual) is said as a note.
Camera of --reject-outliers: --sensor (EuRoC/Kalibr sensor.yaml), else the first message of --camera-info-topic.
Stereo rig: --rectified F,CX,CY,B; or --sensor and --right-sensor (T_BS of both); or --camera-info-topic and
--right-camera-info-topic (a ROS stereo calibration: K, D, R, P of both cameras).
IMU (--imu-topic, mono): the gyro integrated between frames, rotated into the camera by --sensor's T_BS (EuRoC:
the body frame is the IMU's), is the geometric check's rotation prior (--reject-outliers) and, with --gyro-predict,
moves each track's starting point."""


class UsageError(Exception):
    pass


def _parser():
    p = argparse.ArgumentParser(prog="python -m kestrel.track", description=DESCRIPTION, epilog=EPILOG,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bag", metavar="BAG", help="a ROS 1 .bag, a ROS 2 bag folder, or a ROS 2 .db3 / .mcap file")
    p.add_argument("--topic", help="the image topic (the left camera in stereo)")
    p.add_argument("--right-topic", help="stereo: the right camera's image topic (frames paired by equal stamps)")
    p.add_argument("--imu-topic", help="sensor_msgs/Imu: the gyro as the geometric check's rotation prior")
    p.add_argument("--camera-info-topic", help="sensor_msgs/CameraInfo of the (left) camera")
    p.add_argument("--right-camera-info-topic", help="stereo: sensor_msgs/CameraInfo of the right camera")
    p.add_argument("--sensor", metavar="FILE", help="the camera as a EuRoC/Kalibr sensor.yaml (intrinsics, "
                   "distortion, T_BS); takes precedence over --camera-info-topic")
    p.add_argument("--right-sensor", metavar="FILE", help="stereo: the right camera's sensor.yaml")
    p.add_argument("--imu-in-camera-axes", action="store_true",
                   help="the IMU's axes are the camera's (instead of --sensor's T_BS)")
    p.add_argument("--gyro-predict", action="store_true",
                   help="mono, with --imu-topic: start each track where the gyro's rotation moves it (the camera "
                        "from --sensor or --camera-info-topic); changes the tracks against track_sequence's")
    p.add_argument("--out", default="out/track_sequence", metavar="DIR",
                   help="output folder (default out/track_sequence): tracks.csv")
    p.add_argument("--backend", default="auto", choices=("auto", "cuda", "cpu"),
                   help="auto (default: CUDA when a device is usable, else the CPU reference, which gives the same "
                        "results), cuda or cpu")
    p.add_argument("--features", type=int, help="wanted live tracks, 1..65536 (default %d)"
                   % kestrel.TrackerConfig().target_features)
    p.add_argument("--redetect-fraction", type=float, help="re-detect when live < F * features, [0, 1]")
    p.add_argument("--fb", action="store_true", help="forward-backward check")
    p.add_argument("--fb-max-error", type=float, help="largest accepted round-trip error in px")
    p.add_argument("--full-search", action="store_true",
                   help="search every pyramid level for every track, not only the levels its predicted motion needs "
                        "(for a camera that jerks by more than a few px between frames)")
    p.add_argument("--no-motion-prediction", action="store_true",
                   help="start LK at the track's last position, not at its constant-velocity prediction")
    p.add_argument("--reject-outliers", action="store_true",
                   help="the geometric check: tracks that disagree with the frame's relative pose end as Outlier")
    p.add_argument("--outlier-threshold", type=float, help="px, the check's threshold (default 1)")
    p.add_argument("--max-frames", type=int, default=0, help="stop after N frames (default: all)")
    p.add_argument("--print-every", type=int, default=10, help="one progress line every N frames (default 10; 0 = "
                   "none)")
    g = p.add_argument_group("stereo (--right-topic)")
    g.add_argument("--rectified", metavar="F,CX,CY,B", help="a rectified rig: focal, principal point (px), "
                   "baseline (m)")
    g.add_argument("--epipolar-tolerance", type=float, help="px off the epipolar line accepted (default 1)")
    g.add_argument("--max-round-trip", type=float, help="px, right-to-left round trip accepted (default 0.5)")
    g.add_argument("--min-disparity", type=float, help="px (default 0)")
    g.add_argument("--max-disparity", type=float, help="px (default 256)")
    return p


# ----------------------------------------------------------------------------------------------------------------
# sensor.yaml (EuRoC / Kalibr), read with the rules of the C++ tools' reader: every message names file:line.


class SensorYamlError(ValueError):
    pass


def read_sensor_yaml(path):
    """(kestrel.Camera, T_BS as 16 numbers row-major) from a EuRoC/Kalibr sensor.yaml."""
    name = str(path)
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as e:
        raise SensorYamlError("%s: cannot open the file (%s)" % (name, e.strerror or e)) from None

    def fail(line, what):
        raise SensorYamlError("%s:%d: %s" % (name, line, what))

    top, tbs = {}, {}
    in_tbs, open_list, last = False, None, 0
    for line, raw in enumerate(text.splitlines(), 1):
        last = line
        no_comment = raw.split("#", 1)[0]
        t = no_comment.strip()
        if open_list is not None:
            if ":" in t:
                fail(open_list[1], "list without its closing ']' (line %d holds a key)" % line)
            open_list[0][open_list[2]] = (open_list[0][open_list[2]][0] + " " + t, open_list[1])
            if "]" in t:
                open_list = None
            continue
        if not t:
            continue
        indented = no_comment[:1] in (" ", "\t")
        if ":" not in t:
            fail(line, "expected 'key: value', got '%s'" % t)
        key, value = t.split(":", 1)
        key, value = key.strip(), value.strip()
        into = top
        if indented:
            if not in_tbs:
                fail(line, "unexpected indented line '%s' (only T_BS has nested keys)" % t)
            if key not in ("cols", "rows", "data"):
                fail(line, "unknown key 'T_BS.%s' (expected cols, rows, data)" % key)
            into = tbs
        else:
            in_tbs = key == "T_BS"
        if key in into:
            fail(line, "key '%s' given twice (first on line %d)" % (key, into[key][1]))
        into[key] = (value, line)
        if value.startswith("[") and "]" not in value:
            open_list = (into, line, key)
    if open_list is not None:
        fail(open_list[1], "list without its closing ']' (the file ends on line %d)" % last)

    def need(m, key):
        if key not in m:
            fail(last, "missing key '%s' (read to the end of the file, line %d)" % (key, last))
        return m[key]

    def numbers(key, v, n=None):
        s = v[0].strip()
        if len(s) < 2 or s[0] != "[" or s[-1] != "]":
            fail(v[1], "'%s' must be a list in brackets, e.g. [1, 2], not '%s'" % (key, s))
        inner = s[1:-1].strip()
        out = []
        for item in (inner.split(",") if inner else []):
            try:
                d = float(item.strip())
            except ValueError:
                d = float("nan")
            if not math.isfinite(d):
                fail(v[1], "'%s': '%s' is not a finite number" % (key, item.strip()))
            out.append(d)
        if n is not None and len(out) != n:
            fail(v[1], "'%s' must have %d numbers, it has %d" % (key, n, len(out)))
        return out

    model = need(top, "camera_model")
    if model[0] != "pinhole":
        fail(model[1], "camera_model '%s' is not supported (pinhole only)" % model[0])
    intr = need(top, "intrinsics")
    k = numbers("intrinsics", intr, 4)
    res = need(top, "resolution")
    wh = numbers("resolution", res, 2)
    for v in wh:
        if v != math.floor(v) or v < 1 or v > 1e9:
            fail(res[1], "'resolution': %s must hold positive integers" % res[0])
    dm = need(top, "distortion_model")
    dc = need(top, "distortion_coefficients")
    d = numbers("distortion_coefficients", dc)
    if dm[0] in ("radial-tangential", "radtan"):
        cm = kestrel.CameraModel.PinholeRadtan
        if len(d) not in (4, 5):
            fail(dc[1], "'distortion_coefficients' must have 4 numbers (k1, k2, p1, p2) or 5 (+ k3) for %s, it has %d"
                 % (dm[0], len(d)))
    elif dm[0] == "equidistant":
        cm = kestrel.CameraModel.Fisheye
        if len(d) != 4:
            fail(dc[1], "'distortion_coefficients' must have 4 numbers (k1, k2, k3, k4) for equidistant, it has %d"
                 % len(d))
    elif dm[0] == "none":
        cm = kestrel.CameraModel.Pinhole
        if d:
            fail(dc[1], "'distortion_coefficients' must be [] for distortion_model none")
    else:
        fail(dm[1], "distortion_model '%s' is not supported (radial-tangential, radtan, equidistant, none)" % dm[0])
    t = need(top, "T_BS")
    if t[0]:
        fail(t[1], "T_BS must be followed by indented cols, rows and data")
    for key in ("cols", "rows"):
        v = need(tbs, key)
        if v[0] != "4":
            fail(v[1], "T_BS %s must be 4, not '%s'" % (key, v[0]))
    m = numbers("T_BS data", need(tbs, "data"), 16)
    coeffs = (d + [0.0] * 5)[:5]
    try:
        cam = kestrel.Camera(model=cm, width=int(wh[0]), height=int(wh[1]), fx=k[0], fy=k[1], cx=k[2], cy=k[3],
                             d=coeffs)
    except kestrel.InvalidArgument as e:
        p = getattr(e, "parameter", "") or ""
        line = intr[1] if p in ("fx", "fy", "cx", "cy") else res[1] if p in ("width", "height") else dc[1]
        fail(line, str(e))
    return cam, m


# ----------------------------------------------------------------------------------------------------------------
# The run


def _seconds(ns):
    return ros._seconds(ns)


def _percentile(v, q):
    if not v:
        return 0.0
    s = sorted(v)
    return s[int(q * (len(s) - 1) + 0.5)]


def _csv_float(v):
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "%.4f" % v


_STATUS = {int(s): s.name for s in kestrel.TrackStatus.__members__.values()} if hasattr(
    kestrel.TrackStatus, "__members__") else {}
_STEREO_STATUS = {int(s): s.name for s in kestrel.StereoStatus.__members__.values()} if hasattr(
    kestrel.StereoStatus, "__members__") else {}


def _status(v):
    return _STATUS.get(int(v), "unknown")


def track_rows(frame, ts, tracks):
    """tracks.csv rows (mono) of one frame's tracks: frame,timestamp,id,x,y,level,status."""
    return "".join("%d,%s,%d,%.4f,%.4f,%d,%s\n" % (frame, ts, t["id"], t["x"], t["y"], t["level"], _status(t["status"]))
                   for t in tracks)


def stereo_rows(frame, ts, live, lost):
    out = []
    for t in live:
        out.append("%d,%s,%d,%.4f,%.4f,%d,%s,%s,%s,%s,%s,%s\n" % (
            frame, ts, t["id"], t["x"], t["y"], t["level"], _status(t["status"]), _csv_float(t["right_x"]),
            _csv_float(t["right_y"]), _csv_float(t["disparity"]), _csv_float(t["depth"]),
            _STEREO_STATUS.get(int(t["stereo_status"]), "unknown")))
    for t in lost:
        out.append("%d,%s,%d,%.4f,%.4f,%d,%s,nan,nan,nan,nan,none\n"
                   % (frame, ts, t["id"], t["x"], t["y"], t["level"], _status(t["status"])))
    return "".join(out)


class _Stop:
    """Ctrl-C: the first stops after the current frame, a second one at once."""

    def __init__(self):
        self.requested = False
        self._old = None

    def __enter__(self):
        try:
            self._old = signal.signal(signal.SIGINT, self._handler)
        except ValueError:  # not the main thread
            self._old = None
        return self

    def _handler(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        sys.stderr.write("\nkestrel.track: Ctrl-C: stopping after this frame (press again to abort at once)\n")

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)
        return False


class _Times:
    def __init__(self):
        self.stages = []

    def add(self, stage, ms):
        for s in self.stages:
            if s[0] == stage:
                s[1].append(ms)
                return
        self.stages.append((stage, [ms]))

    def print(self, title):
        print("%s\n  %-34s %7s %9s %9s %9s %9s" % (title, "stage", "frames", "mean ms", "median", "p95", "max"))
        for name, v in self.stages:
            print("  %-34s %7d %9.3f %9.3f %9.3f %9.3f" % (name, len(v), sum(v) / len(v), _percentile(v, 0.5),
                                                         _percentile(v, 0.95), max(v)))


def _backend(opts):
    if opts.backend == "cuda":
        if not kestrel.cuda_available():
            raise kestrel.NoDeviceError("--backend cuda: no usable CUDA device on this machine")
        return kestrel.Backend.Cuda, "backend: CUDA (GPU)"
    if opts.backend == "cpu":
        return kestrel.Backend.Cpu, "backend: CPU reference (requested with --backend cpu)"
    b = kestrel.default_backend()
    if b == kestrel.Backend.Cuda:
        return b, "backend: CUDA (GPU)"
    return b, "backend: CPU reference (no CUDA device found; the results are identical, only slower)"


def tracker_config(opts):
    kw = {}
    if opts.features is not None:
        kw["target_features"] = opts.features
    if opts.redetect_fraction is not None:
        kw["redetect_fraction"] = opts.redetect_fraction
    if opts.fb:
        kw["forward_backward"] = True
    if opts.fb_max_error is not None:
        kw["fb_max_error"] = opts.fb_max_error
    if opts.full_search or opts.no_motion_prediction:
        kw["motion"] = kestrel.MotionConfig(constant_velocity=not opts.no_motion_prediction,
                                            fewer_levels=not opts.full_search)
    return kestrel.TrackerConfig(**kw)


def _check_camera(cfg, camera, what, threshold):
    kw = {"enabled": True, "camera": camera}
    if threshold is not None:
        kw["threshold_px"] = threshold
    cfg.geometric_check = kestrel.GeometricCheckConfig(**kw)
    print("geometric check: camera %s (%s %dx%d), threshold %.3g px"
          % (what, camera.model.name, camera.width, camera.height, cfg.geometric_check.threshold_px))


class _Summary:
    def __init__(self):
        self.track_frames = self.redetections = 0
        self.live_min, self.live_max = None, 0
        self.born_first = self.born_redetected = 0
        self.lost = {}
        self.lengths = []
        self.tracker_ms = []
        self.births = {}
        self.frames_16bit, self.first_16bit = 0, ""


def _note_16bit(sm, frame, where):
    if frame.source_bits > 8:
        if sm.frames_16bit == 0:
            sm.first_16bit = where
            sys.stderr.write("kestrel.track: note: %s is a 16-bit image: reduced to 8 bits by keeping the high byte "
                             "of each sample (v >> 8, as OpenCV's IMREAD_GRAYSCALE does); every 16-bit frame is "
                             "reduced the same way\n" % where)
        sm.frames_16bit += 1


def run(opts) -> int:
    bag_path = Path(opts.bag)
    stereo = opts.right_topic is not None
    if not stereo:
        for name in ("rectified", "epipolar_tolerance", "max_round_trip", "min_disparity", "max_disparity",
                     "right_sensor", "right_camera_info_topic"):
            if getattr(opts, name) is not None:
                raise UsageError("--%s is a stereo option: add --right-topic" % name.replace("_", "-"))
    if not opts.reject_outliers and opts.outlier_threshold is not None:
        raise UsageError("--outlier-threshold is an option of --reject-outliers")
    if opts.gyro_predict and not opts.imu_topic:
        raise UsageError("--gyro-predict needs the gyro: --imu-topic TOPIC")
    if opts.imu_topic and not (opts.reject_outliers or opts.gyro_predict):
        raise UsageError("--imu-topic feeds the gyro to the geometric check as its rotation prior (add "
                         "--reject-outliers) or to the tracks' predicted positions (add --gyro-predict)")
    if opts.imu_topic and stereo:
        raise UsageError("--imu-topic is a mono option: the stereo tracker takes no rotation prior")
    if opts.max_frames < 0:
        raise UsageError("--max-frames must be >= 0 (0 = all), not %d" % opts.max_frames)
    cfg = tracker_config(opts)
    backend, backend_text = _backend(opts)

    with ros.open_bag(bag_path) as bag:
        if not opts.topic:
            print("%s: topics (give the image topic with --topic):" % bag_path)
            print(ros._topic_lines(bag.reader))
            return 0
        total = bag.count(opts.topic)
        bag.connections(opts.topic, (ros.IMAGE, ros.COMPRESSED), "the image topic")
        print("source: %s topic %s (%d messages)%s" % (bag_path, opts.topic, total,
                                                      " and %s" % opts.right_topic if stereo else ""))
        sensor = right_sensor = info = right_info = None
        if opts.sensor:
            sensor = read_sensor_yaml(opts.sensor)
        if opts.right_sensor:
            right_sensor = read_sensor_yaml(opts.right_sensor)
        if opts.camera_info_topic:
            info = ros.read_camera_info(bag_path, opts.camera_info_topic, bag=bag)
            print("camera info: %s: %s %dx%d, fx %.6g fy %.6g cx %.6g cy %.6g"
                  % (opts.camera_info_topic, info[0].model.name, info[0].width, info[0].height, info[0].fx,
                     info[0].fy, info[0].cx, info[0].cy))
        if opts.right_camera_info_topic:
            right_info = ros.read_camera_info(bag_path, opts.right_camera_info_topic, bag=bag)
        gyro = None
        if opts.imu_topic:
            if sensor is None and not opts.imu_in_camera_axes:
                raise UsageError("--imu-topic needs the camera-to-IMU rotation: --sensor SENSOR.yaml (its T_BS; "
                                 "EuRoC's body frame is the IMU's), or --imu-in-camera-axes")
            t_ns, omega = ros.read_gyro(bag_path, opts.imu_topic, bag=bag)
            R_BS = None if sensor is None or opts.imu_in_camera_axes else np.asarray(sensor[1]).reshape(4, 4)[:3, :3]
            predict_cam = None
            if opts.gyro_predict:
                predict_cam = sensor[0] if sensor is not None else info[0] if info is not None else None
                if predict_cam is None:
                    raise UsageError("--gyro-predict needs the camera: --sensor SENSOR.yaml or --camera-info-topic "
                                     "TOPIC")
            gyro = (t_ns, omega, R_BS, predict_cam)
            uses = [u for u, on in (("the rotation prior of the geometric check", opts.reject_outliers),
                                    ("the tracks' predicted positions", opts.gyro_predict)) if on]
            print("imu: %s: %d gyro readings over %.2f s; %s"
                  % (opts.imu_topic, len(t_ns), (t_ns[-1] - t_ns[0]) * 1e-9, " and ".join(uses)))

        if stereo:
            return _run_stereo(opts, bag, cfg, backend, backend_text, sensor, right_sensor, info, right_info, total)
        if opts.reject_outliers:
            if sensor is not None:
                _check_camera(cfg, sensor[0], opts.sensor, opts.outlier_threshold)
            elif info is not None:
                _check_camera(cfg, info[0], opts.camera_info_topic, opts.outlier_threshold)
            else:
                raise UsageError("--reject-outliers needs the camera: --sensor SENSOR.yaml or --camera-info-topic "
                                 "TOPIC")
        print(backend_text)
        return _run_mono(opts, bag, cfg, backend, gyro, total)


def _frame_loop(opts, source, f, step):
    """Calls step(n, frame, read_ms) for each frame of source, from 0, until the source ends, --max-frames or an
    interrupt (Ctrl-C or SIGTERM: the frame in work is finished); closes f. Returns (frames, interrupted, total_ms)."""
    n = 0
    interrupted = False
    t_total = time.perf_counter()
    try:
        with _Stop() as stop:
            while True:
                if opts.max_frames > 0 and n >= opts.max_frames:
                    break
                t0 = time.perf_counter()
                fr = next(source, None)
                if fr is None:
                    break
                step(n, fr, (time.perf_counter() - t0) * 1e3)
                n += 1
                if stop.requested:
                    interrupted = True
                    break
    except KeyboardInterrupt:
        interrupted = True
    finally:
        f.close()
    return n, interrupted, (time.perf_counter() - t_total) * 1e3


def _print_run_files(times, csv_path, n, interrupted):
    print()
    times.print("per-stage wall-clock times (frames after the first):")
    print("\nwrote %s" % csv_path)
    if interrupted:
        print("interrupted: %s holds the %d frames done (0 to %d)" % (csv_path, n, n - 1))


def _warn_16bit(sm, n):
    if sm.frames_16bit:
        sys.stderr.write("kestrel.track: note: %d of %d frames were 16-bit (the first: %s) and were reduced to 8 "
                         "bits (v >> 8)\n" % (sm.frames_16bit, n, sm.first_16bit))


def _open_csv(out_dir, header):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "tracks.csv"
    f = open(path, "w", newline="\n")
    f.write(header + "\n")
    return f, path


def _run_mono(opts, bag, cfg, backend, gyro, total):
    notes = ros.GapNotes(opts.topic, sys.stderr)
    f, csv_path = _open_csv(opts.out, "frame,timestamp,id,x,y,level,status")
    sm = _Summary()
    times = _Times()
    st = types.SimpleNamespace(tracker=None, prev_t=None, live=(), no_prior=0)

    def step(n, fr, read_ms):
        where = "%s message %d" % (opts.topic, fr.index)
        t1 = time.perf_counter()
        times.add("read + decode", read_ms)
        _note_16bit(sm, fr, where)
        h, w = fr.image.shape
        if st.tracker is None:
            try:
                st.tracker = kestrel.FeatureTracker(w, h, cfg, backend)
            except kestrel.InvalidArgument as e:
                raise RuntimeError("frame (%s) is %dx%d: %s" % (where, w, h, e)) from None
            print("frames: %dx%d; tracker set up in %.1f ms" % (w, h, (time.perf_counter() - t1) * 1e3))
            t1 = time.perf_counter()
        rot = predictions = None
        if gyro is not None and st.prev_t is not None:
            rot = ros.gyro_rotation(gyro[0], gyro[1], st.prev_t, fr.timestamp_ns, gyro[2])
            st.no_prior += rot is None
            if rot is not None and gyro[3] is not None and len(st.live):
                predictions = ros.predict_rotation(gyro[3], rot, np.column_stack([st.live["x"], st.live["y"]]))
        live = st.tracker.track(fr.image, predictions, rotation_prior=rot if opts.reject_outliers else None)
        st.live = live
        lost = st.tracker.lost_tracks
        t2 = time.perf_counter()
        ms = (t2 - t1) * 1e3
        redetected = st.tracker.redetected
        if n > 0:
            sm.tracker_ms.append(ms)
            times.add("tracker total, with re-detection" if redetected else "tracker total, tracking only", ms)
        else:
            print("first frame (detection only, warm-up): %.2f ms" % ms)
        sm.redetections += bool(redetected and n > 0)
        sm.track_frames += len(live)
        sm.live_min = len(live) if sm.live_min is None else min(sm.live_min, len(live))
        sm.live_max = max(sm.live_max, len(live))
        ts = _seconds(fr.timestamp_ns)
        f.write(track_rows(n, ts, live) + track_rows(n, ts, lost))
        f.flush()
        for t in lost:
            name = _status(t["status"])
            sm.lost[name] = sm.lost.get(name, 0) + 1
            b = sm.births.pop(int(t["id"]), None)
            if b is not None:
                sm.lengths.append(float(n - b))
        for t in live:
            tid = int(t["id"])
            if tid not in sm.births:
                sm.births[tid] = n
                if n == 0:
                    sm.born_first += 1
                else:
                    sm.born_redetected += 1
        times.add("csv", (time.perf_counter() - t2) * 1e3)
        if opts.print_every > 0 and n % opts.print_every == 0:
            print("frame %5d  t=%s  live %4d  lost %3d%s  tracker %.2f ms  (%d of %d messages)"
                  % (n, ts, len(live), len(lost), "  re-detected" if redetected else "", ms, fr.index + 1, total),
                  flush=True)
        st.prev_t = fr.timestamp_ns

    source = ros.frames(bag.path, opts.topic, notes=notes, bag=bag)
    n, interrupted, total_ms = _frame_loop(opts, source, f, step)
    if n == 0:
        raise RuntimeError("topic %s gave no frames" % opts.topic)
    for b in sm.births.values():
        sm.lengths.append(float(n - 1 - b))
    _print_run_files(times, csv_path, n, interrupted)
    print("\nsummary of the run")
    line = "  frames            %d in %.2f s: %.1f fps end to end (reading, decoding and writing included)" % (
        n, total_ms / 1000.0, 1000.0 * n / max(total_ms, 1e-9))
    if sm.tracker_ms:
        med = _percentile(sm.tracker_ms, 0.5)
        line += "; tracker alone %.2f ms per frame (median), %.0f fps" % (med, 1000.0 / max(med, 1e-9))
    print(line)
    print("  live tracks       %.1f per frame on average (min %d, max %d; --features %d)"
          % (sm.track_frames / n, sm.live_min, sm.live_max, cfg.target_features))
    print("  tracks born       %d: %d in the first frame, %d by re-detection (in %d frames)"
          % (sm.born_first + sm.born_redetected, sm.born_first, sm.born_redetected, sm.redetections))
    lost_total = sum(sm.lost.values())
    text = "  tracks lost       %d" % lost_total
    sep = ":"
    for k in sorted(sm.lost):
        text += "%s %s %d" % (sep, k, sm.lost[k])
        sep = ","
    print(text + "; %d live at the end" % len(sm.births))
    print("  track length      median %.0f frames, mean %.1f, longest %.0f (lost tracks, and live ones so far)"
          % (_percentile(sm.lengths, 0.5), sum(sm.lengths) / len(sm.lengths) if sm.lengths else 0.0,
             _percentile(sm.lengths, 1.0)))
    _warn_16bit(sm, n)
    if notes.gaps:
        print("  gaps              %d in %s (the first at message %d)" % (len(notes.gaps), opts.topic,
                                                                       notes.gaps[0][0]))
    if gyro is not None and st.no_prior:
        sys.stderr.write("kestrel.track: note: %d frames had no gyro readings around them: tracked without the "
                         "gyro\n" % st.no_prior)
    print("  tracking error    no ground truth for this source (the synthetic default has one)")
    return INTERRUPT_EXIT if interrupted else 0


def _stereo_rig(opts, sensor, right_sensor, info, right_info):
    if opts.rectified:
        try:
            parts = [float(x) for x in opts.rectified.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 4:
            raise UsageError("--rectified takes F,CX,CY,B (four numbers: focal, principal point in px, baseline), "
                             "not '%s'" % opts.rectified)
        return kestrel.rectified_rig(*parts), "rectified (--rectified)"
    if sensor is not None or right_sensor is not None:
        if sensor is None or right_sensor is None:
            raise UsageError("the stereo rig from sensor.yaml files needs both --sensor and --right-sensor")
        rig = kestrel.rig_from_body_poses(sensor[0], sensor[1], right_sensor[0], right_sensor[1])
        return rig, "%s and %s (T_rl = inv(T_BS1) * T_BS0)" % (opts.sensor, opts.right_sensor)
    if info is not None and right_info is not None:
        rig = ros.rig_from_infos(info[1], right_info[1], "%s / %s" % (opts.camera_info_topic,
                                                                      opts.right_camera_info_topic))
        return rig, "%s and %s (K, D, R, P)" % (opts.camera_info_topic, opts.right_camera_info_topic)
    raise UsageError("the stereo rig is needed: --rectified F,CX,CY,B, or --sensor and --right-sensor, or "
                     "--camera-info-topic and --right-camera-info-topic")


def _run_stereo(opts, bag, tcfg, backend, backend_text, sensor, right_sensor, info, right_info, total):
    rig, what = _stereo_rig(opts, sensor, right_sensor, info, right_info)
    print("rig: %s, %s" % (what, rig.type.name))
    if opts.reject_outliers:
        if sensor is not None and right_sensor is None:
            _check_camera(tcfg, sensor[0], opts.sensor, opts.outlier_threshold)
        elif rig.type == kestrel.RigType.Raw:
            kw = {"enabled": True, "camera": rig.left}
            if opts.outlier_threshold is not None:
                kw["threshold_px"] = opts.outlier_threshold
            tcfg.geometric_check = kestrel.GeometricCheckConfig(**kw)
            print("geometric check: the rig's left camera, threshold %.3g px" % tcfg.geometric_check.threshold_px)
        else:
            raise UsageError("--reject-outliers with a rectified rig needs the camera: --sensor SENSOR.yaml")
    m = kestrel.StereoMatchConfig()
    for name in ("epipolar_tolerance", "max_round_trip", "min_disparity", "max_disparity"):
        if getattr(opts, name) is not None:
            setattr(m, name, getattr(opts, name))
    lk = m.lk
    pyr = lk.pyramid
    pyr.scale = tcfg.lk.pyramid.scale
    lk.pyramid = pyr
    m.lk = lk
    cfg = kestrel.StereoConfig(tracker=tcfg, match=m)
    print(backend_text)
    f, csv_path = _open_csv(opts.out, "frame,timestamp,id,x,y,level,status,right_x,right_y,disparity,depth,"
                                      "stereo_status")
    notes = ros.GapNotes(opts.topic, sys.stderr)
    by_status, disparities, tracker_ms = {}, [], []
    times = _Times()
    sm = _Summary()
    st = types.SimpleNamespace(tracker=None, track_frames=0)

    def step(n, fr, read_ms):
        t1 = time.perf_counter()
        times.add("read + decode (both images)", read_ms)
        _note_16bit(sm, fr.left, "%s message %d" % (opts.topic, fr.left.index))
        h, w = fr.left.image.shape
        if st.tracker is None:
            try:
                st.tracker = kestrel.StereoTracker(w, h, rig, cfg, backend)
            except kestrel.InvalidArgument as e:
                raise RuntimeError("frame (%s message %d) is %dx%d: %s"
                                   % (opts.topic, fr.left.index, w, h, e)) from None
            print("frames: 2 x %dx%d (%s rig); stereo tracker set up in %.1f ms"
                  % (w, h, rig.type.name, (time.perf_counter() - t1) * 1e3))
            t1 = time.perf_counter()
        live = st.tracker.track(fr.left.image, fr.right.image)
        lost = st.tracker.lost_tracks
        t2 = time.perf_counter()
        ms = (t2 - t1) * 1e3
        if n > 0:
            tracker_ms.append(ms)
            times.add("stereo tracker (track, matching)", ms)
        else:
            print("first frame (detection and matching, warm-up): %.2f ms" % ms)
        st.track_frames += len(live)
        ts = _seconds(fr.timestamp_ns)
        f.write(stereo_rows(n, ts, live, lost))
        f.flush()
        matched = 0
        for t in live:
            s = _STEREO_STATUS.get(int(t["stereo_status"]), "unknown")
            by_status[s] = by_status.get(s, 0) + 1
            if s == "Matched":
                matched += 1
                disparities.append(float(t["disparity"]))
        times.add("csv", (time.perf_counter() - t2) * 1e3)
        if opts.print_every > 0 and n % opts.print_every == 0:
            print("frame %5d  t=%s  live %4d  matched %4d  lost %3d  stereo tracker %.2f ms  (%d of %d "
                  "messages)" % (n, ts, len(live), matched, len(lost), ms, fr.left.index + 1, total), flush=True)

    source = ros.stereo_frames(bag.path, opts.topic, opts.right_topic, notes=notes, bag=bag, warn=sys.stderr)
    n, interrupted, total_ms = _frame_loop(opts, source, f, step)
    track_frames = st.track_frames
    if n == 0:
        raise RuntimeError("topics %s and %s gave no frame pairs" % (opts.topic, opts.right_topic))
    _print_run_files(times, csv_path, n, interrupted)
    print("\nsummary of the run (stereo)")
    line = "  frames            %d pairs in %.2f s: %.1f fps end to end" % (n, total_ms / 1000.0,
                                                                           1000.0 * n / max(total_ms, 1e-9))
    if tracker_ms:
        line += "; stereo tracker alone %.2f ms per frame (median)" % _percentile(tracker_ms, 0.5)
    print(line)
    print("  live tracks       %.1f per frame on average (--features %d)" % (track_frames / n, tcfg.target_features))
    print("  stereo status     " + ", ".join("%s %d (%.1f%%)" % (k, v, 100.0 * v / max(1, track_frames))
                                             for k, v in sorted(by_status.items())))
    if disparities:
        print("  disparity         Matched: median %.3f px, 5 %% %.3f px, 95 %% %.3f px"
              % (_percentile(disparities, 0.5), _percentile(disparities, 0.05), _percentile(disparities, 0.95)))
    _warn_16bit(sm, n)
    return INTERRUPT_EXIT if interrupted else 0


def main(argv=None) -> int:
    parser = _parser()
    opts = parser.parse_args(argv)
    try:
        return run(opts)
    except UsageError as e:
        parser.print_usage(sys.stderr)
        sys.stderr.write("kestrel.track: %s\n" % e)
        return USAGE_EXIT
    except ros.MissingDependency as e:
        sys.stderr.write("kestrel.track: %s\n" % e)
        return ERROR_EXIT
    except kestrel.NoDeviceError as e:
        sys.stderr.write("kestrel.track: %s (use --backend cpu or auto)\n" % e)
        return 1 if os.environ.get("KESTREL_REQUIRE_GPU") == "1" else NO_DEVICE_EXIT
    except kestrel.InvalidArgument as e:
        sys.stderr.write("kestrel.track: invalid option: %s\n" % e)
        return USAGE_EXIT
    except (ros.BagError, SensorYamlError, RuntimeError, OSError) as e:
        sys.stderr.write("kestrel.track: %s\n" % e)
        return ERROR_EXIT


if __name__ == "__main__":
    sys.exit(main())
