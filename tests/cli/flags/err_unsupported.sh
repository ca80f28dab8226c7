# Arches, suffixes and combinations the toolkit refuses: exit 2, nothing on stdout.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --arch-list "7.0" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "8.0 10.1" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "8.0a" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "10.0f" --cuda-version 12.8
run2 $FATBUILD flags --arch-list "100;100f" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "7.0 7.2" --cuda-version 13.0 --drop-unsupported
run2 $FATBUILD flags --arch-list "compute_86" --format torch --cuda-version 13.0
run2 $FATBUILD flags --arch-list "86-virtual" --format clang --cuda-version 13.0
run2 $FATBUILD flags --arch-list "12.0" --cuda-version 12.4
