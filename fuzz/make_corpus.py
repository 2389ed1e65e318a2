#!/usr/bin/env python3
"""Writes the seed corpus fuzz/corpus/<target>/seed_* (run from anywhere; deterministic).

Each seed encodes, in the byte format of fuzz/fuzz_input.hpp (Input), a configuration worth starting
from: the defaults, every score type, bounds at their edges, masks, caps, odd sizes and pitches.
The fuzzers mutate from there; libFuzzer adds what it finds to its own working corpus."""
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


class Enc:
    def __init__(self):
        self.b = bytearray()

    def byte(self, v):
        self.b.append(v & 0xFF)

    def u16(self, v):
        self.b += struct.pack("<H", v & 0xFFFF)

    def u32(self, v):
        self.b += struct.pack("<I", v & 0xFFFFFFFF)

    def flag(self, v):
        self.byte(1 if v else 0)

    def range(self, lo, hi, v):  # Input::range
        self.u16(v - lo)

    def param(self, lo, hi, v):  # Input::param, the in-window form (v in [lo - 2, hi + 2])
        assert lo - 2 <= v <= hi + 2
        self.byte(0)
        self.u16(v - (lo - 2))

    def raw_param(self, v):  # Input::param, any int32
        self.byte(0x0F)
        self.u32(v)

    def fparam(self, lo, hi, v):  # Input::fparam: exact lo / hi, specials, or raw bits
        if v == lo:
            self.byte(5)
        elif v == hi:
            self.byte(6)
        elif v != v:
            self.byte(0)
        elif v == float("inf"):
            self.byte(1)
        elif v == float("-inf"):
            self.byte(2)
        else:
            self.byte(7)
            self.b += struct.pack("<f", v)

    def pixels(self, mode, block=5, noise=4, seed=12345, raw=b""):  # Input::fill
        self.byte(mode)
        self.byte(block - 1)
        self.byte(noise)
        self.u32(seed)
        self.b += raw


def write(target, name, enc):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed_" + name), "wb") as f:
        f.write(bytes(enc.b))


# ---- fuzz_detector: field order of fuzz/fuzz_detector.cpp --------------------------------------
def detector(name, levels=2, scale2=True, scale=2.0, t=10, arc_min=9, arc_max=16, score=0, nms=1,
             cw_mult=1, ch=32, per_cell=1, max_features=0, border=0, w=96, h=64, pad=0, mask_mode=0,
             mask_bytes=b"", pix=(1, 5, 4, 777, b"")):
    e = Enc()
    e.param(1, 4, levels)
    e.flag(scale2)
    if not scale2:
        e.fparam(1.0, 2.0, scale)
    e.param(0, 254, t)
    e.param(1, 16, arc_min)
    if arc_max == 16:
        e.flag(True)
    else:
        e.flag(False)
        e.param(1, 16, arc_max)
    e.param(0, 3, score)
    e.param(1, 4, nms)
    e.flag(True)
    e.range(0, 5, cw_mult)
    e.param(8, 64, ch)
    e.param(1, 8, per_cell)
    if max_features == 0:
        e.flag(True)
    else:
        e.flag(False)
        e.param(0, 32, max_features)
    if border == 0:
        e.flag(True)
    else:
        e.flag(False)
        e.param(0, 64, border)
    e.range(1, 256, w)
    e.range(1, 256, h)
    e.range(0, 8, pad)
    e.byte(mask_mode)
    e.b += mask_bytes
    e.pixels(*pix)
    write("fuzz_detector", name, e)


detector("default")
for s in range(4):
    detector("score%d" % s, score=s, levels=3, w=128, h=96)
detector("arc12_13", arc_min=12, arc_max=13, t=5)
detector("arc1", arc_min=1, arc_max=16, t=40)
detector("t0", t=0, score=2)
detector("t254", t=254)
detector("k8_nms4", per_cell=8, nms=4, ch=8)
detector("cap5", max_features=5, per_cell=4)
detector("border", border=20, w=60, h=50)
detector("scale1_5", levels=4, scale2=False, scale=1.5, w=200, h=150)
detector("odd_pitch", w=37, h=23, pad=7)
detector("tiny", w=7, h=7, levels=1)
detector("cellmask", mask_mode=1, mask_bytes=bytes([1, 0, 1, 0, 0, 1]), w=96, h=64)
detector("pixmask", mask_mode=4, mask_bytes=struct.pack("<I", 0x5A3C96E1))
detector("bad_cellgrid", mask_mode=3)
detector("bad_pixmask", mask_mode=12, mask_bytes=struct.pack("<I", 0xFFFFFFFF))
detector("raw_pixels", pix=(0, 1, 0, 1, bytes(range(0, 256, 7)) * 3))
detector("xor_pixels", pix=(2, 3, 10, 99, bytes([0, 255, 17, 80])))


# ---- fuzz_pyramid_fast: field order of fuzz/fuzz_pyramid_fast.cpp ------------------------------
def pyr_fast(name, levels=3, scale2=True, scale=2.0, t=10, arc_min=9, arc_max=16, score=0, w=80, h=60, pad=0,
             pix=(1, 4, 6, 4242, b"")):
    e = Enc()
    e.param(1, 8, levels)
    e.flag(scale2)
    if not scale2:
        e.fparam(1.0, 2.0, scale)
    e.param(0, 254, t)
    e.param(1, 16, arc_min)
    e.param(arc_min, 16, arc_max)
    e.param(0, 3, score)
    e.range(1, 256, w)
    e.range(1, 256, h)
    e.range(0, 8, pad)
    e.pixels(*pix)
    write("fuzz_pyramid_fast", name, e)


pyr_fast("default")
for s in range(4):
    pyr_fast("score%d" % s, score=s)
pyr_fast("scale1_25", scale2=False, scale=1.25, levels=6, w=256, h=200)
pyr_fast("scale_nan", scale2=False, scale=float("nan"))
pyr_fast("levels8", levels=8, w=256, h=256)
pyr_fast("too_many_levels", levels=5, w=40, h=40)
pyr_fast("arc_bad", arc_min=12, arc_max=11)
pyr_fast("odd", w=13, h=9, pad=3, levels=1)
pyr_fast("raw", pix=(0, 1, 0, 0, bytes([10, 200, 30, 180, 90]) * 9))


# ---- fuzz_config: selector byte, then fields in the order of fuzz/fuzz_config.cpp ----------------
def cfg(name, selector, fields):
    e = Enc()
    e.byte(selector)
    for f in fields:
        f(e)
    write("fuzz_config", name, e)


P = lambda lo, hi, v: (lambda e: e.param(lo, hi, v))
R = lambda v: (lambda e: e.raw_param(v))
F = lambda lo, hi, v: (lambda e: e.fparam(lo, hi, v))
B = lambda v: (lambda e: e.flag(v))

pyr_ok = [P(1, 8, 3), F(1.0, 2.0, 2.0)]
fast_ok = [P(0, 254, 20), P(1, 16, 9), P(1, 16, 16), P(0, 3, 1)]
det_ok = pyr_ok + fast_ok + [P(1, 4, 1), B(True), P(1, 32, 1), P(8, 1024, 32), P(1, 8, 2), B(True),
                             P(0, 64, 0), P(0, 64, 8), B(True)]
lk_ok = pyr_ok + [P(0, 3, 3), P(0, 1, 0), P(4, 16, 16), P(4, 16, 8), P(1, 8, 2), P(1, 100, 30),
                  F(0.0, 1.0, 0.01), F(0.0, 255.0, 30.0), F(0.0, 1e6, 1.0)]
cfg("pyramid_ok", 0, pyr_ok + [P(7, 16383, 640), P(7, 16383, 480)])
cfg("pyramid_too_deep", 0, [P(1, 8, 8), F(1.0, 2.0, 2.0), P(7, 16383, 100), P(7, 16383, 100)])
cfg("pyramid_scale1", 0, [P(1, 8, 2), F(1.0, 2.0, 1.0), P(7, 16383, 100), P(7, 16383, 100)])
cfg("pyramid_inf", 0, [P(1, 8, 2), F(1.0, 2.0, float("inf")), P(7, 16383, 100), P(7, 16383, 100)])
cfg("fast_ok", 1, fast_ok)
cfg("fast_t255", 1, [P(0, 254, 255), P(1, 16, 9), P(1, 16, 16), P(0, 3, 0)])
cfg("fast_arc_swapped", 1, [P(0, 254, 10), P(1, 16, 12), P(1, 16, 10), P(0, 3, 0)])
cfg("fast_score_enum", 1, [P(0, 254, 10), P(1, 16, 9), P(1, 16, 16), R(-7)])
cfg("detector_ok", 2, det_ok + [P(1, 16383, 752), P(1, 16383, 480)])
cfg("detector_cell33", 2, pyr_ok + fast_ok + [P(1, 4, 1), B(False), P(32, 1024, 33)])
cfg("lk_ok", 3, lk_ok + [P(0, 7, 2)])
cfg("lk_nan", 3, pyr_ok + [P(0, 3, 3), P(0, 1, 0), P(4, 16, 16), P(4, 16, 8), P(1, 8, 2), P(1, 100, 30),
                           F(0.0, 1.0, float("nan"))])
cfg("tracker_ok", 4, lk_ok + det_ok + [P(1, 65536, 200), F(0.0, 1.0, 0.3), B(True), F(0.0, 100.0, 0.5)])
cfg("view_ok", 5, [B(True), P(1, 16383, 64), P(1, 16383, 48), P(-4, 4, 0)])
cfg("view_null", 5, [B(False), P(1, 16383, 64), P(1, 16383, 48), P(-4, 4, 2)])
cfg("view_pitch", 5, [B(True), P(1, 16383, 64), P(1, 16383, 48), P(-4, 4, -1)])
cfg("view_negative", 5, [B(True), R(-5), P(1, 16383, 48), P(-4, 4, 0)])


# ---- fuzz_tracker: field order of fuzz/fuzz_tracker.cpp -----------------------------------------
def tracker(name, levels=2, mode=3, src=0, patch=8, coarse=4, coarse_from=1, iters=20, npts=6, shift=(3, 1),
            w=96, h=80, gain=1.0, offset=0.0, guesses=0, special=None, pix=(1, 6, 3, 31337, b"")):
    e = Enc()
    e.param(1, 4, levels)
    e.param(0, 3, mode)
    e.param(0, 1, src)
    e.param(4, 16, patch)
    e.param(4, 16, coarse)
    e.param(1, 8, coarse_from)
    e.param(1, 100, iters)
    e.fparam(0.0, 1.0, 0.01)
    e.fparam(0.0, 255.0, 40.0)
    e.fparam(0.0, 1e6, 0.5)
    e.range(1, 256, w)
    e.range(1, 256, h)
    e.range(-8, 8, shift[0])
    e.range(-8, 8, shift[1])
    e.byte(int(gain * 64))
    e.byte(int(offset) + 128)
    e.range(0, 32, npts)
    e.byte(guesses)
    for i in range(npts):
        if special is not None and i == 0:
            e.byte(1)
            e.fparam(-16.0, 272.0, special)
            e.fparam(-16.0, 272.0, 40.0)
        else:
            e.byte(0)
            e.range(0, 4095, 16 * (10 + 11 * i % (w - 20)))
            e.range(0, 4095, 16 * (10 + 7 * i % (h - 20)))
        if guesses:
            e.range(-64, 64, 5)
            e.range(-64, 64, -3)
    e.pixels(*pix)
    write("fuzz_tracker", name, e)


tracker("default")
for m in range(4):
    tracker("mode%d" % m, mode=m)
tracker("first_frame", src=1)
tracker("patch16", patch=16, coarse=8, levels=3, w=160, h=120, coarse_from=2)
tracker("patch4", patch=4, coarse=4, levels=1)
tracker("gain", gain=1.5, offset=-20)
tracker("guesses", guesses=1)
tracker("nan_point", special=float("nan"))
tracker("inf_point", special=float("inf"))
tracker("outside", special=-15.5)
tracker("big_shift", shift=(8, -8), iters=100)
tracker("no_points", npts=0)


# ---- fuzz_feature_tracker: field order of fuzz/fuzz_feature_tracker.cpp ---------------------------
def feature_tracker(name, levels=2, mode=3, src=0, patch=8, coarse=6, coarse_from=1, iters=15, det_levels=2,
                    t=12, arc_min=9, cw=1, ch=32, per_cell=2, border=0, target=40, redetect=0.3, fb=False,
                    fb_err=0.5, w=96, h=72, ops=((0, 0, 0), (0, 1, 1), (0, 2, 1), (0, 3, 2)),
                    pix=(1, 6, 4, 2024, b"")):
    e = Enc()
    e.param(1, 3, levels)
    e.param(0, 3, mode)
    e.param(0, 1, src)
    e.param(4, 16, patch)
    e.param(4, 16, coarse)
    e.param(1, 8, coarse_from)
    e.range(1, 30, iters)
    e.fparam(0.0, 1.0, 0.01)
    e.fparam(0.0, 255.0, 40.0)
    e.flag(True)
    e.param(1, 3, det_levels)
    e.param(0, 254, t)
    e.range(9, 12, arc_min)
    e.range(1, 4, cw)
    e.range(8, 64, ch)
    e.range(1, 4, per_cell)
    e.range(0, 8, border)
    e.param(1, 256, target)
    e.fparam(0.0, 1.0, redetect)
    e.flag(fb)
    e.fparam(0.0, 100.0, fb_err)
    e.range(7, 128, w)
    e.range(7, 128, h)
    e.range(1, 5, len(ops))
    for op, dx, dy in ops:
        e.byte(op)
        e.range(0, 16, dx)
        e.range(0, 16, dy)
    e.pixels(*pix)
    write("fuzz_feature_tracker", name, e)


feature_tracker("default")
feature_tracker("first_frame", src=1)
feature_tracker("forward_backward", fb=True, fb_err=0.25)
feature_tracker("translation", mode=0, levels=3, coarse_from=2, w=128, h=128)
feature_tracker("redetect_always", redetect=1.0, target=100)
feature_tracker("one_track", target=1)
feature_tracker("tiny", w=16, h=16, levels=1, det_levels=1, patch=4)
feature_tracker("bad_calls", ops=((1, 0, 0), (2, 1, 1), (3, 2, 2), (4, 3, 3), (5, 4, 4)))
feature_tracker("moved_and_reset", ops=((6, 0, 0), (0x38 | 0x40, 1, 0), (6 | 0x40, 2, 0), (0, 3, 0)))
feature_tracker("predictions", ops=((0x40, 0, 0), (0x40, 2, 2), (0xC2, 4, 4), (0x41, 6, 6)))


# ---- fuzz_camera: fields in the order of fuzz/fuzz_camera.cpp ------------------------------------
def camera(name, model, w, h, fx, fy, cx, cy, d, big=False, cfg=None, pixels=()):
    e = Enc()
    e.param(0, 2, model)
    e.param(1, 2000, w)
    e.param(1, 2000, h)
    e.fparam(1.0, 2000.0, fx)
    e.fparam(1.0, 2000.0, fy)
    e.fparam(-100.0, 2100.0, cx)
    e.fparam(-100.0, 2100.0, cy)
    e.flag(big)
    lim = 1000.0 if big else 1.0
    for k in d:
        e.flag(k == 0.0)  # set: the coefficient is 0
        if k != 0.0:
            e.fparam(-lim, lim, k)
    e.flag(cfg is not None)
    if cfg is not None:
        e.param(1, 100, cfg[0])
        e.fparam(1e-15, 1e-3, cfg[1])
    e.range(0, 64, len(pixels))
    side = float(max(w, h))
    for u, v in pixels:
        e.fparam(-0.25 * side, 1.25 * side, u)
        e.fparam(-0.25 * side, 1.25 * side, v)
    write("fuzz_camera", name, e)


_grid = [(u, v) for u in (-0.5, 0.0, 100.25, 376.0, 751.5) for v in (-0.5, 240.0, 479.5)]
camera("euroc_radtan", 1, 752, 480, 458.654, 457.296, 367.215, 248.375,
       (-0.28340811, 0.07395907, 0.00019359, 1.76187114e-05, 0.0), pixels=_grid + [(float("nan"), 1.0)])
camera("tumvi_fisheye", 2, 512, 512, 190.97, 190.98, 254.93, 256.90,
       (0.0034823894, 0.00071503, -0.0020532361, 0.00020293673, 0.0),
       pixels=[(0.0, 0.0), (254.93, 256.9), (511.5, 100.0), (-100.0, 300.0), (float("inf"), 3.0)])
camera("pinhole", 0, 640, 480, 525.0, 525.0, 319.5, 239.5, (0.0,) * 5, pixels=[(0.0, 0.0), (639.5, 479.5)])
camera("radtan_fold", 1, 640, 480, 100.0, 100.0, 320.0, 240.0, (-0.5, 0.0, 0.0, 0.0, 0.0),
       pixels=[(374.0, 240.0), (375.0, 240.0), (0.0, 0.0)])
camera("big_coefficients", 1, 640, 480, 300.0, 300.0, 320.0, 240.0, (-900.0, 800.0, 5.0, -5.0, 700.0), big=True,
       cfg=(3, 1e-15), pixels=[(0.0, 0.0), (320.0, 240.0), (600.0, 10.0)])
