# prune.cmake: fatbuild prune/size against nvcc-built files, NVIDIA's cuobjdump, nvlink, the fake
# driver and libcurand (tests/prune.sh).
add_test(NAME prune COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/prune.sh)
set_tests_properties(prune PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" SKIP_RETURN_CODE 77 LABELS fatbin TIMEOUT 600)
