# ctest helper: kestrel_bench and kestrel_microbench refuse bad --rate and --sm-count values, and kestrel_bench
# bad values of the default input's options (--size, --magnify, --period, --speed, --photo), with exit status 2
# and a message naming the option and its bound, before measuring anything; a photo that cannot be read or is
# too small for the view stops the run with exit status 1 and a message naming the file.
# cmake -DBENCH=<kestrel_bench> [-DMICROBENCH=<kestrel_microbench>] [-DNO_GPU=1] -P check_bench_options.cmake
# NO_GPU: this build or machine has no usable CUDA device (the --sm-count runs that would start there are
# then expected to fail with their own message).
cmake_minimum_required(VERSION 3.24)  # policies: quoted if() arguments, IN_LIST
function(expect_refusal what message)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "${what}: exit status ${rc}, expected 2 (usage error)\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${err}" "${message}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: stderr lacks '${message}'\nstderr: ${err}")
  endif()
  message(STATUS "${what}: refused: ${err}")
endfunction()

# A run that starts and stops on bad data: exit status 1, the message on stderr.
function(expect_error what message)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "${what}: exit status ${rc}, expected 1 (error)\nstdout: ${out}\nstderr: ${err}")
  endif()
  string(FIND "${err}" "${message}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${what}: stderr lacks '${message}'\nstderr: ${err}")
  endif()
  message(STATUS "${what}: stopped: ${err}")
endfunction()

expect_refusal("--size 752" "--size expects WxH" ${BENCH} --size 752)
expect_refusal("--magnify 0.5" "--magnify must be in [1, 16], got 0.5" ${BENCH} --magnify 0.5)
expect_refusal("--magnify 17" "--magnify must be in [1, 16], got 17" ${BENCH} --magnify=17)
expect_refusal("--period 5" "--period must be >= 20 frames, got 5" ${BENCH} --period 5)
expect_refusal("--speed 0" "--speed must be in (0, 64] px per frame, got 0" ${BENCH} --speed 0)
expect_refusal("--speed 65" "--speed must be in (0, 64] px per frame, got 65" ${BENCH} --speed 65)
expect_refusal("--photo with --images" "--photo shapes the default input (the moving camera): not with another input"
  ${BENCH} --photo x.png --images ${CMAKE_CURRENT_LIST_DIR})
expect_refusal("vtest with --period" "--period shapes the default input (the moving camera): not with another input"
  ${BENCH} vtest --period 30)
set(quick --backend cpu --frames 1 --warmup 0 --baselines none)
expect_error("--photo missing" "cannot read image '/nonexistent/photo.png'" ${BENCH} --photo /nonexistent/photo.png ${quick})
if(DEFINED ENV{KESTREL_TEST_DATA} AND EXISTS "$ENV{KESTREL_TEST_DATA}/box.png")
  # box.png (324x223) magnified twice is 648x446: smaller than the 752x480 view.
  expect_error("--photo too small" "box.png': synthetic sequence: window larger than the photo (a 752x480 view of the photo magnified 2x)"
    ${BENCH} --photo $ENV{KESTREL_TEST_DATA}/box.png ${quick})
endif()

# Sizes must be positive; frames too small for the configuration stop the run naming the input and the size.
expect_refusal("--crop 0x0" "--crop 0x0: each size must be at least 1 pixel" ${BENCH} --crop 0x0)
expect_refusal("--resize 0x480" "--resize 0x480: each size must be at least 1 pixel" ${BENCH} --resize 0x480)
expect_refusal("--size -752x480" "--size -752x480: each size must be at least 1 pixel" ${BENCH} --size -752x480)
set(one_px "${CMAKE_CURRENT_BINARY_DIR}/bench_one_pixel_euroc")  # a EuRoC folder of one 1x1 frame (binary PGM)
file(REMOVE_RECURSE "${one_px}")
file(WRITE "${one_px}/mav0/cam0/data.csv" "#timestamp [ns],filename\n1403636579763555584,1403636579763555584.pgm\n")
file(WRITE "${one_px}/mav0/cam0/data/1403636579763555584.pgm" "P5\n1 1\n255\nA")
expect_error("EuRoC of 1x1 frames" "input EuRoC ${one_px}/mav0/cam0: its frames are 1x1 pixels: too small for this configuration, which needs at least"
  ${BENCH} --euroc ${one_px} ${quick})

expect_refusal("--rate 0" "--rate must be in (0, 1000] Hz, got '0'" ${BENCH} --rate 0)
expect_refusal("--rate -5" "--rate must be in (0, 1000] Hz" ${BENCH} --rate=-5)
expect_refusal("--rate 1500" "--rate must be in (0, 1000] Hz, got '1500'" ${BENCH} --rate 1500)
expect_refusal("--rate abc" "--rate expects a number, got 'abc'" ${BENCH} --rate abc)
expect_refusal("--rate 20,x" "--rate expects a number, got 'x'" ${BENCH} --rate 20,x)
expect_refusal("--rate 20,20" "--rate: each rate once" ${BENCH} --rate 20,20)
expect_refusal("--rate without value" "--rate needs a value" ${BENCH} --rate)
expect_refusal("--sm-count 0" "--sm-count must be >= 1" ${BENCH} --sm-count 0)
expect_refusal("--sm-count -8" "--sm-count must be >= 1" ${BENCH} --sm-count=-8)
expect_refusal("--sm-count 8x" "--sm-count expects an integer, got '8x'" ${BENCH} --sm-count 8x)
expect_refusal("--sm-count with --backend cpu" "not with --backend cpu" ${BENCH} --backend cpu --sm-count 8)
if(NO_GPU)
  # A full command line that would run: refused at start-up, the CPU backend cannot limit SMs.
  expect_refusal("--sm-count without a GPU" "--sm-count limits the GPU: it needs the CUDA backend"
    ${BENCH} --sm-count 8 --frames 1 --warmup 0 --baselines none)
endif()

if(MICROBENCH)
  expect_refusal("microbench --sm-count 0" "--sm-count expects an integer >= 1" ${MICROBENCH} --sm-count 0)
  expect_refusal("microbench --sm-count=abc" "got 'abc'" ${MICROBENCH} --sm-count=abc)
  expect_refusal("microbench --sm-count without value" "--sm-count expects an integer >= 1" ${MICROBENCH} --sm-count)
  if(NO_GPU)
    expect_refusal("microbench --sm-count without a GPU" "no CUDA device on this machine" ${MICROBENCH} --sm-count 8
      --benchmark_filter=none)
  endif()
endif()
