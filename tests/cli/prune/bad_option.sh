# prune and size: a bad option is one line naming the command's help, exit 2 (unknown, with the
# option it is closest to; a prefix refused; nvcc's -arch without its value). A near-miss arch
# item gets the spelling it likely meant.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
$FATBUILD pack -o x.fatbin a.ptx
run2 $FATBUILD prune --arch-lsit 8.0 -o y.fatbin x.fatbin
run2 $FATBUILD prune --arch-list 8.0 --dry x.fatbin
run2 $FATBUILD prune x.fatbin -o y.fatbin -arch
run2 $FATBUILD prune --arch-list 8.O -o y.fatbin x.fatbin
run2 $FATBUILD size --zstd 3 x.fatbin
run2 $FATBUILD size --arch-list sm_8O x.fatbin
