#!/usr/bin/env bash
# test.sh: installs what is missing, builds, runs the whole suite through ctest, then builds
# again with clang under ASan+UBSan (with the libFuzzer targets) and runs the suite again.
# Between them, the valgrind pass reruns every CLI golden test of the plain build with each
# archprobe/fatbuild command under valgrind (errors and definite leaks fail; NVIDIA's libraries'
# own "possibly lost" blocks are not shown).
#   scripts/test.sh            all three passes (plain, valgrind, asan)
#   FB_TEST_PASSES=plain scripts/test.sh   only the first pass
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
passes=${FB_TEST_PASSES:-plain valgrind asan}
status=0
for pass in $passes; do
	case $pass in
	plain)
		dir=build
		cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFB_WERROR=ON >/dev/null
		;;
	valgrind)
		# Every CLI golden runs again with each archprobe/fatbuild command under valgrind; the
		# probe goldens a second time with --trace-children=yes, so the probe's child process
		# (archprobe --probe-child, where the driver is called) is checked too. probe_timeout and
		# probe_fatbuild are left out of that second run: they cut a hanging driver off after
		# 0.3-0.5 s, and a child starting under valgrind may not even have loaded it by then
		# (the message then names the driver differently).
		if ! command -v valgrind >/dev/null; then
			echo "== valgrind: valgrind is not installed; pass skipped" >&2
			continue
		fi
		dir=build
		cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFB_WERROR=ON >/dev/null
		cmake --build "$dir" -j "$jobs"
		vg="valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite"
		echo "== valgrind: CLI golden tests under valgrind"
		if ! (cd "$dir" && FB_EXEC_PREFIX="$vg" ctest --output-on-failure -j "$jobs" --timeout 900 -L cli); then
			status=1
		fi
		echo "== valgrind: probe goldens under valgrind --trace-children=yes"
		if ! (cd "$dir" && FB_EXEC_PREFIX="$vg --trace-children=yes" \
			ctest --output-on-failure -j "$jobs" --timeout 900 -L cli -R '^cli_probe_' -E '^cli_probe_(timeout|fatbuild)$'); then
			status=1
		fi
		continue
		;;
	asan)
		dir=build-asan
		CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DFB_WERROR=ON \
			-DFB_SANITIZE=ON -DFB_FUZZ=ON >/dev/null
		;;
	*) echo "test.sh: unknown pass '$pass'" >&2; exit 2 ;;
	esac
	echo "== $pass: building in $dir"
	cmake --build "$dir" -j "$jobs"
	echo "== $pass: running the suite"
	if ! (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j "$jobs" --timeout 600); then
		status=1
	fi
done
exit $status
