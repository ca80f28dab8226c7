# check.cmake: fatbuild check on real inputs (tests/check_env.sh): the toolkit's libraries, a
# wheel of the project's own extension (also installed by pip into a venv), and the PyTorch venv
# of tests/torch/run.sh when it is there (DEPENDS: run after it, when both run).
add_test(NAME check_env COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_env.sh)
set_tests_properties(check_env PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS check TIMEOUT 600
                     SKIP_RETURN_CODE 77 DEPENDS torch_extension COST 60)
