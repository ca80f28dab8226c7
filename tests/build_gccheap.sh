#!/usr/bin/env bash
# build_gccheap.sh: gcc's collector heap on C++ compiles (docs/pytorch.md "gcc's collector").
#   O  the claim it rests on, with this machine's g++: a C++ source compiled with the heap
#      fatbuild gives (no collection) and with collections every few MB (ggc-min-heapsize=4096,
#      ggc-min-expand=10: 40 % of its time) is the same object, byte for byte
#   A  a g++ build at -j 2: build.ninja gives the C++ compile the heap word and `fatbuild edge`
#      --unkeyed with it, when the memory this process may use leaves 4 GiB a job (read here
#      from /proc/meminfo and the cgroup's memory.max, as fb_mem_limit does); the C compile
#      never gets it
#   B  -j 256 (no machine here has 1 TiB): no heap word; the same cache serves A's C++ object,
#      byte for byte, a local hit (the word is not in the key)
#   C  no word with -g, -g3 (but -g0 after -g: the word again), -frecord-gcc-switches, -flto, a
#      user's own ggc-min-heapsize, a launcher, or clang++
set -u
: "${FATBUILD_BIN:?}" "${FB_SOURCE_DIR:?}"
command -v g++ >/dev/null || { echo "SKIP: no g++"; exit 77; }
t=$(mktemp -d "${TMPDIR:-/tmp}/fb-gccheap.XXXXXX")
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; [ -f "$t/log" ] && sed 's/^/  | /' "$t/log" | tail -n 30 >&2; fails=$((fails + 1)); }
word=--param=ggc-min-heapsize=1048576

# O
cat >"$t/heavy.cpp" <<'EOF'
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>
template <int N> struct fib { static constexpr long v = fib<N - 1>::v + fib<N - 2>::v; };
template <> struct fib<1> { static constexpr long v = 1; };
template <> struct fib<0> { static constexpr long v = 0; };
std::map<std::string, std::vector<std::function<long(long)>>> table() {
	std::map<std::string, std::vector<std::function<long(long)>>> m;
	m["a"].push_back([](long x) { return x + fib<60>::v; });
	std::string in = "42";
	m[in].push_back([v = std::stol(in)](long x) { return x * v; });
	std::ostringstream o;
	o << m.size();
	m[o.str()];
	return m;
}
EOF
g++ -O2 -fPIC -c "$word" -o "$t/heap.o" "$t/heavy.cpp" >"$t/log" 2>&1 || fail "O: g++ with the heap word"
g++ -O2 -fPIC -c --param=ggc-min-heapsize=4096 --param=ggc-min-expand=10 -o "$t/collect.o" "$t/heavy.cpp" >"$t/log" 2>&1 ||
	fail "O: g++ collecting every few MB"
cmp "$t/heap.o" "$t/collect.o" >"$t/log" 2>&1 || fail "O: the heap word changed the object"

# what fb_mem_limit reads: MemTotal, capped by the cgroup v2 memory.max of this cgroup and its parents
mem=$(($(awk '/^MemTotal:/ { print $2; exit }' /proc/meminfo) * 1024))
rel=$(sed -n 's/^0:://p' /proc/self/cgroup)
while [ -n "$rel" ]; do
	m=$(cat "/sys/fs/cgroup$rel/memory.max" 2>/dev/null || echo max)
	[ "$m" != max ] && [ "$m" -lt "$mem" ] && mem=$m
	[ "$rel" = / ] && break
	rel=$(dirname "$rel")
done
want=no
[ $((mem / 2)) -ge $((4 << 30)) ] && want=yes
echo "memory $mem bytes: the word at -j 2: $want"

mkdir -p "$t/bin" "$t/src"
ln -s "$(command -v g++)" "$t/bin/g++"
printf '#include <string>\nextern "C" int cxx_len() { return (int)std::string("fatbuild").size(); }\n' >"$t/src/b.cpp"
printf 'int c_answer(void) { return 42; }\n' >"$t/src/c.c"
build() { # build NAME [flags...]: emits and builds; the edge log in $t/NAME.edges
	local name=$1
	shift
	rm -f "$t/$name.edges"
	CXX=${CXXW:-$t/bin/g++} CC=cc FATBUILD_CACHE_DIR=$t/cache FATBUILD_EDGE_LOG=$t/$name.edges "$FATBUILD_BIN" build \
		--build-dir "$t/$name" -o "$t/$name.so" "$@" "$t/src/b.cpp" "$t/src/c.c" >"$t/log" 2>&1
}
cxx_line() { grep -- "-o $t/$1/obj/0_b.cpp.o" "$t/$1/build.ninja"; }
c_line() { grep -- "-o $t/$1/obj/1_c.c.o" "$t/$1/build.ninja"; }

# A
build A -j 2 || fail "A: build"
if [ $want = yes ]; then
	cxx_line A | grep -q -- " -c $word " || { cp "$t/A/build.ninja" "$t/log"; fail "A: the C++ compile lacks the heap word"; }
	cxx_line A | grep -q -- "--unkeyed $word" || { cp "$t/A/build.ninja" "$t/log"; fail "A: the edge keys the heap word"; }
else
	! grep -q -- "$word" "$t/A/build.ninja" || { cp "$t/A/build.ninja" "$t/log"; fail "A: the heap word with too little memory a job"; }
fi
! c_line A | grep -q -- "ggc-min" || { cp "$t/A/build.ninja" "$t/log"; fail "A: the C compile got the heap word"; }
grep -q '^ran .*0_b.cpp.o' "$t/A.edges" || { cp "$t/A.edges" "$t/log"; fail "A: the C++ edge did not run"; }

# B
build B -j 256 || fail "B: build"
! grep -q -- "$word" "$t/B/build.ninja" || { cp "$t/B/build.ninja" "$t/log"; fail "B: the heap word at -j 256"; }
grep -q '^hit local .*0_b.cpp.o' "$t/B.edges" || { cp "$t/B.edges" "$t/log"; fail "B: A's C++ object was not served: the word is in the key"; }
cmp "$t/A/obj/0_b.cpp.o" "$t/B/obj/0_b.cpp.o" >"$t/log" 2>&1 || fail "B: the object differs from A's"

# C
if [ $want = yes ]; then
	none() { # none NAME WHY [flags...]: the build's C++ compile has no heap word
		local name=$1 why=$2
		shift 2
		build "$name" -j 2 --emit-ninja "$@" || fail "C: $why: emit"
		! grep -q -- "$word" "$t/$name/build.ninja" || { cp "$t/$name/build.ninja" "$t/log"; fail "C: the heap word with $why"; }
	}
	none Cg -g --cxxflags -g
	none Cg3 -g3 --cxxflags "-O2 -g3"
	none Crec -frecord-gcc-switches --cxxflags -frecord-gcc-switches
	none Clto -flto --cxxflags -flto
	none Cown "the user's own heap" --cxxflags "--param=ggc-min-heapsize=65536"
	none Claunch "a launcher" --launcher env
	build Cg0 -j 2 --emit-ninja --cxxflags "-g -g0" || fail "C: -g -g0: emit"
	cxx_line Cg0 | grep -q -- "$word" || { cp "$t/Cg0/build.ninja" "$t/log"; fail "C: -g0 after -g has no heap word"; }
	if command -v clang++ >/dev/null; then
		CXXW=clang++ none Cclang clang++
	fi
fi
[ $fails = 0 ] && echo "ok build_gccheap"
exit $((fails > 0))
