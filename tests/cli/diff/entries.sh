# diff: identical files, one changed PTX entry, an entry only in B, the same entries in a
# different host wrapper, and usage errors.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
printf '.version 8.8\n.target sm_90a\n.address_size 64\n' >b.ptx
printf '.version 8.8\n.target sm_90a\n.address_size 64\n// changed\n' >c.ptx
$FATBUILD pack -o x.fatbin --compress none a.ptx b.ptx
$FATBUILD pack -o y.fatbin --compress none a.ptx c.ptx
$FATBUILD pack -o z.fatbin --compress none a.ptx b.ptx c.ptx
cp x.fatbin x2.fatbin
run2 $FATBUILD diff x.fatbin x2.fatbin
run2 $FATBUILD diff x.fatbin y.fatbin
run2 $FATBUILD diff -q x.fatbin z.fatbin
run2 $FATBUILD diff x.fatbin z.fatbin
$FATBUILD embed -o x.o x.fatbin
$FATBUILD embed --hidden -o xh.o x.fatbin
run2 $FATBUILD diff x.o xh.o | sed 's/first at byte [0-9]* of [0-9]*\/[0-9]*/first at byte N/'
run2 $FATBUILD diff x.fatbin
run2 $FATBUILD diff x.fatbin missing.fatbin
