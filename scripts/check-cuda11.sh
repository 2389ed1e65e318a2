#!/usr/bin/env bash
# CUDA 11 portability check (the JetPack 5 claim: CUDA 11.4, sm_72 / sm_87).
# Compiles the library and its GPU tests with Debian's CUDA 11.8 toolkit (nvidia-cuda-toolkit,
# non-free) and host compiler g++-11 for sm_72 and sm_87, in a separate build directory. Nothing
# runs (no GPU needed): this proves the sources compile with an old nvcc and for Jetson targets.
#
# Usage: scripts/check-cuda11.sh
# Environment: BUILD_DIR_CUDA11 (default: build-cuda11), KESTREL_JOBS, KESTREL_SKIP_DEPS=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
dir="${BUILD_DIR_CUDA11:-build-cuda11}"

[[ "${KESTREL_SKIP_DEPS:-0}" == 1 ]] || bash scripts/install-deps.sh --cuda11

# Debian's /usr/bin/nvcc runs the 11.8 compiler, which finds ptxas, fatbinary, nvlink, cudafe++ on
# PATH: a newer toolkit on PATH (/usr/local/cuda/bin, or wrappers such as /usr/local/bin/ptxas)
# would hand it tools it cannot drive. So: a private folder with Debian's 11.8 tools comes first,
# every CUDA directory is dropped, and no variable points CMake at another toolkit.
[[ -x /usr/bin/nvcc ]] || die "/usr/bin/nvcc missing: scripts/install-deps.sh --cuda11 installs it"
shim="$(mkdir -p "$dir/cuda11-tools" && cd "$dir/cuda11-tools" && pwd)"
for t in nvcc ptxas fatbinary nvlink cudafe++ bin2c cuobjdump nvdisasm nvprune cu++filt; do
    if [[ -x /usr/bin/$t ]]; then ln -sf "/usr/bin/$t" "$shim/$t"; fi
done
clean_path="$shim"
IFS=: read -r -a entries <<<"$PATH"
for e in "${entries[@]}"; do
    [[ -z "$e" || "$e" == *cuda* ]] && continue
    clean_path="$clean_path:$e"
done
export PATH="$clean_path"
unset CUDACXX CUDAHOSTCXX CUDA_PATH CUDA_HOME CUDAToolkit_ROOT
for v in LIBRARY_PATH CPATH C_INCLUDE_PATH CPLUS_INCLUDE_PATH LD_LIBRARY_PATH; do
    if [[ "${!v:-}" == *cuda* ]]; then unset "$v"; fi   # e.g. LIBRARY_PATH=/usr/local/cuda/lib64/stubs
done

# A CUDA installed under /usr/local (headers in /usr/local/include, as on the CI image) would also
# shadow Debian's 11.8 headers in /usr/include for the host compiler. So the host compiler is
# g++-11 with its own default include path minus /usr/local/include (same order, include_next
# intact), used for the .cpp files as well, so that every file sees one CUDA: 11.8.
[[ -x /usr/bin/g++-11 ]] || die "g++-11 missing: scripts/install-deps.sh --cuda11 installs it"
sysinc=()
while read -r d; do
    [[ "$d" == /usr/local/include* ]] || sysinc+=(-isystem "$d")
done < <(/usr/bin/g++-11 -xc++ -E -v - </dev/null 2>&1 |
         sed -n '/#include <...> search starts here:/,/End of search list./{//!p}')
((${#sysinc[@]} > 0)) || die "could not read g++-11's include path"
{
    echo '#!/bin/sh'
    echo '# g++-11 without /usr/local/include (written by scripts/check-cuda11.sh)'
    printf 'exec /usr/bin/g++-11 -nostdinc'
    printf " %q" "${sysinc[@]}"
    echo ' "$@"'
} >"$shim/g++-11"
chmod +x "$shim/g++-11"
log "nvcc: $(command -v nvcc), ptxas: $(command -v ptxas)"
nvcc --version | tail -n 2
ptxas --version | tail -n 1

log "configure $dir (CUDA 11.8, sm_72;87, host compiler g++-11)"
cmake -S "$KESTREL_ROOT" -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DKESTREL_CUDA_ARCHITECTURES="72;87" \
    -DCMAKE_CUDA_COMPILER=/usr/bin/nvcc \
    -DCMAKE_CUDA_HOST_COMPILER="$shim/g++-11" \
    -DCMAKE_CXX_COMPILER="$shim/g++-11" \
    -DKESTREL_BUILD_BENCH=OFF -DKESTREL_BUILD_EXAMPLES=OFF
log "build kestrel + kestrel_tests ($KESTREL_JOBS jobs)"
cmake --build "$dir" -j "$KESTREL_JOBS" --target kestrel kestrel_tests

# The binary must carry code for both architectures (SASS for sm_72 and sm_87).
if command -v cuobjdump >/dev/null; then
    archs="$(cuobjdump --list-elf "$dir/tests/kestrel_tests" | grep -oE 'sm_[0-9]+' | sort -u | tr '\n' ' ')"
    echo "kestrel_tests SASS: $archs"
    [[ "$archs" == *sm_72* && "$archs" == *sm_87* ]] || die "expected sm_72 and sm_87 code in kestrel_tests"
fi
log "CUDA 11.8 check passed"
