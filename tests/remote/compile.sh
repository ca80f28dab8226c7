# compile.sh: sourced by the remote-cache tests (remote_cache.sh, remote_reapi.sh), after they
# set t (the scratch dir), fb (the fatbuild binary) and arch, and built $t/forkcount.so.
#
# compile MACHINE CACHE OUT [args]: runs fatbuild compile -v from $t/MACHINE with the NVRTC
# counter (tests/remote/forkcount.c); --arch-list is $one_arch or $arch; the sources are $files or
# MACHINE's k/reduce.cu and k/softmax.cu; stderr in $t/OUT.log, the number of NVRTC compiles
# (nvrtcCompileProgram calls) in $forks.
compile() {
	local m=$1 cache=$2 out=$3
	shift 3
	rm -f "$t/forks"
	# The counter wraps dlsym, which a sanitizer runtime also needs at start: under the asan
	# pass (ASAN_OPTIONS set) the count comes from fatbuild's own "-v" summary instead.
	local pre=$t/forkcount.so
	[ -n "${ASAN_OPTIONS:-}" ] && pre=
	# a build that hangs is stopped after 240 s and said so, not left to the test's timeout
	(cd "$t/$m" && FATBUILD_CACHE_DIR=$t/$cache FORKCOUNT_FILE=$t/forks LD_PRELOAD=$pre \
		timeout -k 5 240 "$fb" compile -v --arch-list "${one_arch:-$arch}" -o "$t/$out.fatbin" "$@" \
		${files:-"$t/$m/k/reduce.cu" "$t/$m/k/softmax.cu"}) 2>"$t/$out.log"
	local rc=$?
	[ "$rc" != 124 ] || echo "compile $out: fatbuild still ran after 240 s (a hang) and was stopped" >>"$t/$out.log"
	if [ -n "$pre" ]; then
		forks=$( [ -f "$t/forks" ] && wc -l <"$t/forks" || echo 0)
	else
		forks=$(sed -n 's/.* jobs, [0-9]* cached, \([0-9]*\) compiled .*/\1/p' "$t/$out.log")
	fi
	forks=$((forks + 0))
	return $rc
}
# stat_of CACHE NAME: one counter of `fatbuild cache stats`.
stat_of() { FATBUILD_CACHE_DIR=$t/$1 "$fb" cache stats | sed -n "s/^$2: //p"; }
# silent_server PORT: a server that accepts connections and never answers (120 s), in the
# background; sets silent_pid (the caller's trap ends it).
silent_server() {
	python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16); time.sleep(120)' "$1" &
	silent_pid=$!
	sleep 0.5
}
