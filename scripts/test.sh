#!/usr/bin/env bash
# Installs the dependencies, builds Kestrel (Release, CUDA architectures 87;90 by default) and
# runs the whole test suite with ctest. On a machine without a GPU the GPU tests skip loudly.
#
# Usage: scripts/test.sh [extra cmake args...]
# Environment: BUILD_DIR (default: build), KESTREL_JOBS (default: all cores),
#              KESTREL_SKIP_DEPS=1 (do not call install-deps.sh), CTEST_ARGS (extra ctest arguments)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
BUILD_DIR="${BUILD_DIR:-build}"

[[ "${KESTREL_SKIP_DEPS:-0}" == 1 ]] || bash "$KESTREL_ROOT/scripts/install-deps.sh"
configure_and_build "$BUILD_DIR" "$@"
log "ctest ($BUILD_DIR)"
# shellcheck disable=SC2086
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$KESTREL_JOBS" ${CTEST_ARGS:-}
