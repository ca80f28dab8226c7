# launch.cmake: fatbuild as a compiler launcher (docs/launcher.md). launch_nvcc: a CMake CUDA
# project with CMAKE_CUDA_COMPILER_LAUNCHER=fatbuild, arch 80 then 80;90 (only sm_90's cicc and
# ptxas run), a warm new build dir (none run), the object equal to plain nvcc's, and errors,
# warnings, --version, -E and -M as plain nvcc gives them. Needs nvcc, cmake and ninja (else 77).
add_test(NAME launch_nvcc COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch_nvcc.sh)
set_tests_properties(launch_nvcc PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "launch;build" TIMEOUT 600
                     SKIP_RETURN_CODE 77)
# The smaller scripts, each launch_NAME.sh, 77 when a tool it needs is missing:
#   stop:  a split stopped by SIGINT or SIGTERM (to its pid or its process group) exits
#          128+signal, leaves no temp dir and no step running, and does not run nvcc again;
#   stats: `fatbuild cache stats` shows the launcher's cicc and ptxas hits and misses as its log
#          counts them, and no launcher line for a cache it never used;
#   masq:  `fatbuild shims DIR` and compiles through its links: cc as cc, nvcc split with plain
#          nvcc's object, and a PATH whose only nvcc is fatbuild's link exits 127 at once.
foreach(name stop stats masq)
  add_test(NAME launch_${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launch_${name}.sh)
  set_tests_properties(launch_${name} PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "launch" TIMEOUT 300
                       SKIP_RETURN_CODE 77)
endforeach()
