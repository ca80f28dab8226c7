# wheel.cmake: the pip route (tests/wheel/run.sh): the wheel of the repository's pyproject.toml
# built from the source tree with scikit-build-core, repaired with auditwheel, installed alone
# into a new venv, its tools and Python package used with nothing set, then examples/torch built
# with fatbuild.load and BuildExtension (torch from PyPI into that venv; pip's cache, shared with
# tests/torch/run.sh, serves it after the first run). Skips (77) only when pip cannot reach its
# registry. About 3 to 6 minutes on 2 cores with pip's cache warm. The wheel is its own Release
# build of the sources, the same whatever this build dir's options: a sanitizer build dir
# (scripts/test.sh's asan pass) does not run it again. It runs beside the other tests and starts
# first (COST), being among the longest.
if(NOT FB_SANITIZE)
  add_test(NAME wheel_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/run.sh)
  set_tests_properties(wheel_install PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS wheel TIMEOUT 2400
                       SKIP_RETURN_CODE 77 COST 350)
endif()
