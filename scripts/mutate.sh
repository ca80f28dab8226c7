#!/usr/bin/env bash
# mutate.sh: proves that tests can fail. Each line of tests/mutations.txt plants one bug in a copy
# of the sources; the named ctest must then fail. A mutation that survives (the test still
# passes) is a check that cannot fail, and is reported.
#   scripts/mutate.sh [FILTER]    run every mutation (or those whose line contains FILTER)
# Line format:  FILE <TAB> OLD <TAB> NEW <TAB> CTEST-REGEX   (OLD must occur in FILE exactly once;
# \t and \n in OLD/NEW stand for a tab and a newline). Blank lines and # comments are ignored.
# The copy and its build live under build-mutate/ (reused between runs: only the mutated file
# and what depends on it are rebuilt).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/deps.sh
work=$root/build-mutate
src=$work/src
list=$root/tests/mutations.txt
filter=${1:-}
mkdir -p "$work"
# A private copy of the tracked sources (so the checkout is never touched).
rm -rf "$src.new" && mkdir -p "$src.new"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$src.new"
if [ -d "$src" ] && diff -rq "$src" "$src.new" >/dev/null 2>&1; then
	rm -rf "$src.new"
else
	rm -rf "$src" && mv "$src.new" "$src"
fi
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$work/build" -j "$(nproc)" >/dev/null
n=0 killed=0 survived=0 broken=0
while IFS=$'\t' read -r file old new tests; do
	case $file in '' | '#'*) continue ;; esac
	[ -n "$filter" ] && case "$file $old $new $tests" in *"$filter"*) ;; *) continue ;; esac
	n=$((n + 1))
	cp "$src/$file" "$work/orig"
	if ! python3 - "$src/$file" "$old" "$new" <<'EOF'; then
import sys
path, old, new = sys.argv[1], sys.argv[2].replace('\\t', '\t').replace('\\n', '\n'), sys.argv[3].replace('\\t', '\t').replace('\\n', '\n')
s = open(path).read()
if s.count(old) != 1:
    sys.exit(f"mutate: {path}: the text to replace occurs {s.count(old)} times: {old!r}")
open(path, 'w').write(s.replace(old, new))
EOF
		echo "BROKEN   #$n $file: mutation does not apply"
		broken=$((broken + 1))
		continue
	fi
	if ! cmake --build "$work/build" -j "$(nproc)" >"$work/log" 2>&1; then
		echo "BROKEN   #$n $file: the mutant does not compile ($(grep -m1 error "$work/log"))"
		broken=$((broken + 1))
	elif (cd "$work/build" && ctest -R "$tests" --timeout 300 >"$work/log" 2>&1); then
		echo "SURVIVED #$n $file: '$old' -> '$new': $tests still pass"
		survived=$((survived + 1))
	else
		echo "killed   #$n $file: $tests failed ($(grep -c 'Failed\|\*\*\*' "$work/log") lines)"
		killed=$((killed + 1))
	fi
	cp "$work/orig" "$src/$file"
	touch "$src/$file"
done <"$list"
cmake --build "$work/build" -j "$(nproc)" >/dev/null 2>&1 || true
echo "mutate: $n mutations: $killed killed, $survived survived, $broken broken"
[ "$survived" = 0 ] && [ "$broken" = 0 ]
