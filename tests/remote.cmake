# remote.cmake: team and CI caches. remote_cache: the shared compile cache against a real
# server (nginx WebDAV on loopback, started and stopped by the script). remote_reapi: the same
# over REAPI on gRPC against BuildGrid (pip-installed into the build dir by the script). build_launcher:
# `fatbuild build --launcher ccache` and the nvrtc pool. nginx, python3 and ccache come from
# scripts/deps.sh.
add_test(NAME remote_cache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_cache.sh)
set_tests_properties(remote_cache PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 300 COST 30
                     SKIP_RETURN_CODE 77)
# remote_malicious: a loopback server that attacks (tests/remote/evil_server.py): swapped and
# wrong-kind records, poisoned manifests, endless bodies, silence; every build succeeds with
# the right bytes (docs/hardening.md "Attacks on the caches").
add_test(NAME remote_malicious COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_malicious.sh)
# remote_malicious and remote_reapi make the same BuildGrid venv in the build dir (the first to
# run installs it): one at a time, or the second runs a half-installed pip.
set_tests_properties(remote_malicious PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;hardening" TIMEOUT 600
                     COST 30 SKIP_RETURN_CODE 77 RESOURCE_LOCK buildgrid_venv)
add_test(NAME remote_reapi COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_reapi.sh)
set_tests_properties(remote_reapi PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 600 COST 30
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK buildgrid_venv)
add_test(NAME build_launcher COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/build_launcher.sh)
set_tests_properties(build_launcher PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;build" TIMEOUT 300
                     SKIP_RETURN_CODE 77)
# build_edgecache: host and nvcc edges through the compile and remote cache (fatbuild edge).
add_test(NAME build_edgecache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/build_edgecache.sh)
set_tests_properties(build_edgecache PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;build" TIMEOUT 300
                     SKIP_RETURN_CODE 77)
# remote_exec_infra: remote execution's test infrastructure (docs/remote-cache.md §9): buildbox-casd
# as an executor and a BuildGrid farm with PostgreSQL and two bots, each running buildbox-run;
# pip-installed into the build dir and started and stopped by the script; nvcc via a REAPI client.
add_test(NAME remote_exec_infra COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_infra.sh)
set_tests_properties(remote_exec_infra PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;slow" TIMEOUT 600
                     COST 30 SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs)
# remote_exec_client: fatbuild's own REAPI execution layer (rexec/action.c): its messages against the
# protobuf runtime, one nvcc compile against buildbox-casd (the venvs are the ones above).
add_test(NAME remote_exec_client COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_client.sh $<TARGET_FILE:rexec_test>)
set_tests_properties(remote_exec_client PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 300
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs)
# remote_exec_compile: `fatbuild compile --remote-exec` against buildbox-casd and the BuildGrid farm
# (the venvs above): bytes identical to a local compile, fallback on a dead executor and on a job no
# bot takes, compile errors as local ones. It and remote_exec_build check that every job ran at the
# farm: they run alone (RUN_SERIAL), so that no other test's farm competes for the CPUs.
add_test(NAME remote_exec_compile COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_compile.sh)
set_tests_properties(remote_exec_compile PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 600
                     COST 30 SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs RUN_SERIAL TRUE)
# remote_exec_stall: the executor (buildbox-casd, then BuildGrid) stopped with SIGSTOP for 70 s
# while a compile's jobs run there: the right bytes, one warning, each call ended by its own
# deadline, and no gRPC in a forked child (tests/remote/grpcfork.c). Alone, as the two above.
add_test(NAME remote_exec_stall COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_stall.sh)
set_tests_properties(remote_exec_stall PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 900
                     COST 40 SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs RUN_SERIAL TRUE)
# remote_exec_edge: host and nvcc edges of `fatbuild edge --remote-exec` and `fatbuild build` at
# buildbox-casd (the venv above): objects identical to local ones, no compile here, compile errors
# as local ones, one warning on a dead executor, the executor's action cache.
add_test(NAME remote_exec_edge COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_edge.sh)
set_tests_properties(remote_exec_edge PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 300
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs)
add_test(NAME remote_exec_edge_farm COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_edge.sh farm)
set_tests_properties(remote_exec_edge_farm PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS remote TIMEOUT 300
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs)
# remote_exec_build: `fatbuild build --remote-exec` against buildbox-casd and the BuildGrid farm (the
# venvs above): every NVRTC edge's job at the executor, a .so byte-identical to a local build's,
# the pools sized for it, compile errors as local ones, one fallback warning per build on a dead
# executor and on a job no bot takes.
add_test(NAME remote_exec_build COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_build.sh)
set_tests_properties(remote_exec_build PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;build" TIMEOUT 600
                     COST 30 SKIP_RETURN_CODE 77 RESOURCE_LOCK rexec_venvs RUN_SERIAL TRUE)
# remote_exec_python: FATBUILD_REMOTE_EXECUTOR from Python (docs/pytorch.md): load() passes it to its
# build (a bad URL refused at once), fatbuild.build's NVRTC jobs at buildbox-casd, one fallback
# warning. torch from tests/torch/run.sh's venv.
add_test(NAME remote_exec_python COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/remote_exec_python.sh)
set_tests_properties(remote_exec_python PROPERTIES ENVIRONMENT "${FB_TEST_ENV}" LABELS "remote;torch" TIMEOUT 1200
                     SKIP_RETURN_CODE 77 RESOURCE_LOCK "rexec_venvs;venv-torch")
