#!/usr/bin/env bash
# test.sh: installs what is missing, builds, runs the whole suite through ctest, then builds
# again with clang under ASan+UBSan (with the libFuzzer targets) and runs the suite again.
#   scripts/test.sh            both passes
#   FB_TEST_PASSES=plain scripts/test.sh   only the first pass
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
passes=${FB_TEST_PASSES:-plain asan}
status=0
for pass in $passes; do
	case $pass in
	plain)
		dir=build
		cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFB_WERROR=ON >/dev/null
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
