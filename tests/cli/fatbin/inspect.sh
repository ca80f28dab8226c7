# pack two PTX images (zstd) and inspect the container: table and json; check; extract.
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
printf '.version 8.8\n.target sm_90a\n.address_size 64\n' >b.ptx
echo "+ fatbuild pack -o x.fatbin --ident demo --cmdline -O3 a.ptx b.ptx" >&2
$FATBUILD pack -o x.fatbin --ident demo --cmdline -O3 a.ptx b.ptx
echo "+ fatbuild inspect x.fatbin" >&2
$FATBUILD inspect x.fatbin
echo "+ fatbuild inspect --format json x.fatbin" >&2
$FATBUILD inspect --format json x.fatbin
echo "+ fatbuild check --arch 8.6,9.0,7.5 x.fatbin" >&2
$FATBUILD check --arch 8.6,9.0,7.5 x.fatbin
