#!/usr/bin/env bash
# GPU check, part 1 (runs HERE, on the build machine): builds the GPU-side binaries for sm_90
# with libstdc++/libgcc linked statically and assembles the bundle .gpu/ that travels to the GPU
# machine (which has the CUDA toolkit but no Debian libraries and no network):
#   .gpu/payload.tar.xz  bin/   kestrel_tests (+ kestrel_microbench, kestrel_bench when present)
#                        lib/   shared libraries they need beyond glibc and the NVIDIA driver
#                               (libbenchmark; OpenCV core/imgproc/features2d/video and deps)
#                        glibc/ Debian's loader + libc, used only where the host glibc is older
#                        python/kestrel/  the Python package with its compiled module, built for the GPU
#                               machine's Python (KESTREL_GPU_PYTHON, default 3.12: see below)
#   .gpu/testdata/       the prepared real images and vtest.avi frames (PNG, not recompressed)
#   .gpu/manifest.txt    commit, source hash, binaries, libraries, glibc needed
# Then, in a copy of the repository with .gpu/ on a machine with a GPU: bash scripts/gpu_run.sh (docs/gpu-check.md)
#
# Environment: GPU_BUILD_DIR (default: build-gpu), KESTREL_JOBS, KESTREL_SKIP_DEPS=1,
#   KESTREL_GPU_BASE_MICROBENCH  a kestrel_microbench built (the same way: sm_90, static runtime) from another
#                                commit, e.g. the one before a change; it travels as .gpu/base/ and
#                                gpu_run.sh's "compare" step times it and this tree's in turn, in one run
#   KESTREL_GPU_BASE_COMMIT      what to call that build in the report (default: "base")
#   KESTREL_GPU_PYTHON           the interpreter the Python module is built for: the same minor version as the GPU
#                                machine's python3 (default: python3.12 from pyenv or PATH; "none" = no module).
#                                Its virtual environment (nanobind, numpy from PyPI) is made in <build>/python-venv.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$KESTREL_ROOT"
build="${GPU_BUILD_DIR:-build-gpu}"
bundle="$KESTREL_ROOT/.gpu"
max_mib=55        # the device call carries at most 64 MiB in all; keep room for the tree itself

[[ "${KESTREL_SKIP_DEPS:-0}" == 1 ]] || bash scripts/install-deps.sh
# The Python module for the GPU machine's Python (the python step of gpu_run.sh).
gpu_python="${KESTREL_GPU_PYTHON:-}"
if [[ -z "$gpu_python" ]]; then
    for c in /root/.pyenv/versions/3.12*/bin/python3 "$(command -v python3.12 || true)"; do
        [[ -n "$c" && -x "$c" ]] && { gpu_python="$c"; break; }
    done
    [[ -n "$gpu_python" ]] || die "no Python 3.12 for the GPU machine's module: set KESTREL_GPU_PYTHON (or 'none')"
fi
python_args=() python_targets=()
if [[ "$gpu_python" != none ]]; then
    venv="$build"; [[ "$venv" == /* ]] || venv="$KESTREL_ROOT/$venv"
    py="$(KESTREL_PYTHON="$gpu_python" python_env "$venv/python-venv")" || die "cannot make $venv/python-venv from $gpu_python"
    python_args=(-DKESTREL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$py")
    python_targets=(_kestrel kestrel_pyref)
fi
# No video input in kestrel_bench here: OpenCV's videoio/imgcodecs would pull ffmpeg, GDAL & co.
# (~280 MB) into the bundle; the bench reads the prepared frames with stb_image instead.
configure_and_build "$build" -DKESTREL_CUDA_ARCHITECTURES=90 -DKESTREL_STATIC_RUNTIME=ON \
    -DKESTREL_BUILD_EXAMPLES=ON -DKESTREL_EXAMPLES_WITH_OPENCV=OFF -DKESTREL_BENCH_VIDEO=OFF \
    ${python_args[@]+"${python_args[@]}"} -- kestrel_tests kestrel_testdata ${python_targets[@]+"${python_targets[@]}"}

# Benchmarks: only the targets that exist in this tree.
bins=("$build/tests/kestrel_tests")
for t in kestrel_microbench kestrel_bench kestrel_soak track_sequence detect_image validate_against_cpu \
         custom_pipeline relative_pose example_check_output example_make_stereo kestrel_pyref; do
    if has_target "$build" "$t"; then
        cmake --build "$build" -j "$KESTREL_JOBS" --target "$t"
        bins+=("$(find "$build" -maxdepth 3 -type f -name "$t" -perm -u+x | head -n1)")
    fi
done

log "assemble $bundle"
rm -rf "$bundle"
stage="$bundle/payload"          # packed into payload.tar.xz at the end (binaries shrink ~8x)
mkdir -p "$stage/bin" "$stage/lib" "$stage/glibc" "$bundle/testdata"
for b in "${bins[@]}"; do
    [[ -x "$b" ]] || die "missing binary '$b'"
    cp "$b" "$stage/bin/"
done
find "$build/testdata" -maxdepth 1 -type f -name '*.png' -exec cp {} "$bundle/testdata/" \;
if ((${#python_targets[@]})); then
    mkdir -p "$stage/python"
    cp -r "$build/python/kestrel" "$stage/python/"
    py_module="$(ls "$stage"/python/kestrel/_kestrel*.so)"
    # The module is loaded by the GPU machine's Python: it may need nothing beyond glibc and the driver.
    py_missing="$(ldd "$py_module" | awk '$2 == "=>" {print $1}' |
        grep -vE '^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libgcc_s\.so|libcuda\.so)' || true)"
    [[ -z "$py_missing" ]] || die "the Python module needs libraries the GPU machine may lack: $py_missing"
fi
[[ -n "$(ls -A "$bundle/testdata")" ]] || die "no test data in $build/testdata (kestrel_testdata needs opencv-doc)"

# Shared libraries: everything ldd resolves except glibc's own libraries and the NVIDIA driver
# (both present on the GPU machine; the driver must come from there). libstdc++/libgcc_s are
# bundled when a bundled library (e.g. OpenCV) needs them: the binaries themselves link them statically.
system_lib='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|libresolv\.so|libutil\.so|libcuda\.so|libnvidia)'
missing="$(ldd "$stage"/bin/* | grep 'not found' || true)"
[[ -z "$missing" ]] || die "unresolved libraries here: $missing"
ldd "$stage"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
        [[ "$name" =~ $system_lib ]] && continue
        cp -L "$path" "$stage/lib/$name"
    done
# glibc itself, used by gpu_run.sh only when the GPU machine's glibc is older than the binaries need.
ldd "$stage"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3} $1 ~ /^\/.*ld-linux/ {print "ld-linux-x86-64.so.2", $1}' |
    sort -u | while read -r name path; do
        if [[ "$name" =~ ^(ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so) ]]; then
            cp -L "$path" "$stage/glibc/$name"
        fi
    done
[[ -f "$stage/glibc/ld-linux-x86-64.so.2" ]] || echo "note: no x86-64 glibc loader bundled"

glibc_need="$(objdump -T "$stage"/bin/* "$stage"/lib/* 2>/dev/null | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sort -uV | tail -n1)"
{
    echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (+ uncommitted changes)')"
    echo "source_hash: $(source_hash)"
    echo "prepared: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "nvcc: $(nvcc --version | tail -n1)"
    echo "archs: sm_90 (KESTREL_CUDA_ARCHITECTURES=90)"
    echo "glibc needed: ${glibc_need:-unknown}"
    echo "binaries: $(cd "$stage/bin" && ls | tr '\n' ' ')"
    echo "libs: $(cd "$stage/lib" && ls | tr '\n' ' ')"
    echo "testdata: $(ls "$bundle/testdata" | wc -l) images"
    if ((${#python_targets[@]})); then
        echo "python module: $(basename "$py_module") for $("$gpu_python" --version 2>&1), glibc needed $(objdump -T "$py_module" | grep -oE 'GLIBC_[0-9]+\.[0-9]+' | sort -uV | tail -n1)"
    fi
} >"$bundle/manifest.txt"
cat "$bundle/manifest.txt"

log "pack bin/ lib/ glibc/ ($(du -sm "$stage" | cut -f1) MiB) into payload.tar.xz"
# xz -9: its 64 MiB dictionary spans several binaries, so the CUDA kernels that each of them embeds are stored
# about once (-6's 8 MiB window cannot: the payload is then twice as large).
tar -C "$stage" -cf - bin lib glibc $([[ -d "$stage/python" ]] && echo python) | xz -T0 -9 >"$bundle/payload.tar.xz"
rm -rf "$stage"

if [[ -n "${KESTREL_GPU_BASE_MICROBENCH:-}" ]]; then
    [[ -x "$KESTREL_GPU_BASE_MICROBENCH" ]] || die "KESTREL_GPU_BASE_MICROBENCH: not an executable: $KESTREL_GPU_BASE_MICROBENCH"
    mkdir -p "$bundle/base"
    xz -T0 -6 -c "$KESTREL_GPU_BASE_MICROBENCH" >"$bundle/base/kestrel_microbench.xz"
    echo "${KESTREL_GPU_BASE_COMMIT:-base}" >"$bundle/base/commit.txt"
    log "base microbench for the compare step: ${KESTREL_GPU_BASE_COMMIT:-base}"
fi

size_kib="$(du -sk "$bundle" | cut -f1)"
log ".gpu/ is $((size_kib / 1024)) MiB ($size_kib KiB)"
du -sh "$bundle"/* | sed 's/^/    /'
((size_kib <= max_mib * 1024)) || die ".gpu/ exceeds $max_mib MiB: the device call carries at most 64 MiB"
echo
echo "Ready: copy the repository with .gpu/ to a machine with a GPU and run 'bash scripts/gpu_run.sh' there"
