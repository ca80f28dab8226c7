#!/usr/bin/env bash
# cmdrec.sh: a stand-in compiler that writes down the command a builder runs. Installed as
# c++ and as CUDA_HOME/bin/nvcc of a copy of the toolkit (cmdrec_toolkit) by the command-line
# comparison (cmdline.py). A compile (-c, or a precompiled header's -x c++-header) is logged to
# $CMDREC_LOG, one line per command, its words separated by \x1f, the first word the tool's
# name ($CMDREC_NAME), and answered fast: an empty object from the real C compiler, a depfile
# naming the source. Anything else (a link, --version, -dumpversion, -v) runs the real tool,
# $CMDREC_REAL, as it is.
set -u
real=${CMDREC_REAL:?}
compile=0
out= dep= src=
prev=
for a in "$@"; do
	case $prev in
	-o) out=$a ;;
	-MF) dep=$a ;;
	esac
	case $a in
	-c | c++-header) compile=1 ;;
	*.cpp | *.cu | *.cc | *.cxx | *.h) src=$a ;;
	esac
	prev=$a
done
[ $compile = 1 ] && [ -n "$out" ] || exec "$real" "$@"
# one write of the whole line: compiles that run at once append to the same log
line=${CMDREC_NAME:?}
for a in "$@"; do line=$line$'\x1f'$a; done
printf '%s\n' "$line" >>"${CMDREC_LOG:?}"
case $out in
*.gch | *.pch | *.gch.tmp.* | *.pch.tmp.*) : >"$out" ;;
*) cc -c -x c /dev/null -o "$out" || exit 1 ;;
esac
[ -z "$dep" ] || printf '%s: %s\n' "$out" "$src" >"$dep"
