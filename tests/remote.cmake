# remote.cmake: the shared compile cache against a real server (nginx WebDAV on loopback,
# started and stopped by the script; nginx and python3 come from scripts/deps.sh).
add_test(NAME remote_cache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_cache.sh)
set_tests_properties(remote_cache PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 300
                     SKIP_RETURN_CODE 77)
