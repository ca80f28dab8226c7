# Bad usage: exit 2, the synopsis on stderr (a bad option: its one line), one case after another.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $FATBUILD compile --arch-list 8.0 k.cu
run2 $FATBUILD compile -o x.fatbin
run2 $FATBUILD compile -j 0 -o x.fatbin k.cu
run2 $FATBUILD compile --std c++98 -o x.fatbin k.cu
run2 $FATBUILD compile --bogus -o x.fatbin k.cu
run2 $FATBUILD compile -o x.fatbin k.cu -Xnvrtc
run2 $FATBUILD compile --arch-list 7.0 -o x.fatbin k.cu
touch k.cu
run2 $FATBUILD compile --arch-list 8.0 -Xnvrtc --no-such-nvrtc-option -o x.fatbin k.cu
run2 $FATBUILD compile --remote-exec http://user:secret@farm:8980 -o x.fatbin k.cu
run2 $FATBUILD cache
run2 $FATBUILD cache frobnicate
