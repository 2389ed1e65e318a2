# The layer check (docs/architecture.md, "Layers"): every include line of the library points down.
#
#   cmake -DROOT=<repository> -P cmake/check_layers.cmake            checks the tree; exit 1 on a violation
#   cmake -DROOT=<repository> -DSELF_TEST=<dir> -P ...               writes a small tree with one violation
#                                                                    of each rule into <dir>, checks it, and
#                                                                    fails unless exactly those are reported
# Rules, over include/kestrel, src and kernels ("quoted" includes; <system> ones only for CUDA headers):
#   R1 include/kestrel/detail/*: only other detail headers and the plain-data headers.
#   R2 kernels/**: only detail headers, plain-data headers and kernels/ headers; never src/, never a
#      public class header.
#   R3 include/kestrel/*.hpp: never src/ or kernels/, never a CUDA header; a plain-data header
#      (*_types.hpp, keypoint.hpp, error.hpp, stream.hpp) includes only plain-data and detail headers.
#   R4 src/**: a file without "_cuda." in its name includes no CUDA header and nothing of kernels/
#      (it is built without the CUDA toolkit too); nothing includes tests/, bench/, examples/.
#   R5 areas: a file of area A (src/A/, kernels/A/, or a public header mapped to A below) includes only
#      headers of A and of the areas A builds on (kestrel_area_deps_<A>). kernels/common is the core's
#      kernel folder (shared warp/block primitives and the CUDA error check), so every area may use it.
# A new area adds itself to kestrel_areas with the areas it builds on; a new public header adds itself to
# kestrel_public_areas (an unknown one is reported, so that every header has a place).

cmake_minimum_required(VERSION 3.24)  # IN_LIST and the other policies of the project

set(kestrel_areas core pyramid features detect track geometry stereo interop)
set(kestrel_area_deps_core "")
set(kestrel_area_deps_pyramid core)
set(kestrel_area_deps_features core pyramid)
set(kestrel_area_deps_detect core pyramid features)
set(kestrel_area_deps_track core pyramid features detect geometry)
set(kestrel_area_deps_geometry core)
set(kestrel_area_deps_stereo core pyramid features detect track geometry)
set(kestrel_area_deps_interop core pyramid features detect track)  # opencv.hpp: conversions for every area

# Public headers (include/kestrel/<name>) and detail headers, each with its area.
# The exceptions to R5, each as "file|include" with its reason here and in docs/architecture.md ("Layers");
# none today.
set(kestrel_layer_exceptions "")

set(kestrel_public_areas
  error.hpp=core image.hpp=core device_image.hpp=core stream.hpp=core keypoint.hpp=core opencv.hpp=interop
  detail/validate.hpp=core detail/hd.hpp=core detail/exact_float.hpp=core
  pyramid.hpp=pyramid pyramid_types.hpp=pyramid detail/pyramid_rules.hpp=pyramid
  orb.hpp=features orb_types.hpp=features matcher.hpp=features detail/orb_rules.hpp=features
  fast.hpp=detect fast_types.hpp=detect feature_detector.hpp=detect grid_select.hpp=detect
  pyca_select.hpp=detect detail/fast_rules.hpp=detect detail/grid_rules.hpp=detect detail/pyca_rules.hpp=detect
  detail/orbslam_rules.hpp=detect
  lk_tracker.hpp=track lk_types.hpp=track feature_tracker.hpp=track multi_camera_tracker.hpp=track detail/lk_rules.hpp=track detail/anchor_rules.hpp=track
  detail/geo_check_rules.hpp=track detail/redetect_rules.hpp=track
  camera.hpp=geometry camera_types.hpp=geometry detail/camera_rules.hpp=geometry
  relative_pose.hpp=geometry relative_pose_types.hpp=geometry detail/five_point_rules.hpp=geometry detail/five_point_lanes_rules.hpp=geometry
  detail/ransac_rules.hpp=geometry
  stereo_tracker.hpp=stereo stereo_types.hpp=stereo detail/stereo_rules.hpp=stereo)
set(kestrel_plain_data error.hpp stream.hpp keypoint.hpp)  # besides every *_types.hpp

set(kestrel_cuda_header_regex "^(cuda|cuda_runtime|cuda_runtime_api|cuda_fp16|cooperative_groups|cub/|thrust/|nv/)")

function(kestrel_public_area header out)
  set(area "")
  foreach(entry ${kestrel_public_areas})
    string(REPLACE "=" ";" kv "${entry}")
    list(GET kv 0 k)
    list(GET kv 1 v)
    if(k STREQUAL header)
      set(area ${v})
    endif()
  endforeach()
  set(${out} "${area}" PARENT_SCOPE)
endfunction()

function(kestrel_is_plain_data header out)
  if(header MATCHES "_types\\.hpp$" OR header IN_LIST kestrel_plain_data)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# kestrel_check_layers(<root> <violations-var>): one line per violation, "file: include: why".
function(kestrel_check_layers root out)
  set(found "")
  file(GLOB_RECURSE files RELATIVE ${root}
    ${root}/include/kestrel/*.hpp ${root}/src/*.cpp ${root}/src/*.hpp
    ${root}/kernels/*.cu ${root}/kernels/*.cuh ${root}/kernels/*.hpp)
  list(SORT files)
  foreach(f ${files})
    get_filename_component(dir ${f} DIRECTORY)
    get_filename_component(name ${f} NAME)
    # The file's own layer and area.
    set(layer "")
    set(area "")
    if(f MATCHES "^include/kestrel/(.*)$")
      set(pub ${CMAKE_MATCH_1})
      if(pub MATCHES "^detail/")
        set(layer detail)
      else()
        set(layer public)
      endif()
      kestrel_public_area(${pub} area)
      if(area STREQUAL "")
        list(APPEND found "${f}: -: public header without an area (add it to kestrel_public_areas in cmake/check_layers.cmake)")
        continue()
      endif()
    elseif(f MATCHES "^(src|kernels)/([^/]+)/")
      set(layer ${CMAKE_MATCH_1})
      set(area ${CMAKE_MATCH_2})
      if(layer STREQUAL "kernels" AND area STREQUAL "common")
        set(area core)
      endif()
      if(NOT area IN_LIST kestrel_areas)
        list(APPEND found "${f}: -: folder '${area}' is not an area (add it to kestrel_areas in cmake/check_layers.cmake)")
        continue()
      endif()
    else()
      list(APPEND found "${f}: -: outside an area folder (src/<area>/, kernels/<area>/)")
      continue()
    endif()

    file(STRINGS ${root}/${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    foreach(line ${lines})
      string(REGEX MATCH "[<\"]([^>\"]+)[>\"]" _ "${line}")
      set(inc ${CMAKE_MATCH_1})
      set(quoted FALSE)
      if(line MATCHES "\"")
        set(quoted TRUE)
      endif()
      set(why "")
      if(NOT quoted)
        if(inc MATCHES "${kestrel_cuda_header_regex}")
          if(layer STREQUAL "public" OR layer STREQUAL "detail")
            set(why "R3: a public header includes no CUDA header")
          elseif(layer STREQUAL "src" AND NOT name MATCHES "_cuda\\.")
            set(why "R4: only *_cuda.* files of src/ include CUDA headers (this one is built without CUDA too)")
          endif()
        endif()
        if(why)
          list(APPEND found "${f}: <${inc}>: ${why}")
        endif()
        continue()
      endif()

      # Resolve the included header to (kind, area): kind = detail | plain | public | src | kernels | other.
      set(kind other)
      set(inc_area "")
      if(inc MATCHES "^kestrel/(.*)$")
        set(pub ${CMAKE_MATCH_1})
        kestrel_public_area(${pub} inc_area)
        if(pub MATCHES "^detail/")
          set(kind detail)
        else()
          kestrel_is_plain_data(${pub} plain)
          if(plain)
            set(kind plain)
          else()
            set(kind public)
          endif()
        endif()
      elseif(inc MATCHES "^(src|kernels)/([^/]+)/")
        set(kind ${CMAKE_MATCH_1})
        set(inc_area ${CMAKE_MATCH_2})
        if(inc_area STREQUAL "common")
          set(inc_area core)
        endif()
      elseif(inc MATCHES "^(tests|bench|examples|tools)/")
        list(APPEND found "${f}: \"${inc}\": R4: the library includes nothing of ${CMAKE_MATCH_1}/")
        continue()
      elseif(NOT inc MATCHES "/" AND EXISTS ${root}/${dir}/${inc})
        # Same folder.
        if(layer STREQUAL "public" OR layer STREQUAL "detail")
          set(kind public)
        else()
          set(kind ${layer})
        endif()
        set(inc_area ${area})
      else()
        list(APPEND found "${f}: \"${inc}\": not found: name private headers from the root (\"src/<area>/x.hpp\", \"kernels/<area>/x.cuh\") or from the same folder")
        continue()
      endif()

      # R1 - R4: the layer may include this kind of header.
      if(layer STREQUAL "detail" AND NOT kind MATCHES "^(detail|plain)$")
        set(why "R1: a rules header includes only detail and plain-data headers")
      elseif(layer STREQUAL "kernels" AND NOT kind MATCHES "^(detail|plain|kernels)$")
        set(why "R2: kernels include only the rules, plain-data headers and kernels/")
      elseif(layer STREQUAL "public" AND kind MATCHES "^(src|kernels)$")
        set(why "R3: a public header includes nothing of ${kind}/")
      elseif(layer STREQUAL "public" AND name MATCHES "_types\\.hpp$|^(error|stream|keypoint)\\.hpp$"
             AND NOT kind MATCHES "^(detail|plain)$")
        set(why "R3: a plain-data header includes only plain-data and detail headers")
      elseif(layer STREQUAL "src" AND kind STREQUAL "kernels" AND NOT name MATCHES "_cuda\\.")
        set(why "R4: only *_cuda.* files of src/ include kernels/ (this one is built without CUDA too)")
      endif()
      # R5: areas point down.
      if(NOT why AND inc_area AND NOT inc_area STREQUAL area AND NOT "${f}|${inc}" IN_LIST kestrel_layer_exceptions)
        if(NOT inc_area IN_LIST kestrel_area_deps_${area})
          set(why "R5: area '${area}' builds on '${kestrel_area_deps_${area}}', not on '${inc_area}'")
        endif()
      endif()
      if(why)
        list(APPEND found "${f}: \"${inc}\": ${why}")
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

if(NOT ROOT)
  message(FATAL_ERROR "check_layers.cmake: pass -DROOT=<repository root>")
endif()

if(SELF_TEST)
  # A small tree: clean files, then one violation of each rule; the check must report exactly those.
  file(REMOVE_RECURSE ${SELF_TEST})
  set(t ${SELF_TEST})
  file(WRITE ${t}/include/kestrel/lk_types.hpp "#pragma once\n#include \"kestrel/pyramid_types.hpp\"\n")
  file(WRITE ${t}/include/kestrel/pyramid_types.hpp "#pragma once\n")
  file(WRITE ${t}/include/kestrel/lk_tracker.hpp "#pragma once\n#include \"kestrel/lk_types.hpp\"\n")
  file(WRITE ${t}/include/kestrel/detail/lk_rules.hpp
    "#pragma once\n#include <cmath>\n#include \"kestrel/lk_types.hpp\"\n#include \"kestrel/lk_tracker.hpp\"\n")
  file(WRITE ${t}/src/track/lk_cuda.cpp "#include <cuda_runtime.h>\n#include \"kernels/track/lk.cuh\"\n")
  file(WRITE ${t}/src/track/lk_cpu.cpp
    "#include \"kestrel/detail/lk_rules.hpp\"\n#include <cuda_runtime.h>\n#include \"kernels/track/lk.cuh\"\n")
  file(WRITE ${t}/src/pyramid/pyramid_cpu.cpp "#include \"kestrel/pyramid_types.hpp\"\n#include \"src/track/lk_internal.hpp\"\n")
  file(WRITE ${t}/src/track/lk_internal.hpp "#pragma once\n")
  file(WRITE ${t}/kernels/track/lk.cuh "#pragma once\n#include \"kestrel/detail/lk_rules.hpp\"\n#include \"src/track/lk_internal.hpp\"\n")
  file(WRITE ${t}/kernels/track/lk.cu "#include \"lk.cuh\"\n#include \"kestrel/lk_tracker.hpp\"\n")
  file(WRITE ${t}/include/kestrel/feature_tracker.hpp "#pragma once\n#include <cuda_runtime.h>\n#include \"src/track/lk_internal.hpp\"\n")
  set(expected
    "include/kestrel/detail/lk_rules.hpp: \"kestrel/lk_tracker.hpp\": R1"
    "include/kestrel/feature_tracker.hpp: <cuda_runtime.h>: R3"
    "include/kestrel/feature_tracker.hpp: \"src/track/lk_internal.hpp\": R3"
    "kernels/track/lk.cu: \"kestrel/lk_tracker.hpp\": R2"
    "kernels/track/lk.cuh: \"src/track/lk_internal.hpp\": R2"
    "src/pyramid/pyramid_cpu.cpp: \"src/track/lk_internal.hpp\": R5"
    "src/track/lk_cpu.cpp: <cuda_runtime.h>: R4"
    "src/track/lk_cpu.cpp: \"kernels/track/lk.cuh\": R4")
  kestrel_check_layers(${t} got)
  list(LENGTH got n_got)
  list(LENGTH expected n_expected)
  set(ok TRUE)
  foreach(e ${expected})
    set(hit FALSE)
    foreach(g ${got})
      string(FIND "${g}" "${e}" pos)
      if(pos EQUAL 0)
        set(hit TRUE)
      endif()
    endforeach()
    if(NOT hit)
      message("self-test: NOT reported: ${e}")
      set(ok FALSE)
    endif()
  endforeach()
  if(NOT n_got EQUAL n_expected)
    set(ok FALSE)
  endif()
  foreach(g ${got})
    message("self-test: reported: ${g}")
  endforeach()
  if(NOT ok)
    message(FATAL_ERROR "layer check self-test FAILED: expected ${n_expected} violations, got ${n_got}")
  endif()
  message("layer check self-test: the ${n_expected} planted violations (R1-R5) were reported, nothing else")
  return()
endif()

kestrel_check_layers(${ROOT} violations)
list(LENGTH violations n)
if(n GREATER 0)
  foreach(v ${violations})
    message("${v}")
  endforeach()
  message(FATAL_ERROR "layer check: ${n} include(s) point up or outside the layers (docs/architecture.md, \"Layers\")")
endif()
message("layer check: every include of include/kestrel, src and kernels points down")
