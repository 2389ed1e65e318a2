"""FeatureDetector from Python: configs, arrays of any layout, results, bad inputs (CPU backend)."""
import numpy as np
import pytest

import kestrel
from conftest import textured_image


def cpu_detector(**kw):
    return kestrel.FeatureDetector(kestrel.DetectorConfig(**kw), backend=kestrel.Backend.Cpu)


def test_config_defaults_mirror_cpp():
    c = kestrel.DetectorConfig()
    assert (c.pyramid.levels, c.pyramid.scale) == (2, 2.0)
    assert (c.fast.threshold, c.fast.arc_min, c.fast.arc_max) == (10, 9, 16)
    assert c.fast.score == kestrel.ScoreType.MaxThreshold
    assert (c.nms_radius, c.cell_width, c.cell_height, c.per_cell, c.max_features, c.border) == (1, 32, 32, 1, 0, 0)
    assert c.selection == kestrel.SelectionPolicy.Grid and c.orb_descriptors is False and c.threads == 0
    assert list(c.pyca.cell) == [32] * 8 and c.pyca.q == 3
    assert kestrel.FastConfig().score == kestrel.ScoreType.SadCircle  # FastConfig's own default, as in C++


def test_config_keywords_and_nested():
    c = kestrel.DetectorConfig(pyramid=kestrel.PyramidConfig(levels=3, scale=1.5),
                               fast=kestrel.FastConfig(threshold=20, score=kestrel.ScoreType.Harris),
                               max_features=100, border=4)
    assert (c.pyramid.levels, c.pyramid.scale, c.fast.threshold, c.max_features, c.border) == (3, 1.5, 20, 100, 4)
    c.pyramid.levels = 4  # nested configs are edited in place
    assert c.pyramid.levels == 4
    with pytest.raises(TypeError):
        kestrel.DetectorConfig(2)  # keyword arguments only
    with pytest.raises(TypeError):
        kestrel.DetectorConfig(no_such_field=1)


# The arguments are made inside the test: a module's objects held by pytest's parameters outlive the module's
# teardown, which nanobind reports as leaks at exit.
@pytest.mark.parametrize("kw, param, bound", [
    (lambda: dict(nms_radius=9), "nms_radius", "[1, 4]"),
    (lambda: dict(per_cell=0), "per_cell", "[1, 8]"),
    (lambda: dict(border=65), "border", "[0, 64]"),
    (lambda: dict(fast=kestrel.FastConfig(threshold=300)), "threshold", "[0, 254]"),
    (lambda: dict(pyramid=kestrel.PyramidConfig(levels=9)), "levels", "[1, 8]"),
])
def test_config_validation_names_parameter_and_bound(kw, param, bound):
    with pytest.raises(kestrel.InvalidArgument) as e:
        kestrel.DetectorConfig(**kw())
    assert param in str(e.value) and bound in str(e.value)
    assert param in e.value.parameter
    assert isinstance(e.value, ValueError) and isinstance(e.value, kestrel.Error)


def test_config_edited_after_construction_is_validated_by_the_detector():
    c = kestrel.DetectorConfig()
    c.cell_width = 33
    with pytest.raises(kestrel.InvalidArgument, match="cell_width"):
        kestrel.FeatureDetector(c, backend=kestrel.Backend.Cpu)
    with pytest.raises(kestrel.InvalidArgument, match="cell_width"):
        c.validate()


def test_detect_returns_structured_array_equal_to_cpu_reference():
    img = textured_image(480, 752)
    kps = cpu_detector().detect(img)
    assert kps.dtype.names == ("x", "y", "level", "score")
    assert kps.dtype == kestrel.KEYPOINT_DTYPE
    assert kps["x"].dtype == np.float32 and kps["level"].dtype == np.int32
    assert len(kps) > 100
    ref = kestrel.detect_cpu(img, kestrel.DetectorConfig())
    np.testing.assert_array_equal(kps, ref)
    assert (kps["x"] >= 0).all() and (kps["x"] < 752).all() and (kps["y"] < 480).all()
    assert set(np.unique(kps["level"])) <= {0, 1}


def test_detect_known_corner():
    # One bright square on black, each corner in its own 32 x 32 cell: one keypoint per cell, at a corner
    # (the strongest of the few FAST corner pixels around it), nothing else.
    img = np.zeros((64, 96), np.uint8)
    img[20:40, 30:60] = 200
    kps = cpu_detector(pyramid=kestrel.PyramidConfig(levels=1)).detect(img)
    pts = {(int(x), int(y)) for x, y in zip(kps["x"], kps["y"])}
    assert len(pts) == 4
    for cx, cy in [(30, 20), (59, 20), (30, 39), (59, 39)]:
        assert any(abs(x - cx) <= 3 and abs(y - cy) <= 3 for x, y in pts), (cx, cy, pts)


@pytest.mark.parametrize("layout", ["fortran", "transposed_back", "column_step", "negative_rows",
                                    "negative_cols", "row_pitch", "readonly"])
def test_any_strides_give_the_same_keypoints(layout):
    base = textured_image(300, 400, seed=3)
    det = cpu_detector()
    want = det.detect(base)
    if layout == "fortran":
        view = np.asfortranarray(base)
    elif layout == "transposed_back":
        view = np.ascontiguousarray(base.T).T
    elif layout == "column_step":
        wide = np.zeros((300, 800), np.uint8)
        wide[:, ::2] = base
        view = wide[:, ::2]
    elif layout == "negative_rows":
        view = np.ascontiguousarray(base[::-1])[::-1]
    elif layout == "negative_cols":
        view = np.ascontiguousarray(base[:, ::-1])[:, ::-1]
    elif layout == "row_pitch":
        big = np.zeros((300, 512), np.uint8)
        big[:, :400] = base
        view = big[:, :400]
    else:
        view = base.copy()
        view.setflags(write=False)
    assert np.array_equal(view, base)
    np.testing.assert_array_equal(det.detect(view), want)
    # the same detector again at the same size (the packed copy is reused)
    np.testing.assert_array_equal(det.detect(view), want)


def test_odd_sizes_match_the_reference():
    det = cpu_detector()
    for h, w in [(14, 14), (31, 45), (97, 33), (480, 753), (333, 1001)]:
        img = textured_image(h + 8, w + 8, seed=h)[:h, :w]
        np.testing.assert_array_equal(det.detect(img), kestrel.detect_cpu(img))
    one_level = kestrel.DetectorConfig(pyramid=kestrel.PyramidConfig(levels=1))
    img = textured_image(16, 16, seed=7)[:7, :7]
    np.testing.assert_array_equal(cpu_detector(pyramid=kestrel.PyramidConfig(levels=1)).detect(img),
                                  kestrel.detect_cpu(img, one_level))


def test_orb_angles_and_descriptors():
    img = textured_image(240, 320, seed=5)
    det = cpu_detector(orb_descriptors=True)
    kps = det.detect(img)
    a, d = det.angles, det.descriptors
    assert a.shape == (len(kps),) and a.dtype == np.float32
    assert d.shape == (len(kps), 32) and d.dtype == np.uint8
    assert ((a >= 0) & (a <= 360)).all()
    assert len(np.unique(d, axis=0)) > len(kps) // 2  # descriptors differ from corner to corner
    plain = cpu_detector()
    np.testing.assert_array_equal(plain.detect(img), kps)
    assert plain.angles is None and plain.descriptors is None


@pytest.mark.parametrize("bad, exc, words", [
    (np.zeros((64, 64), np.float32), TypeError, ["image", "uint8", "float32"]),
    (np.zeros((64, 64), np.uint16), TypeError, ["image", "uint8", "uint16"]),
    (np.zeros((64, 64), bool), TypeError, ["image", "uint8", "bool"]),
    (np.zeros((64, 64, 3), np.uint8), kestrel.InvalidArgument, ["image", "2-D", "3 dimension", "grey"]),
    (np.zeros(64, np.uint8), kestrel.InvalidArgument, ["image", "2-D", "1 dimension"]),
    (np.zeros((0, 64), np.uint8), kestrel.InvalidArgument, ["image", "empty"]),
    (np.zeros((5, 64), np.uint8), kestrel.InvalidArgument, ["height", ">= 2 * border + 7"]),
    (np.zeros((64, 3), np.uint8), kestrel.InvalidArgument, ["width"]),
    (np.zeros((16384, 8), np.uint8), kestrel.InvalidArgument, ["height", "16383"]),
    ([[1, 2], [3, 4]], TypeError, ["image", "list"]),
    (None, TypeError, ["image"]),
    ("image.png", TypeError, ["image", "str"]),
])
def test_bad_inputs_raise_clear_exceptions(bad, exc, words):
    det = cpu_detector()
    with pytest.raises(exc) as e:
        det.detect(bad)
    for w in words:
        assert w in str(e.value), (w, str(e.value))
    # the detector still works afterwards
    assert len(det.detect(textured_image(64, 64))) > 0


def test_bad_stream_argument():
    with pytest.raises(TypeError, match="stream"):
        cpu_detector().detect(textured_image(64, 64), stream="default")


def test_backends():
    assert kestrel.default_backend() == (kestrel.Backend.Cuda if kestrel.cuda_available() else kestrel.Backend.Cpu)
    assert kestrel.FeatureDetector().backend == kestrel.default_backend()
    det = cpu_detector(max_features=7)
    assert det.backend == kestrel.Backend.Cpu and det.config.max_features == 7
    if not kestrel.cuda_available():
        with pytest.raises(kestrel.NoDeviceError):
            kestrel.FeatureDetector(kestrel.DetectorConfig(), backend=kestrel.Backend.Cuda)


def test_orbslam_config_defaults_mirror_cpp_and_validate():
    o = kestrel.OrbSlamConfig()
    assert (o.threshold_initial, o.threshold_min, o.cell, o.border) == (20, 7, 30, 19)
    assert kestrel.DetectorConfig().orbslam.cell == 30
    with pytest.raises(kestrel.InvalidArgument, match=r"orbslam\.cell.*\[16, 256\]"):
        kestrel.DetectorConfig(selection=kestrel.SelectionPolicy.OrbSlam, max_features=100,
                               orbslam=kestrel.OrbSlamConfig(cell=8))
    with pytest.raises(kestrel.InvalidArgument, match="max_features"):
        kestrel.DetectorConfig(selection=kestrel.SelectionPolicy.LevelHarris)


@pytest.mark.parametrize("policy", [kestrel.SelectionPolicy.OrbSlam, kestrel.SelectionPolicy.LevelHarris])
def test_per_level_policies_fill_their_budget_level_by_level(policy):
    img = textured_image(480, 752)
    cfg = kestrel.DetectorConfig(pyramid=kestrel.PyramidConfig(levels=8, scale=1.2), selection=policy,
                                 max_features=500, orbslam=kestrel.OrbSlamConfig(threshold_min=5))
    kps = kestrel.FeatureDetector(cfg, backend=kestrel.Backend.Cpu).detect(img)
    np.testing.assert_array_equal(kps, kestrel.detect_cpu(img, cfg))
    assert 0 < len(kps) <= 500
    assert (np.diff(kps["level"]) >= 0).all()  # level by level, best first within a level
    for level in np.unique(kps["level"]):
        s = kps["score"][kps["level"] == level]
        assert (np.diff(s) <= 0).all()
