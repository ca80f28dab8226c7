# prune.cmake: fatbuild prune/size against nvcc-built files, NVIDIA's cuobjdump, nvlink, the fake
# driver and libcurand (tests/prune.sh).
add_test(NAME prune COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/prune.sh)
set_tests_properties(prune PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" SKIP_RETURN_CODE 77 LABELS fatbin TIMEOUT 600 COST 170)

# tests/gpu/prune.sh dry-run against the fake driver (9.0 device, saxpy emulated; its libcurand
# step needs a real GPU and is skipped), so the real-GPU script stays correct without one.
add_test(NAME prune_gpu_dryrun COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/prune.sh ${PROJECT_BINARY_DIR})
set_tests_properties(prune_gpu_dryrun PROPERTIES LABELS fatbin TIMEOUT 300 ENVIRONMENT
  "${FB_TEST_ENV};FB_GPU_CC=9.0;FAKECUDA_DEVICES=9.0;FAKECUDA_CONTEXT=0;FAKECUDA_EMULATE=1;FBRT_LIBCUDA=${PROJECT_BINARY_DIR}/fakecuda/libcuda.so.1")
