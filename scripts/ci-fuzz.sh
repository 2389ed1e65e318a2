#!/usr/bin/env bash
# Fuzzing CI step: builds the libFuzzer targets of fuzz/ (clang, -fsanitize=fuzzer,address,undefined,
# CPU sources only: no GPU, no CUDA runtime needed) and runs each for a bounded time from its seed
# corpus fuzz/corpus/<target>/. Before fuzzing, every input under fuzz/regressions/<target>/ (crashes
# found earlier) is replayed. Fails on any crash, sanitizer report, failed invariant, timeout or OOM;
# the reproducer is kept under $FUZZ_BUILD_DIR/artifacts/ (replay: <binary> <file>).
#
# Usage: scripts/ci-fuzz.sh [total seconds]      (default 60, split evenly across the targets)
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_TOTAL_SECONDS (same as the argument),
#              FUZZ_TARGETS (space-separated subset), KESTREL_JOBS (ninja jobs)
# Prints one line per target: executions, seconds, result; a long local run records these figures in
# docs/reliability.md.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"

total="${1:-${FUZZ_TOTAL_SECONDS:-60}}"
dir="${FUZZ_BUILD_DIR:-build-fuzz}"
command -v clang++ >/dev/null 2>&1 || die "clang++ not found (apt-get install clang): libFuzzer needs clang"

work="$(mktemp -d /tmp/kestrel-fuzz.XXXXXX)"
trap 'rm -rf "$work"' EXIT
# libFuzzer and the sanitizer runtimes come with clang's compiler-rt (Debian: libclang-rt-<N>-dev, only
# a recommendation of clang): check that a fuzzer links before building anything.
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$work/probe.cpp"
clang++ -fsanitize=fuzzer,address,undefined "$work/probe.cpp" -o "$work/probe" >"$work/probe.log" 2>&1 || {
    cat "$work/probe.log" >&2
    die "clang++ cannot link a libFuzzer target: install clang's runtime" \
        "(Debian 12: apt-get install libclang-rt-14-dev)"
}

log "configure + build fuzz targets ($dir)"
cmake -S fuzz -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build "$dir" -j "$KESTREL_JOBS"

if [[ -n "${FUZZ_TARGETS:-}" ]]; then
    read -r -a targets <<<"$FUZZ_TARGETS"
else
    targets=()
    for f in fuzz/fuzz_*.cpp; do
        t="$(basename "$f" .cpp)"
        targets+=("$t")
    done
fi
per=$((total / ${#targets[@]}))
((per >= 5)) || per=5
mkdir -p "$dir/artifacts"

summary=()
failed=0
for t in "${targets[@]}"; do
    bin="$dir/$t"
    [[ -x "$bin" ]] || die "fuzz target $bin was not built"
    result=ok
    if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
        log "$t: replaying fuzz/regressions/$t/"
        if ! "$bin" fuzz/regressions/"$t"/* >"$work/$t.replay.log" 2>&1; then
            tail -n 40 "$work/$t.replay.log"
            result="FAIL (regression input)"
        fi
    fi
    log "$t: fuzzing for ${per}s"
    mkdir -p "$work/$t"
    rc=0
    "$bin" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/artifacts/$t-" "$work/$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1 || rc=$?
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -n 1)"
    secs="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$work/$t.log" | tail -n 1)"
    if ((rc != 0)); then
        grep -E 'ERROR: |SUMMARY: |FUZZ_CHECK|runtime error|what\(\)' "$work/$t.log" | head -n 20 || true
        tail -n 30 "$work/$t.log"
        result="FAIL (exit $rc; reproducer in $dir/artifacts/)"
    fi
    [[ "$result" == ok ]] || failed=1
    summary+=("$(printf '%-24s %12s execs %5ss  %s' "$t" "${runs:-?}" "${secs:-?}" "$result")")
done

echo
echo "==================== fuzz summary (${per}s per target) ===================="
printf '%s\n' "${summary[@]}"
if ((failed)); then
    echo "FUZZING FAILED" >&2
    exit 1
fi
echo "fuzzing passed: no crash, no sanitizer report"
