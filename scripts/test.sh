#!/usr/bin/env bash
# Installs the dependencies, builds Kestrel (Release, CUDA architectures 87;90 by default) with its Python
# module and runs the whole test suite with ctest, the Python tests (pytest, test python.pytest) included. On
# a machine without a GPU the GPU tests skip loudly.
#
# Usage: scripts/test.sh [extra cmake args...]
# Environment: BUILD_DIR (default: build), KESTREL_JOBS (default: all cores),
#              KESTREL_SKIP_DEPS=1 (do not call install-deps.sh), CTEST_ARGS (extra ctest arguments),
#              KESTREL_SKIP_PYTHON=1 (no Python module: its build needs a virtual environment in
#              BUILD_DIR/python-venv with nanobind, numpy and pytest from PyPI), KESTREL_PYTHON (default python3)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
BUILD_DIR="${BUILD_DIR:-build}"

[[ "${KESTREL_SKIP_DEPS:-0}" == 1 ]] || bash "$KESTREL_ROOT/scripts/install-deps.sh"
python_args=()
if [[ "${KESTREL_SKIP_PYTHON:-0}" != 1 ]]; then
    log "Python environment ($BUILD_DIR/python-venv)"
    venv="$BUILD_DIR/python-venv"; [[ "$venv" == /* ]] || venv="$KESTREL_ROOT/$venv"
    py="$(python_env "$venv")" ||
        die "cannot make the Python environment (python3 -m venv, pip from PyPI); KESTREL_SKIP_PYTHON=1 builds without the Python module"
    python_args=(-DKESTREL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$py")
fi
configure_and_build "$BUILD_DIR" ${python_args[@]+"${python_args[@]}"} "$@"
log "ctest ($BUILD_DIR)"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$KESTREL_JOBS" ${CTEST_ARGS:-}
