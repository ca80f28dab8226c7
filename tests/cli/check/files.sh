# Files given one by one keep a line per file and arch; a file without device code is said and
# does not fail; a missing file, a FIFO and bad usage do.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a80.ptx
printf '.version 8.8\n.target sm_90a\n.address_size 64\n' >a90.ptx
$FATBUILD pack -o k.fatbin a80.ptx a90.ptx
echo 'no device code here' >notes.txt
run2 $FATBUILD check --arch 8.6,9.0 k.fatbin notes.txt
run2 $FATBUILD check --arch 7.5 k.fatbin
run2 $FATBUILD check --arch 12.0 notes.txt
run2 $FATBUILD check --arch 9.0 missing.so
mkfifo p
run2 timeout 20 $FATBUILD check --arch 9.0 p
run2 $FATBUILD check --arch 9.0 --format yaml k.fatbin
run2 $FATBUILD check k.fatbin
run2 $FATBUILD check --arch 9.0
run2 $FATBUILD check --arch 9.0 -j 0 k.fatbin
