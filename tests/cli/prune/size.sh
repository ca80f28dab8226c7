# size and prune on a packed PTX container: the estimate, the prune, the guard rails; the last
# command (a list no image fits) fails with exit 1.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
printf '.version 9.0\n.target sm_90\n.address_size 64\n' >b.ptx
$FATBUILD pack -o x.fatbin a.ptx b.ptx
run2 $FATBUILD size --zstd-level 0 --arch-list 8.6 x.fatbin
run2 $FATBUILD prune -arch sm_86 x.fatbin -o y.fatbin
run2 $FATBUILD inspect y.fatbin
run2 $FATBUILD prune --arch-list 9.0 x.fatbin -o x.fatbin
runhead 2 $FATBUILD prune --arch-list 9.0 x.fatbin
run2 $FATBUILD prune --arch-list 7.5 x.fatbin -o z.fatbin
