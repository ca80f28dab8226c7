# docs.cmake: every docs/ page and section that a source or document cites exists, and nothing
# points outside the repository (HACKING.md "Comments"), with planted bad references proving it
# can fail.
add_test(NAME docs_references COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/docs_check.sh --self-test)
set_tests_properties(docs_references PROPERTIES LABELS docs)
