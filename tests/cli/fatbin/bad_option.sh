# inspect, pack, extract and embed: a bad option is one line naming the command's help, exit 2:
# a prefix (--kernel for --kernels) is refused, not taken; unknown, one-dash and missing-value
# options; a short option inside a cluster.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
$FATBUILD pack -o x.fatbin a.ptx
run2 $FATBUILD inspect --kernel x.fatbin
run2 $FATBUILD inspect --kernels x.fatbin
run2 $FATBUILD inspect -kernels x.fatbin
run2 $FATBUILD inspect --formt json x.fatbin
run2 $FATBUILD inspect -kZ x.fatbin
run2 $FATBUILD inspect x.fatbin --format
run2 $FATBUILD pack --ouput y.fatbin a.ptx
run2 $FATBUILD pack --compress=zstd --debug=1 -o y.fatbin a.ptx
run2 $FATBUILD extract --arch
run2 $FATBUILD extract --arc sm_80 -o y.ptx x.fatbin
run2 $FATBUILD embed --symbl k -o x.o x.fatbin
run2 $FATBUILD embed x.fatbin -o
