#!/usr/bin/env bash
# odd_files.sh: attacks with files that are not what a command expects and with outputs that
# name an input (docs/hardening.md "Attacks on the caches and inputs"). Each command runs under
# a 20 s timeout, so a hang is a FAIL, not a stuck test.
#  - A FIFO, /dev/zero or a directory given as a source, as an #include'd header, or as the
#    input of inspect, check, size, prune, extract, diff, pack, embed, dlink, compile, build:
#    refused at once with one line naming the file ("fatbuild: k.cu: not a regular file (a
#    FIFO)"), never read or waited on.
#  - -o (and --depfile, -o DIR/) naming an input: by its path, as ./PATH, through a hard link or
#    a symlink, or a header the source includes (for build: a header any source includes,
#    through -I and other headers too); and -o naming a FIFO, a directory or (as root) a
#    character device: exit 2 with one line, and the file is left as it was.
#  - -j and MAX_JOBS beyond what the compile server serves are capped with one note and the
#    server still serves, under the usual 1024 open-file limit where 1024 jobs made its poll
#    fail; garbage is exit 2.
#  - Paths holding a newline, a tab or a terminal escape: every message is one printable line.
set -u
FB=${FATBUILD_BIN:?}
w=$(mktemp -d "${TMPDIR:-/tmp}/fbodd.XXXXXX")
trap 'rm -rf "$w"' EXIT
cd "$w" || exit 1
export FATBUILD_CACHE_DIR=$w/cache FATBUILD_BUILD_DIR=$w/bd XDG_CACHE_HOME=$w/xdg
unset TORCH_CUDA_ARCH_LIST MAX_JOBS FATBUILD_REMOTE_CACHE FATBUILD_COMPILE_SOCKET
fails=0 n=0
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
T="timeout -k 5 20"

# has_ctl FILE: a control byte other than the newline ending each line
has_ctl() { LC_ALL=C grep -q '[[:cntrl:]]' <(tr -d '\n' <"$1"); }

# expect NAME EXIT 'GLOB' CMD...: exit EXIT, stderr exactly one line matching GLOB, printable.
expect() {
	local name=$1 want=$2 glob=$3
	shift 3
	$T "$@" >stdout 2>stderr
	local rc=$? err bad=
	err=$(cat stderr)
	[ "$rc" = 124 ] && bad="hung (killed after 20 s)"
	[ -z "$bad" ] && [ "$rc" != "$want" ] && bad="exit $rc, want $want"
	# shellcheck disable=SC2053
	[[ $err == $glob ]] || bad="$bad; stderr does not match '$glob'"
	[ "$(wc -l <stderr)" -le 1 ] || bad="$bad; more than one stderr line"
	has_ctl stderr && bad="$bad; control bytes on stderr"
	if [ -n "$bad" ]; then
		bad "$name: ${bad#; }"
		echo "  stderr: $(head -c 600 stderr)"
	else
		ok "$name"
	fi
}
# expect_first NAME EXIT 'GLOB' CMD...: the same for a usage error, whose first line says it
# and whose usage text follows.
expect_first() {
	local name=$1 want=$2 glob=$3
	shift 3
	$T "$@" >stdout 2>stderr
	local rc=$? first
	first=$(head -1 stderr)
	# shellcheck disable=SC2053
	if [ "$rc" = "$want" ] && [[ $first == $glob ]]; then
		ok "$name"
	else
		bad "$name: exit $rc, want $want; first stderr line: $first"
	fi
}
# same NAME FILE COPY: FILE still has COPY's bytes
same() { if cmp -s "$2" "$3"; then ok "$1"; else bad "$1: $2 was changed"; fi; }

# ---- inputs made here ----
cat >k.cu <<'CU'
extern "C" __global__ void k(float *x) { x[0] = 1; }
CU
printf 'int host_fn(void) { return 1; }\n' >host.c
$T "$FB" compile --no-cache --arch-list 8.0 -o k.fatbin k.cu 2>err.txt || {
	echo "fatbuild compile cannot compile a kernel here (no NVRTC?): $(cat err.txt)"
	exit 77
}
command -v ninja >/dev/null && command -v cc >/dev/null || { echo "ninja or cc is missing"; exit 77; }
"$FB" compile --no-cache --rdc --arch-list 8.0 -o r.fatbin k.cu || exit 1
mkfifo fifo.cu fifo.c fifo.h fifo.fatbin ofifo
mkdir dir.cu odir
printf '#include "fifo.h"\n' >inc.cu && cat k.cu >>inc.cu
printf '#include "/dev/zero"\n' >zinc.cu && cat k.cu >>zinc.cu
C="$FB compile --arch-list 8.0"

# ---- nothing but a regular file is read ----
expect compile-fifo-source 1 "fatbuild: fifo.cu: not a regular file (a FIFO)" $C -o out.fatbin fifo.cu
expect compile-devzero-source 1 "fatbuild: /dev/zero: not a regular file (a character device)" $C -o out.fatbin /dev/zero
expect compile-directory-source 1 "fatbuild: dir.cu: not a regular file (a directory)" $C -o out.fatbin dir.cu
expect compile-fifo-header 1 "fatbuild: fifo.h: not a regular file (a FIFO), included by inc.cu" $C -o out.fatbin inc.cu
expect compile-devzero-header 1 "fatbuild: /dev/zero: not a regular file (a character device), included by zinc.cu" \
	$C -o out.fatbin zinc.cu
expect inspect-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO)" "$FB" inspect fifo.fatbin
expect inspect-devzero 1 "fatbuild: /dev/zero: not a regular file (a character device)" "$FB" inspect /dev/zero
expect check-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO): never opened" "$FB" check --arch 8.0 fifo.fatbin
expect size-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO)" "$FB" size fifo.fatbin
expect prune-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO)" "$FB" prune --arch-list 8.0 -o out.fatbin fifo.fatbin
expect extract-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO)" "$FB" extract --arch sm_80 -o out fifo.fatbin
expect diff-fifo 2 "fatbuild: diff: fifo.fatbin: not a regular file (a FIFO)" "$FB" diff fifo.fatbin k.fatbin
expect pack-fifo 1 "fatbuild: pack: fifo.fatbin: not a regular file (a FIFO)" "$FB" pack -o out.fatbin fifo.fatbin
expect embed-fifo 1 "fatbuild: embed: fifo.fatbin: not a regular file (a FIFO)" "$FB" embed -o out.o k.fatbin fifo.fatbin
expect embed-devzero 1 "fatbuild: embed: /dev/zero: not a regular file (a character device)" "$FB" embed -o out.o /dev/zero
expect dlink-fifo 1 "fatbuild: fifo.fatbin: not a regular file (a FIFO)" "$FB" dlink --target sm_80 -o out.fatbin r.fatbin fifo.fatbin
B="$FB build --arch-list 8.0"
expect build-fifo-kernel 1 "fatbuild: build: fifo.cu: not a regular file (a FIFO)" $B -o out.so fifo.cu host.c
expect build-fifo-host 1 "fatbuild: build: fifo.c: not a regular file (a FIFO)" $B -o out.so k.cu fifo.c
# a kernel whose header is a FIFO: the backend scan and the NVRTC edge refuse it, nothing waits
$T $B -o inc.so inc.cu host.c >out.txt 2>&1
rc=$?
if [ $rc != 0 ] && [ $rc != 124 ] && grep -q "fatbuild: $w/fifo.h: not a regular file (a FIFO), included by $w/inc.cu" out.txt; then
	ok build-fifo-header
else
	bad "build-fifo-header: exit $rc"
	tail -5 out.txt
fi

# ---- -o never names an input ----
cp k.cu self.cu && cp k.cu keep.cu && ln self.cu hard.cu && ln -s self.cu sym.cu
expect compile-o-self 2 "fatbuild: compile: -o self.cu is also an input: the output would replace it; write it elsewhere" \
	$C -o self.cu self.cu
same compile-o-self-kept self.cu keep.cu
expect compile-o-dot-self 2 "fatbuild: compile: -o ./self.cu is the input self.cu (the same file): *" $C -o ./self.cu self.cu
expect compile-o-hard-link 2 "fatbuild: compile: -o hard.cu is the input self.cu (the same file): *" $C -o hard.cu self.cu
expect compile-o-symlink 2 "fatbuild: compile: -o sym.cu is the input self.cu (the same file): *" $C -o sym.cu self.cu
expect compile-depfile-self 2 "fatbuild: compile: --depfile self.cu is also an input: *" $C -o out.fatbin --depfile self.cu self.cu
same compile-depfile-self-kept self.cu keep.cu
printf '#define ONE 1\n' >hdr.cuh && cp hdr.cuh hdr.keep
printf '#include "hdr.cuh"\n' >usehdr.cu && cat k.cu >>usehdr.cu
expect compile-o-header 2 "fatbuild: compile: -o hdr.cuh is also an input: *" $C -o hdr.cuh usehdr.cu
same compile-o-header-kept hdr.cuh hdr.keep
mkdir -p per && cp k.cu per/s.fatbin && cp k.cu per.keep
expect compile-o-dir-names-input 2 "fatbuild: compile: output per/s.fatbin is also an input: *" \
	$C -o per/ per/s.fatbin
same compile-o-dir-kept per/s.fatbin per.keep
cp host.c host.keep
expect build-o-host-source 2 "fatbuild: build: -o host.c is also an input: *" $B -o host.c k.cu host.c
same build-o-host-kept host.c host.keep
expect build-o-dot-kernel 2 "fatbuild: build: -o ./k.cu is the input k.cu (the same file): *" $B -o ./k.cu k.cu host.c
# a header a source includes, directly or through another: the saxpy example's -o saxpy.cuh
expect build-o-kernel-header 2 "fatbuild: build: -o hdr.cuh is the header *hdr.cuh, which usehdr.cu includes: *" \
	$B -o hdr.cuh usehdr.cu host.c
same build-o-kernel-header-kept hdr.cuh hdr.keep
mkdir -p inc && printf '#include "deep.h"\n' >inc/top.h && printf '#define DEEP 1\n' >inc/deep.h && cp inc/deep.h deep.keep
printf '#include <top.h>\nint host_fn(void) { return DEEP; }\n' >hosti.c
expect build-o-nested-host-header 2 "fatbuild: build: -o inc/deep.h is the header *inc/deep.h, which hosti.c includes: *" \
	$B -I inc -o inc/deep.h k.cu hosti.c
same build-o-nested-header-kept inc/deep.h deep.keep
cp k.fatbin k.fatbin.keep
expect pack-o-self 2 "fatbuild: pack: -o k.fatbin is also an input: *" "$FB" pack -o k.fatbin k.fatbin@sm_80
expect embed-o-self 2 "fatbuild: embed: -o k.fatbin is also an input: *" "$FB" embed -o k.fatbin k.fatbin
expect extract-o-self 2 "fatbuild: extract: -o k.fatbin is also an input: *" "$FB" extract --arch sm_80 -o k.fatbin k.fatbin
cp r.fatbin r.keep
expect dlink-o-self 2 "fatbuild: dlink: -o r.fatbin is also an input: *" "$FB" dlink --target sm_80 -o r.fatbin r.fatbin
expect prune-o-self 2 "fatbuild: prune: -o k.fatbin is the input; pass --in-place to replace it" \
	"$FB" prune --arch-list 8.0 -o k.fatbin k.fatbin
same inputs-kept k.fatbin k.fatbin.keep
same dlink-input-kept r.fatbin r.keep

# ---- -o never replaces what is not a regular file ----
expect compile-o-fifo 2 "fatbuild: compile: -o ofifo is not a regular file (a FIFO): an output replaces what is at its name; name a file" \
	$C -o ofifo k.cu
expect build-o-fifo 2 "fatbuild: build: -o ofifo is not a regular file (a FIFO): *" $B -o ofifo k.cu host.c
expect pack-o-fifo 2 "fatbuild: pack: -o ofifo is not a regular file (a FIFO): *" "$FB" pack -o ofifo k.fatbin
expect extract-o-fifo 2 "fatbuild: extract: -o ofifo is not a regular file (a FIFO): *" "$FB" extract --arch sm_80 -o ofifo k.fatbin
expect prune-in-place-o-fifo 2 "fatbuild: prune: -o ofifo is not a regular file (a FIFO): *" \
	"$FB" prune --in-place --arch-list 8.0 -o ofifo k.fatbin
expect embed-o-directory 2 "fatbuild: embed: -o odir is not a regular file (a directory): *" "$FB" embed -o odir k.fatbin
expect edge-o-fifo 2 "fatbuild: edge: -o ofifo is not a regular file (a FIFO): *" \
	"$FB" edge -o ofifo --depfile e.d -- true
if [ -p ofifo ] && [ -d odir ]; then ok fifo-and-directory-kept; else bad "fifo-and-directory-kept: $(ls -l ofifo odir)"; fi
if [ "$(id -u)" = 0 ]; then # a device node in a container: sudo fatbuild ... -o /dev/null
	mknod onull c 1 3
	expect compile-o-char-device 2 "fatbuild: compile: -o onull is not a regular file (a character device): *" $C -o onull k.cu
	expect pack-o-char-device 2 "fatbuild: pack: -o onull is not a regular file (a character device): *" "$FB" pack -o onull k.fatbin
	if [ -c onull ]; then ok char-device-kept; else bad "char-device-kept: $(ls -l onull)"; fi
else
	echo "skip -o naming a character device: mknod needs root"
fi

# ---- job counts ----
expect_first compile-j-garbage 2 "fatbuild: compile: invalid -j value 'abc' (a number of jobs, 1 or more)" $C -j abc -o out.fatbin k.cu
expect compile-j-huge 0 "fatbuild: compile: note: -j 999999 capped at 256, the most jobs fatbuild runs at once" \
	$C -j 999999 -o out.fatbin k.cu
expect compile-max-jobs-huge 0 "fatbuild: compile: note: MAX_JOBS=999999 capped at 256, the most jobs fatbuild runs at once" \
	env MAX_JOBS=999999 $C -o out.fatbin k.cu
echo 'extern "C" __global__ void j(float *x) { x[0] = 7; }' >j.cu
# ulimit -n 1024: the usual soft limit, where the server's poll of 1024 jobs failed
(ulimit -n 1024 && MAX_JOBS=999999 $T $B -v -o j.so j.cu host.c) >out.txt 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "via the build's compile server" out.txt && ! grep -q "poll" out.txt &&
	[ "$(grep -c 'capped at 256' out.txt)" = 1 ] && grep -qx "fatbuild: build: note: MAX_JOBS=999999 capped at 256, the most jobs fatbuild runs at once" out.txt; then
	ok build-max-jobs-huge-served
else
	bad "build-max-jobs-huge-served: exit $rc"
	grep -v '^\[' out.txt | tail -6
fi
(ulimit -n 1024 && $T $B -j 999999 -o j.so j.cu host.c) >out.txt 2>&1
rc=$?
if [ $rc = 0 ] && grep -qx "fatbuild: build: note: -j 999999 capped at 256, the most jobs fatbuild runs at once" out.txt; then
	ok build-j-huge
else
	bad "build-j-huge: exit $rc"
	tail -4 out.txt
fi
expect_first build-j-garbage 2 "fatbuild: build: invalid -j value '-3' (a number of jobs, 0 or more)" $B -j -3 -o j.so j.cu

# ---- every message one printable line ----
nl=$'nl\ndir' tab=$'tab\tdir' esc=$'esc\e[31mdir'
mkdir "$nl" "$tab" "$esc"
cp k.cu host.c "$nl/" && cp host.c "$tab/" && cp k.cu "$tab/"$'k\e[1m.cu' && cp k.cu "$esc/"
# printable NAME FILE: no control byte, and every line a fatbuild message or a ninja status line
printable() {
	if has_ctl "$2"; then
		bad "$1: control bytes: $(cat -A "$2" | head -3)"
	elif grep -qvE '^(fatbuild: |\[[0-9]+/[0-9]+\] |ninja: )' "$2"; then
		bad "$1: a line that is not a message: $(grep -vE '^(fatbuild: |\[[0-9]+/[0-9]+\] |ninja: )' "$2" | head -2)"
	else
		ok "$1"
	fi
}
$T $B -o nl.so "$nl/k.cu" "$nl/host.c" >out.txt 2>&1
printable build-newline-path out.txt
# the warning about the path, whole on one line (it was cut at each newline into three)
if grep -q "^fatbuild: warning: $w/nl?dir/k.cu: ninja cannot read a path containing .* back from dependency files" out.txt; then
	ok build-newline-path-warning-whole
else
	bad "build-newline-path-warning-whole: $(head -3 out.txt)"
fi
$T $B -o tab.so "$tab/"$'k\e[1m.cu' "$tab/host.c" >out.txt 2>&1 || bad "build-tab-escape-path: the build failed"
printable build-tab-escape-path out.txt
$T $C -o "$esc/x.fatbin" "$esc/k.cu" "$esc/missing.cu" >out.txt 2>&1
printable compile-escape-path out.txt
expect compile-newline-missing 1 "fatbuild: cannot open nl?dir/missing.cu: No such file or directory" $C -o out.fatbin "$nl/missing.cu"
obj=$'o\nx.o'
printf 'int x;\n' >e.c
FATBUILD_EDGE_LOG=$w/edge.log $T "$FB" edge -o "$obj" --depfile e.d --tool cc -- cc -c -MD -MF e.d -o "$obj" e.c >out.txt 2>&1
printable edge-newline-output out.txt
if [ "$(wc -l <edge.log)" = 1 ] && ! has_ctl edge.log; then ok edge-log-one-line; else bad "edge-log-one-line: $(cat -A edge.log)"; fi

echo "$n cases, $fails failed"
[ $fails = 0 ]
