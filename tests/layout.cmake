# layout.cmake: the direction rule between subsystems (HACKING.md "Layout"), on every quoted
# #include of archprobe/, fatbuild/ and include/, and the ranks inside cache/, compile/ and devlink/ on
# the names their files use, with planted breaches proving it can fail.
add_test(NAME layout_direction COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/layout_check.sh --self-test)
set_tests_properties(layout_direction PROPERTIES LABELS layout)
