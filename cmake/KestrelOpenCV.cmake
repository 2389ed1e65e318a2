# kestrel::opencv: the optional OpenCV interop (include/kestrel/opencv.hpp, header-only) as an
# INTERFACE target linking Kestrel and OpenCV's core. The core library never needs OpenCV; this file
# defines the target only when OpenCV's core is found. Included by examples/CMakeLists.txt.
if(NOT TARGET kestrel_opencv)
  find_package(OpenCV QUIET COMPONENTS core)
  if(OpenCV_FOUND)
    add_library(kestrel_opencv INTERFACE)
    add_library(kestrel::opencv ALIAS kestrel_opencv)
    target_link_libraries(kestrel_opencv INTERFACE kestrel::kestrel opencv_core)
    target_include_directories(kestrel_opencv INTERFACE ${OpenCV_INCLUDE_DIRS})
  endif()
endif()
