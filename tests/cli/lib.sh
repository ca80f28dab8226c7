# Sourced ($FB_TESTS_DIR/cli/lib.sh) by the goldens that check more than one command: each
# command runs as `run CMD...`, which prints "$ " and the command line, the command's stdout and
# stderr merged, then "[exit N]", all on stdout (run1 / runhead N: only the first lines of the
# output; run2: stdout, then "[stderr]" and stderr, where which stream matters). Paths are
# masked: the binaries (with the runner's exec prefix) as archprobe / fatbuild, the build dir as
# BUILD, the scratch dir as SCRATCH, the CUDA toolkit as CUDA/, timings as S. Leading VAR=value
# words set the environment of that command.
mask() {
	sed -e "s|${FB_EXEC_PREFIX:+$FB_EXEC_PREFIX }$ARCHPROBE_BIN|archprobe|g" -e "s|${FB_EXEC_PREFIX:+$FB_EXEC_PREFIX }$FATBUILD_BIN|fatbuild|g" \
		-e "s|$ARCHPROBE_BIN|archprobe|g" -e "s|$FATBUILD_BIN|fatbuild|g" -e "s|${FB_BINARY_DIR:-/nonexistent/build}|BUILD|g" \
		-e "s|$PWD|SCRATCH|g" -e "s|${FB_CUDA_HOME:-/usr/local/cuda}/|CUDA/|g" -e 's/"seconds": [0-9.]*/"seconds": S/' -e 's/ in [0-9.]* s$/ in S s/'
}
run() {
	echo "\$ $*" | mask
	env "$@" 2>&1 | mask
	echo "[exit ${PIPESTATUS[0]}]"
}
# runhead N: the same, only the first N lines of output (all of it is read: no SIGPIPE)
runhead() {
	local n=$1
	shift
	echo "\$ $*" | mask
	env "$@" 2>&1 | mask | sed -n "1,${n}p"
	echo "[exit ${PIPESTATUS[0]}]"
}
# run1: runhead 1
run1() { runhead 1 "$@"; }
# run2: the same with the streams apart, for goldens where which stream matters (usage and
# errors on stderr, nothing on stdout): stdout, then "[stderr]" and stderr if there is any.
run2() {
	echo "\$ $*" | mask
	env "$@" >.run2.out 2>.run2.err
	local rc=$?
	mask <.run2.out
	[ -s .run2.err ] && echo "[stderr]" && mask <.run2.err
	rm -f .run2.out .run2.err
	echo "[exit $rc]"
}
