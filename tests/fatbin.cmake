# fatbin module: oracle tests driven by shell scripts (fatbinary, shipped CUDA libraries).
foreach(name IN ITEMS fatbin_oracle fatbin_libs fatbin_cli)
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/${name}.sh)
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" SKIP_RETURN_CODE 77 LABELS fatbin TIMEOUT 240)
endforeach()
set_tests_properties(fatbin_jitlink_test PROPERTIES LABELS fatbin TIMEOUT 240)
