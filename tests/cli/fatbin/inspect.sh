# pack two PTX images (zstd) and inspect the container: table and json; check; extract.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
printf '.version 8.8\n.target sm_90a\n.address_size 64\n' >b.ptx
run2 $FATBUILD pack -o x.fatbin --ident demo --cmdline -O3 a.ptx b.ptx
run2 $FATBUILD inspect x.fatbin
run2 $FATBUILD inspect --format json x.fatbin
run2 $FATBUILD check --arch 8.6,9.0,7.5 x.fatbin
