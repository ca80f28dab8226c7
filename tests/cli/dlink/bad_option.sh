# dlink: a bad option is one line naming 'fatbuild dlink --help', exit 2 (unknown, with the
# option it is closest to; a missing value).
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD dlink --targt sm_86 -o x.fatbin k.fatbin
run2 $FATBUILD dlink -o x.fatbin k.fatbin --target
run2 $FATBUILD dlink --frobnicate --target sm_86 -o x.fatbin k.fatbin
