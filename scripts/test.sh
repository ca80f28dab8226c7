#!/usr/bin/env bash
# test.sh: installs what is missing, builds, and runs the test suite through ctest.
#   scripts/test.sh          the plain pass: a RelWithDebInfo build in build/ and every ctest
#                            (about 30 minutes on 2 cores); the answer to "did I break anything?"
#   scripts/test.sh --all    the plain pass, then the valgrind pass (every CLI golden again with
#                            each archprobe/fatbuild command under valgrind: errors and definite
#                            leaks fail; the probe goldens once more with --trace-children=yes),
#                            then the asan pass (clang, ASan+UBSan, in build-asan/, with the
#                            libFuzzer targets run for a while each; the tests' venvs are
#                            build/'s, FB_VENV_DIR); what CI runs (.ci/run)
#   scripts/test.sh --pass NAME [--pass NAME...]   chosen passes: plain, valgrind, asan
#   FB_TEST_PASSES="plain asan" scripts/test.sh    the same, from the environment
# Each ctest run prints its summary, then the slowest tests; the last line adds up every run:
# "test.sh: N passed, N failed". The exit status is 0 only when every run passed.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() { sed -n '2,14s/^# \{0,1\}//p' "$0"; }
passes=${FB_TEST_PASSES:-plain}
chosen=
while [ $# -gt 0 ]; do
	case $1 in
	--all) chosen="plain valgrind asan" ;;
	--pass) [ $# -ge 2 ] || { echo "test.sh: --pass needs a name (plain, valgrind, asan)" >&2; exit 2; }
		chosen="$chosen $2"; shift ;;
	--pass=*) chosen="$chosen ${1#--pass=}" ;;
	-h | --help) usage; exit 0 ;;
	*) echo "test.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$chosen" ] && passes=$chosen
for pass in $passes; do
	case $pass in
	plain | valgrind | asan) ;;
	*) echo "test.sh: unknown pass '$pass' (plain, valgrind, asan)" >&2; exit 2 ;;
	esac
done

bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
total_pass=0 total_fail=0 status=0
start=$(date +%s)

# run_ctest DIR WHAT [CTEST ARGS...]: one ctest run, its output kept in DIR/ctest-WHAT.log; adds
# its counts to the totals and prints the ten slowest tests after ctest's own summary.
run_ctest() {
	local dir=$1 what=$2 log rc summary n failed
	shift 2
	log=$dir/ctest-$what.log
	echo "== $what: ctest in $dir"
	set +e
	# The sanitizers' options only for the asan pass: tests read ASAN_OPTIONS as "this is the asan
	# pass" and then leave out what a sanitizer runtime cannot run (remote/compile.sh's NVRTC
	# counter, an LD_PRELOAD), so set in the plain pass those checks never ran.
	local san=(-u ASAN_OPTIONS -u UBSAN_OPTIONS)
	[ "$what" = asan ] && san=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)
	(cd "$dir" && env "${san[@]}" ctest --output-on-failure -j "$jobs" "$@") 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	set -e
	[ "$rc" = 0 ] || status=1
	echo "== $what: the slowest tests"
	sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[ *]*([A-Za-z*]+[A-Za-z ]*[A-Za-z])? +([0-9.]+) sec$/\3 \1/p' "$log" |
		sort -rn | head -10 | awk '{ printf "   %7.1f s  %s\n", $1, $2 }'
	summary=$(sed -nE 's/^[0-9]+% tests passed, ([0-9]+) tests? failed out of ([0-9]+)$/\1 \2/p' "$log" | tail -1)
	if [ -z "$summary" ]; then
		echo "== $what: ctest printed no summary (exit $rc)"
		total_fail=$((total_fail + 1))
		status=1
		return 0
	fi
	failed=${summary% *} n=${summary#* }
	total_pass=$((total_pass + n - failed))
	total_fail=$((total_fail + failed))
	[ "$failed" = 0 ] || failure_output "$dir" "$what" "$log"
}

# failure_output DIR WHAT LOG: each failed test's own output again, its last 60 lines, from
# ctest's LastTest.log: with --output-on-failure it is printed while other tests run, far from
# the end where a CI page that shows only the tail of the log looks.
failure_output() {
	local dir=$1 what=$2 log=$3 name
	for name in $(sed -nE 's/^[[:space:]]+[0-9]+ - ([^ ]+) \(.*\)$/\1/p' "$log"); do
		echo "== $what: the output of $name (its last 60 lines)"
		awk -v t="$name" '
			$0 ~ "^[0-9]+/[0-9]+ Testing: " t "$" { on = 1; next }
			on && /^--------------------/ && !started { started = 1; next }
			on && started && /^<end of output>$/ { exit }
			on && started { print }' "$dir/Testing/Temporary/LastTest.log" | tail -60
	done
}

configure_plain() {
	cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFB_WERROR=ON >/dev/null
	cmake --build build -j "$jobs"
}

for pass in $passes; do
	case $pass in
	plain)
		echo "== plain: building in build"
		configure_plain
		run_ctest build plain --timeout 900
		;;
	valgrind)
		# The probe goldens run a second time with --trace-children=yes, so the probe's child
		# process (archprobe --probe-child, where the driver is called) is checked too.
		# probe_timeout and probe_fatbuild are left out of that second run: they cut a hanging
		# driver off after 0.3-0.5 s, and a child starting under valgrind may not even have
		# loaded it by then (the message then names the driver differently).
		if ! command -v valgrind >/dev/null; then
			echo "== valgrind: valgrind is not installed (scripts/deps.sh installs it)" >&2
			total_fail=$((total_fail + 1))
			status=1
			continue
		fi
		echo "== valgrind: building in build"
		configure_plain
		vg="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite"
		FB_EXEC_PREFIX="$vg" run_ctest build valgrind --timeout 900 -L cli
		FB_EXEC_PREFIX="$vg --trace-children=yes" run_ctest build valgrind-probe --timeout 900 -L cli \
			-R '^cli_probe_' -E '^cli_probe_(timeout|fatbuild)$'
		;;
	asan)
		echo "== asan: building in build-asan"
		CC=clang cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFB_WERROR=ON \
			-DFB_SANITIZE=ON -DFB_FUZZ=ON >/dev/null
		cmake --build build-asan -j "$jobs"
		# The venvs the tests install into (torch, buildbox, BuildGrid, NVIDIA's wheels: minutes
		# of pip each) are the plain pass's, in build/, made there when missing: the same
		# packages, and nothing of them is built from this tree.
		FB_VENV_DIR="$root/build" run_ctest build-asan asan --timeout 900
		;;
	esac
done
echo "== test.sh: passes '$(echo $passes)' in $(( $(date +%s) - start )) s"
echo "test.sh: $total_pass passed, $total_fail failed"
exit $status
