# build: --help teaches; bad usage exits 2 (a bad option in one line, without the usage); bad
# input says what; a remote executor that is not a grpc:// URL (option or environment) and bad
# remote-execution values are usage errors before anything runs.
. "$FB_TESTS_DIR/cli/lib.sh"
$FATBUILD build --help | head -n 1
run1 $FATBUILD build -o x.so
run1 $FATBUILD build k.cu
run1 $FATBUILD build --backend clang -o x.so k.cu
run1 $FATBUILD build --frobnicate -o x.so k.cu
$FATBUILD build --frobnicate -o x.so k.cu 2>&1 >/dev/null | grep -c '^usage: fatbuild build'
run1 $FATBUILD build -o x.so nosuch.cu
touch k.f90 k.cu
run1 $FATBUILD build -o x.so k.f90
run1 $FATBUILD build --arch-list "8.0 banana" -o x.so k.cu
run1 FATBUILD_NINJA=/nonexistent/ninja $FATBUILD build --arch-list 8.0 -o x.so k.cu
run1 $FATBUILD build --remote-exec http://user:secret@farm:8980 -o x.so k.cu
run1 FATBUILD_REMOTE_EXECUTOR=https://farm $FATBUILD build -o x.so k.cu
run1 $FATBUILD build --remote-exec-property fbtest -o x.so k.cu
run1 $FATBUILD build --remote-jobs 0 -o x.so k.cu
run1 $FATBUILD build --remote-exec-timeout 1.5 -o x.so k.cu
