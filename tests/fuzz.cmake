# fuzz.cmake: with -DFB_FUZZ=ON (clang), every tests/fuzz/fuzz_*.c becomes a libFuzzer target
# (-fsanitize=fuzzer,address,undefined) and a ctest that runs it for FB_FUZZ_SECONDS (default 20)
# over its seed corpus tests/fuzz/corpus/<name>/ (new inputs go to the build tree, never the
# sources). The libraries are compiled once more with coverage instrumentation for the fuzzers
# (fb_fuzz_libs), so libFuzzer sees the edges inside archprobe and fatbuild.
if(NOT FB_FUZZ)
  return()
endif()
if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
  message(WARNING "FB_FUZZ needs clang (libFuzzer); the fuzz targets are not built with ${CMAKE_C_COMPILER_ID}")
  return()
endif()

set(FB_FUZZ_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
get_target_property(fb_fuzz_ap_sources archprobe_static SOURCES)
get_target_property(fb_fuzz_fb_sources fatbuild_static SOURCES)
get_target_property(fb_fuzz_base_sources tkbase_objects SOURCES)
# The libraries' own lists name the foundation's objects (built without the fuzz flags): its
# sources are compiled here instead.
list(FILTER fb_fuzz_ap_sources EXCLUDE REGEX "TARGET_OBJECTS")
list(FILTER fb_fuzz_fb_sources EXCLUDE REGEX "TARGET_OBJECTS")
add_library(fb_fuzz_libs STATIC EXCLUDE_FROM_ALL ${fb_fuzz_base_sources} ${fb_fuzz_ap_sources} ${fb_fuzz_fb_sources})
target_include_directories(fb_fuzz_libs PUBLIC ${PROJECT_SOURCE_DIR}/include
                           PRIVATE ${PROJECT_SOURCE_DIR}/archprobe ${PROJECT_SOURCE_DIR}/fatbuild
                                   $<TARGET_PROPERTY:archprobe_static,INCLUDE_DIRECTORIES>
                                   $<TARGET_PROPERTY:fatbuild_static,INCLUDE_DIRECTORIES>)
target_compile_definitions(fb_fuzz_libs PRIVATE AP_BUILDING=1 FB_BUILDING=1
                           $<TARGET_PROPERTY:archprobe_static,COMPILE_DEFINITIONS>
                           $<TARGET_PROPERTY:fatbuild_static,COMPILE_DEFINITIONS>)
target_compile_options(fb_fuzz_libs PRIVATE -fsanitize=fuzzer-no-link ${FB_FUZZ_FLAGS})
target_link_libraries(fb_fuzz_libs PUBLIC PkgConfig::LIBELF PkgConfig::ZSTD PkgConfig::LZ4 ${CMAKE_DL_LIBS} Threads::Threads)
if(FB_HAVE_LIBCRYPTO)
  target_link_libraries(fb_fuzz_libs PUBLIC OpenSSL::Crypto)
endif()
if(FB_HAVE_GRPC)
  target_link_libraries(fb_fuzz_libs PUBLIC PkgConfig::GRPC)
endif()
fb_target_defaults(fb_fuzz_libs)

file(GLOB FB_FUZZ_TARGETS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(src IN LISTS FB_FUZZ_TARGETS)
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_include_directories(${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/archprobe
                             ${PROJECT_SOURCE_DIR}/fatbuild)
  target_link_libraries(${name} PRIVATE fb_fuzz_libs)
  fb_target_defaults(${name})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer ${FB_FUZZ_FLAGS})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer ${FB_FUZZ_FLAGS})
  set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name})
  set(scratch ${CMAKE_CURRENT_BINARY_DIR}/fuzz-corpus/${name})
  add_test(NAME ${name}
           COMMAND sh -c "mkdir -p \"$1\" && exec \"$0\" -max_total_time=\${FB_FUZZ_SECONDS:-20} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=\"$1/\" \"$1\" \"$2\""
                   $<TARGET_FILE:${name}> ${scratch} ${seeds})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS fuzz TIMEOUT 600)
endforeach()
