# Device code the CUDA runtime does not load itself (docs/check-environment.md §3), made here:
# a library whose container lives in .ldata (objcopy renames .nv_fatbin, as cuFFT keeps its
# own), one whose only .nv_fatbin module defines no kernel beside that (cuFFT's one container),
# one that exports NVRTC's getArchBuiltins<SM> (libnvrtc-builtins), a relocatable object and an
# ar archive of relocatable device code (device-link inputs), a library of that code alone (the
# runtime cannot load it: other means), and a library with no device code.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 8.8\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\nret;\n}\n' >k.ptx
printf '.version 8.8\n.target sm_75\n.address_size 64\n' >empty.ptx
$FATBUILD pack -o k.fatbin k.ptx
$FATBUILD pack -o empty.fatbin empty.ptx
$FATBUILD embed -o k.o --symbol kernels k.fatbin
$FATBUILD embed -o empty.o --symbol helper empty.fatbin
objcopy --rename-section .nv_fatbin=.ldata --remove-section .nvFatBinSegment --remove-section .rela.nvFatBinSegment k.o own.o
cc -shared -o libown.so own.o
cc -shared -o libownempty.so own.o empty.o
printf 'int __nvrtc_builtins__13_0_getArchBuiltins80(void) { return 0; }\nint __nvrtc_builtins__13_0_getArchBuiltins90(void) { return 0; }\n' >b.c
cc -shared -fPIC -o libnvrtc-builtins.so b.c
echo 'int f(void) { return 1; }' >plain.c
cc -shared -fPIC -o libplain.so plain.c
objcopy --rename-section .nv_fatbin=__nv_relfatbin k.o rel.o
ar rcs librel.a rel.o
cc -shared -o librelonly.so rel.o
mkdir lib
mv libown.so libownempty.so libnvrtc-builtins.so libplain.so rel.o librel.a librelonly.so lib/
run $FATBUILD check --arch 7.5,9.0 lib
run $FATBUILD check --arch 7.5 lib/libownempty.so lib/libplain.so
