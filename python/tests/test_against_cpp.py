"""The bindings against the C++ API on the same frames: kestrel_pyref (python/tests/pyref.cpp) runs the C++
FeatureDetector and FeatureTracker on the real test images and writes the frames it ran on and its results; the
module must give exactly the same on those frames (every float compared bit for bit: the CSV prints %.9g, which
round-trips float32)."""
import numpy as np
import pytest

import kestrel
from conftest import cuda_or_skip, read_pgm, real_image_path, run_pyref

DETECT_IMAGES = ["graf1.png", "box.png", "vtest_000.png", "basketball1.png", "chessboard.png"]
TRACK_FRAMES = ["vtest_%03d.png" % i for i in range(8)]


def read_csv(path):
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    return [dict(zip(header, line.split(","))) for line in lines[1:]]


def check_keypoints(out, kps, angles, descriptors):
    rows = read_csv(out / "keypoints.csv")
    assert len(rows) == len(kps) and len(rows) > 0
    np.testing.assert_array_equal(kps["x"], np.array([r["x"] for r in rows], np.float32))
    np.testing.assert_array_equal(kps["y"], np.array([r["y"] for r in rows], np.float32))
    np.testing.assert_array_equal(kps["level"], np.array([r["level"] for r in rows], np.int32))
    np.testing.assert_array_equal(kps["score"], np.array([r["score"] for r in rows], np.float32))
    np.testing.assert_array_equal(angles, np.array([r["angle"] for r in rows], np.float32))
    want = np.array([np.frombuffer(bytes.fromhex(r["descriptor"]), np.uint8) for r in rows])
    np.testing.assert_array_equal(descriptors, want)


def check_tracks(path, per_frame):
    rows = read_csv(path)
    for frame, got in enumerate(per_frame):
        mine = [r for r in rows if int(r["frame"]) == frame]
        assert len(mine) == len(got), "frame %d: %d tracks in C++, %d in Python" % (frame, len(mine), len(got))
        for field in kestrel.TRACK_DTYPE.names:
            want = np.array([r[field] for r in mine]).astype(kestrel.TRACK_DTYPE[field])
            np.testing.assert_array_equal(got[field], want, err_msg="frame %d field %s" % (frame, field))


@pytest.mark.parametrize("name", DETECT_IMAGES)
def test_detect_identical_to_cpp(tmp_path, name):
    out = run_pyref(tmp_path, "detect", "cpu", [real_image_path(name)])
    frame = read_pgm(out / "frame.pgm")
    det = kestrel.FeatureDetector(kestrel.DetectorConfig(orb_descriptors=True), backend=kestrel.Backend.Cpu)
    kps = det.detect(frame)
    check_keypoints(out, kps, det.angles, det.descriptors)
    np.testing.assert_array_equal(kps, kestrel.detect_cpu(frame, kestrel.DetectorConfig()))


def test_track_identical_to_cpp(tmp_path):
    out = run_pyref(tmp_path, "track", "cpu", [real_image_path(n) for n in TRACK_FRAMES])
    frames = [read_pgm(out / ("frame_%03d.pgm" % i)) for i in range(len(TRACK_FRAMES))]
    h, w = frames[0].shape
    trk = kestrel.FeatureTracker(w, h, kestrel.TrackerConfig(), backend=kestrel.Backend.Cpu)
    live, lost = [], []
    for f in frames:
        live.append(trk.track(f))
        lost.append(trk.lost_tracks)
    assert sum(len(x) for x in lost) > 0  # the sequence does lose tracks: that path is compared too
    check_tracks(out / "tracks.csv", live)
    check_tracks(out / "lost.csv", lost)


# ---- GPU (run on the GPU machine; skipped without a device) ------------------------------------------

@pytest.mark.parametrize("name", ["graf1.png", "vtest_000.png"])
def test_detect_cuda_identical_to_cpp(tmp_path, name):
    cuda_or_skip()
    out = run_pyref(tmp_path, "detect", "cuda", [real_image_path(name)])
    frame = read_pgm(out / "frame.pgm")
    det = kestrel.FeatureDetector(kestrel.DetectorConfig(orb_descriptors=True), backend=kestrel.Backend.Cuda)
    kps = det.detect(frame)
    check_keypoints(out, kps, det.angles, det.descriptors)


def test_track_cuda_identical_to_cpp(tmp_path):
    cuda_or_skip()
    out = run_pyref(tmp_path, "track", "cuda", [real_image_path(n) for n in TRACK_FRAMES])
    frames = [read_pgm(out / ("frame_%03d.pgm" % i)) for i in range(len(TRACK_FRAMES))]
    h, w = frames[0].shape
    trk = kestrel.FeatureTracker(w, h, kestrel.TrackerConfig(), backend=kestrel.Backend.Cuda)
    live, lost = [], []
    for f in frames:
        live.append(trk.track(f))
        lost.append(trk.lost_tracks)
    check_tracks(out / "tracks.csv", live)
    check_tracks(out / "lost.csv", lost)
