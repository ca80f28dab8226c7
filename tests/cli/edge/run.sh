# fatbuild edge: a compile run through the compile cache. The first run compiles; the second,
# with the object and depfile removed, is a hit (FATBUILD_EDGE_LOG says so) that writes the same
# object and a depfile naming the same files; a changed header is a miss; a failing command's
# exit status comes back; usage errors say what is missing.
. "$FB_TESTS_DIR/cli/lib.sh"
export FATBUILD_CACHE_DIR=$PWD/cache FATBUILD_EDGE_LOG=$PWD/edges
unset FATBUILD_REMOTE_CACHE
printf '#include "h.h"\nint f(void) { return H; }\n' >a.c
printf '#define H 7\n' >h.h
run $FATBUILD edge -o a.o --depfile a.d --base "$PWD/b" -- cc -c -MD -MF a.d -o a.o a.c
cp a.o first.o
rm -f a.o a.d
run $FATBUILD edge -o a.o --depfile a.d --base "$PWD/b" -- cc -c -MD -MF a.d -o a.o a.c
run cmp first.o a.o
run sh -c "grep -v stdc-predef a.d | sed 's#$PWD#PWD#g'"
printf '#define H 8\n' >h.h
run $FATBUILD edge -o a.o --depfile a.d --base "$PWD/b" -- cc -c -MD -MF a.d -o a.o a.c
run $FATBUILD edge -o b.o --depfile b.d -- sh -c 'exit 3'
sed "s#$PWD#PWD#g" edges
run $FATBUILD edge -o a.o -- cc
run1 $FATBUILD edge --bogus x
