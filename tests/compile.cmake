# compile.cmake: tests of the NVRTC compile path beyond compile_test's default run.
# compile_nvcc_oracle: our cubins vs `nvcc -cubin` (kernels, registers, shared memory) on the
# bundled kernels for three arches. Labelled slow-ish (about a minute on 2 cores).
if(TARGET compile_test)
  add_test(NAME compile_nvcc_oracle COMMAND compile_test oracle)
  set_tests_properties(compile_nvcc_oracle PROPERTIES
    ENVIRONMENT "FB_SOURCE_DIR=${PROJECT_SOURCE_DIR};FB_BINARY_DIR=${PROJECT_BINARY_DIR}"
    LABELS "oracle;nvcc" TIMEOUT 600 COST 60)
  set_tests_properties(compile_test PROPERTIES TIMEOUT 300)
  # test_sha256_paths checks that fb_sha256_buf really took libcrypto when the build has it.
  target_compile_definitions(compile_test PRIVATE FB_TEST_LIBCRYPTO=${FB_HAVE_LIBCRYPTO})
  # The CLI end to end: depfile, cache hits and invalidation, --emit-dir, errors, determinism.
  add_test(NAME compile_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/compile_cli.sh)
  set_tests_properties(compile_cli PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" TIMEOUT 300)
endif()
# The cache's size limit: LRU eviction, host PCHs, the trigger after a compile, side-by-side
# compiles under a limit that evicts everything (tests/cache_trim.sh).
add_test(NAME cache_trim COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cache_trim.sh)
set_tests_properties(cache_trim PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" TIMEOUT 300)
