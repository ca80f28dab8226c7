# hardening.cmake: replays every fuzz target's seed corpus and its crash regressions
# (tests/hardening/<target>/) in EVERY build (gcc or clang, with or without sanitizers), via a
# plain main() (tests/hardening/replay.c) linked with the target's LLVMFuzzerTestOneInput; and
# runs the bad-input / fault scripts tests/hardening/*.sh.
file(GLOB FB_HARDEN_FUZZ CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
foreach(src IN LISTS FB_HARDEN_FUZZ)
  get_filename_component(name ${src} NAME_WE)
  add_executable(replay_${name} ${src} ${CMAKE_CURRENT_SOURCE_DIR}/hardening/replay.c)
  target_include_directories(replay_${name} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/fuzz ${PROJECT_SOURCE_DIR}/archprobe
                             ${PROJECT_SOURCE_DIR}/fatbuild)
  target_link_libraries(replay_${name} PRIVATE fatbuild_static archprobe_static PkgConfig::LIBELF PkgConfig::ZSTD
                        PkgConfig::LZ4 ${CMAKE_DL_LIBS} Threads::Threads)
  fb_target_defaults(replay_${name})
  add_test(NAME hardening_replay_${name}
           COMMAND replay_${name} ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/corpus/${name}
                   ${CMAKE_CURRENT_SOURCE_DIR}/hardening/${name})
  set_tests_properties(hardening_replay_${name} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS hardening TIMEOUT 120)
endforeach()

file(GLOB FB_HARDEN_SCRIPTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/hardening/*.sh)
foreach(script IN LISTS FB_HARDEN_SCRIPTS)
  get_filename_component(name ${script} NAME_WE)
  add_test(NAME hardening_${name} COMMAND bash ${script})
  set_tests_properties(hardening_${name} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS hardening
                       SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
