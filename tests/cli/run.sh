#!/usr/bin/env bash
# Golden CLI test runner (zstd style), the one runner of every golden.
#   run.sh [--update] [--exec-prefix "valgrind ..."] tests/cli/COMMAND/NAME.sh
# The goldens are grouped by the command they exercise (build/, compile/, diff/, dlink/,
# fatbin/, flags/, launch/, probe/, prune/); ctest runs each as cli_COMMAND_NAME.
# Runs NAME.sh in a scratch directory with $ARCHPROBE and $FATBUILD set (prefixed by
# --exec-prefix / $FB_EXEC_PREFIX) and $FB_TESTS_DIR naming tests/, then compares stdout,
# stderr and the exit code with NAME.sh.stdout, NAME.sh.stderr (or .stdout.glob/.stderr.glob:
# a line "..." skips any number of lines, '*' inside a line matches anything) and NAME.sh.exit
# (default 0). A missing golden file means "not checked". --update rewrites the exact goldens.
# One convention: a script that runs one command leaves its streams and exit code to these
# files; a script that checks several commands sources $FB_TESTS_DIR/cli/lib.sh and runs each
# as `run CMD`, whose transcript ("$ CMD", the merged output with paths masked, "[exit N]")
# goes to stdout (run2: stdout, then "[stderr]" and stderr; run1 / runhead N: the first lines
# only); no other exit-status lines.
set -u
update=0
prefix=${FB_EXEC_PREFIX:-}
while [ $# -gt 1 ]; do
	case $1 in
	--update) update=1; shift ;;
	--exec-prefix) prefix=$2; shift 2 ;;
	*) break ;;
	esac
done
script=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
: "${ARCHPROBE_BIN:?ARCHPROBE_BIN must name the archprobe binary}"
: "${FATBUILD_BIN:?FATBUILD_BIN must name the fatbuild binary}"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fbcli.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export ARCHPROBE="$prefix $ARCHPROBE_BIN" FATBUILD="$prefix $FATBUILD_BIN" FB_EXEC_PREFIX="$prefix"
export FB_TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export FB_CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
(cd "$scratch" && bash "$script") >"$scratch/.out" 2>"$scratch/.err"
rc=$?
fail=0

# glob_match GOLDEN ACTUAL: python-free matcher for "..." lines and '*' wildcards.
glob_match() {
	awk -v G="$1" '
	function lmatch(pat, s,   re) {
		re = pat; gsub(/[][\\.^$(){}|+?]/, "\\\\&", re); gsub(/\*/, ".*", re)
		return s ~ ("^" re "$")
	}
	BEGIN { ng = 0; while ((getline l < G) > 0) g[++ng] = l }
	{ a[++na] = $0 }
	END {
		# m[i,j]: golden i.. matches actual j..
		for (i = ng + 1; i >= 1; i--) for (j = na + 1; j >= 1; j--) {
			if (i > ng) { m[i, j] = (j > na); continue }
			if (g[i] == "...") { m[i, j] = m[i + 1, j] || (j <= na && m[i, j + 1]); continue }
			m[i, j] = (j <= na && lmatch(g[i], a[j]) && m[i + 1, j + 1])
		}
		exit m[1, 1] ? 0 : 1
	}' "$2"
}

check() { # stream actualfile
	local golden=$script.$1
	if [ $update = 1 ] && [ ! -e "$golden.glob" ]; then
		cp "$2" "$golden"; return
	fi
	if [ -e "$golden" ]; then
		if ! diff -u "$golden" "$2" >&2; then echo "FAIL: $1 differs from $golden" >&2; fail=1; fi
	elif [ -e "$golden.glob" ]; then
		if ! glob_match "$golden.glob" "$2"; then
			echo "FAIL: $1 does not match $golden.glob; got:" >&2; cat "$2" >&2; fail=1
		fi
	fi
}
check stdout "$scratch/.out"
check stderr "$scratch/.err"
want=0
[ -e "$script.exit" ] && want=$(cat "$script.exit")
if [ $update = 1 ]; then
	[ "$rc" != 0 ] && echo "$rc" >"$script.exit" || rm -f "$script.exit"
elif [ "$rc" != "$want" ]; then
	echo "FAIL: exit $rc, want $want" >&2; cat "$scratch/.err" >&2; fail=1
fi
[ $fail = 0 ] && echo "ok $(basename "$script")"
exit $fail
