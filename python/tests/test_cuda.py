"""GPU arrays (CuPy, PyTorch CUDA tensors) through DLPack, on the caller's stream; CUDA backend results equal to
the CPU backend's. Skipped (with the reason) without a CUDA device or without CuPy / PyTorch, except that with
KESTREL_REQUIRE_GPU=1 a missing device or CuPy fails (conftest.py); run on the GPU machine by scripts/gpu_run.sh
(step 'python')."""
import threading

import numpy as np
import pytest

import kestrel
from conftest import cuda_or_skip, cupy_or_skip, shifted, textured_image


def torch_or_skip():
    cuda_or_skip()
    torch = pytest.importorskip("torch", reason="SKIPPED: PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("SKIPPED: PyTorch sees no CUDA device")
    return torch


def gpu_detector(**kw):
    return kestrel.FeatureDetector(kestrel.DetectorConfig(**kw), backend=kestrel.Backend.Cuda)


def test_cuda_backend_numpy_input_equals_cpu():
    cuda_or_skip()
    for seed, (h, w) in enumerate([(480, 752), (97, 33), (333, 1001)]):
        img = textured_image(h, w, seed=seed)
        np.testing.assert_array_equal(gpu_detector().detect(img), kestrel.detect_cpu(img))
        view = np.asfortranarray(img)
        np.testing.assert_array_equal(gpu_detector().detect(view), kestrel.detect_cpu(img))


def test_cupy_array_in_place_equals_cpu():
    cp = cupy_or_skip()
    img = textured_image(480, 752, seed=1)
    det = gpu_detector(orb_descriptors=True)
    d_img = cp.asarray(img)
    kps = det.detect(d_img)
    np.testing.assert_array_equal(kps, kestrel.detect_cpu(img))
    cpu = kestrel.FeatureDetector(kestrel.DetectorConfig(orb_descriptors=True), backend=kestrel.Backend.Cpu)
    np.testing.assert_array_equal(kps, cpu.detect(img))
    np.testing.assert_array_equal(det.angles, cpu.angles)
    np.testing.assert_array_equal(det.descriptors, cpu.descriptors)
    # a row-pitched view of a wider device array (no copy: the pitch is the row stride)
    wide = cp.zeros((480, 1024), dtype=cp.uint8)
    wide[:, :752] = d_img
    np.testing.assert_array_equal(det.detect(wide[:, :752]), kps)


def test_cupy_on_a_stream():
    cp = cupy_or_skip()
    img = textured_image(480, 752, seed=2)
    det = gpu_detector()
    want = kestrel.detect_cpu(img)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        d_img = cp.asarray(img)      # enqueued on `stream`
        d_img = 255 - (255 - d_img)  # more work on `stream` before the detection
        for s in (stream, stream.ptr):
            np.testing.assert_array_equal(det.detect(d_img, stream=s), want)
    np.testing.assert_array_equal(det.detect(d_img, stream=cp.cuda.get_current_stream().ptr), want)


def test_torch_cuda_tensor_equals_cpu():
    torch = torch_or_skip()
    img = textured_image(480, 640, seed=3)
    t = torch.from_numpy(img).cuda()
    det = gpu_detector()
    np.testing.assert_array_equal(det.detect(t, stream=torch.cuda.current_stream().cuda_stream),
                                  kestrel.detect_cpu(img))
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        t2 = t.clone()
        np.testing.assert_array_equal(det.detect(t2, stream=s), kestrel.detect_cpu(img))


def test_bad_device_arrays():
    cp = cupy_or_skip()
    det = gpu_detector()
    img = cp.asarray(textured_image(128, 128, seed=4))
    with pytest.raises(kestrel.InvalidArgument, match="image.*CUDA array.*row-major"):
        det.detect(img[:, ::2])
    with pytest.raises(kestrel.InvalidArgument, match="image.*CUDA array.*row-major"):
        det.detect(img.T)
    with pytest.raises(TypeError, match="image.*uint8.*float32"):
        det.detect(img.astype(cp.float32))
    with pytest.raises(kestrel.InvalidArgument, match="image.*2-D"):
        det.detect(cp.zeros((64, 64, 3), cp.uint8))
    with pytest.raises(kestrel.InvalidArgument, match="height"):
        det.detect(cp.zeros((5, 64), cp.uint8))
    cpu = kestrel.FeatureDetector(backend=kestrel.Backend.Cpu)
    with pytest.raises(kestrel.StateError):
        cpu.detect(img)  # a device array needs the CUDA backend
    assert len(det.detect(img)) > 0


def test_tracker_cupy_frames_match_numpy_frames():
    cp = cupy_or_skip()
    frames = [read_pgm_or_generated(i) for i in range(6)]
    h, w = frames[0].shape
    a = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cuda)
    b = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cuda)
    stream = cp.cuda.Stream(non_blocking=True)
    for f in frames:
        want = a.track(f)
        with stream:
            got = b.track(cp.asarray(f), stream=stream)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(b.lost_tracks, a.lost_tracks)
    with pytest.raises(kestrel.InvalidArgument, match="frame"):
        b.track(cp.asarray(frames[0][: h // 2]))


def test_tracker_cuda_matches_cpu():
    cuda_or_skip()
    frames = [read_pgm_or_generated(i) for i in range(6)]
    h, w = frames[0].shape
    g = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cuda)
    c = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cpu)
    for f in frames:
        tg, tc = g.track(f), c.track(f)
        for field in ("id", "age", "status", "level", "score"):
            np.testing.assert_array_equal(tg[field], tc[field])
        # the trackers agree within 1e-3 px (docs/tracker.md: the CPU engine's tolerance)
        np.testing.assert_allclose(tg["x"], tc["x"], atol=1e-3)
        np.testing.assert_allclose(tg["y"], tc["y"], atol=1e-3)


def test_two_threads_two_gpu_trackers():
    cuda_or_skip()
    frames = [read_pgm_or_generated(i) for i in range(6)]
    h, w = frames[0].shape
    ref = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cuda)
    want = [ref.track(f).copy() for f in frames]
    results = [None, None]

    def work(k):
        t = kestrel.FeatureTracker(w, h, backend=kestrel.Backend.Cuda)
        results[k] = [t.track(f).copy() for f in frames]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    for r in results:
        for got, exp in zip(r, want):
            np.testing.assert_array_equal(got, exp)


def test_bench_helper_runs_on_cuda():
    cp = cupy_or_skip()
    det = gpu_detector()
    img = textured_image(480, 752, seed=5)
    assert kestrel._kestrel._bench_detect_cpp(det, img, 5) > 0
    assert kestrel._kestrel._bench_detect_cpp(det, cp.asarray(img), 5) > 0


def read_pgm_or_generated(i):
    """Frame i of a generated sequence: a textured image moving by (2, 1) px per frame."""
    return shifted(textured_image(480, 640, seed=20), 2 * i, i)


def test_multi_camera_cupy_frames_match_numpy_frames():
    cp = cupy_or_skip()
    sizes = [(640, 480), (320, 240)]
    seqs = [[shifted(textured_image(h, w, seed=50 + k), i, i) for i in range(4)] for k, (w, h) in enumerate(sizes)]
    cams = [kestrel.CameraConfig(width=w, height=h) for w, h in sizes]
    a = kestrel.MultiCameraTracker(cams, backend=kestrel.Backend.Cuda)
    b = kestrel.MultiCameraTracker(cams, backend=kestrel.Backend.Cuda)
    single = kestrel.FeatureTracker(640, 480, backend=kestrel.Backend.Cuda)
    stream = cp.cuda.Stream(non_blocking=True)
    for i in range(4):
        want = a.track([seqs[0][i], seqs[1][i]])
        with stream:
            got = b.track([cp.asarray(seqs[0][i]), cp.asarray(seqs[1][i])], stream=stream)
        for k in range(2):
            np.testing.assert_array_equal(got[k], want[k])
        np.testing.assert_array_equal(want[0], single.track(seqs[0][i]))
    with pytest.raises(kestrel.InvalidArgument, match="another memory"):
        b.track([cp.asarray(seqs[0][0]), seqs[1][0]])


def test_relative_pose_cuda_equals_cpu():
    cuda_or_skip()
    rng = np.random.default_rng(8)
    X1 = np.stack([rng.uniform(-2, 2, 300), rng.uniform(-1.5, 1.5, 300), rng.uniform(4, 10, 300)], 1)
    a = np.radians(10.0)
    R = np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])
    X2 = X1 @ R.T + np.array([0.98, 0.0, 0.196])
    x1, x2 = X1[:, :2] / X1[:, 2:], X2[:, :2] / X2[:, 2:]
    x2[:60] += rng.uniform(-0.2, 0.2, size=(60, 2))
    cfg = kestrel.RelativePoseConfig(seed=5)
    rc, mc = kestrel.RelativePoseEstimator(300, cfg, backend=kestrel.Backend.Cpu).estimate(x1, x2)
    rg, mg = kestrel.RelativePoseEstimator(300, cfg, backend=kestrel.Backend.Cuda).estimate(x1, x2)
    assert rg.status == rc.status == kestrel.PoseStatus.Ok
    assert rg.best_hypothesis == rc.best_hypothesis and rg.inliers == rc.inliers
    np.testing.assert_array_equal(mg, mc)
    np.testing.assert_allclose(rg.R, rc.R, atol=1e-9)
