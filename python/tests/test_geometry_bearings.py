"""The bearing API from Python: unproject_bearing, pixels_per_radian, RelativePoseEstimator.estimate_bearings and
(with a GPU and CuPy or PyTorch) the device entry, on a fisheye whose points reach beyond 90 degrees."""
import numpy as np
import pytest

import kestrel


def fisheye():
    return kestrel.Camera(model=kestrel.CameraModel.Fisheye, width=512, height=512, fx=190.978, fy=190.973,
                          cx=254.932, cy=256.897, d=(0.00348238, 0.000715034, -0.00205323, 0.000202937, 0.0))


def rotation_y(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def test_unproject_bearing_beyond_90_degrees_and_pixels_per_radian():
    cam = fisheye()
    # The image's corner is about 95 degrees off the axis: a bearing with z < 0, where no normalized point exists.
    b, status = kestrel.unproject_bearing(cam, [[cam.cx, cam.cy], [2.0, 2.0], [np.nan, 1.0]])
    assert b.shape == (3, 3) and b.dtype == np.float64 and status.shape == (3,)
    assert status[0] == int(kestrel.UnprojectStatus.Ok) and status[1] == int(kestrel.UnprojectStatus.Ok)
    assert status[2] == int(kestrel.UnprojectStatus.NonFinite) and np.isnan(b[2]).all()
    np.testing.assert_allclose(b[0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(b[:2], axis=1), 1.0, atol=1e-12)
    assert b[1, 2] < 0.0, "the corner of this fisheye lies beyond 90 degrees"
    _, st = kestrel.unproject(cam, [[2.0, 2.0]])
    assert st[0] != kestrel.UnprojectStatus.Ok  # the normalized-point path cannot take it
    s = kestrel.pixels_per_radian(cam, b[:2])
    assert s.shape == (2,)
    assert abs(s[0] - 0.5 * (cam.fx + cam.fy)) < 1e-9 * cam.fx  # on the axis: the focal length
    assert 0.5 * cam.fx < s[1] < 2.0 * cam.fx
    assert np.isnan(kestrel.pixels_per_radian(kestrel.Camera(width=64, height=64, fx=50, fy=50, cx=32, cy=32),
                                              [[0.0, 0.0, -1.0]])[0])  # a pinhole sees nothing behind it
    with pytest.raises(kestrel.InvalidArgument, match="bearings.*shape"):
        kestrel.pixels_per_radian(cam, np.zeros((2, 2)))
    with pytest.raises(kestrel.InvalidArgument, match="pixels.*shape"):
        kestrel.unproject_bearing(cam, np.zeros((2, 3)))


def fisheye_scene(seed, n=300, outliers=60):
    """Points all around a fisheye (up to 95 degrees off its axis), seen before and after a known motion, projected
    to pixels, 0.3 px of noise, some correspondences replaced by random pixels. Returns the pixels, R, t, the truth."""
    cam = fisheye()
    rng = np.random.default_rng(seed)
    R = rotation_y(4.0)
    t = np.array([0.3, 0.05, 0.1])
    t /= np.linalg.norm(t)
    px1, px2 = [], []
    while len(px1) < n:
        q = rng.uniform([2, 2], [510, 510])
        b, st = kestrel.unproject_bearing(cam, [q])
        if st[0] != int(kestrel.UnprojectStatus.Ok):
            continue
        X = b[0] * rng.uniform(4.0, 10.0)
        Y = R @ X + t
        b2 = Y / np.linalg.norm(Y)
        # project b2 through the equidistant model: theta -> theta_d -> pixel
        theta = np.arccos(np.clip(b2[2], -1, 1))
        k = cam.d
        theta_d = theta * (1 + k[0] * theta**2 + k[1] * theta**4 + k[2] * theta**6 + k[3] * theta**8)
        r = np.hypot(b2[0], b2[1])
        if r < 1e-12:
            continue
        p2 = np.array([cam.fx * theta_d * b2[0] / r + cam.cx, cam.fy * theta_d * b2[1] / r + cam.cy])
        if not (0 <= p2[0] < 512 and 0 <= p2[1] < 512):
            continue
        px1.append(q)
        px2.append(p2)
    px1 = np.array(px1) + rng.normal(0, 0.3, (n, 2))
    px2 = np.array(px2) + rng.normal(0, 0.3, (n, 2))
    bad = rng.choice(n, size=outliers, replace=False)
    px2[bad] = rng.uniform(2, 510, (outliers, 2))
    truth = np.ones(n, bool)
    truth[bad] = False
    return cam, px1, px2, R, t, truth


def test_estimate_bearings_on_a_wide_fisheye():
    cam, px1, px2, R, t, truth = fisheye_scene(11)
    b1, s1 = kestrel.unproject_bearing(cam, px1)
    b2, s2 = kestrel.unproject_bearing(cam, px2)
    ok = (s1 == 0) & (s2 == 0)
    assert (b1[ok][:, 2] < 0).any(), "the scene must have points beyond 90 degrees"
    scale = 0.5 * (kestrel.pixels_per_radian(cam, b1[ok]) + kestrel.pixels_per_radian(cam, b2[ok]))
    est = kestrel.RelativePoseEstimator(len(px1), kestrel.RelativePoseConfig(threshold_px=1.5, seed=5),
                                        backend=kestrel.Backend.Cpu)
    res, mask = est.estimate_bearings(b1[ok], b2[ok], pixels_per_radian=scale)
    assert res.status == kestrel.PoseStatus.Ok
    np.testing.assert_allclose(res.R, R, atol=5e-3)
    assert np.dot(res.t, t) > 0.99
    recall = (mask & truth[ok]).sum() / truth[ok].sum()
    precision = (mask & truth[ok]).sum() / max(mask.sum(), 1)
    assert recall > 0.9 and precision > 0.97, (recall, precision)
    assert mask.dtype == bool and mask.sum() == res.inliers
    # The two-point entry with the true rotation: the same inliers, up to a few at the threshold.
    c2 = kestrel.RelativePoseConfig(threshold_px=1.5, seed=5, method=kestrel.PoseMethod.TwoPointWithRotation)
    est2 = kestrel.RelativePoseEstimator(len(px1), c2, backend=kestrel.Backend.Cpu)
    res2, mask2 = est2.estimate_bearings(b1[ok], b2[ok], rotation_prior=R, pixels_per_radian=scale)
    assert res2.status == kestrel.PoseStatus.Ok and (mask2 != mask).sum() <= 5
    with pytest.raises(kestrel.InvalidArgument, match="rotation_prior"):
        est2.estimate_bearings(b1[ok], b2[ok], rotation_prior=2 * np.eye(3))
    with pytest.raises(kestrel.InvalidArgument, match="pixels_per_radian"):
        est.estimate_bearings(b1[ok], b2[ok], pixels_per_radian=scale[:3])
    with pytest.raises(kestrel.InvalidArgument, match="b2"):
        est.estimate_bearings(b1[ok], b2[ok][:5])
    with pytest.raises(kestrel.StateError, match="Backend.Cuda"):
        est.estimate_device(b1, b2)


def device_module():
    for name in ("cupy", "torch"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        if name == "torch" and not mod.cuda.is_available():
            continue
        return name, mod
    return None, None


@pytest.mark.skipif(not kestrel.cuda_available(), reason="SKIPPED: needs a CUDA device")
def test_device_entry_equals_the_host_bearing_entry():
    name, mod = device_module()
    if mod is None:
        pytest.skip("SKIPPED: needs CuPy or PyTorch with CUDA")
    cam, px1, px2, R, t, truth = fisheye_scene(12)
    b1, s1 = kestrel.unproject_bearing(cam, px1)
    b2, s2 = kestrel.unproject_bearing(cam, px2)
    ok = (s1 == 0) & (s2 == 0)
    f1 = b1[ok].astype(np.float32)
    f2 = b2[ok].astype(np.float32)
    scale = kestrel.pixels_per_radian(cam, b2[ok]).astype(np.float32)
    cfg = kestrel.RelativePoseConfig(threshold_px=1.5, seed=5)
    gpu = kestrel.RelativePoseEstimator(len(f1), cfg, backend=kestrel.Backend.Cuda)
    cpu = kestrel.RelativePoseEstimator(len(f1), cfg, backend=kestrel.Backend.Cpu)
    if name == "cupy":
        d1, d2, ds = mod.asarray(f1), mod.asarray(f2), mod.asarray(scale)
    else:
        d1, d2, ds = (mod.from_numpy(a).cuda() for a in (f1, f2, scale))
    rg, mg = gpu.estimate_device(d1, d2, pixels_per_radian=ds)
    rc, mc = cpu.estimate_bearings(f1.astype(np.float64), f2.astype(np.float64),
                                   pixels_per_radian=scale.astype(np.float64))
    assert rg.status == rc.status == kestrel.PoseStatus.Ok
    np.testing.assert_array_equal(rg.R, rc.R)
    np.testing.assert_array_equal(mg, mc)
