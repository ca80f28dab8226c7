# --format json: one document with every group, library and verdict, the summary per device
# and the exit code, for CI.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 8.8\n.target sm_90a\n.address_size 64\n' >a90.ptx
$FATBUILD pack -o k.fatbin a90.ptx
mkdir -p site/demo site/demo-2.0.dist-info
cp k.fatbin site/demo/k.fatbin
printf 'Name: demo\nVersion: 2.0\n' >site/demo-2.0.dist-info/METADATA
printf 'demo/k.fatbin,,\n"demo/a,b.txt",,\n' >site/demo-2.0.dist-info/RECORD
echo x >'site/demo/a,b.txt'
run $FATBUILD check --arch 9.0,12.0 --format json site
