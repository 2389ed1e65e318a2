#!/usr/bin/env bash
# Installs the dependencies, builds Kestrel and runs its main job on the embedded default data:
# the frontend demo (examples/track_sequence) on a camera moving over a real photo (opencv-doc's
# graf1.png, panned, rolled and zoomed by a known motion: 200 frames, no download). It writes the
# video with trails, tracks born and lost drawn, to out/demo/, and prints the summary of the run:
# frames and fps, live tracks per frame, tracks born and lost by reason, track length, and the
# tracking error against the known motion. kestrel_bench's default input is the same sequence (the same code,
# examples/common/synthetic.cpp) at 752x480 with the photo magnified twice. Arguments are passed to the demo
# (try --help), e.g.
#   scripts/demo.sh vtest                 the 60 vtest.avi frames (a fixed camera)
#   scripts/demo.sh /data/MH_01_easy      a EuRoC folder; also an image folder or a video file
#
# Usage: scripts/demo.sh [SOURCE] [demo arguments...]
# Environment: BUILD_DIR (default: build), KESTREL_JOBS, KESTREL_SKIP_DEPS=1, KESTREL_CMAKE_ARGS
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
BUILD_DIR="${BUILD_DIR:-build}"

[[ "${KESTREL_SKIP_DEPS:-0}" == 1 ]] || bash "$KESTREL_ROOT/scripts/install-deps.sh"
# The demo is an example: a build directory configured earlier without examples gets them switched on.
# shellcheck disable=SC2086
configure_and_build "$BUILD_DIR" -DKESTREL_BUILD_EXAMPLES=ON ${KESTREL_CMAKE_ARGS:-} -- '?kestrel_testdata' track_sequence
# Output (annotated video + tracks.csv) goes to out/demo/ (git-ignored) unless --out is given.
args=("$@")
[[ " $* " == *" --out "* || " $* " == *" --out="* ]] || args=(--out "$KESTREL_ROOT/out/demo" "$@")
log "run $BUILD_DIR/examples/track_sequence ${args[*]}"
exec "$BUILD_DIR/examples/track_sequence" "${args[@]}"
