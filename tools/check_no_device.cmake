# ctest helper: a tool asked for --backend cuda on a machine without a usable CUDA device must say so in the
# command line's own terms (--backend cpu), not with the library's advice to programmers (Backend::Cpu,
# default_backend()). Where a device is usable the run is not this test's case: reported as skipped.
#   cmake -DRUN="tool^^arg..." -P check_no_device.cmake
string(REPLACE "^^" ";" run "${RUN}")
execute_process(COMMAND ${run} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message("KESTREL_TOOL_SKIPPED: a CUDA device is usable here; the run without a device is not tested")
  return()
endif()
if(NOT err MATCHES "no usable CUDA device on this machine \\(use --backend cpu\\)" OR err MATCHES "Backend::|default_backend")
  message(FATAL_ERROR "exit status ${rc}; stderr does not name --backend cpu (or names the library's Backend:: API):\n${err}")
endif()
message("${err}")
