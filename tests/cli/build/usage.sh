# build: --help teaches; bad usage prints usage to stderr and exits 2; bad input says what.
try() { "$@" >out 2>err; echo "exit $?: $(head -n 1 err)"; }
$FATBUILD build --help | head -n 1
try $FATBUILD build -o x.so
try $FATBUILD build k.cu
try $FATBUILD build --backend clang -o x.so k.cu
try $FATBUILD build --frobnicate -o x.so k.cu
grep -c '^usage: fatbuild build' err
try $FATBUILD build -o x.so nosuch.cu
touch k.f90 k.cu
try $FATBUILD build -o x.so k.f90
try $FATBUILD build --arch-list "8.0 banana" -o x.so k.cu
FATBUILD_NINJA=/nonexistent/ninja try $FATBUILD build --arch-list 8.0 -o x.so k.cu
