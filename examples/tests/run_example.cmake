# ctest driver for the examples: removes and recreates OUT, runs RUN (an example), then CHECK
# (example_check_output on what it wrote). Arguments are separated by "^^" in RUN and CHECK.
# An example that exits with SKIP_CODE (asked for --backend cuda without a device) is reported as
# skipped: the message matches the tests' SKIP_REGULAR_EXPRESSION.
# EXPECT_RC: the exit status expected (default 0); EXPECT_REGEX: a regular expression the example's
# output must match.
#   cmake -DOUT=dir -DRUN="exe^^arg..." [-DCHECK="checker^^arg..."] [-DSKIP_CODE=4] [-DEXPECT_RC=n]
#         [-DEXPECT_REGEX=re] -P run_example.cmake
if(OUT)
  file(REMOVE_RECURSE "${OUT}")
  file(MAKE_DIRECTORY "${OUT}")
endif()
string(REPLACE "^^" ";" run "${RUN}")
execute_process(COMMAND ${run} RESULT_VARIABLE rc OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(DEFINED SKIP_CODE AND rc STREQUAL "${SKIP_CODE}")
  message("KESTREL_EXAMPLE_SKIPPED: no CUDA device on this machine (the GPU run of this example is done on the GPU machine)")
  return()
endif()
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "example exited with '${rc}' (expected ${EXPECT_RC}): ${run}")
endif()
if(DEFINED EXPECT_REGEX AND NOT output MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "the example's output does not match '${EXPECT_REGEX}'")
endif()
if(CHECK)
  string(REPLACE "^^" ";" check "${CHECK}")
  execute_process(COMMAND ${check} RESULT_VARIABLE rc)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "output check failed: ${check}")
  endif()
endif()
