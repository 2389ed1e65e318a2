"""FeatureTracker from Python: configs, tracks on a known motion, predictions, lost tracks, bad inputs, threads and
the GIL (CPU backend)."""
import threading
import time

import numpy as np
import pytest

import kestrel
from conftest import shifted, textured_image

W, H = 320, 240


def cpu_tracker(width=W, height=H, **kw):
    return kestrel.FeatureTracker(width, height, kestrel.TrackerConfig(**kw), backend=kestrel.Backend.Cpu)


def test_config_defaults_mirror_cpp():
    c = kestrel.TrackerConfig()
    assert (c.target_features, c.redetect_fraction, c.forward_backward, c.fb_max_error) == (200, pytest.approx(0.3),
                                                                                            False, 0.5)
    assert (c.lk.pyramid.levels, c.lk.patch_size, c.lk.max_iterations) == (3, 16, 10)
    assert c.lk.mode == kestrel.LkMode.TranslationGainOffset
    assert c.detector.border == 20 and c.detector.fast.score == kestrel.ScoreType.MaxThreshold
    assert c.anchor.enabled and c.anchor.reanchor
    assert kestrel.tracking_detector_config().border == 20


@pytest.mark.parametrize("make, param, bound", [
    (lambda: kestrel.TrackerConfig(target_features=0), "target_features", "[1, 65536]"),
    (lambda: kestrel.TrackerConfig(redetect_fraction=1.5), "redetect_fraction", "[0, 1]"),
    (lambda: kestrel.LkConfig(patch_size=17), "patch_size", "[4, 16]"),
    (lambda: kestrel.LkConfig(max_iterations=0), "max_iterations", "[1, 100]"),
    (lambda: kestrel.LkConfig(coarse_max_iterations=0), "coarse_max_iterations", "[1, 100]"),
    (lambda: kestrel.TrackerConfig(anchor=kestrel.AnchorConfig(max_iterations=0)), "max_iterations", "[1, 100]"),
    (lambda: kestrel.TrackerConfig(anchor=kestrel.AnchorConfig(interval=65)), "anchor.interval", "[1, 64]"),
    (lambda: kestrel.TrackerConfig(motion=kestrel.MotionConfig(level_reach=0.0)), "motion.level_reach", "(0, 1000]"),
])
def test_config_validation_names_parameter_and_bound(make, param, bound):
    with pytest.raises(kestrel.InvalidArgument) as e:
        make()
    assert param in str(e.value) and bound in str(e.value), str(e.value)


def test_tracks_follow_a_known_shift():
    base = textured_image(H, W, seed=2)
    trk = cpu_tracker(target_features=100)
    first = trk.track(base)
    assert first.dtype == kestrel.TRACK_DTYPE
    assert first.dtype.names == ("id", "x", "y", "prev_x", "prev_y", "age", "status", "gain", "offset", "residual",
                                 "score", "level")
    assert len(first) > 20 and (first["age"] == 0).all() and trk.redetected and trk.frame_count == 1
    assert len(np.unique(first["id"])) == len(first) and first["id"].min() >= 1
    second = trk.track(shifted(base, 3, -2))
    assert trk.frame_count == 2
    ok = second[second["status"] == kestrel.TrackStatus.Tracked]
    assert len(ok) > 0.8 * len(first)
    np.testing.assert_allclose(ok["x"] - ok["prev_x"], 3.0, atol=0.05)
    np.testing.assert_allclose(ok["y"] - ok["prev_y"], -2.0, atol=0.05)
    # ids are stable: each surviving track keeps the id and its previous position is where it was
    before = {int(i): (x, y) for i, x, y in zip(first["id"], first["x"], first["y"])}
    for t in ok:
        if t["age"] == 1:
            assert before[int(t["id"])] == (t["prev_x"], t["prev_y"])
    np.testing.assert_array_equal(trk.tracks, second)


def test_lost_tracks_and_reset():
    base = textured_image(H, W, seed=4)
    trk = cpu_tracker(target_features=150)
    n = len(trk.track(base))
    # a frame of a different scene: most tracks are lost, with a status
    trk.track(textured_image(H, W, seed=99))
    lost = trk.lost_tracks
    assert lost.dtype == kestrel.TRACK_DTYPE and len(lost) > 0
    assert (lost["status"] != kestrel.TrackStatus.Tracked).all()
    assert set(kestrel.TrackStatus(s) for s in lost["status"]) <= set(kestrel.TrackStatus)
    last_id = max(trk.tracks["id"].max(initial=0), lost["id"].max())
    trk.reset()
    assert len(trk.tracks) == 0
    again = trk.track(base)
    assert len(again) == n and again["id"].min() > last_id  # ids are never reused


def test_predictions():
    base = textured_image(H, W, seed=6)
    moved = shifted(base, 12, 0)  # beyond what the pyramid finds alone with 1 level and an 8 px patch
    cfg = dict(lk=kestrel.LkConfig(pyramid=kestrel.PyramidConfig(levels=1), patch_size=8), target_features=80,
               anchor=kestrel.AnchorConfig(enabled=False))
    trk = cpu_tracker(**cfg)
    first = trk.track(base)
    guess = np.stack([first["x"] + 12, first["y"]], axis=1)
    with_guess = trk.track(moved, guess)
    ok = with_guess[with_guess["status"] == 0]
    assert len(ok) > 0.8 * len(first)
    np.testing.assert_allclose(ok["x"] - ok["prev_x"], 12.0, atol=0.05)
    # a list works too, and float64
    trk2 = cpu_tracker(**cfg)
    trk2.track(base)
    np.testing.assert_array_equal(trk2.track(moved, guess.astype(np.float64).tolist()), with_guess)


def test_motion_prediction_follows_steady_motion():
    # A camera panning 9 px a frame, one pyramid level and an 8 px patch: 9 px is beyond what LK reaches from the
    # track's position. The first step is given as predictions; after it, the constant-velocity start puts every
    # track on its point, and without it (start at the position) the tracks are lost.
    base = textured_image(H, W, seed=10)
    frames = [shifted(base, 9 * k, 0) for k in range(4)]
    lk = kestrel.LkConfig(pyramid=kestrel.PyramidConfig(levels=1), patch_size=8)

    def run(motion):
        trk = cpu_tracker(lk=lk, target_features=80, redetect_fraction=0.0,
                          anchor=kestrel.AnchorConfig(enabled=False), motion=motion)
        first = trk.track(frames[0])
        trk.track(frames[1], np.stack([first["x"] + 9, first["y"]], axis=1))
        survivors = len(trk.tracks)
        for f in frames[2:]:
            last = trk.track(f)
        return survivors, last[last["status"] == kestrel.TrackStatus.Tracked]

    d = kestrel.MotionConfig()
    assert d.constant_velocity and d.fewer_levels and d.level_reach == 4.0
    assert kestrel.TrackerConfig().motion.constant_velocity
    survivors, ok = run(kestrel.MotionConfig())
    assert survivors > 20 and len(ok) > 0.7 * survivors, (survivors, len(ok))
    on_point = np.abs(ok["x"] - ok["prev_x"] - 9.0) < 0.05
    assert on_point.mean() > 0.9, (ok["x"] - ok["prev_x"])
    _, ok_off = run(kestrel.MotionConfig(constant_velocity=False))
    assert len(ok_off) < 0.2 * len(ok), (len(ok_off), len(ok))


def test_bad_inputs_raise_clear_exceptions():
    trk = cpu_tracker()
    base = textured_image(H, W, seed=8)
    with pytest.raises(kestrel.InvalidArgument) as e:
        trk.track(base[:200])
    assert "frame" in str(e.value) and "320x200" in str(e.value) and "320x240" in str(e.value)
    with pytest.raises(TypeError, match="frame.*uint8.*float64"):
        trk.track(base.astype(np.float64))
    with pytest.raises(kestrel.InvalidArgument, match="frame.*2-D"):
        trk.track(np.dstack([base, base, base]))
    tracks = trk.track(base)
    with pytest.raises(kestrel.InvalidArgument, match="predictions.*one per track"):
        trk.track(base, np.zeros((len(tracks) + 1, 2), np.float32))
    with pytest.raises(kestrel.InvalidArgument, match="predictions.*shape"):
        trk.track(base, np.zeros((len(tracks), 3), np.float32))
    with pytest.raises(TypeError, match="predictions"):
        trk.track(base, object())
    assert trk.frame_count == 1  # the refused calls did not count
    with pytest.raises(kestrel.InvalidArgument, match="width"):
        kestrel.FeatureTracker(3, 240, backend=kestrel.Backend.Cpu)
    if not kestrel.cuda_available():
        with pytest.raises(kestrel.NoDeviceError):
            kestrel.FeatureTracker(W, H, backend=kestrel.Backend.Cuda)


def test_strided_frames_track_like_contiguous_ones():
    base, moved = textured_image(H, W, seed=10), None
    moved = shifted(base, 1, 1)
    a, b = cpu_tracker(), cpu_tracker()
    a.track(base)
    b.track(np.asfortranarray(base))
    np.testing.assert_array_equal(a.track(moved), b.track(np.ascontiguousarray(moved.T).T))


def run_sequence(trk, frames):
    return [trk.track(f).copy() for f in frames]


def test_two_threads_two_trackers():
    frames = [shifted(textured_image(H, W, seed=12), i, i // 2) for i in range(8)]
    want = run_sequence(cpu_tracker(threads=1), frames)
    results = [None, None]

    def work(k):
        results[k] = run_sequence(cpu_tracker(threads=1), frames)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        assert len(r) == len(want)
        for got, exp in zip(r, want):
            np.testing.assert_array_equal(got, exp)


def main_thread_runs_during(call):
    """Runs call() in a thread; meanwhile the main thread keeps running Python. Returns the main thread's
    timestamps that fall in the middle half of the call: none when the call holds the GIL throughout."""
    window = {}
    started = threading.Event()

    def worker():
        started.set()
        window["t0"] = time.perf_counter()
        call()
        window["t1"] = time.perf_counter()

    stamps = []
    t = threading.Thread(target=worker)
    t.start()
    started.wait()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    t0, t1 = window["t0"], window["t1"]
    lo, hi = t0 + 0.25 * (t1 - t0), t0 + 0.75 * (t1 - t0)
    return [s for s in stamps if lo <= s <= hi]


def test_gil_released_during_detect():
    img = textured_image(1000, 1000, seed=14)
    det = kestrel.FeatureDetector(kestrel.DetectorConfig(threads=1), backend=kestrel.Backend.Cpu)
    assert len(main_thread_runs_during(lambda: det.detect(img))) > 0


def test_gil_released_during_track():
    frames = [shifted(textured_image(720, 960, seed=16), i, 0) for i in range(3)]
    trk = kestrel.FeatureTracker(960, 720, kestrel.TrackerConfig(threads=1, target_features=2000),
                                 backend=kestrel.Backend.Cpu)
    assert len(main_thread_runs_during(lambda: [trk.track(f) for f in frames])) > 0


def test_multi_camera_tracker_equals_one_tracker_per_camera():
    sizes = [(320, 240), (256, 200)]
    seqs = [[shifted(textured_image(h, w, seed=40 + k), i, -i) for i in range(4)] for k, (w, h) in enumerate(sizes)]
    cfg = kestrel.TrackerConfig(target_features=60)
    multi = kestrel.MultiCameraTracker([kestrel.CameraConfig(width=w, height=h, tracker=cfg) for w, h in sizes],
                                       backend=kestrel.Backend.Cpu)
    assert len(multi) == 2 and multi.size == 2
    singles = [kestrel.FeatureTracker(w, h, cfg, backend=kestrel.Backend.Cpu) for w, h in sizes]
    for i in range(4):
        got = multi.track([seqs[0][i], np.asfortranarray(seqs[1][i])])
        assert len(got) == 2
        for k in range(2):
            want = singles[k].track(seqs[k][i])
            np.testing.assert_array_equal(got[k], want)
            np.testing.assert_array_equal(multi.tracks(k), want)
            np.testing.assert_array_equal(multi.lost_tracks(k), singles[k].lost_tracks)
    with pytest.raises(kestrel.InvalidArgument, match="frames.*2 cameras"):
        multi.track([seqs[0][0]])
    with pytest.raises(kestrel.InvalidArgument, match="frame"):
        multi.track([seqs[1][0], seqs[0][0]])  # sizes swapped
    with pytest.raises(TypeError, match=r"frames\[1\].*uint8"):
        multi.track([seqs[0][0], seqs[1][0].astype(np.int16)])
    with pytest.raises(kestrel.InvalidArgument, match="camera"):
        multi.tracks(2)


def test_one_object_two_threads_is_refused_not_a_race():
    big = textured_image(1000, 1000, seed=18)
    small = textured_image(64, 64, seed=19)
    det = kestrel.FeatureDetector(kestrel.DetectorConfig(threads=1), backend=kestrel.Backend.Cpu)
    want = det.detect(big)
    refused = []
    result = {}

    def worker():
        result["kps"] = det.detect(big)

    t = threading.Thread(target=worker)
    t.start()
    while t.is_alive():
        try:
            det.detect(small)
        except kestrel.StateError as e:
            refused.append(str(e))
    t.join()
    assert refused and "in use by another thread" in refused[0]
    np.testing.assert_array_equal(result["kps"], want)  # the call in progress was not disturbed
    np.testing.assert_array_equal(det.detect(big), want)


def _camera(width=W, height=H, f=300.0):
    return kestrel.Camera(width=width, height=height, fx=f, fy=f, cx=(width - 1) / 2, cy=(height - 1) / 2)


def test_geometric_check_config_and_status():
    g = kestrel.GeometricCheckConfig()
    assert (g.enabled, g.threshold_px, g.confidence, g.max_hypotheses, g.min_tracks) == (False, 1.0, 0.999, 512, 12)
    assert int(kestrel.TrackStatus.Outlier) == 7
    assert kestrel.TrackerConfig().geometric_check.enabled is False
    with pytest.raises(kestrel.InvalidArgument) as e:
        kestrel.GeometricCheckConfig(enabled=True, camera=_camera(), threshold_px=0.0)
    assert "threshold_px" in str(e.value) and "(0, 100]" in str(e.value)
    with pytest.raises(kestrel.InvalidArgument) as e:
        kestrel.TrackerConfig(geometric_check=kestrel.GeometricCheckConfig(enabled=True, camera=_camera(), min_tracks=3))
    assert "min_tracks" in str(e.value)
    assert g.baseline_frames == 3
    with pytest.raises(kestrel.InvalidArgument) as e:
        kestrel.GeometricCheckConfig(enabled=True, camera=_camera(), baseline_frames=17)
    assert "baseline_frames" in str(e.value) and "[1, 16]" in str(e.value)


def test_geometric_check_ends_a_moving_patch():
    # A textured background shifted by (2, 1) px per frame (a camera turning: the rotation-only model), and a
    # patch of it moving on its own by (0, 5) px per frame: the patch's tracks end as Outlier, the others live.
    base = textured_image(H, W, seed=5)
    patch = textured_image(60, 60, seed=9)
    cfg = kestrel.TrackerConfig(target_features=150,
                                geometric_check=kestrel.GeometricCheckConfig(enabled=True, camera=_camera()))
    trk = kestrel.FeatureTracker(W, H, cfg, backend=kestrel.Backend.Cpu)

    def inside(t, k, margin):
        """Tracks within the patch of frame k shrunk by margin px (a negative margin grows it)."""
        x0, y0 = 130 + margin, 100 + 5 * k + margin
        return (t["x"] >= x0) & (t["x"] < 190 - margin) & (t["y"] >= y0) & (t["y"] < 160 + 5 * k - margin)

    ended = {}  # id -> frame where it ended as Outlier
    on_patch, background = set(), set()  # ids born well inside the patch / well outside it (3 px either way)
    for k in range(6):
        img = shifted(base, 2 * k, k)
        img[100 + 5 * k:160 + 5 * k, 130:190] = patch
        live = trk.track(img)
        born = live[live["age"] == 0]
        on_patch |= set(int(i) for i in born[inside(born, k, 3)]["id"])
        background |= set(int(i) for i in born[~inside(born, k, -3)]["id"])
        lost = trk.lost_tracks
        for i in lost[lost["status"] == kestrel.TrackStatus.Outlier]["id"]:
            ended[int(i)] = k
        if k > 0:
            r = trk.geometric_check
            assert r.model != kestrel.CheckModel.None_ and r.checked > 20
            assert inside(live, k, 0).sum() == 0, "no track follows the patch once it moves"
    # Which tracks ended: every track born on the patch (4 today, all in frame 0), in the first frame the patch
    # moved; none of the background's.
    assert len(on_patch) >= 3
    assert on_patch <= set(ended), "patch tracks still live: %s" % sorted(on_patch - set(ended))
    assert all(ended[i] == 1 for i in on_patch)
    assert not (background & set(ended)), "background tracks ended as Outlier: %s" % sorted(background & set(ended))
    with pytest.raises(kestrel.InvalidArgument) as e:
        trk.track(base, rotation_prior=2 * np.eye(3))
    assert "rotation_prior" in str(e.value)
    trk.track(shifted(base, 12, 6), rotation_prior=np.eye(3))
    assert trk.geometric_check.model in (kestrel.CheckModel.TwoPoint, kestrel.CheckModel.RotationOnly)
