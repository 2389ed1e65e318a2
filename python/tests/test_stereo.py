"""StereoTracker from Python: configs and rigs, a known disparity, bad inputs, the C++ API on the same frames
(kestrel_pyref stereo) and the CUDA backend (NumPy and CuPy frames) against the CPU."""
import numpy as np
import pytest

import kestrel
from conftest import cuda_or_skip, cupy_or_skip, read_pgm, real_image_path, run_pyref, shifted, textured_image

W, H = 480, 320


def cpu_stereo(rig=None, width=W, height=H, **kw):
    rig = rig or kestrel.rectified_rig(450.0, W / 2, H / 2, 0.1)
    return kestrel.StereoTracker(width, height, rig, kestrel.StereoConfig(**kw), backend=kestrel.Backend.Cpu)


def test_config_defaults_mirror_cpp():
    c = kestrel.StereoConfig()
    assert c.match.lk.pyramid.levels == 5 and c.match.refine_levels == 2
    assert (c.match.epipolar_tolerance, c.match.max_round_trip, c.match.trust_distance) == (1.0, 0.5, 0.5)
    assert (c.match.min_disparity, c.match.max_disparity) == (0.0, 256.0)
    assert c.tracker.lk.pyramid.levels == 3 and not c.track_right
    assert kestrel.stereo_match_lk_config().coarse_from_level == 8
    assert kestrel.STEREO_TRACK_DTYPE.names[-5:] == ("right_x", "right_y", "disparity", "depth", "stereo_status")


@pytest.mark.parametrize("make, param", [
    (lambda: kestrel.StereoConfig(match=kestrel.StereoMatchConfig(epipolar_tolerance=0)), "match.epipolar_tolerance"),
    (lambda: kestrel.StereoConfig(match=kestrel.StereoMatchConfig(refine_levels=9)), "match.refine_levels"),
    (lambda: kestrel.StereoConfig(match=kestrel.StereoMatchConfig(min_disparity=300)), "match.min_disparity"),
    (lambda: kestrel.StereoConfig(match=kestrel.StereoMatchConfig(trust_distance=-1)), "match.trust_distance"),
    (lambda: kestrel.rectified_rig(-1.0, 0.0, 0.0, 0.1), "focal"),
    (lambda: kestrel.StereoRig(type=kestrel.RigType.Rectified, focal=400.0, baseline=0.0), "baseline"),
])
def test_validation_names_the_parameter(make, param):
    with pytest.raises(kestrel.InvalidArgument) as e:
        make()
    assert param in str(e.value), str(e.value)


def test_known_disparity_and_depth():
    img = textured_image(H, W + 40, seed=3)
    left, right = img[:, 20:20 + W], img[:, 31:31 + W]  # right = left moved 11 px: disparity 11
    st = cpu_stereo()
    t = st.track(left, right)
    assert t.dtype == kestrel.STEREO_TRACK_DTYPE and len(t) > 50
    ok = t["stereo_status"] == kestrel.StereoStatus.Matched
    assert ok.mean() > 0.8
    np.testing.assert_allclose(t["disparity"][ok], 11.0, atol=0.05)
    np.testing.assert_allclose(t["depth"][ok], 450.0 * 0.1 / t["disparity"][ok], rtol=1e-5)
    assert np.isnan(t["depth"][~ok]).all()
    assert st.frame_count == 1 and len(st.right_tracks) == 0
    st2 = cpu_stereo(track_right=True)
    st2.track(left, right)
    assert len(st2.right_tracks) > 0 and st2.right_tracks.dtype == kestrel.TRACK_DTYPE


def test_right_tracks_are_a_mono_trackers_on_the_right_frames():
    # track_right: right_tracks and right_lost_tracks equal those of an independent FeatureTracker (the same
    # settings) run on the right frames alone, every field; the last right frame is flat grey, so every right track
    # live the frame before is lost there and none is live.
    img = textured_image(H + 10, W + 80, seed=6)
    cfg = kestrel.StereoConfig(track_right=True)
    st = cpu_stereo(track_right=True)
    mono = kestrel.FeatureTracker(W, H, cfg.tracker, backend=kestrel.Backend.Cpu)
    before = None
    for f in range(5):
        left = np.ascontiguousarray(img[f:f + H, 3 * f:3 * f + W])
        right = np.ascontiguousarray(img[f:f + H, 3 * f + 12:3 * f + 12 + W]) if f < 4 else np.full((H, W), 128, np.uint8)
        st.track(left, right)
        np.testing.assert_array_equal(st.right_tracks, mono.track(right), err_msg="frame %d" % f)
        np.testing.assert_array_equal(st.right_lost_tracks, mono.lost_tracks, err_msg="frame %d" % f)
        assert st.right_lost_tracks.dtype == kestrel.TRACK_DTYPE
        if f < 4:
            assert len(st.right_tracks) > 50
            before = st.right_tracks
    assert len(st.right_tracks) == 0
    assert sorted(st.right_lost_tracks["id"]) == sorted(before["id"])
    assert (st.right_lost_tracks["status"] != kestrel.TrackStatus.Tracked).all()
    assert len(cpu_stereo().right_lost_tracks) == 0


def test_raw_rig_from_body_poses():
    cam = kestrel.Camera(width=W, height=H, fx=450.0, fy=450.0, cx=W / 2, cy=H / 2)
    eye = [1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, 1.0]
    right = list(eye)
    right[3] = 0.1  # the right camera 0.1 m along x
    rig = kestrel.rig_from_body_poses(cam, eye, cam, right)
    assert rig.type == kestrel.RigType.Raw and rig.t_rl == pytest.approx([-0.1, 0.0, 0.0])
    img = textured_image(H, W + 40, seed=4)
    t = cpu_stereo(rig).track(img[:, 20:20 + W], img[:, 30:30 + W])
    ok = t["stereo_status"] == kestrel.StereoStatus.Matched
    assert ok.mean() > 0.8
    np.testing.assert_allclose(t["depth"][ok], 450.0 * 0.1 / 10.0, rtol=0.01)


def test_bad_inputs_raise():
    st = cpu_stereo()
    good = textured_image(H, W)
    with pytest.raises(kestrel.InvalidArgument, match="right"):
        st.track(good, good[:-1])
    with pytest.raises(TypeError, match="left"):
        st.track(good.astype(np.float32), good)
    with pytest.raises(kestrel.InvalidArgument, match="left"):
        st.track(np.dstack([good, good, good]), good)
    with pytest.raises(kestrel.InvalidArgument, match="predictions"):
        st.track(good, good)
        st.track(good, good, predictions=np.zeros((len(st.tracks) + 1, 2), np.float32))
    st.reset()
    assert len(st.tracks) == 0


def check_stereo(path, per_frame):
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
    for frame, got in enumerate(per_frame):
        mine = [r for r in rows if int(r["frame"]) == frame]
        assert len(mine) == len(got) > 0, "frame %d" % frame
        for field in kestrel.STEREO_TRACK_DTYPE.names:
            want = np.array([r[field] for r in mine]).astype(kestrel.STEREO_TRACK_DTYPE[field])
            np.testing.assert_array_equal(got[field], want, err_msg="frame %d field %s" % (frame, field))


def run_against_cpp(tmp_path, backend_name, backend):
    pairs = [real_image_path("aloeL.png"), real_image_path("aloeR.png")] * 3  # the seeds carry over 3 frames
    out = run_pyref(tmp_path, "stereo", backend_name, pairs)
    left = [read_pgm(out / ("left_%03d.pgm" % i)) for i in range(3)]
    right = [read_pgm(out / ("right_%03d.pgm" % i)) for i in range(3)]
    h, w = left[0].shape
    st = kestrel.StereoTracker(w, h, kestrel.rectified_rig(458.0, w / 2.0, h / 2.0, 0.11), kestrel.StereoConfig(),
                               backend=backend)
    got = [st.track(l, r) for l, r in zip(left, right)]
    assert (got[-1]["stereo_status"] == kestrel.StereoStatus.Matched).sum() > 50
    check_stereo(out / "stereo.csv", got)


def test_identical_to_cpp(tmp_path):
    run_against_cpp(tmp_path, "cpu", kestrel.Backend.Cpu)


# ---- GPU (run on the GPU machine; skipped without a device) ------------------------------------------

def test_cuda_identical_to_cpp(tmp_path):
    cuda_or_skip()
    run_against_cpp(tmp_path, "cuda", kestrel.Backend.Cuda)


def test_cuda_cupy_frames_equal_cpu():
    cp = cupy_or_skip()
    img = textured_image(H, W + 40, seed=5)
    frames = [(np.ascontiguousarray(shifted(img, f, 0)[:, 20:20 + W]),
               np.ascontiguousarray(shifted(img, f, 0)[:, 34:34 + W])) for f in range(4)]
    rig = kestrel.rectified_rig(450.0, W / 2, H / 2, 0.1)
    cpu = kestrel.StereoTracker(W, H, rig, backend=kestrel.Backend.Cpu)
    gpu = kestrel.StereoTracker(W, H, rig, backend=kestrel.Backend.Cuda)
    stream = cp.cuda.Stream(non_blocking=True)
    for l, r in frames:
        want = cpu.track(l, r)
        with stream:
            got = gpu.track(cp.asarray(l), cp.asarray(r), stream=stream)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(kestrel.InvalidArgument, match="both host or both CUDA"):
        gpu.track(cp.asarray(frames[0][0]), frames[0][1])
