# manpages.cmake: the installed man pages and bash completion against the tools' --help
# (tests/manpages.sh says what it checks), with planted bad pages proving it can fail.
add_test(NAME docs_manpages COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/manpages.sh --self-test)
set_tests_properties(docs_manpages PROPERTIES LABELS docs SKIP_RETURN_CODE 77 TIMEOUT 120
                     ENVIRONMENT "FB_SOURCE_DIR=${PROJECT_SOURCE_DIR};FB_BINARY_DIR=${PROJECT_BINARY_DIR}")
