# toolchains.cmake: one kernel through fatbuild compile and build with each toolkit generation
# (system CUDA 13.0, NVIDIA's 13.5 and 12.9 pip wheels, NVRTC alone, a stand-in newer release)
# and clang 22's --format clang output, checked with fatbuild inspect and cuobjdump
# (tests/toolchains.sh; it pip-installs the wheels into ${PROJECT_BINARY_DIR}/toolchains-venv once).
add_test(NAME toolchains COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/toolchains.sh)
set_tests_properties(toolchains PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" TIMEOUT 600 LABELS toolchains COST 180)
