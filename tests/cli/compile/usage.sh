# Bad usage: usage on stderr, exit 2, one case after another.
$FATBUILD compile --arch-list 8.0 k.cu; echo "rc=$?"
$FATBUILD compile -o x.fatbin; echo "rc=$?"
$FATBUILD compile -j 0 -o x.fatbin k.cu; echo "rc=$?"
$FATBUILD compile --std c++98 -o x.fatbin k.cu; echo "rc=$?"
$FATBUILD compile --bogus -o x.fatbin k.cu; echo "rc=$?"
$FATBUILD compile -o x.fatbin k.cu -Xnvrtc; echo "rc=$?"
$FATBUILD compile --arch-list 7.0 -o x.fatbin k.cu; echo "rc=$?"
touch k.cu
$FATBUILD compile --arch-list 8.0 -Xnvrtc --no-such-nvrtc-option -o x.fatbin k.cu; echo "rc=$?"
$FATBUILD cache; echo "rc=$?"
$FATBUILD cache frobnicate; echo "rc=$?"
