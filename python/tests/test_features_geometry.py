"""The matcher (CPU reference and HammingMatcher) and the camera functions from Python."""
import numpy as np
import pytest

import kestrel
from conftest import textured_image


def random_descriptors(n, seed):
    return np.random.default_rng(seed).integers(0, 256, size=(n, 32), dtype=np.uint8)


def flip_bits(d, k, seed):
    """d with k distinct bits flipped in every row."""
    rng = np.random.default_rng(seed)
    out = d.copy()
    for row in out:
        for b in rng.choice(256, size=k, replace=False):
            row[b // 8] ^= np.uint8(1 << (b % 8))
    return out


def test_match_known_distances():
    train = random_descriptors(50, 1)
    query = flip_bits(train[::-1], 5, 2)  # query i is train 49 - i with 5 bits flipped
    m = kestrel.match_cpu(query, train, kestrel.MatcherConfig(ratio=1.0))
    assert m.dtype == kestrel.MATCH_DTYPE and m.dtype.names == ("train", "distance", "second")
    np.testing.assert_array_equal(m["train"], np.arange(49, -1, -1))
    np.testing.assert_array_equal(m["distance"], 5)
    assert (m["second"] > 60).all()  # random descriptors are ~128 bits apart
    matcher = kestrel.HammingMatcher(kestrel.MatcherConfig(ratio=1.0), capacity=64, backend=kestrel.Backend.Cpu)
    np.testing.assert_array_equal(matcher.match(query, train), m)


def test_match_orb_descriptors_of_a_shifted_image():
    base = textured_image(240, 320, seed=3)
    det = kestrel.FeatureDetector(kestrel.DetectorConfig(orb_descriptors=True), backend=kestrel.Backend.Cpu)
    k0 = det.detect(base)
    d0 = det.descriptors
    moved = np.zeros_like(base)
    moved[:, 8:] = base[:, :-8]
    k1 = det.detect(moved)
    d1 = det.descriptors
    cfg = kestrel.MatcherConfig(cross_check=True, max_distance=40)
    m = kestrel.match_cpu(d1, d0, cfg)
    good = m["train"] >= 0
    assert good.sum() >= 48  # today 52 of 80 keypoints matched
    # A whole-pixel shift moves the keypoints (levels 0 and 1) by exactly 8 px: every match is exact.
    np.testing.assert_array_equal(k1["x"][good] - k0["x"][m["train"][good]], 8.0)
    np.testing.assert_array_equal(k1["y"][good], k0["y"][m["train"][good]])
    # a radius around predicted positions: the same matches when the prediction is right
    pos0 = np.stack([k0["x"], k0["y"]], 1)
    pos1 = np.stack([k1["x"] - 8, k1["y"]], 1)
    r = kestrel.match_cpu(d1, d0, kestrel.MatcherConfig(cross_check=True, max_distance=40, radius=4),
                          query_pos=pos1, train_pos=pos0)
    assert (r["train"][good] == m["train"][good]).mean() > 0.9


def test_matcher_bad_inputs():
    d = random_descriptors(4, 5)
    with pytest.raises(kestrel.InvalidArgument, match="query.*32 columns"):
        kestrel.match_cpu(d[:, :16], d)
    with pytest.raises(TypeError, match="train.*uint8"):
        kestrel.match_cpu(d, d.astype(np.float32))
    with pytest.raises(kestrel.InvalidArgument, match="ratio"):
        kestrel.MatcherConfig(ratio=0.0)
    with pytest.raises(kestrel.InvalidArgument, match="train_pos"):
        kestrel.match_cpu(d, d, kestrel.MatcherConfig(radius=3), query_pos=np.zeros((4, 2)),
                          train_pos=np.zeros((3, 2)))
    m = kestrel.HammingMatcher(capacity=2, backend=kestrel.Backend.Cpu)
    with pytest.raises(kestrel.InvalidArgument):
        m.match(d, d)  # more than the capacity


def test_camera_project_unproject_round_trip():
    cam = kestrel.Camera(model=kestrel.CameraModel.PinholeRadtan, width=752, height=480, fx=458.654, fy=457.296,
                         cx=367.215, cy=248.375, d=(-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05, 0.0))
    xy = np.stack(np.meshgrid(np.linspace(-0.6, 0.6, 7), np.linspace(-0.4, 0.4, 5)), -1).reshape(-1, 2)
    px = kestrel.project(cam, xy)
    assert px.shape == xy.shape and px.dtype == np.float64
    back, status = kestrel.unproject(cam, px.astype(np.float32))
    assert (status == kestrel.UnprojectStatus.Ok).all()
    # pixels were rounded to float32 (as keypoints are): back within what that rounding allows
    np.testing.assert_allclose(back, xy, atol=1e-5)
    _, st = kestrel.unproject(cam, [[np.nan, 1.0]])
    assert st[0] == kestrel.UnprojectStatus.NonFinite
    with pytest.raises(kestrel.InvalidArgument, match="fx"):
        kestrel.Camera(width=640, height=480, fx=-1, fy=500, cx=320, cy=240)
    with pytest.raises(kestrel.InvalidArgument, match="pixels.*shape"):
        kestrel.unproject(cam, np.zeros((3, 3)))


def rotation_y(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def test_relative_pose_recovers_a_known_motion():
    rng = np.random.default_rng(7)
    X1 = np.stack([rng.uniform(-2, 2, 200), rng.uniform(-1.5, 1.5, 200), rng.uniform(4, 10, 200)], 1)
    R = rotation_y(10.0)
    t = np.array([1.0, 0.0, 0.2])
    t /= np.linalg.norm(t)
    X2 = X1 @ R.T + t
    x1 = X1[:, :2] / X1[:, 2:]
    x2 = X2[:, :2] / X2[:, 2:]
    outliers = rng.choice(200, size=40, replace=False)
    x2[outliers] += rng.uniform(-0.2, 0.2, size=(40, 2))
    est = kestrel.RelativePoseEstimator(200, kestrel.RelativePoseConfig(focal_px=500, seed=3),
                                        backend=kestrel.Backend.Cpu)
    res, mask = est.estimate(x1, x2)
    assert res.status == kestrel.PoseStatus.Ok
    np.testing.assert_allclose(res.R, R, atol=1e-6)
    np.testing.assert_allclose(res.t, t, atol=1e-6)
    assert mask.dtype == bool and mask.shape == (200,)
    inlier = np.ones(200, bool)
    inlier[outliers] = False
    assert (mask[inlier]).all() and mask.sum() == res.inliers and res.inliers <= 200 - 30
    again, mask2 = est.estimate(x1, x2)  # same input, same seed: the same result
    np.testing.assert_array_equal(again.R, res.R)
    np.testing.assert_array_equal(mask2, mask)
    few, _ = est.estimate(x1[:3], x2[:3])
    assert few.status == kestrel.PoseStatus.TooFewPoints
    with pytest.raises(kestrel.InvalidArgument, match="x2"):
        est.estimate(x1, x2[:10])
    with pytest.raises(kestrel.InvalidArgument, match="confidence"):
        kestrel.RelativePoseConfig(confidence=1.5)
