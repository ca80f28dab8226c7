# build.cmake: tests of the extension-build module (embed, ninja, build, runtime).
# build_test (tests/build_test.c) loads built extensions against the fake driver, so it needs
# the fake libcuda.so.1 and the runtime library built first.
add_dependencies(build_test fakecuda fatbuild_runtime fatbuild)
set_tests_properties(build_test PROPERTIES TIMEOUT 300 LABELS build)

# Shell-driven: incremental rebuilds, paths with spaces, the nvcc backend.
foreach(t IN ITEMS incremental nvcc nvcc_threads hostpch stop ccwords rdc repro server gccheap)
  add_test(NAME build_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/build_${t}.sh)
  set_tests_properties(build_${t} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS build TIMEOUT 600
                       SKIP_RETURN_CODE 77)
endforeach()
# build_hostpch.sh again with clang's PCH (h.h.pch); skipped where clang++ is missing.
add_test(NAME build_hostpch_clang COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/build_hostpch.sh)
set_tests_properties(build_hostpch_clang PROPERTIES ENVIRONMENT "${FB_TEST_ENV};CXX=clang++" LABELS build
                     TIMEOUT 600 SKIP_RETURN_CODE 77)
# Seconds each takes on 2 cores, so that ctest -j starts the long ones first even where it has
# no timings of its own yet (a fresh clone): the suite then ends with short tests in parallel,
# not with one long test alone.
set_tests_properties(build_repro PROPERTIES COST 170)
set_tests_properties(build_rdc PROPERTIES COST 90)
set_tests_properties(build_server PROPERTIES COST 80)
set_tests_properties(build_stop PROPERTIES COST 60)

# tests/gpu/extension.sh dry-run against the fake driver (9.0 device, saxpy emulated), so the
# real-GPU script stays correct where there is no GPU.
add_test(NAME build_gpu_dryrun COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/extension.sh ${PROJECT_BINARY_DIR})
set_tests_properties(build_gpu_dryrun PROPERTIES LABELS build TIMEOUT 300 ENVIRONMENT
  "${FB_TEST_ENV};FB_GPU_CC=9.0;FAKECUDA_DEVICES=9.0;FAKECUDA_CONTEXT=0;FAKECUDA_EMULATE=1;FBRT_LIBCUDA=${PROJECT_BINARY_DIR}/fakecuda/libcuda.so.1")

# tests/gpu/rdc.sh dry-run against the fake driver (9.0 device, the rdc example emulated).
add_test(NAME build_rdc_gpu_dryrun COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu/rdc.sh ${PROJECT_BINARY_DIR})
set_tests_properties(build_rdc_gpu_dryrun PROPERTIES LABELS build TIMEOUT 300 SKIP_RETURN_CODE 77 ENVIRONMENT
  "${FB_TEST_ENV};FB_GPU_CC=9.0;FAKECUDA_DEVICES=9.0;FAKECUDA_CONTEXT=0;FAKECUDA_EMULATE=1;FBRT_LIBCUDA=${PROJECT_BINARY_DIR}/fakecuda/libcuda.so.1")
