#!/usr/bin/env bash
# farm.sh: a real remote-execution farm on loopback (docs/remote-cache.md §9): PostgreSQL
# (Debian's postgresql, scripts/deps.sh) in a temporary cluster, BuildGrid 0.9.1 (PyPI, in a
# venv of Python 3.13: pyenv's, or FB_PYTHON313) with the SQL scheduler, Execution, Bots, CAS,
# ByteStream and ActionCache of tests/remote/farm.yml, and test bots (tests/remote/bot.py), each
# running the real buildbox-run behind its own buildbox-casd proxy of BuildGrid's CAS.
# Sourced by the remote-execution tests and scripts/bench-rexec.sh (they set FB_SOURCE_DIR and
# source executor.sh first), or run by hand:
#   tests/remote/farm.sh start DIR [BOT...]   prints the URL (grpc://127.0.0.1:PORT/main)
#   tests/remote/farm.sh stop DIR
# BOT is NAME[@CPU][:K=V,...]: a bot of that name, pinned to that CPU (taskset), whose device
# offers OSFamily=linux, ISA=x86-64 and the K=V given (fbtest=a). Default: a@0:fbtest=a b@1:fbtest=b.
#
# farm_venv VENV: buildgrid installed into VENV (once); sets bgd_python; 1 when Python 3.13 or
# pip is missing. farm_start DIR BOT...: everything above, logs in DIR (pg.log, bgd.log (a link
# to the server's dir, farm_tmp, while it runs),
# NAME/casd.log, NAME/bot.log); sets farm_url and farm_pids (also DIR/pids). farm_bot DIR BOT
# adds one bot to a running farm. farm_stop ends all; the caller traps it.
farm_pkg="buildgrid==0.9.1"
farm_pids=
farm_pgdir=
# runuser lives in /usr/sbin, which a plain user's PATH (or env -i's) may lack
farm_runuser=$(command -v runuser || echo /usr/sbin/runuser)
farm_srv=
farm_venv() {
	local venv=$1 py=${FB_PYTHON313:-}
	local want cons=$FB_SOURCE_DIR/tests/remote/farm-constraints.txt
	bgd_python=$venv/bin/python
	want="$farm_pkg $(cksum <"$cons")"
	[ "$(cat "$venv/.pkgs" 2>/dev/null)" = "$want" ] && return 0
	[ -n "$py" ] || py=$( (pyenv root 2>/dev/null || echo "$HOME/.pyenv") | sed 's|$|/versions/3.13.0/bin/python|')
	[ -x "$py" ] || py=$(command -v python3.13) || return 1
	rm -rf "$venv"
	"$py" -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check -c "$cons" "$farm_pkg" &&
		echo "$want" >"$venv/.pkgs"
}
# farm_tmp: where the server's state goes (PostgreSQL's cluster, BuildGrid's CAS and log):
# tmpfs (/dev/shm) with 4 GiB free, else TMPDIR; FB_FARM_TMPDIR chooses. On disk, while other
# tests wrote gigabytes, BuildGrid logged nothing for 40 s and jobs a check wanted remote fell
# back (remote_exec_compile: "fa: 4 of 6", "fz: before any stage"). Only the server's: the
# bots and their sandboxes stay in DIR (bubblewrap gives a job its own /dev).
farm_tmp() {
	local free
	[ -n "${FB_FARM_TMPDIR:-}" ] && { echo "$FB_FARM_TMPDIR"; return; }
	free=$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
	if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "${free:-0}" -gt 4194304 ] 2>/dev/null; then echo /dev/shm; else echo "${TMPDIR:-/tmp}"; fi
}
# PostgreSQL refuses to run as root: then the cluster belongs to the postgres user, in a
# directory of its own (the test's own may not be open to it).
farm_pg() {
	local d=$1 port pg as=()
	pg=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -x "$pg/initdb" ] || { echo "farm.sh: no PostgreSQL (scripts/deps.sh)" >&2; return 1; }
	farm_pgdir=$(mktemp -d "$(farm_tmp)/fbpg.XXXXXX") || return 1
	echo "$farm_pgdir" >"$d/pgdir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$farm_pgdir" || return 1
		as=("$farm_runuser" -u postgres --)
	fi
	port=$(rx_free_port) || return 1
	# the encoding and locale explicit: without LANG initdb makes a SQL_ASCII cluster, on which
	# BuildGrid's SQLAlchemy fails ("cannot use a string pattern on a bytes-like object")
	"${as[@]}" "$pg/initdb" -D "$farm_pgdir/data" -A trust -U bgd --no-sync -E UTF8 --locale=C >"$d/pg.log" 2>&1 &&
		"${as[@]}" "$pg/pg_ctl" -D "$farm_pgdir/data" -l "$farm_pgdir/log" -w \
			-o "-k $farm_pgdir -c listen_addresses=127.0.0.1 -p $port -c fsync=off" start >>"$d/pg.log" 2>&1 &&
		"$pg/createdb" -h 127.0.0.1 -p "$port" -U bgd bgd >>"$d/pg.log" 2>&1 ||
		{ cat "$d/pg.log" "$farm_pgdir/log" >&2; return 1; }
	farm_pgurl=postgresql://bgd@127.0.0.1:$port/bgd
	"$(dirname "$bgd_python")/bgd" migrate apply "$farm_pgurl" >>"$d/pg.log" 2>&1 || { cat "$d/pg.log" >&2; return 1; }
}
farm_start() {
	local d=$1 port b
	shift
	mkdir -p "$d"
	farm_pg "$d" || return 1
	port=$(rx_free_port) || return 1
	farm_srv=$(mktemp -d "$(farm_tmp)/fbbgd.XXXXXX") || return 1
	echo "$farm_srv" >"$d/srvdir"
	ln -s "$farm_srv/bgd.log" "$d/bgd.log"
	sed "s|@PORT@|$port|; s|@DIR@|$farm_srv|g; s|@PGURL@|$farm_pgurl|" "$FB_SOURCE_DIR/tests/remote/farm.yml" >"$d/bgd.yml"
	setsid "$(dirname "$bgd_python")/bgd" server start -vv "$d/bgd.yml" >"$farm_srv/bgd.log" 2>&1 &
	farm_pids=$!
	echo "$farm_pids" >"$d/pids"
	farm_url=grpc://127.0.0.1:$port/main
	echo "$farm_url" >"$d/url"
	rx_wait_port "$port" "$farm_pids" "$d/bgd.log" || return 1
	for b in "$@"; do farm_bot "$d" "$b" || return 1; done
}
farm_bot() {
	local d=$1 spec=$2 name cpu props p pin=() args=()
	name=${spec%%[@:]*}
	cpu=$(sed -n 's/^[^@:]*@\([0-9]*\).*/\1/p' <<<"$spec")
	props=$(sed -n 's/^[^:]*://p' <<<"$spec")
	[ -n "$cpu" ] && pin=(taskset -c "$cpu")
	mkdir -p "$d/$name"
	for p in OSFamily=linux ISA=x86-64 ${props//,/ }; do args+=(--prop "$p"); done
	setsid "${pin[@]}" "$bb/buildbox-casd" --cas-remote="${farm_url%/main}" --cas-instance=main \
		--bind="unix:$d/$name/casd.sock" --log-level=info "$d/$name/cache" >"$d/$name/casd.log" 2>&1 &
	farm_pids="$farm_pids $!"
	for _ in $(seq 100); do [ -S "$d/$name/casd.sock" ] && break; sleep 0.1; done
	setsid "${pin[@]}" "$bgd_python" "$FB_SOURCE_DIR/tests/remote/bot.py" "$farm_url" --name "$name" "${args[@]}" \
		--casd "unix:$d/$name/casd.sock" --work "$d/$name" -- "$bb/buildbox-run" "${rx_runner_args[@]}" \
		>"$d/$name/bot.log" 2>&1 &
	farm_pids="$farm_pids $!"
	echo "$farm_pids" >"$d/pids"
	# the bot is there once BuildGrid has its session
	for _ in $(seq 300); do grep -q "bot_id=\"$name\"" "$d/bgd.log" && return 0; sleep 0.1; done
	cat "$d/$name/bot.log" >&2
	return 1
}
farm_stop() {
	local d=${1:-}
	[ -n "$farm_pids" ] && rx_kill $farm_pids
	farm_pids=
	[ -n "$d" ] && [ -f "$d/srvdir" ] && farm_srv=$(cat "$d/srvdir")
	# the log is kept beside the test's other files (KEEP=1 keeps them)
	[ -n "$farm_srv" ] && [ -d "$farm_srv" ] && { [ -L "$d/bgd.log" ] && rm -f "$d/bgd.log" && cp "$farm_srv/bgd.log" "$d/bgd.log"; rm -rf "$farm_srv"; }
	farm_srv=
	[ -n "$d" ] && [ -f "$d/pgdir" ] && farm_pgdir=$(cat "$d/pgdir")
	[ -n "$farm_pgdir" ] && [ -d "$farm_pgdir/data" ] || return 0
	local pg as=()
	pg=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
	[ "$(id -u)" = 0 ] && as=("$farm_runuser" -u postgres --)
	"${as[@]}" "$pg/pg_ctl" -D "$farm_pgdir/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$farm_pgdir"
	farm_pgdir=
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	: "${FB_SOURCE_DIR:=$(cd "$(dirname "$0")/../.." && pwd)}" "${FB_BINARY_DIR:=$FB_SOURCE_DIR/build}"
	source "$FB_SOURCE_DIR/tests/remote/executor.sh"
	case "${1:-}" in
	start)
		d=$2
		shift 2
		[ $# -gt 0 ] || set -- a@0:fbtest=a b@1:fbtest=b
		rx_bb_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bb-venv" || { echo "farm.sh: cannot pip install $bb_pkg" >&2; exit 1; }
		farm_venv "${FB_VENV_DIR:-$FB_BINARY_DIR}/rexec-bgd-venv" || { echo "farm.sh: cannot install $farm_pkg (Python 3.13?)" >&2; exit 1; }
		farm_start "$d" "$@" || { farm_stop "$d"; exit 1; }
		echo "$farm_url" ;;
	stop)
		[ -f "$2/pids" ] && farm_pids=$(cat "$2/pids")
		farm_stop "$2" ;;
	*)
		echo "usage: $0 start DIR [NAME[@CPU][:K=V,...]...] | stop DIR" >&2
		exit 2 ;;
	esac
fi
