#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Kestrel needs to build, test, benchmark and run its demo.
# Idempotent: when every package is already installed it touches nothing (no apt-get update).
# The CUDA toolkit itself is not installed here (CI and users bring their own, 11.4 or newer).
#
# Usage: scripts/install-deps.sh           build + test + bench + demo dependencies
#        scripts/install-deps.sh --cuda11  also Debian's CUDA 11.8 toolkit (non-free) and g++-11,
#                                          for scripts/check-cuda11.sh (about 2.2 GB)
set -euo pipefail

packages=(
    cmake ninja-build g++            # build
    libgtest-dev                     # tests (GoogleTest)
    libbenchmark-dev                 # micro-benchmarks (Google Benchmark)
    libopencv-dev                    # conformance tests, bench baselines, test-data preparation
    opencv-doc                       # real test images and the vtest.avi sequence (examples/data)
    libeigen3-dev                    # Eigen: the geometry tests' independent references (SVD, eigen-solvers)
    libstb-dev                       # stb_image: PNG reading without OpenCV (runs on the GPU machine)
    xz-utils                         # compressing the GPU-check bundle
    clang                            # second host compiler; libFuzzer (scripts/ci-fuzz.sh)
    libclang-rt-dev                  # clang runtimes: libFuzzer, ASan for the fuzz targets
    python3-dev python3-venv         # the Python module (headers, virtual environments; scripts/test.sh)
)
cuda11=0
for arg in "$@"; do
    case "$arg" in
        --cuda11) cuda11=1 ;;
        -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
        *) echo "install-deps.sh: unknown argument '$arg'" >&2; exit 2 ;;
    esac
done
((cuda11)) && packages+=(nvidia-cuda-toolkit g++-11)

installed() { [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]; }

missing=()
for p in "${packages[@]}"; do
    installed "$p" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    echo "install-deps: all ${#packages[@]} packages present"
    exit 0
fi
echo "install-deps: installing ${missing[*]}"

SUDO=()
if ((EUID != 0)); then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps: run as root or install sudo" >&2; exit 1; }
    SUDO=(sudo)
fi

# Debian's nvidia-cuda-toolkit lives in non-free and pulls the driver's libcuda1, whose
# nvidia-support dependency lives in contrib: enable both components (Debian only; Ubuntu has the
# package in multiverse, which is usually enabled).
enable_components() {
    local f=/etc/apt/sources.list.d/debian.sources c
    if [[ -f "$f" ]]; then   # deb822 format (Debian 12+)
        for c in contrib non-free; do
            "${SUDO[@]}" sed -E -i "/^Components:/{/[[:space:]]${c}([[:space:]]|\$)/! s/\$/ ${c}/}" "$f"
        done
    elif [[ -f /etc/apt/sources.list ]] && grep -qE '^deb .*debian' /etc/apt/sources.list; then
        for c in contrib non-free; do
            "${SUDO[@]}" sed -E -i "/^deb .*debian/{/[[:space:]]${c}([[:space:]]|\$)/! s/\$/ ${c}/}" /etc/apt/sources.list
        done
    fi
}
((cuda11)) && enable_components

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -q
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
