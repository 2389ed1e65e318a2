# Compares an example's CPU and GPU outputs file for file: the CUDA backend must reproduce the CPU
# reference exactly. Skipped when the GPU run did not happen (no device: its folder lacks the files).
# With CHECKER and TRACKS_TOL the files are track CSVs, compared by example_check_output --tracks-match
# (same rows; positions within TRACKS_TOL px, the trackers' stated tolerance).
#   cmake -DA=<cpu output dir> -DB=<gpu output dir> -DFILES="f1^^f2..." [-DCHECKER=exe -DTRACKS_TOL=t]
#         -P compare_outputs.cmake
string(REPLACE "^^" ";" files "${FILES}")
list(GET files 0 first)
if(NOT EXISTS "${B}/${first}")
  message("KESTREL_EXAMPLE_SKIPPED: no GPU output in ${B}")
  return()
endif()
foreach(f ${files})
  if(CHECKER)
    execute_process(COMMAND ${CHECKER} --tracks-match "${A}/${f}" "${B}/${f}" ${TRACKS_TOL} RESULT_VARIABLE rc)
  else()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${A}/${f}" "${B}/${f}" RESULT_VARIABLE rc)
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "CPU and GPU outputs differ: ${A}/${f} vs ${B}/${f}")
  endif()
  message("identical: ${f}")
endforeach()
