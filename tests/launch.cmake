# launch.cmake: fatbuild as a compiler launcher (docs/launcher.md). launch_nvcc: a CMake CUDA
# project with CMAKE_CUDA_COMPILER_LAUNCHER=fatbuild, arch 80 then 80;90 (only sm_90's cicc and
# ptxas run), a warm new build dir (none run), the object equal to plain nvcc's, and errors,
# warnings, --version, -E and -M as plain nvcc gives them. Needs nvcc, cmake and ninja (else 77).
add_test(NAME launch_nvcc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch_nvcc.sh)
set_tests_properties(launch_nvcc PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "launch;build" TIMEOUT 600
                     SKIP_RETURN_CODE 77)
