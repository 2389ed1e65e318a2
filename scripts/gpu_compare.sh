#!/usr/bin/env bash
# Times two kestrel_microbench builds (this tree's and another commit's) in turn on the same GPU, several
# rounds, and prints each row's medians side by side with the ratio of the medians. Called by
# scripts/gpu_run.sh's "compare" step when the bundle carries .gpu/base/ (gpu_prepare.sh,
# KESTREL_GPU_BASE_MICROBENCH); the library path of the bundle comes from the caller's environment.
#
# Usage: gpu_compare.sh THIS_BIN BASE_BIN LOG_DIR BASE_LABEL [loader prefix...]
# Environment: KESTREL_COMPARE_FILTER (rows), KESTREL_COMPARE_ROUNDS (default 3), KESTREL_COMPARE_ARGS (more
#              kestrel_microbench arguments for both builds, e.g. "--sm-count 8")
set -euo pipefail
this_bin="$1" base_bin="$2" logdir="$3" base_label="$4"
shift 4
filter="${KESTREL_COMPARE_FILTER:-floor/|detector/(end-to-end|device)/752x480/iter|score/752x480/2lv/sad_circle|tracker/(frame|device)/200/gain-offset/}"
rounds="${KESTREL_COMPARE_ROUNDS:-3}"
for ((r = 1; r <= rounds; r++)); do
    for side in this base; do
        bin="$this_bin"
        [[ $side == base ]] && bin="$base_bin"
        # shellcheck disable=SC2086
        "$@" "$bin" ${KESTREL_COMPARE_ARGS:-} --benchmark_min_time=0.05 --benchmark_filter="$filter" \
            --benchmark_out="$logdir/compare_${side}_$r.json" --benchmark_out_format=json >/dev/null
    done
done
python3 - "$logdir" "$rounds" "$base_label" <<'PY'
import json, statistics, sys
d, rounds, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = {}
for side in ("this", "base"):
    for r in range(1, rounds + 1):
        for b in json.load(open(f"{d}/compare_{side}_{r}.json"))["benchmarks"]:
            if "median_us" in b:
                rows.setdefault(b["name"], {}).setdefault(side, []).append(b["median_us"])
print(f"{'row (median_us per round)':58s} {'this tree':>22s} {base:>22s}  this/base")
for name, v in sorted(rows.items()):
    a, b = v.get("this", []), v.get("base", [])
    ratio = statistics.median(a) / statistics.median(b) if a and b else float("nan")
    print(f"{name:58s} {' / '.join(f'{x:.1f}' for x in a):>22s} {' / '.join(f'{x:.1f}' for x in b):>22s}  {ratio:.3f}")
PY
