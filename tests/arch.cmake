# arch.cmake: the arch-list engine's oracle test: emitted nvcc flags are accepted by the real nvcc
# and embed exactly the images the list names (tests/nvcc_agrees.sh; skipped without a toolkit).
add_test(NAME arch_nvcc_agrees COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/nvcc_agrees.sh)
set_tests_properties(arch_nvcc_agrees PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300
                     LABELS oracle)
