#!/usr/bin/env bash
# Per-stage GPU profile (runs THERE, on the GPU machine, from the repository root, with the bundle .gpu/ of
# scripts/gpu_prepare.sh beside scripts/), at every SM count asked for: all SMs and green contexts of N SMs
# (--sm-count N, CUDA 12.4+, the stand-in for a Jetson's 8 or 16 SMs: docs/jetson.md).
#     bash scripts/gpu_profile.sh [SM counts]          default "0 16 8" (0 = all SMs)
# For each SM count:
#   1. timing: kestrel_microbench's end-to-end rows (the floor, the detector, the tracker frame, stereo,
#      cameras) with their medians, no profiler attached;
#   2. Nsight Compute (ncu) on the detector's and the tracker frame's rows inside the same green context:
#      every kernel's device time, achieved occupancy, launch shape, occupancy limits and executed warp
#      instructions, as CSV.
# Writes $OUT/profile.tar.gz (else out/gpu-profile/): a folder profile/ of timing_<sms>.json and
# ncu_<row>_<sms>.csv, and $OUT/profile_table.md, the per-stage table of docs/jetson.md made from them by
# `python3 scripts/profile_table.py profile/` (which also runs anywhere else on the unpacked folder).
#
# Environment:
#   KESTREL_PROFILE_TIMING   microbench filter of the timed rows
#   KESTREL_PROFILE_ROWS     space-separated microbench rows profiled by ncu (regexes, one run each)
#   KESTREL_PROFILE_SKIP_NCU=1  timing only
#   KESTREL_PROFILE_NCU_SMS  the SM counts that get the ncu runs (default: all of those given)
#   KESTREL_PROFILE_SKIP_TIMING=1  ncu only
#   KESTREL_PROFILE_LAUNCHES ncu: kernels profiled per run after the warm-up (default 60)
#   KESTREL_PROFILE_MIN_TIME microbench --benchmark_min_time for the timed rows (default 0.1)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gpu="$root/.gpu"
out="${OUT:-$root/out/gpu-profile}"   # receives profile.tar.gz and profile_table.md
mkdir -p "$out"
work="$(mktemp -d "${TMPDIR:-/tmp}/kestrel-profile-out.XXXXXX")"
mkdir -p "$work/profile"
sms_list=("$@")
((${#sms_list[@]})) || sms_list=(0 16 8)
timing_filter="${KESTREL_PROFILE_TIMING:-^floor/upload\+kernel\+8KB\+sync/752x480|^floor/stereo-upload|^floor/pose-transfer|^detector/end-to-end/752x480/|^detector/device/752x480/|^tracker/device/200/gain-offset|^tracker/frame/200/gain-offset|^stereo/frame/752x480/200|^tracker/cameras/}"
rows="${KESTREL_PROFILE_ROWS:-^detector/end-to-end/752x480/ ^tracker/frame/200/gain-offset/iterations}"
launches="${KESTREL_PROFILE_LAUNCHES:-60}"

[[ -f "$gpu/payload.tar.xz" ]] || { echo "no .gpu/payload.tar.xz: run scripts/gpu_prepare.sh and copy .gpu/ along" >&2; exit 1; }
unpack="$(mktemp -d "${TMPDIR:-/tmp}/kestrel-profile.XXXXXX")"
trap 'rm -rf "$unpack"' EXIT
tar -C "$unpack" -xJf "$gpu/payload.tar.xz" || exit 1
bin="$unpack/bin/kestrel_microbench"
[[ -x "$bin" ]] || { echo "the bundle has no kestrel_microbench" >&2; exit 1; }
export LD_LIBRARY_PATH="$unpack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export KESTREL_TEST_DATA="$gpu/testdata"
ncu="$(command -v ncu || true)"
for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do [[ -z "$ncu" && -x "$c" ]] && ncu="$c"; done

{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -n1
    cat "$gpu/manifest.txt" 2>/dev/null | head -n2
    echo "ncu: ${ncu:-none}"
} | tee "$work/profile/environment.txt"

for sms in "${sms_list[@]}"; do
    sm_args=()
    ((sms > 0)) && sm_args=(--sm-count "$sms")
    tag="${sms}"; ((sms > 0)) || tag=all
    if [[ "${KESTREL_PROFILE_SKIP_TIMING:-0}" != 1 ]]; then
        echo "==> timing, SMs: $tag"
        "$bin" "${sm_args[@]}" --benchmark_filter="$timing_filter" \
            --benchmark_min_time="${KESTREL_PROFILE_MIN_TIME:-0.1}" --benchmark_repetitions=3 \
            --benchmark_report_aggregates_only=true \
            --benchmark_out="$work/profile/timing_$tag.json" --benchmark_out_format=json 2>&1 |
            grep -E '_median|^[a-z]' | grep -vE '_mean|_stddev|_cv' | tee "$work/profile/timing_$tag.txt"
    fi
    [[ "${KESTREL_PROFILE_SKIP_NCU:-0}" == 1 || -z "$ncu" ]] && continue
    [[ " ${KESTREL_PROFILE_NCU_SMS:-${sms_list[*]}} " == *" $sms "* ]] || continue
    i=0
    for row in $rows; do
        i=$((i + 1))
        echo "==> ncu, SMs: $tag, row $row"
        # The first launches are the rows' set-up and warm-up: skipped. --clock-control none keeps the
        # clocks as the benchmarks see them.
        timeout 150 "$ncu" --clock-control none --launch-skip 120 --launch-count "$launches" \
            --section SpeedOfLight --section Occupancy --section LaunchStats \
            --metrics sm__inst_executed.sum,smsp__inst_executed.avg.per_cycle_active,dram__bytes.sum,lts__t_bytes.sum \
            --csv --page raw \
            "$bin" "${sm_args[@]}" --quick --benchmark_filter="$row" --benchmark_min_time=0.01 \
            >"$work/profile/ncu_${i}_$tag.csv" 2>"$work/profile/ncu_${i}_$tag.log"
        echo "    rc $?: $(grep -c '^"' "$work/profile/ncu_${i}_$tag.csv") lines; $(tail -n1 "$work/profile/ncu_${i}_$tag.log")"
    done
done
tar -C "$work" -czf "$out/profile.tar.gz" profile
python3 "$root/scripts/profile_table.py" "$work/profile" 2>&1 | tee "$out/profile_table.md" || true
rm -rf "$work"
