#!/usr/bin/env python3
"""The Python overhead of FeatureDetector.detect(): detect() called from Python against the same detection looped
in C++ inside the module (kestrel._kestrel._bench_detect_cpp: no Python between calls, GIL released), on the
752x480 frame of the C++ microbenchmark (detector/end-to-end/752x480: vtest.avi's first frame, centre-cropped;
the same detector settings). The difference of the medians is what the binding costs per call (argument
checks, the GIL release, the NumPy result).

Rows: the CPU backend (NumPy frame); the CUDA backend with a NumPy frame (pageable host memory, uploaded by the
call); the CUDA backend with a CuPy device array (used in place) on a created stream, when CuPy is installed.

    python3 python/bench/bench_detect.py [--image PATH] [--iterations N]

PATH: a grey or colour 8-bit PNG or a PGM; default $KESTREL_TEST_DATA/vtest_000.png, else a build tree's
testdata/vtest_000.png. Prints one line per row: median us per call from Python, from C++, and the overhead.
"""
import argparse
import glob
import os
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np

import kestrel

ROOT = Path(__file__).resolve().parents[2]


def read_png_grey(path):
    """8-bit non-interlaced PNG (grey, grey+alpha, RGB, RGBA) as grey uint8; RGB reduced as OpenCV's
    IMREAD_GRAYSCALE would be close to (0.299 R + 0.587 G + 0.114 B, rounded). Enough for the test frames."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, header = 8, [], None
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, colour, interlace = header[8], header[9], header[12]
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError("%s: only 8-bit non-interlaced grey/RGB(A) PNG is read here" % path)
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), np.uint8).reshape(h, 1 + w * channels)
    out = np.zeros((h, w * channels), np.uint8)
    prev = np.zeros(w * channels, np.int32)
    bpp = channels
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 255
        elif f in (1, 3, 4):
            cur = line.copy()
            for x in range(len(cur)):
                a = cur[x - bpp] if x >= bpp else 0
                if f == 1:
                    cur[x] = (cur[x] + a) & 255
                elif f == 3:
                    cur[x] = (cur[x] + ((a + prev[x]) >> 1)) & 255
                else:
                    b, c = prev[x], prev[x - bpp] if x >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[x] = (cur[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        else:
            raise ValueError("%s: bad PNG filter %d" % (path, f))
        out[y] = cur
        prev = cur
    img = out.reshape(h, w, channels)
    if channels <= 2:
        return np.ascontiguousarray(img[:, :, 0])
    rgb = img[:, :, :3].astype(np.float64)
    return np.clip(np.rint(rgb @ np.array([0.299, 0.587, 0.114])), 0, 255).astype(np.uint8)


def read_pgm(path):
    data = Path(path).read_bytes()
    parts = data.split(maxsplit=4)
    w, h = int(parts[1]), int(parts[2])
    return np.frombuffer(parts[4][:w * h], np.uint8).reshape(h, w).copy()


def default_image():
    env = os.environ.get("KESTREL_TEST_DATA")
    candidates = ([os.path.join(env, "vtest_000.png")] if env else []) + sorted(
        glob.glob(str(ROOT / "build*" / "testdata" / "vtest_000.png")))
    for c in candidates:
        if os.path.exists(c):
            return c
    sys.exit("bench_detect: no vtest_000.png: pass --image or set KESTREL_TEST_DATA (the build's testdata/)")


def centre_crop(img, w, h):
    y0, x0 = (img.shape[0] - h) // 2, (img.shape[1] - w) // 2
    return np.ascontiguousarray(img[y0:y0 + h, x0:x0 + w])


def python_median(call, iterations):
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def row(name, det, frame, iterations, stream=None):
    for _ in range(20):  # warm-up: the first call at a size allocates (and records the CUDA graph)
        det.detect(frame, stream=stream)
    n = len(det.detect(frame, stream=stream))
    py, cpp = [], []
    for _ in range(5):  # interleaved rounds, medians of medians
        py.append(python_median(lambda: det.detect(frame, stream=stream), iterations))
        cpp.append(kestrel._kestrel._bench_detect_cpp(det, frame, iterations, stream))
    py_us, cpp_us = 1e6 * statistics.median(py), 1e6 * statistics.median(cpp)
    print("%-44s %6d kp   python %9.2f us   c++ %9.2f us   overhead %7.2f us per call"
          % (name, n, py_us, cpp_us, py_us - cpp_us))
    return py_us - cpp_us


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", default=None)
    ap.add_argument("--iterations", type=int, default=200)
    args = ap.parse_args()
    path = args.image or default_image()
    img = read_pgm(path) if path.endswith((".pgm", ".pnm")) else read_png_grey(path)
    frame = centre_crop(img, 752, 480)
    # The settings of the microbenchmark's detector rows (bench/microbench_util.cpp, issue4_detector).
    cfg = kestrel.DetectorConfig(pyramid=kestrel.PyramidConfig(levels=2, scale=2.0),
                                 fast=kestrel.FastConfig(threshold=10, score=kestrel.ScoreType.SadCircle),
                                 cell_width=32, cell_height=32)
    print("kestrel %s, %s; frame %s centre-cropped to 752x480; %d calls x 5 rounds per row"
          % (kestrel.__version__, "CUDA device present" if kestrel.cuda_available() else "no CUDA device",
             os.path.basename(path), args.iterations))
    row("detect/python-overhead/752x480/cpu", kestrel.FeatureDetector(cfg, backend=kestrel.Backend.Cpu), frame,
        max(args.iterations // 10, 10))
    if not kestrel.cuda_available():
        print("detect/python-overhead/752x480/cuda-*: skipped (no CUDA device)")
        return
    gpu = kestrel.FeatureDetector(cfg, backend=kestrel.Backend.Cuda)
    row("detect/python-overhead/752x480/cuda-numpy", gpu, frame, args.iterations)
    try:
        import cupy as cp
    except ImportError:
        print("detect/python-overhead/752x480/cuda-cupy: skipped (CuPy not installed)")
        return
    stream = cp.cuda.Stream(non_blocking=True)
    d_frame = cp.asarray(frame)
    cp.cuda.runtime.deviceSynchronize()
    row("detect/python-overhead/752x480/cuda-cupy-stream", kestrel.FeatureDetector(cfg, backend=kestrel.Backend.Cuda),
        d_frame, args.iterations, stream.ptr)


if __name__ == "__main__":
    main()
