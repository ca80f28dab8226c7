# --drop-unsupported: one list shared by several toolkits; warnings on stderr.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --arch-list "7.0 7.5 8.0 10.1 11.0" --cuda-version 13.0 --drop-unsupported
run2 $FATBUILD flags --arch-list "7.0 7.5 8.0 10.1 11.0" --cuda-version 12.8 --drop-unsupported
run2 $FATBUILD flags --arch-list "9.0a+PTX" --cuda-version 13.0
