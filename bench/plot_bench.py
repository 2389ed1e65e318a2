#!/usr/bin/env python3
"""Turns kestrel_bench --json output into PNG plots.

usage: bench/plot_bench.py RESULT.json [--out DIR] [--prefix NAME]

Writes three files (default: next to the JSON, named after it):
  NAME_stages.png    median of every Kestrel row and of the floor, p10..p90 as error bars
  NAME_timeline.png  time per frame over the sequence (log scale), re-detection frames marked
  NAME_speedup.png   speed-up of Kestrel over each baseline (baseline median / Kestrel median)
Needs matplotlib (pip install matplotlib, or apt install python3-matplotlib).
"""
import argparse
import json
import math
import os
import sys


def load_matplotlib():
    try:
        import matplotlib
    except ImportError:
        sys.exit("plot_bench.py: matplotlib is not installed: pip install matplotlib "
                 "(or apt install python3-matplotlib), then run again")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


KIND_COLOUR = {"device": "#1f77b4", "wall": "#d62728", "derived": "#9467bd"}
GROUP_COLOUR = {"floor": "#7f7f7f", "kestrel": "#d62728", "opencv": "#2ca02c",
                "opencv-mt": "#17becf", "opencv-cuda": "#ff7f0e"}


def finite(v):
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def title(data):
    meta = data.get("meta", {})
    where = meta.get("GPU") or meta.get("backend", "")
    return "%s\n%s, %s" % (where.split(" (")[0].split(",")[0], meta.get("frames", ""),
                           meta.get("measured", "").split(",")[0])


def plot_stages(plt, data, path):
    rows = [s for s in data["series"]
            if s["group"] in ("kestrel", "floor") and s["kind"] != "count" and finite(s.get("median"))]
    if not rows:
        return False
    rows = rows[::-1]
    fig, ax = plt.subplots(figsize=(10, 0.42 * len(rows) + 1.8))
    y = range(len(rows))
    med = [s["median"] for s in rows]
    lo = [max(0.0, s["median"] - s["p10"]) if finite(s["p10"]) else 0 for s in rows]
    hi = [max(0.0, s["p90"] - s["median"]) if finite(s["p90"]) else 0 for s in rows]
    colours = [GROUP_COLOUR["floor"] if s["group"] == "floor" else KIND_COLOUR.get(s["kind"], "#333333")
               for s in rows]
    ax.barh(list(y), med, xerr=[lo, hi], color=colours, capsize=3)
    ax.set_yticks(list(y))
    ax.set_yticklabels(["%s [%s]" % (s["label"], s["kind"]) for s in rows], fontsize=8)
    for i, s in enumerate(rows):
        extra = " (x%.2f floor)" % s["x_floor"] if finite(s.get("x_floor")) else ""
        at = max(s["median"], s["p90"]) if finite(s["p90"]) else s["median"]
        ax.text(at, i, " %.1f us%s" % (s["median"], extra), va="center", fontsize=7)
    floor = next((s for s in data["series"] if s["key"] == data.get("floor_key")), None)
    if floor and finite(floor.get("median")):
        ax.axvline(floor["median"], color=GROUP_COLOUR["floor"], linestyle="--", linewidth=1)
    ax.margins(x=0.25)
    positive = [m for m in med if m > 0]
    if positive and max(positive) / min(positive) > 50:
        ax.set_xscale("log")
    ax.set_xlabel("microseconds per frame (median; bars p10..p90). blue: device (CUDA events), "
                  "red: wall, purple: derived, grey: floor", fontsize=8)
    ax.set_title("Kestrel per stage - " + title(data), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_timeline(plt, data, path):
    wanted = ["floor", "detect_e2e", "frame_e2e", "tracking", "detect_device",
              "cv_fast_grid", "cv_lk", "cv_fast_grid_mt", "cv_lk_mt", "cvcuda_fast", "cvcuda_lk"]
    by_key = {s["key"]: s for s in data["series"]}
    fig, ax = plt.subplots(figsize=(11, 5))
    drawn = 0
    for key in wanted:
        s = by_key.get(key)
        if not s or not any(finite(v) for v in s["per_frame"]):
            continue
        xs = [i for i, v in enumerate(s["per_frame"]) if finite(v) and v > 0]
        ys = [s["per_frame"][i] for i in xs]
        style = "--" if s["group"] == "floor" else "-"
        ax.plot(xs, ys, style, linewidth=0.9, label="%s (%s)" % (s["label"], s["group"]),
                color=None if s["group"] == "kestrel" else GROUP_COLOUR.get(s["group"]))
        drawn += 1
    if not drawn:
        plt.close(fig)
        return False
    red = by_key.get("redetected")
    if red:
        for i, v in enumerate(red["per_frame"]):
            if finite(v) and v > 0:
                ax.axvline(i, color="#bbbbbb", linewidth=0.4, zorder=0)
    ax.set_yscale("log")
    ax.set_xlabel("measured frame (grey lines: frames with re-detection)")
    ax.set_ylabel("microseconds")
    ax.set_title("Time per frame - " + title(data), fontsize=10)
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def plot_speedup(plt, data, path):
    comps = [c for c in data.get("comparisons", []) if finite(c.get("speedup"))]
    if not comps:
        return False
    by_key = {s["key"]: s for s in data["series"]}
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(comps) + 1.8))
    labels, values, colours = [], [], []
    for c in comps[::-1]:
        b = by_key[c["baseline"]]
        labels.append("%s\nvs %s" % (c["what"], b["label"]))
        values.append(c["speedup"])
        colours.append(GROUP_COLOUR.get(b["group"], "#333333"))
    ax.barh(range(len(values)), values, color=colours)
    ax.set_yticks(range(len(values)))
    ax.set_yticklabels(labels, fontsize=7)
    for i, v in enumerate(values):
        ax.text(v, i, " x%.2f" % v, va="center", fontsize=8)
    ax.axvline(1.0, color="black", linewidth=1)
    ax.margins(x=0.2)
    ax.set_xscale("log")
    ax.set_xlabel("speed-up of Kestrel (baseline median / Kestrel median; > 1: Kestrel faster)")
    ax.set_title("Speed-up over each baseline - " + title(data), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description="kestrel_bench JSON -> PNG plots")
    ap.add_argument("json", help="file written by kestrel_bench --json")
    ap.add_argument("--out", help="output folder (default: the JSON's folder)")
    ap.add_argument("--prefix", help="file name prefix (default: the JSON's name without .json)")
    args = ap.parse_args()
    plt = load_matplotlib()
    try:
        with open(args.json) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("plot_bench.py: cannot read %s: %s" % (args.json, e))
    if data.get("tool") != "kestrel_bench":
        sys.exit("plot_bench.py: %s is not a kestrel_bench --json file" % args.json)
    out = args.out or os.path.dirname(os.path.abspath(args.json))
    os.makedirs(out, exist_ok=True)
    prefix = args.prefix or os.path.splitext(os.path.basename(args.json))[0]
    for name, fn in (("stages", plot_stages), ("timeline", plot_timeline), ("speedup", plot_speedup)):
        path = os.path.join(out, "%s_%s.png" % (prefix, name))
        if fn(plt, data, path):
            print("wrote", path)
        else:
            print("skipped %s: nothing to plot" % name)


if __name__ == "__main__":
    main()
