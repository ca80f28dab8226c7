# Device probing: the oracle test (NVIDIA's own __nvcc_device_query against the same fake driver)
# and time limits for the probe tests (they wait on timeouts by design).
add_test(NAME probe_oracle COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/probe_oracle.sh)
set_tests_properties(probe_oracle PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 120)
if(TEST probe_test)
  set_tests_properties(probe_test PROPERTIES TIMEOUT 120)
endif()
