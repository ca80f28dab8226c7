# A wheel (zip: a nested directory, a dist-info whose METADATA names it otherwise than its file
# name does, a library built here with a .nv_fatbin, a fatbin file, a text file, a zip inside
# it) and an sdist (tar.gz, PKG-INFO), each read in place: the report names the distributions
# from their metadata, finds the device code by content under any name, counts what holds none,
# and fails (exit 1) on 12.0, where the arch-specific PTX of the library cannot run.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 8.8\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n' >a90.ptx
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a80.ptx
$FATBUILD pack -o k90a.fatbin a90.ptx
$FATBUILD pack -o k80.fatbin a80.ptx
$FATBUILD embed -o k.o --symbol kernels k90a.fatbin
cc -shared -o libdemo.so k.o
mkdir -p w/demo/kernels/deep w/Demo_Pkg-1.0.dist-info s/demo-1.0/src
cp libdemo.so w/demo/_C.so
cp k80.fatbin w/demo/kernels/deep/table.bin
printf 'Metadata-Version: 2.1\nName: Demo-Pkg\nVersion: 1.0\n\nA demo.\n' >w/Demo_Pkg-1.0.dist-info/METADATA
printf 'demo/_C.so,,\n' >w/Demo_Pkg-1.0.dist-info/RECORD
echo 'print("hi")' >w/demo/__init__.py
(cd w && python3 -m zipfile -c inner.zip demo/__init__.py && python3 -m zipfile -c ../demo_pkg-1.0-cp311-cp311-linux_x86_64.whl demo Demo_Pkg-1.0.dist-info inner.zip)
printf 'Metadata-Version: 2.1\nName: demo-src\nVersion: 0.9\n' >s/demo-1.0/PKG-INFO
cp k80.fatbin s/demo-1.0/src/prebuilt
echo 'int main(void) { return 0; }' >s/demo-1.0/src/main.c
tar -C s -czf demo_src-0.9.tar.gz demo-1.0
run $FATBUILD check --arch 9.0,12.0 demo_pkg-1.0-cp311-cp311-linux_x86_64.whl demo_src-0.9.tar.gz
run $FATBUILD check --arch 9.0,12.0 --quiet demo_pkg-1.0-cp311-cp311-linux_x86_64.whl demo_src-0.9.tar.gz
# not an archive after all: a gzip'ed text given by name is an error, found in a directory it is a plain file
echo hello | gzip >notar.gz
run $FATBUILD check --arch 9.0 notar.gz
mkdir d && cp notar.gz d/
run $FATBUILD check --arch 9.0 d
