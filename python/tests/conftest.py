"""Shared helpers of the Python tests.

Real images: the prepared test data (opencv-doc photos, vtest.avi frames) of the C++ tests, found as they find
it: $KESTREL_TEST_DATA, else a build tree's testdata/. The C++ side of the comparisons: kestrel_pyref
($KESTREL_PYREF, else a build tree's python/kestrel_pyref). ctest's python.pytest sets both; without them the
tests that need them are skipped with the reason (every other test runs).

Required means required: with KESTREL_REQUIRE_PYREF=1 (ctest's python.pytest) or KESTREL_REQUIRE_GPU=1 (the GPU
machine) a missing kestrel_pyref fails the tests that need it; with KESTREL_REQUIRE_GPU=1 a missing CUDA device or
a missing CuPy fails the GPU tests instead of skipping them (PyTorch stays optional).
"""
import os
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest

import kestrel

ROOT = Path(__file__).resolve().parents[2]


def _first_existing(candidates):
    for c in candidates:
        if c and Path(c).exists():
            return Path(c)
    return None


def data_dir():
    env = os.environ.get("KESTREL_TEST_DATA")
    if env:
        return Path(env)
    return _first_existing(sorted(ROOT.glob("build*/testdata")))


def pyref_command():
    env = os.environ.get("KESTREL_PYREF")
    if env:
        return shlex.split(env)
    exe = _first_existing(sorted(ROOT.glob("build*/python/kestrel_pyref")))
    return [str(exe)] if exe else None


def real_image_path(name):
    d = data_dir()
    if d is None or not (d / name).exists():
        pytest.skip("SKIPPED: test image %s not found: set KESTREL_TEST_DATA to the build's testdata/ "
                    "(built by the 'kestrel_testdata' target from opencv-doc)" % name)
    return d / name


def required(what):
    """Whether a missing `what` ("pyref", "gpu") fails instead of skipping (see the module's docstring)."""
    gpu = os.environ.get("KESTREL_REQUIRE_GPU") == "1"
    return gpu or (what == "pyref" and os.environ.get("KESTREL_REQUIRE_PYREF") == "1")


def skip_or_fail(what, reason):
    if required(what):
        pytest.fail("%s, and it is required (KESTREL_REQUIRE_GPU=1 or, for kestrel_pyref, KESTREL_REQUIRE_PYREF=1)"
                    % reason)
    pytest.skip("SKIPPED: " + reason)


def run_pyref(tmp_path, mode, backend, images):
    cmd = pyref_command()
    if cmd is None:
        skip_or_fail("pyref", "kestrel_pyref not found: set KESTREL_PYREF (built with the C++ tests)")
    r = subprocess.run(cmd + [mode, str(tmp_path), backend] + [str(p) for p in images],
                       capture_output=True, text=True)
    assert r.returncode == 0, "kestrel_pyref failed (%d): %s" % (r.returncode, r.stderr)
    return tmp_path


def read_pgm(path):
    """8-bit binary PGM (P5) as written by kestrel_pyref."""
    data = Path(path).read_bytes()
    fields = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    assert fields[0] == b"P5" and fields[3] == b"255", "not an 8-bit P5 PGM: %s" % path
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[pos + 1:pos + 1 + w * h], dtype=np.uint8).reshape(h, w).copy()


def textured_image(height, width, seed=1):
    """Deterministic smooth-ish random image with corners: blurred noise plus a few rectangles."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(height // 4 + 2, width // 4 + 2)).astype(np.float32)
    img = np.kron(small, np.ones((4, 4), np.float32))[:height, :width]
    img = (img + np.roll(img, 1, 0) + np.roll(img, 1, 1) + np.roll(img, (1, 1), (0, 1))) / 4
    for _ in range(20):
        y, x = rng.integers(0, height - 8), rng.integers(0, width - 8)
        img[y:y + rng.integers(4, 30), x:x + rng.integers(4, 30)] = rng.integers(0, 256)
    return np.clip(img, 0, 255).astype(np.uint8)


def shifted(img, dx, dy):
    """img moved by whole pixels (dx, dy), edges replicated; C-contiguous (fancy indexing alone gives a
    column-major array, which a CUDA copy keeps and the device frames reject)."""
    h, w = img.shape
    ys = np.clip(np.arange(h) - dy, 0, h - 1)
    xs = np.clip(np.arange(w) - dx, 0, w - 1)
    return np.ascontiguousarray(img[ys][:, xs])


def cuda_or_skip():
    if not kestrel.built_with_cuda():
        skip_or_fail("gpu", "this build has no CUDA backend")
    if not kestrel.cuda_available():
        skip_or_fail("gpu", "no usable CUDA device on this machine: the GPU tests run on the GPU machine "
                     "(scripts/gpu_run.sh, step 'python')")


def cupy_or_skip():
    """CuPy, on a machine with a CUDA device; missing CuPy skips, or fails with KESTREL_REQUIRE_GPU=1."""
    cuda_or_skip()
    try:
        import cupy
    except ImportError as e:
        skip_or_fail("gpu", "CuPy is not installed (%s)" % e)
    return cupy
