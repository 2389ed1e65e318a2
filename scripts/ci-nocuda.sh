#!/usr/bin/env bash
# The build without CUDA, as on a machine that has no CUDA toolkit at all: the library with its CPU
# backend, the CPU tests, the examples (CPU backend), the bench's CPU rows and the installed-package
# consumer. The toolkit is hidden rather than removed, wherever it is installed:
#   - PATH has no CUDA directory and no nvcc: a directory holding nvcc beside other tools (/usr/bin with
#     a distribution toolkit, /usr/local/bin with a wrapper) is replaced by a mirror without the CUDA tools;
#   - CMake ignores the toolkit's prefixes (/usr/local/cuda*);
#   - the host compiler runs without /usr/local/include (where some installs put the CUDA headers) and
#     with a first include directory in which the CUDA headers are #error stubs, so that any CUDA
#     include left in the CPU build fails here, also when a toolkit sits in /usr/include.
# The configure step must then find no CUDA compiler on its own (KESTREL_WITH_CUDA defaults to OFF).
#
# Usage: scripts/ci-nocuda.sh
# Environment: BUILD_DIR_NOCUDA (default: build-nocuda), KESTREL_JOBS, CTEST_ARGS
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
dir="${BUILD_DIR_NOCUDA:-build-nocuda}"
mkdir -p "$dir"
rm -rf "$dir/no-cuda-tools"
shim="$(cd "$dir" && mkdir -p no-cuda-tools && cd no-cuda-tools && pwd)"
real_gxx="$(command -v g++)" || die "g++ not found"

# g++ with its own include path minus /usr/local/include (same order, include_next intact), and the
# CUDA headers poisoned first.
sysinc=()
while read -r d; do
    [[ "$d" == /usr/local/include* ]] || sysinc+=(-isystem "$d")
done < <(g++ -xc++ -E -v - </dev/null 2>&1 | sed -n '/#include <...> search starts here:/,/End of search list./{//!p}')
((${#sysinc[@]} > 0)) || die "could not read g++'s include path"
for h in cuda.h cuda_runtime.h cuda_runtime_api.h driver_types.h vector_types.h cuda_fp16.h \
         cooperative_groups.h cub/cub.cuh thrust/device_vector.h; do
    mkdir -p "$shim/poison/$(dirname "$h")"
    echo "#error \"<$h>: a CUDA header in the build without CUDA (scripts/ci-nocuda.sh)\"" >"$shim/poison/$h"
done
mkdir -p "$shim/bin"
{
    echo '#!/bin/sh'
    echo '# g++ without /usr/local/include, CUDA headers poisoned (written by scripts/ci-nocuda.sh)'
    printf 'exec %q -nostdinc -isystem %q' "$real_gxx" "$shim/poison"
    printf " %q" "${sysinc[@]}"
    echo ' "$@"'
} >"$shim/bin/g++"
chmod +x "$shim/bin/g++"
gxx="$shim/bin/g++"

# PATH without any CUDA directory and without the CUDA tools.
cuda_tool='^(nvcc|nvcc\..*|ptxas|fatbinary|nvlink|cudafe\+\+|cuobjdump|nvdisasm|nvprune|cu\+\+filt|bin2c|compute-sanitizer)$'
clean_path="$shim/bin"
n=0
IFS=: read -r -a entries <<<"$PATH"
for e in "${entries[@]}"; do
    [[ -z "$e" || "$e" == *cuda* || ! -d "$e" ]] && continue
    if [[ -x "$e/nvcc" ]]; then
        n=$((n + 1))
        mirror="$shim/mirror$n"
        mkdir -p "$mirror"
        for f in "$e"/*; do
            b="$(basename "$f")"
            [[ "$b" =~ $cuda_tool || -e "$mirror/$b" ]] || ln -s "$f" "$mirror/$b"
        done
        clean_path="$clean_path:$mirror"
    else
        clean_path="$clean_path:$e"
    fi
done
export PATH="$clean_path"
unset CUDACXX CUDAHOSTCXX CUDA_PATH CUDA_HOME CUDAToolkit_ROOT
for v in LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LD_LIBRARY_PATH; do
    if [[ "${!v:-}" == *cuda* ]]; then unset "$v"; fi
done
if command -v nvcc >/dev/null 2>&1; then die "nvcc still on PATH: $(command -v nvcc)"; fi
echo '#include <cuda_runtime.h>' >"$shim/probe.cpp"
if "$gxx" -fsyntax-only "$shim/probe.cpp" 2>/dev/null; then
    die "cuda_runtime.h is still usable by the host compiler: the toolkit is not hidden"
fi
log "toolkit hidden: no nvcc on PATH, <cuda_runtime.h> unusable for $gxx"

ignore="/usr/local/cuda;$(ls -d /usr/local/cuda-* 2>/dev/null | tr '\n' ';')"
log "configure $dir (no CUDA toolkit visible)"
rm -f "$dir/CMakeCache.txt"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER="$gxx" \
    "-DCMAKE_IGNORE_PREFIX_PATH=$ignore" | tee "$dir/configure.log"
grep -q 'Kestrel: CUDA backend OFF' "$dir/configure.log" || die "the configure step did not fall back to the CPU-only build"

log "build everything ($KESTREL_JOBS jobs)"
cmake --build "$dir" -j "$KESTREL_JOBS"

log "ctest ($dir)"
# shellcheck disable=SC2086
ctest --test-dir "$dir" --output-on-failure -j "$KESTREL_JOBS" ${CTEST_ARGS:-}

log "package consumer against the CPU-only install"
prefix="$(cd "$dir" && pwd)/prefix"
rm -rf "$prefix" "$dir/consumer"
cmake --install "$dir" --prefix "$prefix" >/dev/null
cmake -S tests/package -B "$dir/consumer" -G Ninja -DCMAKE_CXX_COMPILER="$gxx" -DCMAKE_PREFIX_PATH="$prefix" \
    "-DCMAKE_IGNORE_PREFIX_PATH=$ignore"
cmake --build "$dir/consumer"
out="$("$dir/consumer/kestrel_consumer")"
echo "$out"
grep -q '^kestrel consumer: OK' <<<"$out" || die "the consumer did not report OK"
# The README's program, built from the README's lines against this install: tracks into the third frame.
out="$("$dir/consumer/readme_snippet" "$dir/testdata/vtest_000.png" "$dir/testdata/vtest_001.png" \
    "$dir/testdata/vtest_002.png")" || die "the README program failed"
grep -Eq '^3 [0-9]+ [0-9.]+ [0-9.]+ 2$' <<<"$out" || die "the README program tracked nothing into the third frame"
log "build without CUDA passed"
