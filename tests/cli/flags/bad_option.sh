# flags and --version: a bad option is one line naming the command's help, exit 2 (unknown, with
# the option it is closest to; a prefix refused; a missing value).
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --arch-lsit 8.0 --cuda-version 13.0
run2 $FATBUILD flags --drop --arch-list 8.0 --cuda-version 13.0
run2 $FATBUILD flags --cuda-version 13.0 --arch-list
run2 $FATBUILD --version --bogus
