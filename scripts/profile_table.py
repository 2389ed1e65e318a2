#!/usr/bin/env python3
"""Per-stage table from scripts/gpu_profile.sh's output folder (ncu_<row>_<sms>.csv, timing_<sms>.json).

    python3 scripts/profile_table.py DIR

For every profiled row and SM count, one line per kernel (medians over its launches): device time, achieved and
theoretical occupancy, the occupancy limiter, launch shape, executed warp instructions, SM-microseconds
(device time x SMs) and the stage's issue floor: the warp instructions it executed divided by what the SMs can
issue (4 per SM and cycle at the measured SM clock), in SM-microseconds too. SM-us / floor says how far the
kernel is from keeping every scheduler of the SMs it was given busy with its own instructions: a latency-bound
or under-occupied kernel shows a large ratio. Then the timed rows (medians, us) of each SM count.
Standard library only.
"""
import csv
import glob
import json
import os
import re
import statistics
import sys


def num(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def short_name(name):
    name = re.sub(r"\(.*$", "", name)          # arguments
    name = re.sub(r"^.*::", "", name)          # namespaces
    return name.strip()


def read_ncu(path):
    with open(path, newline="") as f:
        lines = [l for l in f if l.startswith('"')]
    if len(lines) < 3:
        return []
    rows = list(csv.reader(lines))
    head, units, data = rows[0], rows[1], rows[2:]
    col = {h: i for i, h in enumerate(head)}
    unit = {h: units[i] for i, h in enumerate(head)}
    out = []
    for r in data:
        def g(key):
            i = col.get(key)
            return num(r[i]) if i is not None and i < len(r) else None
        dur = g("gpu__time_duration.sum")
        if dur is None:
            continue
        u = unit.get("gpu__time_duration.sum", "ns")
        dur_us = dur / 1000.0 if u == "ns" else (dur * 1000.0 if u == "ms" else (dur if u == "us" else dur / 1000.0))
        clk_key = "gpc__cycles_elapsed.avg.per_second"  # the SM clock during the kernel (SpeedOfLight section)
        clk = g(clk_key)
        cu = unit.get(clk_key, "")
        clk_hz = None
        if clk is not None:
            clk_hz = clk * {"Ghz": 1e9, "GHz": 1e9, "Mhz": 1e6, "MHz": 1e6, "hz": 1.0, "Hz": 1.0,
                            "cycle/nsecond": 1e9, "cycle/usecond": 1e6, "cycle/second": 1.0}.get(cu, 1e9 if clk < 10 else 1e6 if clk < 1e4 else 1.0)
        limits = {k: g("launch__occupancy_limit_" + k) for k in ("registers", "shared_mem", "warps", "blocks")}
        lim = [k for k, v in limits.items() if v is not None]
        limiter = min(lim, key=lambda k: limits[k]) if lim else "?"
        out.append({
            "kernel": short_name(r[col["Kernel Name"]]) if "Kernel Name" in col else "?",
            "us": dur_us,
            "achieved": g("sm__warps_active.avg.pct_of_peak_sustained_active"),
            "theoretical": g("sm__maximum_warps_per_active_cycle_pct"),
            "limiter": limiter,
            "grid": g("launch__grid_size"),
            "block": g("launch__block_size"),
            "inst": g("sm__inst_executed.sum"),
            "clk": clk_hz,
            "sms": g("launch__sm_count") or g("device__attribute_multiprocessor_count"),
        })
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec=".1f"):
    return "-" if x is None else format(x, spec)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "out/gpu-profile/profile"
    files = sorted(glob.glob(os.path.join(d, "ncu_*_*.csv")))
    for path in files:
        m = re.match(r"ncu_(\d+)_(\w+)\.csv$", os.path.basename(path))
        row, tag = m.group(1), m.group(2)
        launches = read_ncu(path)
        if not launches:
            print(f"\n{os.path.basename(path)}: no kernels profiled (see the .log beside it)")
            continue
        sms = int(tag) if tag.isdigit() else None
        print(f"\n### profiled row {row}, SMs: {tag}\n")
        print("| kernel | launches | device us | achieved occ. % | theor. occ. % | limiter | grid x block |"
              " warp inst. (k) | SM-us | issue floor SM-us | SM-us / floor |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        by = {}
        for l in launches:
            by.setdefault(l["kernel"], []).append(l)
        for k, ls in sorted(by.items(), key=lambda kv: -med([l["us"] for l in kv[1]])):
            us = med([l["us"] for l in ls])
            n_sm = sms or med([l["sms"] for l in ls]) or 132
            inst = med([l["inst"] for l in ls])
            clk = med([l["clk"] for l in ls])
            sm_us = us * n_sm
            floor = inst / (4.0 * clk) * 1e6 if inst and clk else None
            print(f"| {k} | {len(ls)} | {fmt(us)} | {fmt(med([l['achieved'] for l in ls]))} |"
                  f" {fmt(med([l['theoretical'] for l in ls]))} | {ls[0]['limiter']} |"
                  f" {fmt(ls[0]['grid'], '.0f')} x {fmt(ls[0]['block'], '.0f')} | {fmt(inst / 1e3 if inst else None)} |"
                  f" {fmt(sm_us, '.0f')} | {fmt(floor, '.1f')} | {fmt(sm_us / floor if floor else None)} |")
    for path in sorted(glob.glob(os.path.join(d, "timing_*.json"))):
        tag = re.match(r"timing_(\w+)\.json$", os.path.basename(path)).group(1)
        try:
            bench = json.load(open(path))["benchmarks"]
        except (OSError, ValueError, KeyError):
            continue
        print(f"\n### timed rows, SMs: {tag} (medians of 3 repetitions, us)\n")
        print("| row | median us |")
        print("|---|---|")
        for b in bench:
            if b.get("aggregate_name") != "median":
                continue
            v = b.get("median_us", b.get("real_time"))
            print(f"| {b['run_name']} | {fmt(v)} |")


if __name__ == "__main__":
    main()
