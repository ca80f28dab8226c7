# wheel.cmake: the pip route. wheel_dist (tests/wheel/dist.sh) runs scripts/wheel.sh as CI
# publishes with it: the sdist, and from it the wheel, repaired by auditwheel, into
# FB_BINARY_DIR/wheel-dist, its tag checked with `auditwheel show` (skips, 77, only when pip cannot
# reach its registry). Then, each with that wheel: wheel_install (tests/wheel/run.sh) installs it
# alone into a new venv and uses its tools and Python package with nothing set; wheel_sandbox
# (tests/wheel/sandbox.sh) installs it with --no-index into pyenv's Python 3.9 and 3.13 in a
# bubblewrap sandbox without the build host's libraries and -dev headers, builds examples/torch
# there with fatbuild.load and through build isolation (torch from PyPI; pip's cache, shared
# with tests/torch/run.sh, serves it after the first run), and shows that the unrepaired wheel
# fails there (42 min on 2 loaded cores, most of it torch's downloads). The
# others take a few minutes each with pip's cache warm. The wheel is its own Release build of the
# sources, the same whatever this build dir's options: a sanitizer build dir (scripts/test.sh's
# asan pass) does not run them again. They start first (COST), being
# among the longest.
if(NOT FB_SANITIZE)
  add_test(NAME wheel_dist COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/dist.sh)
  set_tests_properties(wheel_dist PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS wheel TIMEOUT 1800
                       SKIP_RETURN_CODE 77 COST 400 FIXTURES_SETUP wheel_dist)
  add_test(NAME wheel_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/run.sh)
  set_tests_properties(wheel_install PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS wheel TIMEOUT 2400
                       SKIP_RETURN_CODE 77 COST 350 FIXTURES_REQUIRED wheel_dist)
  add_test(NAME wheel_sandbox COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/wheel/sandbox.sh)
  set_tests_properties(wheel_sandbox PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS wheel TIMEOUT 3600
                       SKIP_RETURN_CODE 77 COST 340 FIXTURES_REQUIRED wheel_dist)
endif()
