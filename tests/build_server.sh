#!/usr/bin/env bash
# build_server.sh: the build's compile server (docs/compile-server.md). A two-kernel CUB
# extension (tests/repro) for one arch, built with -j1 so the second kernel's edge comes after
# the first:
#   - with the server: -v says the first made the PCH and the second used it, both via the
#     server; the fatbins and the .so are the same bytes as a build with --no-compile-server;
#     no process naming the build dir is left and its socket and PCH files are gone;
#   - --no-compile-server and FATBUILD_COMPILE_SERVER=0: ninja (a wrapper) sees no socket and
#     no server process, and the edges say nothing of a server;
#   - the server SIGKILLed while the first edge's job runs in its worker: the build still
#     succeeds, the same bytes, and -v says the server ended mid-job and the job was compiled here;
#   - fatbuild SIGKILLed mid-build: within 2 s no process naming the build dir is left;
#   - a compile error: the same diagnostics and exit status as without the server;
#   - a socket that is group-accessible, a symlink to a good socket, a regular file, a socket in
#     a directory others can enter (and, as root, a socket of another user): never used; the same
#     socket once private is (the control).
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
fb=$FATBUILD_BIN
[ -d /proc/self ] || { echo "no /proc: skipped"; exit 77; }
# 2 s, as for build_stop; under the sanitizers (ASAN_OPTIONS set) every stopping process also
# runs LeakSanitizer's exit scan over NVRTC's heap, so 8 s there.
GRACE=2
[ -n "${ASAN_OPTIONS:-}" ] && GRACE=8
t=$(mktemp -d "${TMPDIR:-/tmp}/fbserver.XXXXXX")
cleanup() {
	[ -n "${spid:-}" ] && kill "$spid" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
fails=0
no() { echo "FAIL: $*" >&2; [ -f "$t/log" ] && sed 's/^/  | /' "$t/log" >&2; fails=$((fails + 1)); }
unset TORCH_CUDA_ARCH_LIST MAX_JOBS FATBUILD_COMPILE_SERVER FATBUILD_COMPILE_SOCKET
arch="8.0"
mkdir -p "$t/src"
cp "$FB_SOURCE_DIR"/tests/repro/* "$t/src/"

# The pids whose command line names $1 (bash builtins only: a grep would name it too).
procs_of() {
	local f args out=
	for f in /proc/[0-9]*/cmdline; do
		args=
		{ IFS= read -r -d '' args && while IFS= read -r -d '' a; do args+=" $a"; done; } 2>/dev/null <"$f"
		case "$args" in *"$1"*) f=${f#/proc/}; out+=" ${f%/cmdline}" ;; esac
	done
	echo "$out"
}

# A ninja that notes what it finds before it runs: the socket variable, the socket, the
# server (a process whose command line has __compile-server and the build dir); with
# KILL_SERVER it SIGKILLs the server once the first edge has been running a second.
cat >"$t/ninja" <<'S'
#!/usr/bin/env bash
bd=$2
{
	echo "sock=${FATBUILD_COMPILE_SOCKET:-}"
	[ -S "$bd/tmp/compile.sock" ] && echo "socket there"
	for f in /proc/[0-9]*/cmdline; do
		{ c=$(tr '\0' ' ' <"$f"); } 2>/dev/null
		case "$c" in *" __compile-server $bd "*) echo "server ${f//[!0-9]/}" ;; esac
	done
} >>"$NINJA_NOTES"
if [ -n "${KILL_SERVER:-}" ]; then
	# mid-job: once the server has forked a worker (a job has come in), SIGKILL the server
	(
		srv=$(awk '/^server/ {print $2; exit}' "$NINJA_NOTES")
		for k in $(seq 400); do [ -n "$(ps -o pid= --ppid "$srv")" ] && break; sleep 0.05; done
		sleep 0.3
		kill -KILL "$srv" && echo "killed $srv" >>"$NINJA_NOTES"
	) &
fi
exec ninja "$@"
S
chmod +x "$t/ninja"
export FATBUILD_NINJA=$t/ninja

build() { # NAME [options...]: builds into $t/NAME with its own cache
	local n=$1
	shift
	mkdir -p "$t/$n"
	: >"$t/$n/notes"
	(cd "$t/src" && NINJA_NOTES="$t/$n/notes" FATBUILD_CACHE_DIR="$t/$n/cache" "$fb" build -v -j1 --arch-list "$arch" \
		--build-dir "$t/$n/bd" -o "$t/$n/ext.so" "$@" k1.cu k2.cu host.cpp) >"$t/log" 2>&1
	local rc=$?
	cp "$t/log" "$t/$n/log"
	return $rc
}
same() { # A B: the kernels' fatbins and the .so are the same bytes
	local f
	for f in "$t/$1"/bd/obj/*.fatbin "$t/$1/ext.so"; do
		cmp -s "$f" "${f/#$t\/$1/$t/$2}" || no "$2: ${f#$t/$1/} differs from the $1 build"
	done
	[ -e "$t/$1/bd/obj/0_k1.cu.sm_80.fatbin" ] || no "$1: no per-kernel fatbin"
}
left() { # NAME: a process naming the build dir, or the socket or PCH directory left behind
	local k l
	for k in $(seq 20); do
		l=$(procs_of "$t/$1/")
		[ -z "$l" ] && break
		sleep 0.1
	done
	[ -z "$l" ] || no "$1: processes left after the build:$l"
	[ ! -e "$t/$1/bd/tmp/compile.sock" ] || no "$1: the socket is left"
	[ ! -e "$t/$1/bd/tmp/compile-pch" ] || no "$1: the PCH directory is left"
}

# 1-3: with the server
build on || no "build with the server"
grep -q "^socket there" "$t/on/notes" && grep -q "^server " "$t/on/notes" ||
	no "with the server: ninja saw no socket or no server"
grep -q "k1.cu .*(PCH made .*, via the build's compile server)" "$t/on/log" || no "k1: no 'PCH made ... via the server'"
grep -q "k2.cu .*(PCH used, via the build's compile server)" "$t/on/log" || no "k2: no 'PCH used, via the server'"
grep -q "compile server not used" "$t/on/log" && no "with the server: a fallback notice"
left on

# 6: turned off
build off --no-compile-server || no "build --no-compile-server"
FATBUILD_COMPILE_SERVER=0 build env0 || no "build FATBUILD_COMPILE_SERVER=0"
for n in off env0; do
	[ "$(cat "$t/$n/notes")" = "sock=" ] || { no "$n: ninja saw a server:"; sed 's/^/  | /' "$t/$n/notes" >&2; }
	grep -q "compile server" "$t/$n/log" && no "$n: an edge speaks of a compile server"
done
same on off
same on env0

# 4: the server killed mid-build
KILL_SERVER=1 build killed || no "build with the server killed"
grep -q "^server " "$t/killed/notes" || no "killed: there was no server to kill"
grep -q "^killed " "$t/killed/notes" || no "killed: the server was not killed"
grep -q "k1.cu" "$t/log" && grep -q "compile server not used (the server ended before answering every job); compiled here" \
	"$t/killed/log" || no "killed: no notice that the server died mid-job"
same on killed
left killed

# fatbuild itself SIGKILLed mid-build
mkdir -p "$t/stop"
: >"$t/stop/notes"
(cd "$t/src" && NINJA_NOTES="$t/stop/notes" FATBUILD_CACHE_DIR="$t/stop/cache" exec "$fb" build -j1 --arch-list "$arch" \
	--build-dir "$t/stop/bd" -o "$t/stop/ext.so" k1.cu k2.cu host.cpp) >"$t/stop/log" 2>&1 &
bpid=$!
for k in $(seq 200); do grep -q "^server" "$t/stop/notes" && break; sleep 0.05; done
sleep 0.5
kill -KILL "$bpid"
wait "$bpid" 2>/dev/null
grep -q "^server" "$t/stop/notes" || no "stop: the build had no server"
for k in $(seq $((GRACE * 10))); do
	l=$(procs_of "$t/stop/")
	[ -z "$l" ] && break
	sleep 0.1
done
[ -z "$l" ] || no "stop: processes left $GRACE s after SIGKILL:$l"

# A compile error: the same diagnostics and exit status with and without the server.
printf '%s\n' '__global__ void k(float *x) { x[threadIdx.x] = undefined_name; }' >"$t/src/bad.cu"
for n in badon badoff; do
	mkdir -p "$t/$n"
	opt=()
	[ "$n" = badoff ] && opt=(--no-compile-server)
	(cd "$t/src" && NINJA_NOTES="$t/$n/notes" FATBUILD_CACHE_DIR="$t/$n/cache" "$fb" build "${opt[@]}" -j1 \
		--arch-list "$arch" --build-dir "$t/$n/bd" -o "$t/$n/ext.so" bad.cu) >"$t/$n/log" 2>&1
	echo $? >"$t/$n/rc"
	grep "error" "$t/$n/log" | grep -v "^FAILED\|^ninja\|^fatbuild: build: build failed" >"$t/$n/errors"
done
grep -q "^server " "$t/badon/notes" || no "compile error: the build had no server"
[ "$(cat "$t/badon/rc")" != 0 ] && [ "$(cat "$t/badon/rc")" = "$(cat "$t/badoff/rc")" ] ||
	no "compile error: exit $(cat "$t/badon/rc") with the server, $(cat "$t/badoff/rc") without"
grep -q "bad.cu:1:[0-9]*: error: .*undefined_name" "$t/badon/errors" || no "compile error: no diagnostic with the server"
cmp -s "$t/badon/errors" "$t/badoff/errors" || { no "compile error: other diagnostics with the server"; diff "$t/badon/errors" "$t/badoff/errors" >&2; }

# 5: planted sockets. A real server (the hidden command fatbuild build execs) in $t/p/bd.
printf '%s\n' '__global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }' >"$t/small.cu"
mkdir -p -m 700 "$t/p" "$t/p/bd" "$t/p/bd/tmp" "$t/p/links"
"$fb" __compile-server "$t/p/bd" 1 -1 >"$t/p/server.log" 2>&1 &
spid=$!
sock=$t/p/bd/tmp/compile.sock
for k in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
[ -S "$sock" ] || no "planted: the server made no socket"
n=0
ask() { # WANT SOCKET: compile with FATBUILD_COMPILE_SOCKET=SOCKET; WANT used|refused
	n=$((n + 1))
	FATBUILD_CACHE_DIR="$t/p/cache$n" FATBUILD_COMPILE_SOCKET=$2 "$fb" compile -v --arch-list "$arch" \
		-o "$t/p/k$n.fatbin" "$t/small.cu" >"$t/log" 2>&1 || no "planted $n ($2): compile failed"
	if grep -q "via the build's compile server\|compiled by the build's compile server" "$t/log"; then
		[ "$1" = used ] || no "planted $n ($2): the server was used"
	else
		[ "$1" = refused ] || no "planted $n ($2): the server was not used"
		grep -q "compile server not used" "$t/log" || no "planted $n ($2): no notice"
	fi
}
ask used "$sock" # the control
chmod 660 "$sock"
ask refused "$sock"
chmod 606 "$sock"
ask refused "$sock"
chmod 600 "$sock"
ln -s "$sock" "$t/p/links/compile.sock"
ask refused "$t/p/links/compile.sock"
: >"$t/p/links/file.sock"
chmod 600 "$t/p/links/file.sock"
ask refused "$t/p/links/file.sock"
chmod 750 "$t/p/bd/tmp"
ask refused "$sock"
chmod 700 "$t/p/bd/tmp"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "$sock"
	ask refused "$sock"
	chown 0 "$sock"
fi
ask used "$sock" # the control again: the checks, not the server, said no
kill "$spid"
wait "$spid"
spid=
[ ! -e "$sock" ] || no "planted: the server left its socket after SIGTERM"

[ "$fails" = 0 ] && echo "build_server: all checks passed"
[ "$fails" = 0 ]
