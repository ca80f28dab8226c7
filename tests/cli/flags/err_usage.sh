# Bad usage: exit 2 with the synopsis on stderr (a bad option: its one line, naming the help).
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --format yaml --arch-list 8.0
run2 $FATBUILD flags --cuda-version 13 --arch-list 8.0
run2 $FATBUILD flags --cuda-version 10.2 --arch-list 8.0
run2 $FATBUILD flags --arch-list 8.0 extra
run2 $FATBUILD flags --arch-list
run2 $FATBUILD flags --frobnicate
