#!/usr/bin/env bash
# Runs the examples on the GPU machine, where ctest's build tree is not available: the same scenarios
# as the "examples" ctest tests with --backend cuda (examples/CMakeLists.txt), each output checked by
# example_check_output, and the CPU and GPU outputs compared file for file. Needs no OpenCV when the
# examples were built with -DKESTREL_EXAMPLES_WITH_OPENCV=OFF (PNG output instead of video).
#
# Usage: examples/tests/gpu_examples.sh BIN_DIR TESTDATA_DIR OUT_DIR
#   BIN_DIR: track_sequence, detect_image, validate_against_cpu, custom_pipeline, relative_pose, example_check_output,
#            example_make_stereo (the stereo scenarios run when it is there)
# Prints one line per scenario ("ok" / "FAIL") and exits 1 when any failed. KESTREL_REQUIRE_GPU=1 is
# set, so an example that finds no device fails instead of skipping.
set -uo pipefail
if (($# != 3)); then
    sed -n '2,10p' "$0"
    exit 2
fi
bin="$1" td="$2" out="$3"
export KESTREL_TEST_DATA="$td" KESTREL_REQUIRE_GPU=1
mkdir -p "$out"
check="$bin/example_check_output"
header="frame,timestamp,id,x,y,level,status"
failed=0

# scenario NAME EXPECTED_RC COMMAND...: runs it with its log in OUT_DIR/NAME.log
scenario() {
    local name="$1" want="$2" rc=0
    shift 2
    "$@" >"$out/$name.log" 2>&1 || rc=$?
    if [[ "$rc" == "$want" ]]; then
        echo "ok    $name"
    else
        echo "FAIL  $name (exit $rc, expected $want; log $out/$name.log)"
        failed=1
    fi
    return 0
}
same() {  # same NAME DIR_A DIR_B FILES...: the CPU and GPU outputs are identical
    local name="$1" a="$2" b="$3" f bad=""
    shift 3
    for f in "$@"; do cmp -s "$a/$f" "$b/$f" || bad="$bad $f"; done
    if [[ -z "$bad" ]]; then echo "ok    $name"; else echo "FAIL  $name (differ:$bad)"; failed=1; fi
}

for backend in cpu cuda; do
    o="$out/detect_$backend"
    rm -rf "$o" && mkdir -p "$o"
    scenario "detect_image.$backend" 0 "$bin/detect_image" "$td/graf1.png" --backend "$backend" --levels 3 \
        --threshold 20 --score sad-arc --out "$o/kp.png" --csv "$o/kp.csv" --corners-csv "$o/corners.csv" \
        --save-levels "$o/levels"
    scenario "detect_image.$backend.check" 0 "$check" --keypoints-in-corners "$o/kp.csv" "$o/corners.csv" 2 \
        --csv "$o/kp.csv" x,y,level,score 100 --range x 0 799 --range y 0 639 --range level 0 2 \
        --csv "$o/corners.csv" x,y,level,score 300 --image "$o/levels/level_2.png" 200 160

    o="$out/track_default_$backend"
    rm -rf "$o"
    scenario "track_sequence.$backend" 0 "$bin/track_sequence" vtest --backend "$backend" --max-frames 12 --features 150 \
        --png --out "$o" --print-every 4
    scenario "track_sequence.$backend.check" 0 "$check" --csv "$o/tracks.csv" "$header" 1000 --ascending frame \
        --distinct frame 12 --distinct id 100 --only status Tracked --range x 0 767 --range y 0 575 \
        --image "$o/frames/000011.png" 768 576

    o="$out/track_synthetic_$backend"
    rm -rf "$o"
    scenario "track_sequence.synthetic.$backend" 0 "$bin/track_sequence" --backend "$backend" --synthetic \
        --synthetic-frames 30 --no-draw --max-median-error 0.05 --out "$o"

    # PyCA selection on ORB-SLAM's pyramid, and the tracker re-detecting with it
    o="$out/detect_pyca_$backend"
    rm -rf "$o" && mkdir -p "$o"
    scenario "detect_image.pyca.$backend" 0 "$bin/detect_image" "$td/graf1.png" --backend "$backend" --selection pyca \
        --levels 8 --scale 1.2 --pyca-cell 16,16,8 --per-cell 4 --out "$o/kp.png" --csv "$o/kp.csv"
    scenario "detect_image.pyca.$backend.check" 0 "$check" --csv "$o/kp.csv" x,y,level,score 300 --range x 0 799 \
        --range y 0 639 --range level 0 7 --distinct level 4
    o="$out/detect_orbslam_$backend"
    rm -rf "$o" && mkdir -p "$o"
    scenario "detect_image.orbslam.$backend" 0 "$bin/detect_image" "$td/graf1.png" --backend "$backend" \
        --selection orb-slam --levels 8 --scale 1.2 --orb --out "$o/kp.png" --csv "$o/kp.csv"
    scenario "detect_image.orbslam.$backend.check" 0 "$check" --csv "$o/kp.csv" x,y,level,score,angle,descriptor 1000 --range x 0 799 \
        --range y 0 639 --range level 0 7 --distinct level 8
    o="$out/track_pyca_$backend"
    rm -rf "$o"
    scenario "track_sequence.synthetic.pyca.$backend" 0 "$bin/track_sequence" --backend "$backend" --synthetic \
        --synthetic-frames 30 --no-draw --det-selection pyca --det-pyca-cell 16 --max-median-error 0.05 --out "$o"

    # ORB angles and descriptors in the CSV (8 levels of 1.2)
    o="$out/detect_orb_$backend"
    rm -rf "$o" && mkdir -p "$o"
    scenario "detect_image.orb.$backend" 0 "$bin/detect_image" "$td/graf1.png" --backend "$backend" --levels 8 \
        --scale 1.2 --threshold 20 --score harris --orb --out "$o/kp.png" --csv "$o/kp.csv"
    scenario "detect_image.orb.$backend.check" 0 "$check" --csv "$o/kp.csv" x,y,level,score,angle,descriptor 100 \
        --range x 0 799 --range y 0 639 --range level 0 7 --range angle 0 360 --distinct level 6
done
same "detect_image.pyca.cpu_equals_gpu" "$out/detect_pyca_cpu" "$out/detect_pyca_cuda" kp.csv
same "detect_image.orbslam.cpu_equals_gpu" "$out/detect_orbslam_cpu" "$out/detect_orbslam_cuda" kp.csv
same "detect_image.orb.cpu_equals_gpu" "$out/detect_orb_cpu" "$out/detect_orb_cuda" kp.csv
scenario "track_sequence.synthetic.pyca.cpu_matches_gpu" 0 "$check" --tracks-match \
    "$out/track_pyca_cpu/tracks.csv" "$out/track_pyca_cuda/tracks.csv" 2e-3
same "detect_image.cpu_equals_gpu" "$out/detect_cpu" "$out/detect_cuda" kp.csv corners.csv levels/level_0.png \
    levels/level_1.png levels/level_2.png
# Tracks: same ids, frames, levels and statuses; positions within 2e-3 px (1e-3 stated + CSV rounding).
scenario "track_sequence.cpu_matches_gpu" 0 "$check" --tracks-match "$out/track_default_cpu/tracks.csv" \
    "$out/track_default_cuda/tracks.csv" 2e-3
scenario "track_sequence.synthetic.cpu_matches_gpu" 0 "$check" --tracks-match \
    "$out/track_synthetic_cpu/tracks.csv" "$out/track_synthetic_cuda/tracks.csv" 2e-3

# relative_pose: a generated scene with a known pose, seen by EuRoC's cam0 (distortion included); the CPU
# and CUDA backends print the known pose and write identical masks and poses.
if [[ -x "$bin/relative_pose" ]]; then
    yaml="$(cd "$(dirname "$0")/.." && pwd)/data/euroc_cam0_sensor.yaml"
    scenario "relative_pose.make_scene" 0 "$bin/relative_pose" --make-scene "$out/pose_scene.csv" --points 300 \
        --outliers 0.3 --sensor "$yaml"
    for backend in cpu cuda; do
        mkdir -p "$out/pose_$backend"
        scenario "relative_pose.$backend" 0 "$bin/relative_pose" "$out/pose_scene.csv" --sensor "$yaml" \
            --backend "$backend" --mask "$out/pose_$backend/mask.csv" --pose "$out/pose_$backend/pose.csv"
        grep -q "status: Ok" "$out/relative_pose.$backend.log" &&
            grep -q "inliers: 210 of 300" "$out/relative_pose.$backend.log" ||
            { echo "FAIL  relative_pose.$backend (not the known 210 inliers)"; failed=1; }
    done
    same "relative_pose.cpu_equals_gpu" "$out/pose_cpu" "$out/pose_cuda" mask.csv pose.csv
fi

# Stereo: a generated EuRoC stereo folder (EuRoC's cam0/cam1 calibration: a raw rig from the sensor.yaml files)
# and two rectified folders (12.37 px disparity); CPU and GPU CSVs match (stereo columns included).
if [[ -x "$bin/example_make_stereo" ]]; then
    data="$(cd "$(dirname "$0")/.." && pwd)/data"
    sheader="frame,timestamp,id,x,y,level,status,right_x,right_y,disparity,depth,stereo_status"
    scenario "make_stereo.euroc" 0 "$bin/example_make_stereo" euroc "$out/stereo_euroc" \
        "$data/euroc_cam0_sensor.yaml" "$data/euroc_cam1_sensor.yaml" 6
    scenario "make_stereo.rectified" 0 "$bin/example_make_stereo" rectified "$out/stereo_rect" 6
    for backend in cpu cuda; do
        o="$out/stereo_euroc_$backend"
        rm -rf "$o"
        scenario "track_sequence.stereo_euroc.$backend" 0 "$bin/track_sequence" "$out/stereo_euroc" --stereo \
            --backend "$backend" --features 150 --png --out "$o"
        scenario "track_sequence.stereo_euroc.$backend.check" 0 "$check" --csv "$o/tracks.csv" "$sheader" 300 \
            --distinct frame 6 --only status Tracked --only stereo_status Matched --range disparity 10 40 \
            --range depth 1.5 3.5 --image "$o/frames/000005.png" 1504 480
        o="$out/stereo_rect_$backend"
        rm -rf "$o"
        scenario "track_sequence.stereo_rectified.$backend" 0 "$bin/track_sequence" "$out/stereo_rect/left" \
            --right "$out/stereo_rect/right" --rectified 576,319.5,239.5,0.1 --backend "$backend" --no-draw --out "$o"
        scenario "track_sequence.stereo_rectified.$backend.check" 0 "$check" --csv "$o/tracks.csv" "$sheader" 300 \
            --distinct frame 6 --only status Tracked --only stereo_status Matched --range disparity 11.37 13.37
    done
    scenario "track_sequence.stereo_euroc.cpu_matches_gpu" 0 "$check" --tracks-match \
        "$out/stereo_euroc_cpu/tracks.csv" "$out/stereo_euroc_cuda/tracks.csv" 2e-3
    scenario "track_sequence.stereo_rectified.cpu_matches_gpu" 0 "$check" --tracks-match \
        "$out/stereo_rect_cpu/tracks.csv" "$out/stereo_rect_cuda/tracks.csv" 2e-3
fi

scenario "custom_pipeline.cuda" 0 "$bin/custom_pipeline" --backend cuda --max-frames 8 --features 150 \
    --csv "$out/custom.csv"
scenario "custom_pipeline.cuda.check" 0 "$check" --csv "$out/custom.csv" "$header" 500 --distinct frame 8

# GPU vs CPU reference, stage by stage, on every test image, both template sources; and the tool's
# self-test (one injected difference per stage must be reported: exit status 1).
scenario "validate_against_cpu" 0 "$bin/validate_against_cpu"
scenario "validate_against_cpu.first_templates" 0 "$bin/validate_against_cpu" --template first --levels 3 \
    --score harris
scenario "validate_against_cpu.detects_differences" 1 "$bin/validate_against_cpu" "$td/graf1.png" \
    "$td/vtest_000.png" "$td/vtest_001.png" --inject-difference
grep -Eq "differences by stage: pyramid [1-9][0-9]* scores [1-9][0-9]* keypoints [1-9][0-9]* lk [1-9]" \
    "$out/validate_against_cpu.detects_differences.log" ||
    { echo "FAIL  validate_against_cpu.detects_differences (a stage's injected difference was not found)"; failed=1; }

exit "$failed"
