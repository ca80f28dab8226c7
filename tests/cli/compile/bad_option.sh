# A bad option is one line on stderr that names the command's help, exit 2, nothing more: an
# unknown option (with the option it is closest to, when one is), a prefix of an option (which
# getopt would take: refused), a long option spelled with one dash, a missing value, a value for
# an option that takes none; a bad value of an option that takes a word of a fixed set (the
# words, and the one it is closest to when one is). A near-miss arch item gets the spelling it
# likely meant.
. "$FB_TESTS_DIR/cli/lib.sh"
# a prefix taken as its option would compile or build: here, never in the user's cache
export FATBUILD_CACHE_DIR=$PWD/cache FATBUILD_BUILD_DIR=$PWD/builds
touch k.cu
run2 $FATBUILD compile --arch-lsit 8.0 -o x.fatbin k.cu
run2 $FATBUILD compile --frobnicate -o x.fatbin k.cu
run2 $FATBUILD compile --arch 8.0 -o x.fatbin k.cu
run2 $FATBUILD compile --no-cach -o x.fatbin k.cu
run2 $FATBUILD compile -lineinfo -o x.fatbin k.cu
run2 $FATBUILD compile -o x.fatbin k.cu --arch-list
run2 $FATBUILD compile k.cu -o
run2 $FATBUILD compile -o x.fatbin k.cu -Xnvrtc
run2 $FATBUILD compile --rdc=yes -o x.fatbin k.cu
run2 $FATBUILD compile --compress zstdd -o x.fatbin k.cu
run2 $FATBUILD compile --remote-cache-mode write -o x.fatbin k.cu
run2 $FATBUILD compile --arch-list 8.O -o x.fatbin k.cu
run2 $FATBUILD compile --arch-list "8.0 9.0A" -o x.fatbin k.cu
run2 $FATBUILD cache trim --max 5G
run2 $FATBUILD cache trim --max-size
run2 $FATBUILD cache --hepl
