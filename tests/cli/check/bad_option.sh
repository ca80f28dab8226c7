# check: a bad option is one line naming 'fatbuild check --help', exit 2 (unknown, with the
# option it is closest to; a prefix refused; a missing value). A near-miss --arch item gets the
# spelling it likely meant.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
$FATBUILD pack -o x.fatbin a.ptx
run2 $FATBUILD check --ach 8.0 x.fatbin
run2 $FATBUILD check --arch 8.0 --quite x.fatbin
run2 $FATBUILD check --arch 8.0 --jo 2 x.fatbin
run2 $FATBUILD check x.fatbin --arch
run2 $FATBUILD check --arch 8.O x.fatbin
run2 $FATBUILD check --arch 8.6,sm_9O x.fatbin
run2 $FATBUILD check --arch 8.0 x.fatbin
