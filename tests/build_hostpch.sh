#!/usr/bin/env bash
# build_hostpch.sh: --torch C++ sources compile with a precompiled header of their leading
# torch #includes, kept in the user's cache (fatbuild/extension/hostpch.c). A fake torch (a
# Python package answering fatbuild's query, a few headers, empty libraries) keeps it fast:
#   0. by default the first build that wants a PCH compiles without one and the second makes
#      it (making one costs about one and a half compiles); FATBUILD_HOST_PCH=1 makes it at once, as
#      the rest of this test does;
#   1. the first build makes the PCH (its edge runs), in CACHE/hostpch/KEY, both dirs 0700;
#      the C++ edge reads it with -Winvalid-pch -Werror=invalid-pch;
#   2. --no-host-pch gives the same object, byte for byte; a second build dir reuses the PCH
#      (no PCH edge runs) and its object is the same too;
#   3. a touched torch header: the PCH is stale and remade;
#   4. foreign: a .gch copied over it (another size, inode, mtime) and an id of another
#      identity are each refused and remade; another torch gets a PCH of its own;
#   5. a group-writable PCH dir is refused (exit 7, docs/security.md), --no-host-pch builds;
#   6. a source without a leading torch include, a build with --launcher, and a compiler
#      neither gcc nor clang by name (a wrapper script) use none;
#   7. with the edge cache (fatbuild edge), the compile makes a missing PCH itself, under a
#      lock: same object; a second build dir with the object in the cache makes no PCH;
#      Torch at another path (another venv): the edge's key spells torch's dir and the PCH's
#      as bases, so a hit, and the object is the one a cold compile there makes;
#   8. the same by default: the first compile reads the headers plainly, a no-op stays one,
#      the next compile makes the PCH;
#   9. cache clear removes the PCHs; 10. a running build's PCH survives a trim beside it, and
#      each build sets its last use.
# 1-6 run without the edge cache (FATBUILD_EDGE_CACHE=0), where the PCH is an edge of its own.
# With CXX=clang++ (ctest build_hostpch_clang) the same steps run with clang's PCH, h.h.pch,
# and step 3 first shows that clang reads it: with a touched header, the compile alone (ninja
# in the build dir, which does not remake the PCH) fails as clang refuses the stale PCH.
set -u
: "${FATBUILD_BIN:?}"
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || { echo "no $cxx: skipped"; exit 77; }
case $(basename "$(readlink -f "$(command -v "$cxx")")") in
*clang*) ext=pch clang=1 ;;
*) ext=gch clang=0 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/fb-hostpch.XXXXXX")
trap 'rm -rf "$work" "${c8:-}"' EXIT
export FATBUILD_CACHE_DIR=$work/cache FATBUILD_EDGE_CACHE=0
fails=0
fail() { echo "FAIL: $*" >&2; [ -f "$work/log" ] && sed 's/^/  | /' "$work/log" | tail -n 30 >&2; fails=$((fails + 1)); }

# fake_torch DIR VERSION: a torch package torch.utils.cpp_extension can be asked about.
fake_torch() {
	local d=$1/torch
	mkdir -p "$d/utils" "$d/include/torch" "$d/include/c10" "$d/lib"
	printf '__version__ = "%s"\nclass version:\n    cuda = None\nclass _C:\n    _GLIBCXX_USE_CXX11_ABI = True\n' "$2" >"$d/__init__.py"
	printf '__version__ = "%s"\n' "$2" >"$d/version.py"
	: >"$d/utils/__init__.py"
	cat >"$d/utils/cpp_extension.py" <<PY
import os
# flags as PyTorch's: -std=c++17
TORCH_LIB_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib")
def include_paths(cuda=False):
    return [os.path.join(os.path.dirname(TORCH_LIB_PATH), "include")]
PY
	cat >"$d/include/c10/core.h" <<'H'
#pragma once
#include <map>
#include <string>
#include <vector>
#include <functional>
namespace c10 { inline int answer() { std::map<std::string, std::vector<int>> m{{"a", {41}}}; return m["a"][0] + 1; } }
// spelled when a PCH is made: the PCH must map torch's dir as the compile does
namespace c10 { inline const char *where() { return __FILE__; } }
H
	cat >"$d/include/torch/extension.h" <<'H'
#pragma once
#include <c10/core.h>
#include <sstream>
H
	for l in c10 torch_cpu torch torch_python; do
		echo "int fake_$l;" >"$work/$l.c" && cc -shared -fPIC -o "$d/lib/lib$l.so" "$work/$l.c" || return 1
	done
}
fake_torch "$work/t1" 2.99.0 || { echo "fake torch"; exit 1; }
fake_torch "$work/t2" 2.98.0 || { echo "fake torch"; exit 1; }
cat >"$work/a.cpp" <<'C'
// a.cpp: one op.
#include <torch/extension.h>
/* the op */
#include <sstream>

int ext_answer() { return c10::answer(); }
const char *ext_where() { return c10::where(); }
C
printf '#include "local.h"\n#include <torch/extension.h>\nint f() { return c10::answer(); }\n' >"$work/b.cpp"
: >"$work/local.h"

build() { # build PYTHONPATH BUILDDIR [flags...]: exit status of fatbuild build, output in $work/log
	local pp=$1 bd=$2
	shift 2
	PYTHONPATH=$pp "$FATBUILD_BIN" build --torch --python python3 --name ext --build-dir "$work/$bd" \
		-o "$work/$bd.so" "$@" "$work/a.cpp" >"$work/log" 2>&1
}
ran_pch() { grep -q 'PCH torch headers' "$work/log"; }
gch() { ls "$FATBUILD_CACHE_DIR"/hostpch/*/h.h.$ext 2>/dev/null | head -n 1; }

# 0.
FATBUILD_CACHE_DIR=$work/cache0 build "$work/t1" b0 || fail "0: first build"
! ran_pch && ! grep -q -- '-include' "$work/b0/build.ninja" || fail "0: the first build made or read a PCH"
FATBUILD_CACHE_DIR=$work/cache0 build "$work/t1" b0b || fail "0: second build"
ran_pch && grep -q -- '-include' "$work/b0b/build.ninja" || fail "0: the second build did not make the PCH"
cmp "$work/b0/obj/0_a.cpp.o" "$work/b0b/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "0: the object differs"
export FATBUILD_HOST_PCH=1
# 1.
build "$work/t1" b1 || fail "1: build"
ran_pch || fail "1: no PCH edge ran"
g=$(gch)
[ -n "$g" ] && [ -s "$g" ] || fail "1: no h.h.$ext under $FATBUILD_CACHE_DIR/hostpch"
pdir=$(dirname "$g")
[ "$(stat -c %a "$FATBUILD_CACHE_DIR/hostpch")" = 700 ] && [ "$(stat -c %a "$pdir")" = 700 ] ||
	{ : >"$work/log"; fail "1: PCH dirs not 0700: $(stat -c '%a %n' "$FATBUILD_CACHE_DIR/hostpch" "$pdir")"; }
grep -q -- "-Winvalid-pch -Werror=invalid-pch -include $pdir/h.h" "$work/b1/build.ninja" ||
	{ cp "$work/b1/build.ninja" "$work/log"; fail "1: the C++ edge does not read the PCH"; }
# 2.
build "$work/t1" b2 --no-host-pch || fail "2: --no-host-pch build"
! grep -q -- '-include' "$work/b2/build.ninja" || { cp "$work/b2/build.ninja" "$work/log"; fail "2: --no-host-pch still reads a PCH"; }
cmp "$work/b1/obj/0_a.cpp.o" "$work/b2/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "2: the object differs with the PCH"
build "$work/t1" b3 || fail "2: second build dir"
! ran_pch || fail "2: the second build dir made the PCH again"
cmp "$work/b1/obj/0_a.cpp.o" "$work/b3/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "2: the second build dir's object differs"
# 3. (clang checks mtimes in whole seconds: a second passes before the touch)
[ $clang = 1 ] && sleep 1 || sleep 0.05
touch "$work/t1/torch/include/c10/core.h"
if [ $clang = 1 ]; then
	ninja -C "$work/b1" >"$work/log" 2>&1 && fail "3: clang compiled with a stale PCH"
	grep -q 'has been modified since the precompiled header' "$work/log" || fail "3: clang did not refuse the stale PCH"
fi
build "$work/t1" b3 || fail "3: build after touching a header"
grep -q 'PCH torch headers (.*core.h changed)' "$work/log" || fail "3: a touched torch header did not remake the PCH"
build "$work/t1" b3 || fail "3: no-op"
grep -q 'no work to do' "$work/log" || fail "3: the rebuild after the remade PCH did work"
# 4.
cp "$g" "$work/copy.gch" && rm -f "$g" && cp "$work/copy.gch" "$g"
build "$work/t1" b3 || fail "4: build with a copied-in .gch"
grep -q 'PCH torch headers (foreign' "$work/log" || fail "4: a copied-in .gch was not refused"
echo "fatbuild host pch 1 of another identity" >"$pdir/id"
build "$work/t1" b3 || fail "4: build with a foreign id"
grep -q 'PCH torch headers (foreign' "$work/log" || fail "4: a foreign id was not refused"
build "$work/t2" b3 || fail "4: another torch"
ran_pch || fail "4: another torch did not make a PCH of its own"
[ "$(ls -d "$FATBUILD_CACHE_DIR"/hostpch/*/ | wc -l)" = 2 ] || { ls -la "$FATBUILD_CACHE_DIR"/hostpch >"$work/log"; fail "4: another torch did not get its own PCH dir"; }
# 5.
chmod 770 "$pdir"
build "$work/t1" b4; rc=$?
[ $rc = 7 ] && grep -q 'host PCH dir' "$work/log" || fail "5: a group-writable PCH dir was used (exit $rc)"
build "$work/t1" b4 --no-host-pch || fail "5: --no-host-pch with an unsafe PCH dir"
chmod 700 "$pdir"
# 6.
PYTHONPATH=$work/t1 "$FATBUILD_BIN" build --torch --python python3 --name ext2 --emit-ninja --build-dir "$work/b5" \
	-o "$work/b5.so" "$work/b.cpp" >"$work/log" 2>&1 || fail "6: emit"
! grep -q -- '-include' "$work/b5/build.ninja" || { cp "$work/b5/build.ninja" "$work/log"; fail "6: a PCH for a source whose first include is quoted"; }
build "$work/t1" b6 --launcher env --emit-ninja || fail "6: emit with a launcher"
! grep -q -- '-include' "$work/b6/build.ninja" || { cp "$work/b6/build.ninja" "$work/log"; fail "6: a PCH with a launcher"; }
printf '#!/bin/sh\nexec %s "$@"\n' "$cxx" >"$work/othercxx" && chmod +x "$work/othercxx"
CXX=$work/othercxx build "$work/t1" b6b --emit-ninja || fail "6: emit with a compiler of no known flavor"
! grep -q -- '-include' "$work/b6b/build.ninja" || { cp "$work/b6b/build.ninja" "$work/log"; fail "6: a PCH for a compiler neither gcc nor clang"; }
# 7.
export FATBUILD_EDGE_CACHE=1 FATBUILD_CACHE_DIR=$work/cache7 FATBUILD_EDGE_LOG=$work/edges
build "$work/t1" b7 || fail "7: build with the edge cache"
[ -s "$(gch)" ] || fail "7: the compile made no PCH in the cache"
cmp "$work/b2/obj/0_a.cpp.o" "$work/b7/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "7: the object differs"
rm -f "$FATBUILD_CACHE_DIR"/hostpch/*/h.h.$ext
build "$work/t1" b8 || fail "7: second build dir"
[ -z "$(ls "$FATBUILD_CACHE_DIR"/hostpch/*/h.h.$ext 2>/dev/null)" ] || fail "7: a cache hit made the PCH"
grep -q "^hit local $work/b8/obj/0_a.cpp.o" "$work/edges" || { cp "$work/edges" "$work/log"; fail "7: no cache hit"; }
cp -a "$work/t1" "$work/venv2" || fail "7: copy torch"
build "$work/venv2" b10 || fail "7: torch at another path"
grep -q "^hit local $work/b10/obj/0_a.cpp.o" "$work/edges" || { cp "$work/edges" "$work/log"; fail "7: torch at another path: no cache hit"; }
FATBUILD_EDGE_CACHE=0 build "$work/venv2" b11 --no-host-pch || fail "7: cold build with torch at another path"
cmp "$work/b10/obj/0_a.cpp.o" "$work/b11/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "7: the hit is not the object a cold compile there makes"
strings -a "$work/b11/obj/0_a.cpp.o" | grep -q '^torch/include/c10/core.h$' || { strings -a "$work/b11/obj/0_a.cpp.o" >"$work/log"; fail "7: __FILE__ of a torch header is not mapped to torch/"; }
# 8. with the edge cache, by default: the first compile leaves a mark and reads the headers
#    plainly (-include h.h without h.h.gch: the same object), while the build's background
#    maker (pch.sh bg, at the lowest priority; its lock file bg says it ran) makes the PCH on
#    cores the build leaves idle, stopped when ninja is done, leaving no temporaries; a no-op
#    stays one; pch.sh bg makes the PCH; without it, the next compile that misses makes it.
unset FATBUILD_HOST_PCH
export FATBUILD_CACHE_DIR=$work/cache8
build "$work/t1" b9 || fail "8: first build"
grep -q -- '-include' "$work/b9/build.ninja" || fail "8: the compile does not name a PCH"
cmp "$work/b2/obj/0_a.cpp.o" "$work/b9/obj/0_a.cpp.o" >"$work/log" 2>&1 || fail "8: the object differs"
d8=$(ls -d "$FATBUILD_CACHE_DIR"/hostpch/*/ | head -n 1)
[ -e "$d8/seen" ] && [ -e "$d8/bg" ] || { ls -la "$d8" >"$work/log"; fail "8: no mark, or no background maker ran"; }
[ -z "$(ls "$d8" | grep '\.tmp\.')" ] || { ls -la "$d8" >"$work/log"; fail "8: temporaries left"; }
# The first compile read h.h as a plain header: its depfile names BUILD/pch/ID/h.h, a link
# into the cache's hostpch/. Its object is in the edge cache all the same, so another build dir
# (a warm build, a CI job) takes it instead of compiling (and making the PCH first); the cache
# here lies outside every directory the command names ($work holds the source).
c8=$(mktemp -d "${TMPDIR:-/tmp}/fb-hostpch-cache.XXXXXX")
FATBUILD_CACHE_DIR=$c8 build "$work/t1" b9c || fail "8: a first build, the cache elsewhere"
FATBUILD_CACHE_DIR=$c8 build "$work/t1" b9d || fail "8: another build dir, the cache elsewhere"
grep -q "^hit local $work/b9d/obj/0_a.cpp.o" "$work/edges" ||
	{ cp "$work/edges" "$work/log"; fail "8: the first build's object is not in the edge cache"; }
build "$work/t1" b9 || fail "8: no-op"
grep -q 'no work to do' "$work/log" || fail "8: the no-op did work"
rm -f "$d8/h.h.$ext" "$d8/stamp"
sh "$work"/b9/pch/*/pch.sh bg >"$work/log" 2>&1
[ -s "$d8/h.h.$ext" ] && [ -s "$d8/stamp" ] || { ls -la "$d8" >>"$work/log"; fail "8: pch.sh bg made no PCH"; }
rm -f "$d8/h.h.$ext" "$d8/stamp"
echo '// changed' >>"$work/a.cpp"
build "$work/t1" b9 || fail "8: build after a change"
[ -s "$d8/h.h.$ext" ] || fail "8: the second compile did not make the PCH"
# 8b. the build dir names the PCH by a path of its own: another cache dir changes no command,
#     and a no-op stays one.
FATBUILD_CACHE_DIR=$work/cache8b build "$work/t1" b9 || fail "8b: another cache dir"
grep -q 'no work to do' "$work/log" || fail "8b: another cache dir rebuilt: $(tr '\n' ' ' <"$work/log")"
# 9. `fatbuild cache clear` removes the PCHs with the rest of the cache.
[ -n "$(ls -d "$FATBUILD_CACHE_DIR"/hostpch/*/ 2>/dev/null)" ] || fail "9: no PCH to clear"
"$FATBUILD_BIN" cache clear >"$work/log" 2>&1 || fail "9: cache clear failed"
[ -z "$(ls -A "$FATBUILD_CACHE_DIR"/hostpch 2>/dev/null)" ] || { ls -laR "$FATBUILD_CACHE_DIR"/hostpch >>"$work/log"; fail "9: cache clear left a PCH"; }
# 10. a build holds its PCH dir (a shared flock) until ninja is done: a `fatbuild cache trim`
#     under a limit that evicts everything, run by the C++ edge's compiler itself, leaves the
#     PCH, and the compile reads it; each build sets the PCH's last use (its id's mtime), so
#     trim evicts PCHs by use, not by when they were made.
export FATBUILD_HOST_PCH=1 FATBUILD_EDGE_CACHE=0 FATBUILD_CACHE_DIR=$work/cache10
unset FATBUILD_EDGE_LOG
mkdir -p "$work/wrap"
wcxx=$work/wrap/$(basename "$cxx")
cat >"$wcxx" <<SH
#!/bin/sh
case "\$*" in *.cpp.o*) "$FATBUILD_BIN" cache trim --max-size 1 >>"$work/trimlog" 2>&1 ;; esac
exec $(command -v "$cxx") "\$@"
SH
chmod +x "$wcxx"
CXX=$wcxx build "$work/t1" b12 || fail "10: build with a trim beside its compile"
grep -q 'evicted' "$work/trimlog" 2>/dev/null || { cp "$work/trimlog" "$work/log" 2>/dev/null; fail "10: the compiler's trim did not run"; }
pdir=$(ls -d "$FATBUILD_CACHE_DIR"/hostpch/*/ 2>/dev/null | head -n 1)
[ -n "$pdir" ] && [ -f "$pdir/h.h.$ext" ] || { cp "$work/trimlog" "$work/log"; fail "10: trim removed the PCH of a running build"; }
grep -q -- "-include" "$work/b12/build.ninja" || fail "10: the compile read no PCH"
touch -d '2001-01-01' "$pdir/id"
CXX=$wcxx build "$work/t1" b12 || fail "10: no-op build"
[ "$(stat -c %Y "$pdir/id")" -gt "$(date -d 2020-01-01 +%s)" ] || fail "10: a build did not set the PCH's last use"
[ $fails = 0 ] && echo "ok build_hostpch"
exit $((fails > 0))
