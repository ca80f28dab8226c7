# Unparseable items: exit 2, the item, its position and what is accepted on stderr, nothing on stdout.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD flags --arch-list "8.0 8.6 86x" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "Turing+Tegra" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "Ampere+PTX+PTX" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "OFF" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "8.0;sm_80+PTX" --cuda-version 13.0
run2 $FATBUILD flags --arch-list "9.0A" --cuda-version 13.0
