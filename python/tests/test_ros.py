"""ROS bags in, tracks out (kestrel.ros, python -m kestrel.track).

The bags are written here with rosbags' writers (ROS 1, ROS 2 with sqlite3 and MCAP storage) from a synthetic
sequence with a known motion and from EuRoC-layout folders made of the test data's frames (as the C++ tests make
them: examples/tests/make_euroc.cmake). Tracking a bag must give the tracks of the same frames tracked through the
Python API, and the CSV of the C++ track_sequence on the folder when that binary is built (skipped loudly
otherwise). Malformed bags must give errors that name the file, the topic and the message.
"""
import io
import os
import shutil
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

import kestrel

rosbags = pytest.importorskip("rosbags", reason="SKIPPED: rosbags is not installed: pip install 'kestrel[ros]'")
from rosbags.rosbag1 import Writer as Writer1  # noqa: E402
from rosbags.rosbag2 import StoragePlugin, Writer as Writer2  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

from kestrel import ros  # noqa: E402
from kestrel import track as ktrack  # noqa: E402

from conftest import ROOT, data_dir, shifted, textured_image  # noqa: E402

KINDS = ("ros1", "sqlite3", "mcap")
T0 = 1403636579763555584  # EuRoC MH_01's first camera stamp (as make_euroc.cmake)
STEP = 50_000_000         # 20 Hz


# ---------------------------------------------------------------------------------------------------------------
# Writing bags


class Bag:
    """A bag being written: add(topic, type, msg, stamp); the typestore matches the kind (ROS 1 or ROS 2)."""

    def __init__(self, path, kind):
        self.kind = kind
        self.ts = get_typestore(Stores.ROS1_NOETIC if kind == "ros1" else Stores.ROS2_HUMBLE)
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if kind == "ros1":
            self.path = Path(str(path) + ".bag")
            self.w = Writer1(self.path)
        else:
            self.path = Path(path)
            plugin = StoragePlugin.MCAP if kind == "mcap" else StoragePlugin.SQLITE3
            self.w = Writer2(self.path, version=9, storage_plugin=plugin)
        self.w.open()
        self.conns = {}
        self.log = 0  # the log (receive) time: increasing in the order written, whatever the header stamps

    def header(self, stamp, frame_id="cam0"):
        T = self.ts.types
        t = T["builtin_interfaces/msg/Time"](sec=int(stamp // 1_000_000_000), nanosec=int(stamp % 1_000_000_000))
        H = T["std_msgs/msg/Header"]
        if "seq" in H.__dataclass_fields__:
            return H(seq=0, stamp=t, frame_id=frame_id)
        return H(stamp=t, frame_id=frame_id)

    def add(self, topic, msgtype, msg, stamp):
        if topic not in self.conns:
            self.conns[topic] = self.w.add_connection(topic, msgtype, typestore=self.ts)
        data = self.ts.serialize_ros1(msg, msgtype) if self.kind == "ros1" else self.ts.serialize_cdr(msg, msgtype)
        self.log = max(stamp, self.log + 1)
        self.w.write(self.conns[topic], self.log, data)

    def image(self, topic, stamp, pixels, encoding="mono8", big_endian=0, step=None):
        pixels = np.ascontiguousarray(pixels)
        h, w = pixels.shape[:2]
        row = pixels.nbytes // h
        step = row if step is None else step
        rows = pixels.view(np.uint8).reshape(h, row)
        if step > row:
            rows = np.concatenate([rows, np.full((h, step - row), 7, np.uint8)], 1)
        msg = self.ts.types["sensor_msgs/msg/Image"](header=self.header(stamp), height=h, width=w, encoding=encoding,
                                                     is_bigendian=big_endian, step=step,
                                                     data=np.ascontiguousarray(rows).reshape(-1))
        self.add(topic, "sensor_msgs/msg/Image", msg, stamp)

    def compressed(self, topic, stamp, data, fmt):
        msg = self.ts.types["sensor_msgs/msg/CompressedImage"](header=self.header(stamp), format=fmt,
                                                               data=np.frombuffer(data, np.uint8).copy())
        self.add(topic, "sensor_msgs/msg/CompressedImage", msg, stamp)

    def camera_info(self, topic, stamp, w, h, model, d, k, r=None, p=None):
        T = self.ts.types
        roi = T["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
        r = np.eye(3).reshape(-1) if r is None else np.asarray(r, np.float64).reshape(-1)
        p = np.zeros(12) if p is None else np.asarray(p, np.float64).reshape(-1)
        kw = dict(header=self.header(stamp), height=h, width=w, distortion_model=model, binning_x=0, binning_y=0,
                  roi=roi)
        names = ("D", "K", "R", "P") if self.kind == "ros1" else ("d", "k", "r", "p")
        for n, v in zip(names, (np.asarray(d, np.float64), np.asarray(k, np.float64).reshape(-1), r, p)):
            kw[n] = v
        self.add(topic, "sensor_msgs/msg/CameraInfo", T["sensor_msgs/msg/CameraInfo"](**kw), stamp)

    def imu(self, topic, stamp, gyro):
        T = self.ts.types
        V = T["geometry_msgs/msg/Vector3"]
        msg = T["sensor_msgs/msg/Imu"](
            header=self.header(stamp, "imu0"), orientation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            orientation_covariance=np.zeros(9), angular_velocity=V(x=float(gyro[0]), y=float(gyro[1]), z=float(gyro[2])),
            angular_velocity_covariance=np.zeros(9), linear_acceleration=V(x=0.0, y=0.0, z=9.81),
            linear_acceleration_covariance=np.zeros(9))
        self.add(topic, "sensor_msgs/msg/Imu", msg, stamp)

    def close(self):
        self.w.close()
        return self.path


def storage_file(bag_dir):
    """The .db3 / .mcap file inside a ROS 2 bag folder."""
    return next(p for p in Path(bag_dir).iterdir() if p.suffix in (".db3", ".mcap"))


def synthetic_frames(n=12, h=240, w=320, step=(2, 1)):
    base = textured_image(h, w, seed=7)
    return [shifted(base, step[0] * i, step[1] * i) for i in range(n)]


def run_track(args):
    """python -m kestrel.track in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    old = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = ktrack.main([str(a) for a in args])
    except SystemExit as e:  # argparse
        code = e.code
    finally:
        sys.stdout, sys.stderr = old
    return code, out.getvalue(), err.getvalue()


def expected_csv(images, stamps, features, backend=kestrel.Backend.Cpu):
    """tracks.csv of the same frames through the Python API (what track_sequence writes for them)."""
    h, w = images[0].shape
    trk = kestrel.FeatureTracker(w, h, kestrel.TrackerConfig(target_features=features), backend)
    text = "frame,timestamp,id,x,y,level,status\n"
    for n, (img, t) in enumerate(zip(images, stamps)):
        live = trk.track(img)
        ts = ros._seconds(t)
        text += ktrack.track_rows(n, ts, live) + ktrack.track_rows(n, ts, trk.lost_tracks)
    return text


# ---------------------------------------------------------------------------------------------------------------
# The synthetic sequence with a known motion, through each bag kind


@pytest.mark.parametrize("kind", KINDS)
def test_synthetic_bag_gives_the_api_tracks(tmp_path, kind):
    imgs = synthetic_frames()
    stamps = [T0 + i * STEP for i in range(len(imgs))]
    b = Bag(tmp_path / "syn", kind)
    for img, t in zip(imgs, stamps):
        b.image("/cam0/image_raw", t, img)
    path = b.close()
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--features", "120",
                                "--out", tmp_path / "o", "--print-every", "5"])
    assert code == 0, err
    csv = (tmp_path / "o" / "tracks.csv").read_text()
    assert csv == expected_csv(imgs, stamps, 120)
    assert "summary of the run" in out and "frames            12 in" in out and "tracks lost" in out
    assert "frame     5  t=1403636580.013555584" in out and "(6 of 12 messages)" in out
    # The known motion: every track that lived from frame 0 moved by (2, 1) px a frame.
    rows = [line.split(",") for line in csv.splitlines()[1:]]
    first = {r[2]: (float(r[3]), float(r[4])) for r in rows if r[0] == "0"}
    last = {r[2]: (float(r[3]), float(r[4])) for r in rows if r[0] == "11" and r[6] == "Tracked"}
    moved = np.array([[last[i][0] - first[i][0], last[i][1] - first[i][1]] for i in last if i in first])
    assert len(moved) > 30
    assert np.allclose(np.median(moved, 0), [22.0, 11.0], atol=0.05)
    if kind != "ros1":  # the bare storage file reads as well as the bag folder
        code2, _, err2 = run_track([storage_file(path), "--topic", "/cam0/image_raw", "--backend", "cpu",
                                    "--features", "120", "--out", tmp_path / "o2"])
        assert code2 == 0, err2
        assert (tmp_path / "o2" / "tracks.csv").read_text() == csv


def test_lists_topics_without_topic(tmp_path):
    b = Bag(tmp_path / "t", "mcap")
    for i, img in enumerate(synthetic_frames(3)):
        b.image("/cam0/image_raw", T0 + i * STEP, img)
        b.imu("/imu0", T0 + i * STEP, (0, 0, 0))
    path = b.close()
    code, out, _ = run_track([path])
    assert code == 0
    assert "/cam0/image_raw" in out and "sensor_msgs/msg/Image" in out and "3 messages" in out
    assert "/imu0" in out and "sensor_msgs/msg/Imu" in out
    assert [(t.topic, t.msgtype, t.count) for t in ros.topics(path)] == [
        ("/cam0/image_raw", "sensor_msgs/msg/Image", 3), ("/imu0", "sensor_msgs/msg/Imu", 3)]


# ---------------------------------------------------------------------------------------------------------------
# Image encodings


def test_colour_encodings_use_opencv_bt601():
    ts = get_typestore(Stores.ROS2_HUMBLE)
    rng = np.random.default_rng(3)
    rgb = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    # The rule written out independently: cv::cvtColor's fixed point, rounded.
    r, g, b = (rgb[..., i].astype(np.int64) for i in range(3))
    want = ((4899 * r + 9617 * g + 1868 * b + 8192) >> 14).astype(np.uint8)
    assert ros.bt601_grey(np.array([255]), np.array([0]), np.array([0]))[0] == 76
    for enc, px in (("rgb8", rgb), ("bgr8", rgb[..., ::-1]),
                    ("rgba8", np.dstack([rgb, np.full((5, 7), 9, np.uint8)])),
                    ("bgra8", np.dstack([rgb[..., ::-1], np.full((5, 7), 9, np.uint8)]))):
        px = np.ascontiguousarray(px)
        msg = ts.types["sensor_msgs/msg/Image"](header=None, height=5, width=7, encoding=enc, is_bigendian=0,
                                                step=7 * px.shape[2] + 3,
                                                data=np.concatenate([px.reshape(5, -1), np.zeros((5, 3), np.uint8)],
                                                                    1).reshape(-1))
        grey, bits = ros.image_to_grey(msg, enc)
        assert bits == 8 and grey.dtype == np.uint8
        np.testing.assert_array_equal(grey, want, err_msg=enc)


def test_mono16_keeps_the_high_byte_and_says_so(tmp_path):
    imgs = synthetic_frames(4)
    wide = [(img.astype(np.uint16) << 8) | np.uint16(0xAB) for img in imgs]
    b = Bag(tmp_path / "m16", "sqlite3")
    for i, img in enumerate(wide):
        if i % 2:
            b.image("/cam0/image_raw", T0 + i * STEP, img.byteswap(), encoding="mono16", big_endian=1)
        else:
            b.image("/cam0/image_raw", T0 + i * STEP, img, encoding="mono16")
    path = b.close()
    got = list(ros.frames(path, "/cam0/image_raw"))
    for f, img in zip(got, imgs):
        assert f.source_bits == 16
        np.testing.assert_array_equal(f.image, img)
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--out", tmp_path / "o"])
    assert code == 0, err
    assert "/cam0/image_raw message 0 is a 16-bit image: reduced to 8 bits by keeping the high byte" in err
    assert "4 of 4 frames were 16-bit" in err


def test_compressed_png_follows_the_tools_png_rule(tmp_path):
    """Colour PNG: libpng's rgb_to_gray weights, without and with a gAMA chunk (independent arithmetic here)."""
    PIL = pytest.importorskip("PIL.Image", reason="SKIPPED: Pillow is not installed (pip install pillow)")
    rng = np.random.default_rng(5)
    rgb = rng.integers(0, 256, (6, 9, 3), dtype=np.uint8)
    rgb[0, 0] = (40, 40, 40)
    buf = io.BytesIO()
    PIL.fromarray(rgb, "RGB").save(buf, "PNG")
    data = buf.getvalue()
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msg = ts.types["sensor_msgs/msg/CompressedImage"](header=None, format="rgb8; png compressed bgr8",
                                                      data=np.frombuffer(data, np.uint8).copy())
    grey, bits = ros.compressed_to_grey(msg)
    r, g, b = (rgb[..., i].astype(int) for i in range(3))
    want = np.where((r == g) & (g == b), r, (9797 * r + 19234 * g + (32768 - 9797 - 19234) * b) >> 15)
    np.testing.assert_array_equal(grey, want)
    assert bits == 8
    # 16-bit grey keeps the high byte
    buf = io.BytesIO()
    g16 = (rng.integers(0, 65536, (4, 5))).astype(np.uint16)
    PIL.fromarray(g16.astype(np.int32), "I").convert("I;16").save(buf, "PNG")
    msg16 = ts.types["sensor_msgs/msg/CompressedImage"](header=None, format="png",
                                                        data=np.frombuffer(buf.getvalue(), np.uint8).copy())
    grey16, bits16 = ros.compressed_to_grey(msg16)
    assert bits16 == 16
    np.testing.assert_array_equal(grey16, (g16 >> 8).astype(np.uint8))


def test_missing_decoder_and_missing_rosbags_say_what_to_install(monkeypatch, tmp_path):
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msg = ts.types["sensor_msgs/msg/CompressedImage"](header=None, format="jpeg",
                                                      data=np.frombuffer(b"\xff\xd8\xff\xe0rest", np.uint8).copy())
    monkeypatch.setattr(ros, "_decoders", lambda: (None, None))
    with pytest.raises(ros.MissingDependency, match="needs Pillow or OpenCV.*pip install pillow"):
        ros.compressed_to_grey(msg, "b.bag: topic /c: message 3")
    monkeypatch.setitem(sys.modules, "rosbags.highlevel", None)
    with pytest.raises(ros.MissingDependency, match=r"needs the 'rosbags' package.*pip install 'kestrel\[ros\]'"):
        ros.topics(tmp_path / "x.bag")
    code, _, err = run_track([tmp_path / "x.bag"])
    assert code == 1 and "pip install 'kestrel[ros]'" in err


# ---------------------------------------------------------------------------------------------------------------
# Errors: named with the file, the topic and the message index


def _bag_with(tmp_path, kind, fill):
    b = Bag(tmp_path / ("b_" + kind), kind)
    fill(b)
    return b.close()


@pytest.mark.parametrize("kind", KINDS)
def test_errors_name_topic_and_message(tmp_path, kind):
    imgs = synthetic_frames(5)

    def unknown_encoding(b):
        for i, img in enumerate(imgs):
            b.image("/cam0/image_raw", T0 + i * STEP, img, encoding="yuv422" if i == 3 else "mono8")

    def size_change(b):
        for i, img in enumerate(imgs):
            b.image("/cam0/image_raw", T0 + i * STEP, img[:200] if i == 2 else img)

    def time_back(b):
        for i, img in enumerate(imgs):
            b.image("/cam0/image_raw", T0 + (i if i != 4 else 2) * STEP, img)

    def wrong_type(b):
        b.image("/cam0/image_raw", T0, imgs[0])
        b.imu("/imu0", T0, (0, 0, 0))

    cases = [
        (unknown_encoding, ["--topic", "/cam0/image_raw"],
         "topic /cam0/image_raw: message 3: image encoding 'yuv422' is not supported"),
        (size_change, ["--topic", "/cam0/image_raw"],
         "topic /cam0/image_raw: message 2: the image is 320x200, the topic started at 320x240 (message 0)"),
        (time_back, ["--topic", "/cam0/image_raw"],
         "topic /cam0/image_raw: message 4: header stamp 1403636579.863555584 is before message 3's "
         "1403636579.913555584: the stamps must increase"),
        (wrong_type, ["--topic", "/imu0"], "topic /imu0 carries sensor_msgs/msg/Imu, not sensor_msgs/msg/Image"),
        (wrong_type, ["--topic", "/cam1/image_raw"], "no topic /cam1/image_raw in the bag; its topics are:"),
        (wrong_type, ["--topic", "/cam0/image_raw", "--camera-info-topic", "/imu0", "--reject-outliers"],
         "topic /imu0 carries sensor_msgs/msg/Imu, not sensor_msgs/msg/CameraInfo"),
    ]
    for i, (fill, args, want) in enumerate(cases):
        path = _bag_with(tmp_path / str(i), kind, fill)
        code, out, err = run_track([path] + args + ["--backend", "cpu", "--out", tmp_path / ("o%d" % i)])
        assert code == 1, (want, out, err)
        assert want in err, err
        assert path.name in err
    # the frames before the bad message are in the CSV, whole
    csv = (tmp_path / "o0" / "tracks.csv").read_text().splitlines()
    assert csv[0] == "frame,timestamp,id,x,y,level,status" and {r.split(",")[0] for r in csv[1:]} == {"0", "1", "2"}


@pytest.mark.parametrize("kind", KINDS)
def test_truncated_bag_is_a_clear_error(tmp_path, kind):
    b = Bag(tmp_path / "full", kind)
    for i, img in enumerate(synthetic_frames(8)):
        b.image("/cam0/image_raw", T0 + i * STEP, img)
    path = b.close()
    target = path if kind == "ros1" else storage_file(path)
    cut = tmp_path / ("cut" + target.suffix)
    data = target.read_bytes()
    cut.write_bytes(data[:len(data) // 2])
    code, out, err = run_track([cut, "--topic", "/cam0/image_raw", "--backend", "cpu", "--out", tmp_path / "o"])
    assert code == 1, out
    assert cut.name in err
    assert ("cannot read the bag" in err or "cannot be read (the file may be truncated or damaged)" in err
            or "no topic" in err), err
    # not a bag at all
    junk = tmp_path / "junk.bag"
    junk.write_bytes(b"not a bag\n" * 10)
    code, _, err = run_track([junk, "--topic", "/cam0/image_raw"])
    assert code == 1 and "junk.bag: cannot read the bag" in err
    code, _, err = run_track([tmp_path / "missing.mcap", "--topic", "/x"])
    assert code == 1 and "missing.mcap: no such file or folder" in err


def test_gap_is_noted_with_topic_and_index(tmp_path):
    b = Bag(tmp_path / "gap", "mcap")
    for i, img in enumerate(synthetic_frames(8)):
        b.image("/cam0/image_raw", T0 + (i if i < 5 else i + 2) * STEP, img)  # messages 5.. come 3 steps later
    path = b.close()
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--out", tmp_path / "o"])
    assert code == 0, err
    assert "topic /cam0/image_raw: message 5 comes 0.150 s after the previous one, 3.0 times the usual 0.050 s" in err
    assert "gaps              1 in /cam0/image_raw (the first at message 5)" in out


# ---------------------------------------------------------------------------------------------------------------
# CameraInfo and IMU


@pytest.mark.parametrize("kind", ("ros1", "mcap"))
def test_camera_info_models(tmp_path, kind):
    K = [458.654, 0, 367.215, 0, 457.296, 248.375, 0, 0, 1]
    b = Bag(tmp_path / "ci", kind)
    b.camera_info("/pb", T0, 752, 480, "plumb_bob", [-0.28, 0.07, 0.0002, 1.7e-5, 0.0], K)
    b.camera_info("/rp", T0, 752, 480, "rational_polynomial", [-0.28, 0.07, 0.0002, 1.7e-5, 0.01, 0, 0, 0], K)
    b.camera_info("/rp6", T0, 752, 480, "rational_polynomial", [-0.28, 0.07, 0.0002, 1.7e-5, 0.01, 0.2, 0, 0], K)
    b.camera_info("/eq", T0, 848, 800, "equidistant", [-0.01, 0.05, -0.05, 0.01],
                  [285.7, 0, 418.9, 0, 286.1, 411.3, 0, 0, 1])
    b.camera_info("/none", T0, 640, 480, "plumb_bob", [0, 0, 0, 0, 0], [500, 0, 320, 0, 500, 240, 0, 0, 1])
    b.camera_info("/kb", T0, 640, 480, "kannala_brandt", [0, 0, 0, 0], [500, 0, 320, 0, 500, 240, 0, 0, 1])
    path = b.close()
    cam, _ = ros.read_camera_info(path, "/pb")
    assert cam.model == kestrel.CameraModel.PinholeRadtan and (cam.width, cam.height) == (752, 480)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (458.654, 457.296, 367.215, 248.375)
    assert cam.d == pytest.approx([-0.28, 0.07, 0.0002, 1.7e-5, 0.0])
    cam, _ = ros.read_camera_info(path, "/rp")
    assert cam.model == kestrel.CameraModel.PinholeRadtan and cam.d == pytest.approx([-0.28, 0.07, 0.0002, 1.7e-5, 0.01])
    with pytest.raises(ros.BagError, match="topic /rp6: message 0: rational_polynomial with k4, k5, k6"):
        ros.read_camera_info(path, "/rp6")
    cam, _ = ros.read_camera_info(path, "/eq")
    assert cam.model == kestrel.CameraModel.Fisheye and cam.d == pytest.approx([-0.01, 0.05, -0.05, 0.01, 0.0])
    cam, _ = ros.read_camera_info(path, "/none")
    assert cam.model == kestrel.CameraModel.Pinhole
    with pytest.raises(ros.BagError, match="topic /kb: message 0: distortion model 'kannala_brandt' is not supported"):
        ros.read_camera_info(path, "/kb")


def test_gyro_integration_and_rotation_prior(tmp_path):
    # A constant rate about the IMU's z: the rotation over dt is exp(w dt); X_cur = R X_prev is its transpose.
    t = T0 + np.arange(0, 21) * 5_000_000  # 200 Hz
    w = np.tile([0.0, 0.0, 0.8], (len(t), 1))
    R = ros.gyro_rotation(t, w, T0 + 12_000_000, T0 + 62_000_000)
    a = 0.8 * 0.05
    Rz = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    np.testing.assert_allclose(R, Rz.T, atol=1e-12)
    # into the camera: R_BS^T R R_BS
    R_BS = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]]) @ np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0.0]])
    np.testing.assert_allclose(ros.gyro_rotation(t, w, T0, T0 + 50_000_000, R_BS), R_BS.T @ Rz.T @ R_BS, atol=1e-12)
    assert ros.gyro_rotation(t, w, T0 - 1, T0 + 10) is None  # not covered by the readings

    # The command passes it to the tracker's geometric check.
    imgs = synthetic_frames(6)
    b = Bag(tmp_path / "imu", "sqlite3")
    for i, img in enumerate(imgs):
        b.image("/cam0/image_raw", T0 + i * STEP, img)
        for k in range(10):
            b.imu("/imu0", T0 + i * STEP + k * 5_000_000, (0.0, 0.0, 0.0))
    b.camera_info("/cam0/camera_info", T0, 320, 240, "plumb_bob", [0] * 5, [300, 0, 160, 0, 300, 120, 0, 0, 1])
    path = b.close()
    calls = []
    real = kestrel.FeatureTracker

    class Spy:
        def __init__(self, *a):
            self.t = real(*a)

        def track(self, img, predictions=None, rotation_prior=None):
            assert predictions is None  # without --gyro-predict
            calls.append(None if rotation_prior is None else np.asarray(rotation_prior))
            return self.t.track(img, predictions, rotation_prior=rotation_prior)

        def __getattr__(self, name):
            return getattr(self.t, name)

    kestrel.FeatureTracker = Spy
    try:
        code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--imu-topic", "/imu0", "--camera-info-topic",
                                    "/cam0/camera_info", "--reject-outliers", "--imu-in-camera-axes", "--backend",
                                    "cpu", "--out", tmp_path / "o"])
    finally:
        kestrel.FeatureTracker = real
    assert code == 0, err
    assert "geometric check: camera /cam0/camera_info (Pinhole 320x240)" in out
    assert calls[0] is None and all(c is not None and np.allclose(c, np.eye(3)) for c in calls[1:5]), calls
    code, _, err = run_track([path, "--topic", "/cam0/image_raw", "--imu-topic", "/imu0"])
    assert code == 2 and "add --reject-outliers" in err


def _ry(a):
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def rotating_camera(n, step, f=300.0, size=(320, 240)):
    """Frames of a camera turning about its y axis by `step` rad a frame in front of a textured plane (z = 1 in the
    world), rendered exactly (bilinear): (frames, K, R_wc per frame)."""
    w, h = size
    tex = textured_image(700, 1400, seed=11).astype(np.float64)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1.0]])
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    rays = np.stack([(u - K[0, 2]) / f, (v - K[1, 2]) / f, np.ones_like(u)], -1)
    frames, rots = [], []
    for i in range(n):
        R = _ry(step * i)
        d = rays @ R.T
        x = d[..., 0] / d[..., 2] * f + 700.0  # the plane's texture: f px per unit, centred
        y = d[..., 1] / d[..., 2] * f + 350.0
        x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
        ax, ay = x - x0, y - y0
        x0, y0 = np.clip(x0, 0, 1398), np.clip(y0, 0, 698)
        img = ((1 - ay) * ((1 - ax) * tex[y0, x0] + ax * tex[y0, x0 + 1])
               + ay * ((1 - ax) * tex[y0 + 1, x0] + ax * tex[y0 + 1, x0 + 1]))
        frames.append(np.clip(np.rint(img), 0, 255).astype(np.uint8))
        rots.append(R)
    return frames, K, rots


def test_gyro_predictions_follow_a_fast_turn(tmp_path):
    """A camera turning 0.2 rad (about 60 px) a frame: LK alone loses the tracks, the gyro's predictions keep them,
    each within a fraction of a pixel of where the known rotation puts it."""
    step = 0.2
    frames, K, rots = rotating_camera(4, step)
    b = Bag(tmp_path / "turn", "mcap")
    for i, img in enumerate(frames):
        b.image("/cam0/image_raw", T0 + i * STEP, img)
    for k in range(0, 3 * 10 + 1):  # 200 Hz: a constant rate about the camera's y axis
        b.imu("/imu0", T0 + k * 5_000_000, (0.0, step / 0.05, 0.0))
    b.camera_info("/cam0/camera_info", T0, 320, 240, "plumb_bob", [0] * 5, K.reshape(-1))
    path = b.close()
    common = [path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--features", "150", "--camera-info-topic",
              "/cam0/camera_info"]
    code, out, err = run_track(common + ["--imu-topic", "/imu0", "--imu-in-camera-axes", "--gyro-predict", "--out",
                                         tmp_path / "gyro"])
    assert code == 0, err
    assert "the tracks' predicted positions" in out
    code, _, err = run_track(common + ["--out", tmp_path / "plain"])
    assert code == 0, err

    def survivors(d):
        rows = [r.split(",") for r in (d / "tracks.csv").read_text().splitlines()[1:]]
        first = {r[2]: np.array([float(r[3]), float(r[4])]) for r in rows if r[0] == "0"}
        return first, {r[2]: np.array([float(r[3]), float(r[4])]) for r in rows if r[0] == "2" and r[6] == "Tracked"
                       and r[2] in first}
    first, last = survivors(tmp_path / "gyro")
    _, plain_last = survivors(tmp_path / "plain")
    assert len(last) >= 20 and len(last) >= 3 * max(1, len(plain_last)), (len(last), len(plain_last))
    errs = []
    for tid, p5 in last.items():  # the truth: frame 0's ray seen from frame 2 (120 px on)
        ray = rots[2].T @ rots[0] @ np.array([(first[tid][0] - K[0, 2]) / K[0, 0], (first[tid][1] - K[1, 2]) / K[1, 1], 1])
        errs.append(np.hypot(*(K[:2, :2] @ (ray[:2] / ray[2]) + K[:2, 2] - p5)))
    assert np.median(errs) < 0.1 and max(errs) < 0.5, (np.median(errs), max(errs))  # today 0.026 and 0.20
    # predict_rotation itself: a point on the axis moves by f tan(step)
    cam = kestrel.Camera(width=320, height=240, fx=300, fy=300, cx=160, cy=120)
    p = ros.predict_rotation(cam, _ry(-step), [[160, 120]])
    np.testing.assert_allclose(p, [[160 - 300 * np.tan(step), 120]], atol=1e-3)


# ---------------------------------------------------------------------------------------------------------------
# Ctrl-C: a complete CSV of the frames done


def test_ctrl_c_leaves_a_complete_csv(tmp_path):
    imgs = synthetic_frames(60, h=480, w=640)
    b = Bag(tmp_path / "long", "mcap")
    for i, img in enumerate(imgs):
        b.image("/cam0/image_raw", T0 + i * STEP, img)
    path = b.close()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(kestrel.__file__).parents[1])] +
                                                      os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    p = subprocess.Popen([sys.executable, "-m", "kestrel.track", str(path), "--topic", "/cam0/image_raw", "--backend",
                          "cpu", "--features", "300", "--out", str(tmp_path / "o"), "--print-every", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in p.stdout:
        if line.startswith("frame     3"):
            p.send_signal(signal.SIGINT)
            break
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "Ctrl-C: stopping after this frame" in err and "interrupted:" in out
    rows = (tmp_path / "o" / "tracks.csv").read_text()
    n = int(out.split("holds the ")[1].split(" frames")[0])
    assert 4 <= n < 60
    want = expected_csv(imgs[:n], [T0 + i * STEP for i in range(n)], 300)
    assert rows == want


# ---------------------------------------------------------------------------------------------------------------
# EuRoC-layout folders of the test data's frames: the bag against the folder, through the C++ track_sequence


def vtest_frames(count):
    d = data_dir()
    if d is None or not (d / "vtest_000.png").exists():
        pytest.skip("SKIPPED: the test data's vtest frames are not found: set KESTREL_TEST_DATA to the build's "
                    "testdata/ (the 'kestrel_testdata' target)")
    return [d / ("vtest_%03d.png" % i) for i in range(count)]


def make_euroc(dst, files, cams=("cam0",), sensors=None):
    """The folder make_euroc.cmake makes: mav0/<cam>/data.csv and data/<ns>.<ext> at 20 Hz from T0."""
    stamps = [T0 + i * STEP for i in range(len(files[cams[0]]))]
    for cam in cams:
        (dst / "mav0" / cam / "data").mkdir(parents=True)
        lines = ["#timestamp [ns],filename"]
        for t, f in zip(stamps, files[cam]):
            name = "%d%s" % (t, Path(f).suffix)
            shutil.copyfile(f, dst / "mav0" / cam / "data" / name)
            lines.append("%d,%s" % (t, name))
        (dst / "mav0" / cam / "data.csv").write_text("\r\n".join(lines) + "\r\n")
        if sensors:
            shutil.copyfile(sensors[cam], dst / "mav0" / cam / "sensor.yaml")
    return stamps


def track_sequence_binary():
    env = os.environ.get("KESTREL_TRACK_SEQUENCE")
    if env:
        return env
    for b in sorted(ROOT.glob("build*/examples/track_sequence")):
        if os.access(b, os.X_OK):
            return str(b)
    return None


def cpp_csv(tmp_path, args, name):
    exe = track_sequence_binary()
    if exe is None:
        pytest.skip("SKIPPED: the C++ track_sequence is not built (KESTREL_TRACK_SEQUENCE or "
                    "build*/examples/track_sequence): the bag was checked against the Python API only")
    out = tmp_path / name
    r = subprocess.run([exe] + [str(a) for a in args] + ["--backend", "cpu", "--no-draw", "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return (out / "tracks.csv").read_text(), r.stdout


def decode_png_grey(path):
    ts = get_typestore(Stores.ROS2_HUMBLE)
    msg = ts.types["sensor_msgs/msg/CompressedImage"](header=None, format="png",
                                                      data=np.frombuffer(Path(path).read_bytes(), np.uint8).copy())
    return ros.compressed_to_grey(msg)[0]


@pytest.mark.parametrize("kind,how", [("ros1", "raw"), ("sqlite3", "png"), ("mcap", "raw"), ("mcap", "png")])
def test_euroc_folder_and_bag_give_the_same_tracks(tmp_path, kind, how):
    pytest.importorskip("PIL.Image", reason="SKIPPED: Pillow is not installed (pip install pillow)")
    files = vtest_frames(8)
    stamps = make_euroc(tmp_path / "euroc", {"cam0": files})
    b = Bag(tmp_path / "vt", kind)
    greys = []
    for f, t in zip(files, stamps):
        greys.append(decode_png_grey(f))
        if how == "png":
            b.compressed("/cam0/image_raw/compressed", t, f.read_bytes(), "mono8; png compressed")
        else:
            b.image("/cam0/image_raw", t, greys[-1])
    path = b.close()
    topic = "/cam0/image_raw/compressed" if how == "png" else "/cam0/image_raw"
    code, out, err = run_track([path, "--topic", topic, "--backend", "cpu", "--features", "100", "--out",
                                tmp_path / "py"])
    assert code == 0, err
    got = (tmp_path / "py" / "tracks.csv").read_text()
    assert got == expected_csv(greys, stamps, 100)
    want, cpp_out = cpp_csv(tmp_path, [tmp_path / "euroc", "--features", "100"], "cpp")
    assert got == want
    # the same summary, line for line (but the timings)
    def summary(text):
        lines = text.split("summary of the run")[1].splitlines()
        return [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("frames ")]
    assert summary(out) == summary(cpp_out)


def test_reject_outliers_matches_the_cpp_tool(tmp_path):
    """The geometric check with the camera of a sensor.yaml: the same Outlier rows as track_sequence's."""
    files = vtest_frames(10)
    yaml = tmp_path / "cam0.yaml"
    yaml.write_text((ROOT / "examples" / "data" / "euroc_cam0_sensor.yaml").read_text()
                    .replace("resolution: [752, 480]", "resolution: [768, 576]"))
    stamps = make_euroc(tmp_path / "euroc", {"cam0": files})
    b = Bag(tmp_path / "vt", "ros1")
    for f, t in zip(files, stamps):
        b.image("/cam0/image_raw", t, decode_png_grey(f))
    path = b.close()
    args = ["--features", "200", "--reject-outliers", "--sensor", yaml, "--outlier-threshold", "0.5"]
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--out", tmp_path / "py"]
                               + args)
    assert code == 0, err
    assert "geometric check: camera %s (PinholeRadtan 768x576), threshold 0.5 px" % yaml in out
    got = (tmp_path / "py" / "tracks.csv").read_text()
    want, cpp_out = cpp_csv(tmp_path, [tmp_path / "euroc"] + args, "cpp")
    assert got == want
    assert ",Outlier\n" in got  # the check did end tracks (the vtest scene moves people, not the camera)


def test_motion_options_match_the_cpp_tool(tmp_path):
    """--full-search and --no-motion-prediction set TrackerConfig.motion as track_sequence's do, and change the
    tracks (a flag that did nothing would leave the default run's CSV)."""
    files = vtest_frames(10)
    stamps = make_euroc(tmp_path / "euroc", {"cam0": files})
    b = Bag(tmp_path / "vt", "ros1")
    for f, t in zip(files, stamps):
        b.image("/cam0/image_raw", t, decode_png_grey(f))
    path = b.close()
    base = [path, "--topic", "/cam0/image_raw", "--backend", "cpu", "--features", "150"]
    code, _, err = run_track(base + ["--out", tmp_path / "default"])
    assert code == 0, err
    default = (tmp_path / "default" / "tracks.csv").read_text()
    for flags, motion in ((["--full-search"], (True, False)), (["--no-motion-prediction"], (False, True)),
                          (["--full-search", "--no-motion-prediction"], (False, False))):
        opts = ktrack._parser().parse_args([str(path), "--topic", "/cam0/image_raw"] + flags)
        m = ktrack.tracker_config(opts).motion
        assert (m.constant_velocity, m.fewer_levels) == motion
        out = tmp_path / ("py" + "".join(f[2:4] for f in flags))
        code, _, err = run_track(base + flags + ["--out", out])
        assert code == 0, err
        got = (out / "tracks.csv").read_text()
        assert got != default
        want, _ = cpp_csv(tmp_path, [tmp_path / "euroc", "--features", "150"] + flags, "cpp" + out.name)
        assert got == want


def test_colour_png_and_jpeg_bags_match_the_cpp_folder(tmp_path):
    """Colour PNG (the tools' libpng rule) and JPEG (libjpeg's luma) frames: the folder through the C++ tool, the
    same files as CompressedImage messages through the bag."""
    PIL = pytest.importorskip("PIL.Image", reason="SKIPPED: Pillow is not installed (pip install pillow)")
    d = data_dir()
    if d is None or not (d / "graf1.png").exists():
        pytest.skip("SKIPPED: graf1.png of the test data not found (KESTREL_TEST_DATA)")
    grey = np.asarray(PIL.open(d / "graf1.png").convert("L"))[:360, :480]
    photo = np.dstack([grey, np.roll(grey, 7, 1), 255 - np.roll(grey, 3, 0)])  # colour: the channels differ
    for ext in ("png", "jpg"):
        files = []
        (tmp_path / ext).mkdir()
        for i in range(6):
            p = tmp_path / ext / ("f%d.%s" % (i, ext))
            PIL.fromarray(np.ascontiguousarray(np.roll(photo, (i, 2 * i), (0, 1)))).save(p, quality=90)
            if ext == "png" and i % 2:  # odd frames carry a gAMA chunk (1/2.2): libpng's gamma path
                data = p.read_bytes()
                body = b"gAMA" + (45455).to_bytes(4, "big")
                chunk = (4).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
                p.write_bytes(data[:33] + chunk + data[33:])  # after the signature and IHDR
            files.append(p)
        stamps = make_euroc(tmp_path / ("euroc_" + ext), {"cam0": files})
        b = Bag(tmp_path / ("bag_" + ext), "mcap")
        for f, t in zip(files, stamps):
            b.compressed("/cam/compressed", t, f.read_bytes(), "rgb8; %s compressed bgr8" % ("png" if ext == "png"
                                                                                            else "jpeg"))
        path = b.close()
        code, out, err = run_track([path, "--topic", "/cam/compressed", "--backend", "cpu", "--features", "150",
                                    "--out", tmp_path / ("py_" + ext)])
        assert code == 0, err
        got = (tmp_path / ("py_" + ext) / "tracks.csv").read_text()
        assert len(got.splitlines()) > 300
        want, _ = cpp_csv(tmp_path, [tmp_path / ("euroc_" + ext), "--features", "150"], "cpp_" + ext)
        assert got == want, "%s: the bag's tracks differ from track_sequence's on the folder (decoder: %s)" % (
            ext, ros.decoder_name())


def test_stereo_bag_matches_the_cpp_stereo_folder(tmp_path):
    """Stereo: cam0 and cam1 with EuRoC's sensor.yaml pair, through the bag (--right-topic, --sensor,
    --right-sensor) and through track_sequence --stereo on the folder."""
    files = vtest_frames(6)
    right = []
    (tmp_path / "r").mkdir()
    PIL = pytest.importorskip("PIL.Image", reason="SKIPPED: Pillow is not installed (pip install pillow)")
    for i, f in enumerate(files):  # the right camera: the same scene 12 px to the left
        p = tmp_path / "r" / ("r%d.png" % i)
        PIL.fromarray(shifted(decode_png_grey(f), -12, 0)).save(p)
        right.append(p)
    # A raw rig of two undistorted cameras 0.11 m apart along x (sensor.yaml, the EuRoC layout): the right image,
    # the left one moved 12 px to the left, is a scene at depth f * B / 12.
    tmpl = """sensor_type: camera
T_BS:
  cols: 4
  rows: 4
  data: [1.0, 0.0, 0.0, %s, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]
rate_hz: 20
resolution: [768, 576]
camera_model: pinhole
intrinsics: [450.0, 450.0, 384.0, 288.0]
distortion_model: none
distortion_coefficients: []
"""
    sens = {}
    for cam, x in (("cam0", "0.0"), ("cam1", "0.11")):
        sens[cam] = tmp_path / (cam + ".yaml")
        sens[cam].write_text(tmpl % x)
    stamps = make_euroc(tmp_path / "euroc", {"cam0": files, "cam1": right}, ("cam0", "cam1"), sens)
    b = Bag(tmp_path / "st", "mcap")
    for fl, fr, t in zip(files, right, stamps):
        b.image("/cam0/image_raw", t, decode_png_grey(fl))
        b.image("/cam1/image_raw", t, decode_png_grey(fr))
    path = b.close()
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--right-topic", "/cam1/image_raw", "--sensor",
                                sens["cam0"], "--right-sensor", sens["cam1"], "--backend", "cpu", "--features", "100",
                                "--out", tmp_path / "py"])
    assert code == 0, err
    got = (tmp_path / "py" / "tracks.csv").read_text()
    assert got.startswith("frame,timestamp,id,x,y,level,status,right_x,right_y,disparity,depth,stereo_status\n")
    assert ",Matched\n" in got and "summary of the run (stereo)" in out
    want, _ = cpp_csv(tmp_path, [tmp_path / "euroc", "--stereo", "--features", "100"], "cpp")
    assert got == want


@pytest.mark.parametrize("kind", KINDS)
def test_stereo_bag_gives_the_api_tracks(tmp_path, kind):
    """Left and right interleaved in the bag, paired by stamp: the StereoTracker's rows of the same pairs."""
    left = synthetic_frames(8)
    right = [shifted(img, -9, 0) for img in left]
    stamps = [T0 + i * STEP for i in range(len(left))]
    b = Bag(tmp_path / "st", kind)
    for l_img, r_img, t in zip(left, right, stamps):
        b.image("/cam1/image_raw", t, r_img)  # the right one first: the bag's order does not matter
        b.image("/cam0/image_raw", t, l_img)
    path = b.close()
    code, out, err = run_track([path, "--topic", "/cam0/image_raw", "--right-topic", "/cam1/image_raw", "--rectified",
                                "300,160,120,0.1", "--backend", "cpu", "--features", "120", "--out", tmp_path / "o"])
    assert code == 0, err
    rig = kestrel.rectified_rig(300, 160, 120, 0.1)
    trk = kestrel.StereoTracker(320, 240, rig, kestrel.StereoConfig(tracker=kestrel.TrackerConfig(target_features=120)),
                                kestrel.Backend.Cpu)
    want = "frame,timestamp,id,x,y,level,status,right_x,right_y,disparity,depth,stereo_status\n"
    for n, (l_img, r_img, t) in enumerate(zip(left, right, stamps)):
        live = trk.track(l_img, r_img)
        want += ktrack.stereo_rows(n, ros._seconds(t), live, trk.lost_tracks)
    got = (tmp_path / "o" / "tracks.csv").read_text()
    assert got == want
    matched = [r.split(",") for r in got.splitlines()[1:] if r.endswith(",Matched")]
    assert len(matched) > 100 and np.median([float(r[9]) for r in matched]) == pytest.approx(9.0, abs=0.05)


def test_stereo_pairing_errors(tmp_path):
    imgs = synthetic_frames(4)
    b = Bag(tmp_path / "sp", "sqlite3")
    for i, img in enumerate(imgs):
        b.image("/l", T0 + i * STEP, img)
        if i != 1:
            b.image("/r", T0 + i * STEP, img)
    path = b.close()
    code, _, err = run_track([path, "--topic", "/l", "--right-topic", "/r", "--rectified", "300,160,120,0.1",
                              "--backend", "cpu", "--out", tmp_path / "o"])
    assert code == 1
    assert "topic /l: message 1: stamp 1403636579.813555584 has no right image on /r" in err
    code, _, err = run_track([path, "--topic", "/l", "--right-topic", "/r", "--backend", "cpu"])
    assert code == 2 and "the stereo rig is needed" in err


def test_stereo_rig_from_camera_infos():
    """A ROS stereo calibration (K, D, R, P of both): the raw rig's R_rl = R_r^T R_l, t_rl = -R_r^T (B, 0, 0)."""
    ts = get_typestore(Stores.ROS2_HUMBLE)
    T = ts.types
    a = 0.05
    Rl = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
    Rr = np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])
    K = [400, 0, 320, 0, 400, 240, 0, 0, 1]

    def info(R, P):
        roi = T["sensor_msgs/msg/RegionOfInterest"](x_offset=0, y_offset=0, height=0, width=0, do_rectify=False)
        return T["sensor_msgs/msg/CameraInfo"](header=None, height=480, width=640, distortion_model="plumb_bob",
                                               d=np.array([0.1, -0.05, 0, 0, 0.0]), k=np.array(K, float),
                                               r=R.reshape(-1), p=np.array(P, float), binning_x=0, binning_y=0, roi=roi)
    rig = ros.rig_from_infos(info(Rl, [400, 0, 320, 0, 0, 400, 240, 0, 0, 0, 1, 0]),
                             info(Rr, [400, 0, 320, -400 * 0.11, 0, 400, 240, 0, 0, 0, 1, 0]))
    assert rig.type == kestrel.RigType.Raw
    np.testing.assert_allclose(np.reshape(rig.R_rl, (3, 3)), Rr.T @ Rl, atol=1e-12)
    np.testing.assert_allclose(rig.t_rl, -Rr.T @ np.array([0.11, 0, 0]), atol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# sensor.yaml


def test_sensor_yaml_reader(tmp_path):
    cam, T = ktrack.read_sensor_yaml(ROOT / "examples" / "data" / "euroc_cam0_sensor.yaml")
    assert cam.model == kestrel.CameraModel.PinholeRadtan and (cam.width, cam.height) == (752, 480)
    assert (cam.fx, cam.fy, cam.cx, cam.cy) == (458.654, 457.296, 367.215, 248.375)
    assert T[0] == 0.0148655429818 and T[15] == 1.0
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "examples" / "data" / "euroc_cam0_sensor.yaml").read_text()
                   .replace("distortion_model: radial-tangential", "distortion_model: omni"))
    with pytest.raises(ktrack.SensorYamlError, match=r"bad.yaml:19: distortion_model 'omni' is not supported"):
        ktrack.read_sensor_yaml(bad)
