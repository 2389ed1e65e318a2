#!/usr/bin/env bash
# Sanitizer CI step: a separate build (default build-asan) with -DKESTREL_SANITIZE=ON, i.e. all host
# C++ (library, tests) under AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover: any
# UB report fails), CUDA code compiled as usual (sm_87 only, to keep it short); then ctest. Runs on a
# machine without a GPU: the GPU tests skip loudly, every CPU test runs sanitized.
#
# Usage: scripts/ci-asan.sh [extra cmake args...]
# Environment: ASAN_BUILD_DIR (default build-asan), KESTREL_JOBS (ninja/ctest jobs),
#              ASAN_WITH_OPENCV=0 (skip kestrel_opencv_tests; default: built and run when OpenCV is found),
#              CTEST_ARGS (extra ctest arguments)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
dir="${ASAN_BUILD_DIR:-build-asan}"

ensure_nvcc
cuda_compiler=()
[[ -n "${CUDACXX:-}" ]] || cuda_compiler=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")

log "configure $dir (ASan + UBSan)"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKESTREL_SANITIZE=ON \
    -DKESTREL_BUILD_BENCH=OFF -DKESTREL_BUILD_EXAMPLES=OFF -DKESTREL_CUDA_ARCHITECTURES=87 \
    ${cuda_compiler[@]+"${cuda_compiler[@]}"} "$@"

targets=(kestrel_tests)
help="$(cmake --build "$dir" --target help 2>/dev/null || true)"
grep -qw kestrel_testdata <<<"$help" && targets+=(kestrel_testdata)
if [[ "${ASAN_WITH_OPENCV:-1}" == 1 ]] && grep -qw kestrel_opencv_tests <<<"$help"; then
    targets+=(kestrel_opencv_tests)
    grep -qw kestrel_eval_tracking <<<"$help" && targets+=(kestrel_eval_tracking)  # its ctest smoke runs
    grep -qw kestrel_eval_stereo <<<"$help" && targets+=(kestrel_eval_stereo)      # eval_stereo.scenes
    grep -qw kestrel_eval_geometry <<<"$help" && targets+=(kestrel_eval_geometry)  # eval_geometry.small
    grep -qw kestrel_eval_matching <<<"$help" && targets+=(kestrel_eval_matching)  # eval_matching.quick, .can_fail
fi
log "build ${targets[*]} ($KESTREL_JOBS jobs)"
cmake --build "$dir" -j "$KESTREL_JOBS" --target "${targets[@]}"

# The CUDA runtime (linked statically) maps large regions when it probes for a device; ASan must not
# reserve the shadow gap for that to succeed where a driver is installed (protect_shadow_gap=0).
# Leaks are checked (detect_leaks=1); any ASan or UBSan report aborts the test, so ctest fails.
asan_default="protect_shadow_gap=0:detect_leaks=1:abort_on_error=1:strict_string_checks=1"
asan_default+=":detect_stack_use_after_return=1:check_initialization_order=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-$asan_default}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
log "ctest ($dir, sanitized; ASAN_OPTIONS=$ASAN_OPTIONS)"
# shellcheck disable=SC2086
ctest --test-dir "$dir" --output-on-failure -j "$KESTREL_JOBS" ${CTEST_ARGS:-}
