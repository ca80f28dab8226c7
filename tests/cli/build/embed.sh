# embed: usage, errors, and a merge + embed round trip checked by inspect.
. "$FB_TESTS_DIR/cli/lib.sh"
$FATBUILD embed --help | head -n 1
run1 $FATBUILD embed k.fatbin
echo "not a fatbin" >junk.fatbin
run $FATBUILD embed junk.fatbin -o j.o
run $FATBUILD embed nosuch.fatbin -o j.o
printf '.version 9.0\n.target sm_80\n.address_size 64\n.visible .entry k() { ret; }\n' >k80.ptx
sed 's/sm_80/sm_90/' k80.ptx >k90.ptx
$FATBUILD pack -o a.fatbin k80.ptx
$FATBUILD pack -o b.fatbin k90.ptx
run2 $FATBUILD embed --merge a.fatbin b.fatbin -o ab.fatbin
$FATBUILD inspect ab.fatbin | awk '/container/ { c++ } $2 == "ptx" { print c, $3 }'
run2 $FATBUILD embed ab.fatbin a.fatbin -o k.o --symbol my_fatbin
nm k.o
cc -shared k.o -o libk.so && $FATBUILD inspect libk.so | awk '/container/ { c++ } $2 == "ptx" { print c, $3 }'
run $FATBUILD embed a.fatbin -o k2.o --symbol "bad name"
