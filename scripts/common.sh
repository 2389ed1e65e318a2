# Shared helpers for Kestrel's scripts (sourced, not run). Sets KESTREL_ROOT, puts the CUDA
# toolkit on PATH when it sits in the usual place, and provides logging and a configure+build step.
# Callers: scripts/test.sh, scripts/demo.sh, scripts/gpu_prepare.sh, .ci/run.

KESTREL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export KESTREL_ROOT

# Jobs for ninja: all cores unless the caller says otherwise (KESTREL_JOBS).
KESTREL_JOBS="${KESTREL_JOBS:-$(nproc 2>/dev/null || echo 2)}"

log() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# nvcc: PATH first, else the standard toolkit location (a fresh shell often lacks it on PATH).
# find_nvcc returns non-zero when there is none; ensure_nvcc dies then.
find_nvcc() {
    if ! command -v nvcc >/dev/null 2>&1; then
        for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
            if [[ -x "$d/nvcc" ]]; then
                export PATH="$d:$PATH"
                break
            fi
        done
    fi
    command -v nvcc >/dev/null 2>&1 || return 1
    # The real compiler behind wrapper scripts (e.g. /usr/local/bin/nvcc running a toolkit's nvcc):
    # CMake locates the toolkit's headers and libraries next to the compiler it is given.
    local here
    here="$(cd /tmp && nvcc -dryrun -c -x cu /dev/null -o /dev/null 2>&1 | sed -n 's/^#\$ _HERE_=//p' | head -n1)"
    KESTREL_NVCC="$(command -v nvcc)"
    [[ -n "$here" && -x "$here/nvcc" ]] && KESTREL_NVCC="$here/nvcc"
    export KESTREL_NVCC
}
ensure_nvcc() {
    find_nvcc || die "nvcc not found: install the CUDA toolkit (11.4 or newer) and put its bin/ on PATH"
}

# configure_and_build BUILD_DIR [extra cmake args...] -- [targets...]
# Configures (Ninja, Release unless the cache says otherwise) and builds; no targets = all.
# A target written '?name' is built only when the configuration has it.
configure_and_build() {
    local dir="$1"; shift
    local cmake_args=() targets=()
    while (($#)); do
        if [[ "$1" == "--" ]]; then shift; targets=("$@"); break; fi
        cmake_args+=("$1"); shift
    done
    # Pin the nvcc on PATH: CMake otherwise prefers an nvcc beside the C++ compiler (/usr/bin/nvcc
    # of Debian's older nvidia-cuda-toolkit, when both are installed) over the one on PATH. Without a
    # toolkit the build holds the CPU backend only (KESTREL_WITH_CUDA=OFF).
    if ! find_nvcc; then
        log "no CUDA toolkit found (nvcc): building the CPU backend only"
    elif [[ ! -f "$dir/CMakeCache.txt" && -z "${CUDACXX:-}" && " ${cmake_args[*]-} " != *CMAKE_CUDA_COMPILER=* ]]; then
        cmake_args+=("-DCMAKE_CUDA_COMPILER=$KESTREL_NVCC")
    fi
    log "configure $dir"
    cmake -S "$KESTREL_ROOT" -B "$dir" -G Ninja ${cmake_args[@]+"${cmake_args[@]}"}
    local t kept=()
    for t in ${targets[@]+"${targets[@]}"}; do
        if [[ "$t" == '?'* ]]; then
            has_target "$dir" "${t#?}" && kept+=("${t#?}")
        else
            kept+=("$t")
        fi
    done
    targets=(${kept[@]+"${kept[@]}"})
    log "build $dir (${targets[*]:-all}, $KESTREL_JOBS jobs)"
    cmake --build "$dir" -j "$KESTREL_JOBS" ${targets[@]+--target "${targets[@]}"}
}

# has_target BUILD_DIR NAME: true when the configured (Ninja) build has that target.
has_target() {
    # No `grep -q` on the pipe: it exits at the first match, ninja then dies of SIGPIPE, and under
    # pipefail the whole test would fail depending on where the target sits in the list.
    local all
    all="$(ninja -C "$1" -t targets all 2>/dev/null)" || return 1
    grep -q "^$2: " <<<"$all"
}

# Short hash of the sources that build the GPU-check binaries. gpu_prepare.sh records it in the
# bundle; gpu_run.sh recomputes it on the GPU machine's copy of the tree and flags a stale bundle.
source_hash() {
    (
        cd "$KESTREL_ROOT" || exit 1
        local dirs=() d
        for d in CMakeLists.txt cmake include kernels src tests bench tools python; do [[ -e "$d" ]] && dirs+=("$d"); done
        find "${dirs[@]}" -type f \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cu' \
            -o -name '*.cuh' -o -name 'CMakeLists.txt' -o -name '*.cmake' -o -name '*.in' \) -print0 |
            LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16
    )
}

# python_env DIR: a virtual environment in DIR holding what the Python module's build and tests need (nanobind,
# scikit-build-core, numpy, pytest, matplotlib for the example's test, rosbags for the ROS bag tests), from PyPI;
# made once, reused after (a package missing from it is installed).
# Prints its interpreter. KESTREL_PYTHON picks the Python it is made from (default: python3).
python_env() {
    local dir="$1" py="${KESTREL_PYTHON:-python3}"
    local need='import nanobind, scikit_build_core, numpy, pytest, matplotlib, rosbags, PIL'
    if ! { [[ -x "$dir/bin/python" ]] && "$dir/bin/python" -c "$need" 2>/dev/null; }; then
        mkdir -p "$(dirname "$dir")"
        "$py" -m venv "$dir" >&2 || return 1
        "$dir/bin/python" -m pip install -q nanobind scikit-build-core numpy pytest matplotlib rosbags pillow >&2 || return 1
    fi
    echo "$dir/bin/python"
}
