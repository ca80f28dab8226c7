# diff: a bad option is one line naming 'fatbuild diff --help', exit 2.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD diff -x a.fatbin b.fatbin
run2 $FATBUILD diff --quiet a.fatbin b.fatbin
