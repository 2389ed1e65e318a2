# Runs a command and checks both its exit status and its output: the ctests of the evaluation tools' gates
# (tools/CMakeLists.txt), where a PASS_REGULAR_EXPRESSION alone would ignore the exit status.
#
#   cmake -DEXPECT_RC=<status> -DEXPECT_OUTPUT=<regex> -P expect_exit.cmake -- <command> [args...]
#
# Passes when the command exits with EXPECT_RC and its output (standard output, then standard error) matches
# EXPECT_OUTPUT (a CMake regex; optional). A crash, another status or a missing line fails. The output is printed
# either way.
if(NOT DEFINED EXPECT_RC)
  message(FATAL_ERROR "expect_exit.cmake: -DEXPECT_RC=<status> is required")
endif()
set(cmd)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 0 ${last})
  if(after_dashes)
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif("${CMAKE_ARGV${i}}" STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "expect_exit.cmake: no command after --")
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(err)
  message("(stderr)\n${err}")
endif()
if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expect_exit.cmake: exit status '${rc}', expected ${EXPECT_RC}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "expect_exit.cmake: the output does not match '${EXPECT_OUTPUT}'")
endif()
message("expect_exit.cmake: exit status ${rc} as expected")
