# A bad option of build is one line naming 'fatbuild build --help' (not the 100 lines of it),
# exit 2: unknown (with the option it is closest to, when one is), a prefix refused, a missing
# value, a "--"; so is one of env or of the options-only form (which is 'fatbuild flags'), and
# an unknown command; so is a bad value of an option that takes a word of a fixed set (the
# words, and the one it is closest to when one is). A near-miss arch item gets the spelling it
# likely meant.
. "$FB_TESTS_DIR/cli/lib.sh"
# a prefix taken as its option would compile or build: here, never in the user's cache
export FATBUILD_CACHE_DIR=$PWD/cache FATBUILD_BUILD_DIR=$PWD/builds
touch k.cu
run2 $FATBUILD build --arch-lsit 8.0 -o x.so k.cu
run2 $FATBUILD build --frobnicate -o x.so k.cu
run2 $FATBUILD build --torc -o x.so k.cu
run2 $FATBUILD build -o x.so k.cu --build-dir
run2 $FATBUILD build -o x.so -- k.cu
run2 $FATBUILD build --backend clang -o x.so k.cu
run2 $FATBUILD build --backend nvrt -o x.so k.cu
run2 $FATBUILD build --remote-cache-mode raed -o x.so k.cu
run2 $FATBUILD build --arch-list "8.0 8.O" -o x.so k.cu
run2 $FATBUILD env --include-path
run2 $FATBUILD biuld -o x.so
run2 $FATBUILD --arch-lsit 8.0
