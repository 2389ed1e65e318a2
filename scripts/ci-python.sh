#!/usr/bin/env bash
# `pip install .` in a fresh clone, as a user does it: clones the committed tree, installs it into a new virtual
# environment (scikit-build-core and nanobind fetched by pip from PyPI), checks `import kestrel`, then runs the
# Python test suite against the installed package (CPU backend) with the test data, kestrel_pyref and
# track_sequence of the main build (BUILD_DIR), so that the comparisons with the C++ API and tool run on the wheel
# too (the ROS bag tests with the extra 'ros' installed).
# CI builds the wheel without CUDA (the CUDA build of the same sources is tested by scripts/test.sh's
# python.pytest); KESTREL_PIP_CUDA=1 keeps the default (the CUDA backend when nvcc is found).
#
# Usage: scripts/ci-python.sh
# Environment: BUILD_DIR (default: build), KESTREL_PYTHON (default: python3), KESTREL_PIP_CUDA=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
build="${BUILD_DIR:-build}"
[[ "$build" == /* ]] || build="$KESTREL_ROOT/$build"
work="$(mktemp -d /tmp/kestrel-pip.XXXXXX)"
trap 'rm -rf "$work"' EXIT

log "fresh clone of $(git rev-parse --short HEAD) into $work/clone"
git clone -q "$KESTREL_ROOT" "$work/clone"
"${KESTREL_PYTHON:-python3}" -m venv "$work/venv"
pip_args=()
[[ "${KESTREL_PIP_CUDA:-0}" == 1 ]] || pip_args=(--config-settings=cmake.define.KESTREL_WITH_CUDA=OFF)
log "pip install . ${pip_args[*]-}"
t0=$SECONDS
(cd "$work/clone" && CMAKE_BUILD_PARALLEL_LEVEL="$KESTREL_JOBS" "$work/venv/bin/pip" install -q . ${pip_args[@]+"${pip_args[@]}"})
echo "pip install took $((SECONDS - t0)) s"
(cd "$work" && "$work/venv/bin/python" -c \
    'import kestrel; print("import kestrel:", kestrel.__version__, "built_with_cuda", kestrel.built_with_cuda(), "at", kestrel.__file__)')
# The test requirements, and those of the extra 'ros' (pyproject.toml) for the ROS bag tests.
"$work/venv/bin/pip" install -q pytest matplotlib "rosbags>=0.10" pillow
log "pytest against the installed package"
cd "$work"
env_args=()
[[ -d "$build/testdata" ]] && env_args+=("KESTREL_TEST_DATA=$build/testdata")
[[ -x "$build/python/kestrel_pyref" ]] && env_args+=("KESTREL_PYREF=$build/python/kestrel_pyref")
[[ -x "$build/examples/track_sequence" ]] && env_args+=("KESTREL_TRACK_SEQUENCE=$build/examples/track_sequence")
env ${env_args[@]+"${env_args[@]}"} "$work/venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$work/clone/python/tests"
