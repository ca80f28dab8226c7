# edge: a bad option is one line naming 'fatbuild edge --help', exit 2 (unknown, with the option
# it is closest to; a missing value).
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD edge --depfil x.d -o x.o -- cc -c x.c
run2 $FATBUILD edge -o
