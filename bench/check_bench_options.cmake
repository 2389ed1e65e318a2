# ctest helper: kestrel_bench and kestrel_microbench refuse bad --rate and --sm-count values with exit
# status 2 and a message naming the option and its bound, before measuring anything.
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
