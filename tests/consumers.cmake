# consumers.cmake: small real projects (tests/consumers/) built against an install prefix of this
# build: consumers_install installs into ${PROJECT_BINARY_DIR}/consumers/prefix (a fixture), the
# others configure and build one project each (tests/consumers/run.sh says what each checks).
set(FB_CONSUMER_ROOT ${PROJECT_BINARY_DIR}/consumers)
set(FB_CONSUMER_CFLAGS "")
if(FB_SANITIZE)
  # The installed libraries are instrumented; whoever links them needs the sanitizer runtimes.
  set(FB_CONSUMER_CFLAGS "-fsanitize=address,undefined")
endif()
set(FB_CONSUMER_ENV
  "FB_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
  "FB_BINARY_DIR=${PROJECT_BINARY_DIR}"
  "CONSUMER_ROOT=${FB_CONSUMER_ROOT}"
  "FB_CONSUMER_CC=${CMAKE_C_COMPILER}"
  "FB_CONSUMER_CFLAGS=${FB_CONSUMER_CFLAGS}")

add_test(NAME consumers_install COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run.sh install)
set_tests_properties(consumers_install PROPERTIES ENVIRONMENT "${FB_CONSUMER_ENV}" LABELS consumers
                     FIXTURES_SETUP fb_consumer_prefix TIMEOUT 120)
foreach(step IN ITEMS cmake-archs cmake-choices cmake-ext make meson pytorch)
  string(REPLACE "-" "_" name "consumers_${step}")
  add_test(NAME ${name} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run.sh ${step})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${FB_CONSUMER_ENV}" LABELS consumers
                       FIXTURES_REQUIRED fb_consumer_prefix SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
add_test(NAME consumers_readme COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/consumers/run.sh readme)
set_tests_properties(consumers_readme PROPERTIES ENVIRONMENT "${FB_CONSUMER_ENV}" LABELS consumers)
