# The libcuda.so.1 test double: every tests/fakecuda/*.c goes into it (probing: fakecuda.c;
# module loading: more files beside it). Built without sanitizers so that NVIDIA's own
# __nvcc_device_query can load it too (oracle tests). Output: build/fakecuda/libcuda.so.1, and a
# "legacy" variant without cuDeviceGetUuid_v2 (pre-11.4 drivers) in build/fakecuda-legacy/.
file(GLOB FAKECUDA_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda/*.c)
foreach(variant IN ITEMS fakecuda fakecuda-legacy)
  string(REPLACE "-" "_" tgt ${variant})
  add_library(${tgt} SHARED ${FAKECUDA_SOURCES})
  set_target_properties(${tgt} PROPERTIES OUTPUT_NAME cuda PREFIX lib SUFFIX .so.1 NO_SONAME ON
                        C_VISIBILITY_PRESET hidden
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${variant})
  target_include_directories(${tgt} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fakecuda ${PROJECT_SOURCE_DIR}/include
                             ${PROJECT_SOURCE_DIR}/fatbuild ${PROJECT_SOURCE_DIR}/archprobe)
  target_compile_options(${tgt} PRIVATE ${FB_WARNINGS})
  target_compile_definitions(${tgt} PRIVATE _POSIX_C_SOURCE=200809L _DEFAULT_SOURCE)
  target_link_options(${tgt} PRIVATE -Wl,-soname,libcuda.so.1)
  target_link_libraries(${tgt} PRIVATE Threads::Threads)
endforeach()
target_compile_definitions(fakecuda_legacy PRIVATE FAKECUDA_LEGACY=1)
