#!/usr/bin/env bash
# GPU check, part 2 (runs THERE, on the GPU machine, from the repository root, with the bundle
# .gpu/ from scripts/gpu_prepare.sh carried along). One call:
#     bash scripts/gpu_run.sh        (in a copy of the repository with .gpu/ beside scripts/)
# Runs the whole kestrel_tests under compute-sanitizer memcheck (with leak check), racecheck,
# initcheck and synccheck, then plain, then the benchmarks when present; writes every log under
# $OUT (else out/gpu-check/) and prints a short table last. Exits non-zero when any step failed.
#
# Environment:
#   KESTREL_SANITIZER_FILTER  gtest filter for memcheck (default '*': everything)
#   KESTREL_SANITIZER_GPU_FILTER  gtest filter for racecheck/initcheck/synccheck (default: all but *Cpu suites)
#   KESTREL_GPU_SKIP          steps to leave out, e.g. "racecheck initcheck" (a call of 600 s cannot hold all;
#                             docs/gpu-check.md gives the two-call split)
#   KESTREL_SANITIZER_ARGS    extra compute-sanitizer options for all four (e.g. --report-api-errors no)
#   KESTREL_GPU_BUDGET_S      seconds for the whole run (default 520; one device call may run 600)
#   KESTREL_BENCH_ARGS        arguments for kestrel_bench (default: --json <log dir>/bench.json)
#   KESTREL_ALLOW_STALE=1     do not fail when the bundle was built from other sources
#   KESTREL_COMPARE_FILTER    rows of the "compare" step (default: the detector end to end, the tracker frame,
#                             LK of 200 features, the floors); the step runs when the bundle has .gpu/base/
#   KESTREL_COMPARE_ROUNDS    rounds of the compare step, each this tree's build then the base (default 3)
#   KESTREL_GPU_PYTHON        the Python of the "python" and "pybench" steps (default /opt/torch/.venv/bin/python3
#                             when present, else python3): the bundle's module is built for Python 3.12; the tests
#                             use numpy and pytest, and CuPy / PyTorch for the GPU-array tests when installed
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/common.sh"
gpu="$root/.gpu"
logdir="${OUT:-$root/out/gpu-check}"
mkdir -p "$logdir"
budget="${KESTREL_GPU_BUDGET_S:-520}"
filter="${KESTREL_SANITIZER_FILTER:-*}"
# racecheck, initcheck and synccheck watch device code only: they run the GPU suites (CPU-only suites
# are named *Cpu) to fit the time; memcheck runs everything.
gpu_filter="${KESTREL_SANITIZER_GPU_FILTER:-*:-*Cpu.*}"
t_begin=$SECONDS
deadline=$((SECONDS + budget))

names=() results=() times=() counts=()
failed=0
record() {  # record NAME RESULT SECONDS COUNTS
    names+=("$1"); results+=("$2"); times+=("$3"); counts+=("$4")
    [[ "$2" == PASS* || "$4" == "by KESTREL_GPU_SKIP" ]] || failed=1
}
print_table() {
    local i
    {
        echo
        echo "==================== Kestrel GPU check ===================="
        printf '%-12s | %-8s | %6s | %s\n' step result time counts
        printf '%-12s-+-%-8s-+-%6s-+-%s\n' ------------ -------- ------ -------------------------------
        for i in "${!names[@]}"; do
            printf '%-12s | %-8s | %5ss | %s\n' "${names[$i]}" "${results[$i]}" "${times[$i]}" "${counts[$i]}"
        done
        printf 'total %ss; logs: %s; overall: %s\n' $((SECONDS - t_begin)) "$logdir" \
            "$( ((failed)) && echo FAILED || echo PASSED)"
    } | tee "$logdir/summary.txt"
}

# "passed/failed/skipped" from a gtest log, plus compute-sanitizer's error count when present.
gtest_counts() {
    local log="$1" p f s e out
    p="$(grep -oE '^\[  PASSED  \] [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+$')"
    f="$(grep -oE '^\[  FAILED  \] [0-9]+ tests?, listed below' "$log" | tail -n1 | grep -oE '[0-9]+' | head -n1)"
    s="$(grep -oE '^\[  SKIPPED \] [0-9]+ tests?, listed below' "$log" | tail -n1 | grep -oE '[0-9]+' | head -n1)"
    out="passed ${p:-?} failed ${f:-0} skipped ${s:-0}"
    [[ -n "$p" ]] || out="no gtest summary (crashed or timed out)"
    e="$(grep -oE '========= ERROR SUMMARY: [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+$')"
    [[ -n "$e" ]] && out="$out; sanitizer errors $e"
    echo "$out"
}

# run_step NAME CAP RESERVE LOG COUNTER cmd...: runs cmd with a timeout of at most CAP seconds,
# keeping RESERVE seconds of the budget for the steps after it.
skipped() { [[ " ${KESTREL_GPU_SKIP:-} " == *" $1 "* ]]; }  # KESTREL_GPU_SKIP="racecheck bench ..."
run_step() {
    local name="$1" cap="$2" reserve="$3" log="$4" counter="$5"; shift 5
    local left=$((deadline - SECONDS - reserve)) t0=$SECONDS rc result
    if skipped "$name"; then
        record "$name" "SKIPPED" 0 "by KESTREL_GPU_SKIP"
        return
    fi
    if ((left < 20)); then
        record "$name" "SKIPPED" 0 "no time left in the ${budget}s budget"
        return
    fi
    ((cap > left - 5)) && cap=$((left - 5))
    echo "[gpu-check] $name (limit ${cap}s): $*" | sed "s|$root/||g"
    timeout -k 10 "$cap" "$@" >"$log" 2>&1
    rc=$?
    case $rc in
        0) result=PASS ;;
        124|137) result=TIMEOUT ;;
        *) result="FAIL($rc)" ;;
    esac
    record "$name" "$result" $((SECONDS - t0)) "$("$counter" "$log")"
    if [[ $result != PASS ]]; then
        echo "----- $name: $result, excerpt of $(basename "$log") -----"
        grep -E '^\[  FAILED  \]|^========= [A-Z]|Failure$|error:' "$log" | head -n 25
        tail -n 8 "$log"
        echo "-----"
    fi
}

echo "==================== environment ===================="
{
    nvidia-smi -L 2>&1 || echo "nvidia-smi failed: no GPU?"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -n 4
    echo "nvcc: $(nvcc --version 2>/dev/null | tail -n1 || echo none)"
    echo "kernel: $(uname -r); $(getconf GNU_LIBC_VERSION 2>/dev/null)"
    echo "--- bundle manifest ---"
    cat "$gpu/manifest.txt" 2>/dev/null || echo "no .gpu/manifest.txt: run scripts/gpu_prepare.sh and copy .gpu/ along"
} | tee "$logdir/environment.txt"

# Unpack the binaries and libraries (the carried .gpu/ itself is left as it came).
[[ -f "$gpu/payload.tar.xz" && -d "$gpu/testdata" ]] || {
    record bundle "FAIL" 0 ".gpu/payload.tar.xz or .gpu/testdata missing: run scripts/gpu_prepare.sh and copy .gpu/ along"
    print_table; exit 1; }
unpack="$(mktemp -d "${TMPDIR:-/tmp}/kestrel-gpu.XXXXXX")"
trap 'rm -rf "$unpack"' EXIT
unpack_payload() {  # tar + xz, or Python's lzma where the machine has no xz
    if command -v xz >/dev/null; then
        tar -C "$unpack" -xJf "$gpu/payload.tar.xz"
    else
        python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' \
            "$gpu/payload.tar.xz" "$unpack"
    fi
}
unpack_payload || {
    record bundle "FAIL" 0 "cannot unpack .gpu/payload.tar.xz"; print_table; exit 1; }
bindir="$unpack/bin" libdir="$unpack/lib" glibcdir="$unpack/glibc"

# 1. The bundle must come from these sources (a stale bundle tests other code).
want="$(sed -n 's/^source_hash: //p' "$gpu/manifest.txt")"
have="$(source_hash)"
if [[ "$want" == "$have" ]]; then
    record bundle PASS 0 "source hash $have matches"
elif [[ "${KESTREL_ALLOW_STALE:-0}" == 1 ]]; then
    record bundle "PASS" 0 "STALE (allowed): bundle $want, tree $have"
else
    record bundle "FAIL" 0 "STALE: bundle built from $want, tree is $have: rerun gpu_prepare.sh"
fi

# 2. Libraries. The bundled ones (libbenchmark, OpenCV & co.) are put on the library path of the
# benchmarks only: compute-sanitizer itself must keep the host's libstdc++.
with_libs=(env "LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
run=()   # prefix for every binary: empty, or the bundled glibc loader when the host's is too old
need="$(sed -n 's/^glibc needed: GLIBC_//p' "$gpu/manifest.txt")"
host="$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')"
if [[ -n "$need" && -n "$host" && "$(printf '%s\n%s\n' "$need" "$host" | sort -V | head -n1)" != "$need" ]]; then
    echo "host glibc $host < $need needed: running through the bundled glibc loader"
    run=("$glibcdir/ld-linux-x86-64.so.2" --library-path "$glibcdir:$libdir")
fi
ldd_out="$(for b in "$bindir"/*; do "${with_libs[@]}" ldd "$b" 2>&1; done)"
if ((${#run[@]} == 0)) && grep -qE 'not found' <<<"$ldd_out"; then
    record libraries FAIL 0 "$(grep -E 'not found' <<<"$ldd_out" | head -n3 | tr -s ' \t\n' ' ')"
    grep -E 'not found' <<<"$ldd_out"
else
    record libraries PASS 0 "$( ((${#run[@]} == 0)) && echo "host glibc ${host:-?}" || echo "bundled glibc (host ${host:-?})")"
fi

export KESTREL_TEST_DATA="$gpu/testdata" KESTREL_REQUIRE_GPU=1 GTEST_COLOR=no
tests=("${run[@]}" "$bindir/kestrel_tests")
sanitizer="$(command -v compute-sanitizer || true)"
for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -z "$sanitizer" && -x "$c" ]] && sanitizer="$c"
done

# 3. The whole suite under each compute-sanitizer tool, then plain. Time kept for later steps:
t_micro=0; [[ -x "$bindir/kestrel_microbench" ]] && ! skipped microbench && t_micro=60
t_bench=0; [[ -x "$bindir/kestrel_bench" ]] && ! skipped bench && t_bench=90
t_examples=0; [[ -x "$bindir/track_sequence" ]] && ! skipped examples && t_examples=60
t_soak=0; [[ -x "$bindir/kestrel_soak" ]] && ! skipped soak && t_soak=90
t_python=0; [[ -d "$unpack/python/kestrel" ]] && ! skipped python && t_python=120
t_pybench=0; [[ -d "$unpack/python/kestrel" ]] && ! skipped pybench && t_pybench=60
keep=$((120 + t_micro + t_bench + t_examples + t_soak + t_python + t_pybench))
if [[ -n "$sanitizer" ]]; then
    # shellcheck disable=SC2206
    cs=("$sanitizer" --error-exitcode 1 --print-limit 50 ${KESTREL_SANITIZER_ARGS:-})
    run_step memcheck 200 "$keep" "$logdir/memcheck.log" gtest_counts \
        "${cs[@]}" --tool memcheck --leak-check full "${tests[@]}" --gtest_filter="$filter"
    run_step racecheck 400 "$keep" "$logdir/racecheck.log" gtest_counts \
        "${cs[@]}" --tool racecheck "${tests[@]}" --gtest_filter="$gpu_filter"
    run_step initcheck 150 "$keep" "$logdir/initcheck.log" gtest_counts \
        "${cs[@]}" --tool initcheck "${tests[@]}" --gtest_filter="$gpu_filter"
    run_step synccheck 120 "$keep" "$logdir/synccheck.log" gtest_counts \
        "${cs[@]}" --tool synccheck "${tests[@]}" --gtest_filter="$gpu_filter"
else
    record sanitizers FAIL 0 "compute-sanitizer not found (PATH, /usr/local/cuda)"
fi
run_step tests 120 $((t_micro + t_bench + t_examples + t_soak + t_python + t_pybench)) "$logdir/tests.log" gtest_counts "${tests[@]}"

# The Python module (bundle: python/kestrel) with the tree's python/tests; kestrel_pyref is the C++ side of the
# comparisons (run through the bundled glibc loader when needed).
pytest_counts() {
    local line
    line="$(grep -E '[0-9]+ (passed|failed|errors?)\b.* in [0-9.]+s' "$1" | tail -n1 | tr -d '=')"
    echo "${line:-no pytest summary (crashed or timed out)}"
}
if [[ -d "$unpack/python/kestrel" ]]; then
    gpu_python="${KESTREL_GPU_PYTHON:-}"
    [[ -z "$gpu_python" && -x /opt/torch/.venv/bin/python3 ]] && gpu_python=/opt/torch/.venv/bin/python3
    gpu_python="${gpu_python:-python3}"
    py_env=(env "PYTHONPATH=$unpack/python" "KESTREL_PYREF=${run[*]} $bindir/kestrel_pyref" PYTHONDONTWRITEBYTECODE=1)
    run_step python "$t_python" $((t_micro + t_bench + t_examples + t_soak + t_pybench)) "$logdir/python.log" pytest_counts \
        "${py_env[@]}" "$gpu_python" -m pytest -q -rs -p no:cacheprovider "$root/python/tests"
    tail -n 25 "$logdir/python.log"
fi

# Examples on the GPU (CPU vs GPU outputs compared file for file) and the soak (memory flat).
plain_counts() { echo "log: $(basename "$1"), $(wc -l <"$1") lines"; }
if [[ -x "$bindir/track_sequence" ]]; then
    run_step examples "$t_examples" $((t_micro + t_bench + t_soak)) "$logdir/examples.log" plain_counts \
        "${with_libs[@]}" bash "$root/examples/tests/gpu_examples.sh" "$bindir" "$gpu/testdata" "$logdir/examples"
    cat "$logdir/examples.log"
fi
if [[ -x "$bindir/kestrel_soak" ]]; then
    run_step soak "$t_soak" $((t_micro + t_bench)) "$logdir/soak.log" plain_counts \
        "${with_libs[@]}" "${run[@]}" "$bindir/kestrel_soak" --backend cuda --frames "${KESTREL_SOAK_FRAMES:-100000}" \
        --data "$gpu/testdata"
    tail -n 30 "$logdir/soak.log"
fi

# 4. Benchmarks, when the bundle has them (timings are reported, never judged).
if [[ -d "$unpack/python/kestrel" ]]; then
    run_step pybench "$t_pybench" $((t_micro + t_bench)) "$logdir/pybench.log" plain_counts \
        "${py_env[@]}" "$gpu_python" "$root/python/bench/bench_detect.py"
    cat "$logdir/pybench.log"
fi
bench_counts() {
    local json="$logdir/microbench.json" n=""
    if [[ -s "$json" ]] && command -v python3 >/dev/null; then
        n="$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["benchmarks"]))' "$json" 2>/dev/null)"
    fi
    [[ -n "$n" ]] && echo "$n benchmarks in microbench.json" || echo "no microbench.json"
}
if [[ -x "$bindir/kestrel_microbench" ]]; then
    run_step microbench "$t_micro" "$t_bench" "$logdir/microbench.log" bench_counts \
        "${with_libs[@]}" "${run[@]}" "$bindir/kestrel_microbench" --benchmark_min_time=0.05 \
        --benchmark_out="$logdir/microbench.json" --benchmark_out_format=json
fi
if [[ -x "$bindir/kestrel_bench" ]]; then
    # shellcheck disable=SC2206
    bench_args=(${KESTREL_BENCH_ARGS:---json $logdir/bench.json})
    run_step bench "$t_bench" 0 "$logdir/bench.log" plain_counts \
        "${with_libs[@]}" "${run[@]}" "$bindir/kestrel_bench" "${bench_args[@]}"
    tail -n 40 "$logdir/bench.log"
fi

# 5. Compare with another commit's microbench (gpu_prepare.sh KESTREL_GPU_BASE_MICROBENCH): both in turn,
# several rounds, on the same GPU in the same run; the medians side by side.
if [[ -f "$gpu/base/kestrel_microbench.xz" && -x "$bindir/kestrel_microbench" ]] && ! skipped compare; then
    base_commit="$(cat "$gpu/base/commit.txt" 2>/dev/null || echo base)"
    mkdir -p "$unpack/base"
    if command -v xz >/dev/null; then
        xz -dc "$gpu/base/kestrel_microbench.xz" >"$unpack/base/kestrel_microbench"
    else
        python3 -c 'import lzma, sys; open(sys.argv[2], "wb").write(lzma.open(sys.argv[1]).read())' \
            "$gpu/base/kestrel_microbench.xz" "$unpack/base/kestrel_microbench"
    fi
    chmod +x "$unpack/base/kestrel_microbench"
    compare_counts() { echo "$(grep -c '/' "$1") rows against $base_commit"; }
    run_step compare 240 0 "$logdir/compare.log" compare_counts \
        "${with_libs[@]}" bash "$root/scripts/gpu_compare.sh" "$bindir/kestrel_microbench" \
        "$unpack/base/kestrel_microbench" "$logdir" "$base_commit" ${run[@]+"${run[@]}"}
    cat "$logdir/compare.log"
fi

print_table
exit "$failed"
