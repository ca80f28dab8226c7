# flags and --version: a bad option is one line naming the command's help, exit 2 (unknown, with
# the option it is closest to; a prefix refused; a missing value). Near-miss items get the
# spelling they likely meant: a typo, a wrong case, a keyword cut short; a far one gets none.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --arch-lsit 8.0 --cuda-version 13.0
run2 $FATBUILD flags --drop --arch-list 8.0 --cuda-version 13.0
run2 $FATBUILD flags --cuda-version 13.0 --arch-list
run2 $FATBUILD flags --arch-list 8.O --cuda-version 13.0
run2 $FATBUILD flags --arch-list "8.6+PXT" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "all-maj" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "8.0 banana" --cuda-version 13.0
run2 $FATBUILD --version --bogus
