#!/usr/bin/env python3
"""Track features through a video or an image folder with Kestrel and plot the tracks with matplotlib.

    python3 track_and_plot.py SOURCE [--out tracks.png] [--max-frames N] [--features N] [--backend cpu|cuda]
                              [--tail N]

SOURCE: a folder of images (PNG, JPEG, ...; sorted by name), a EuRoC folder (SOURCE/mav0/cam0/data/), or a
video file (read with OpenCV's cv2, when installed). Colour frames are converted to grey. The plot shows the last
frame with each live track's last --tail positions as a line (one colour per track id) and its position as a
dot; the summary printed at the end gives the tracks born, lost (by reason) and their lengths.

Needs numpy and matplotlib (pip install matplotlib); cv2 only for video files.
"""
import argparse
import collections
import sys
from pathlib import Path

import numpy as np

import kestrel

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".pgm", ".ppm", ".bmp", ".tif", ".tiff"}


def grey(frame):
    """uint8 grey image from a uint8 grey, RGB or RGBA array (ITU-R 601 weights, as OpenCV's)."""
    frame = np.asarray(frame)
    if frame.ndim == 3:
        frame = frame[:, :, :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)
        frame = np.clip(np.rint(frame), 0, 255)
    return frame.astype(np.uint8)


def folder_frames(folder):
    from PIL import Image  # a dependency of matplotlib
    euroc = folder / "mav0" / "cam0" / "data"
    if euroc.is_dir():
        folder = euroc
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        sys.exit("track_and_plot: no images in %s" % folder)
    for p in files:
        with Image.open(p) as im:
            yield p.name, grey(np.asarray(im.convert("L") if im.mode not in ("L", "RGB", "RGBA") else im))


def video_frames(path):
    try:
        import cv2
    except ImportError:
        sys.exit("track_and_plot: reading a video needs OpenCV's Python module (pip install opencv-python); "
                 "or pass a folder of images")
    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        sys.exit("track_and_plot: cannot open video %s" % path)
    i = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        yield "frame %d" % i, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        i += 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("--out", type=Path, default=Path("tracks.png"))
    ap.add_argument("--max-frames", type=int, default=0, help="0 = all")
    ap.add_argument("--features", type=int, default=200, help="target number of live tracks")
    ap.add_argument("--backend", choices=["cpu", "cuda"], default=None, help="default: CUDA when a device is usable")
    ap.add_argument("--tail", type=int, default=20, help="positions drawn per track")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frames = folder_frames(args.source) if args.source.is_dir() else video_frames(args.source)
    backend = {"cpu": kestrel.Backend.Cpu, "cuda": kestrel.Backend.Cuda, None: None}[args.backend]
    tracker = None
    history = collections.defaultdict(list)  # id -> [(x, y), ...]
    lengths, lost_by = [], collections.Counter()
    born = 0
    last = None
    n = 0
    for name, frame in frames:
        if tracker is None:
            cfg = kestrel.TrackerConfig(target_features=args.features)
            tracker = kestrel.FeatureTracker(frame.shape[1], frame.shape[0], cfg, backend=backend)
            print("source %s: %dx%d frames, backend %s" % (args.source, frame.shape[1], frame.shape[0],
                                                           tracker.backend.name))
        tracks = tracker.track(frame)
        born += int((tracks["age"] == 0).sum())
        for t in tracker.lost_tracks:
            lost_by[kestrel.TrackStatus(int(t["status"])).name] += 1
            lengths.append(int(t["age"]))
            history.pop(int(t["id"]), None)
        for t in tracks:
            h = history[int(t["id"])]
            h.append((float(t["x"]), float(t["y"])))
            del h[:-args.tail]
        last, n = frame, n + 1
        if args.max_frames and n >= args.max_frames:
            break
    if last is None:
        sys.exit("track_and_plot: no frames in %s" % args.source)

    live = tracker.tracks
    fig, ax = plt.subplots(figsize=(last.shape[1] / 100, last.shape[0] / 100), dpi=100)
    ax.imshow(last, cmap="gray", vmin=0, vmax=255)
    colours = plt.get_cmap("hsv")
    for t in live:
        pts = np.array(history[int(t["id"])])
        c = colours((int(t["id"]) * 0.618) % 1.0)
        ax.plot(pts[:, 0], pts[:, 1], "-", color=c, linewidth=1)
        ax.plot(pts[-1, 0], pts[-1, 1], "o", color=c, markersize=2)
    ax.set_title("%d live tracks after %d frames" % (len(live), n), fontsize=8)
    ax.set_axis_off()
    fig.tight_layout(pad=0.2)
    fig.savefig(args.out)
    plt.close(fig)

    lengths += [int(a) for a in live["age"]]
    print("frames %d; tracks born %d, lost %d (%s), %d live at the end; median track length %.0f frames"
          % (n, born, sum(lost_by.values()), ", ".join("%s %d" % kv for kv in sorted(lost_by.items())) or "none",
             len(live), float(np.median(lengths)) if lengths else 0.0))
    print("wrote %s" % args.out)


if __name__ == "__main__":
    main()
