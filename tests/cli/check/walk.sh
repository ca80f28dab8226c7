# A directory with a loop of symbolic links, a link to a directory above it and one out of the
# tree, a FIFO, a hard link, a file without device code and device code under names that do not
# say so: the links are counted and never followed (the check ends), the FIFO is never opened (a
# reader would block), the hard link is read once, and files are told by their content.
. "$FB_TESTS_DIR/cli/lib.sh"
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a80.ptx
$FATBUILD pack -o k80.fatbin a80.ptx
mkdir -p tree/a/b tree/c
cp k80.fatbin tree/a/b/data.bin
cp a80.ptx tree/c/kernel.txt
ln tree/a/b/data.bin tree/c/again.bin
ln -s .. tree/a/b/up
ln -s loop1 tree/loop2
ln -s loop2 tree/loop1
ln -s "$PWD" tree/out
mkfifo tree/a/fifo
echo 'just text' >tree/readme.txt
printf '\177ELF\001\001\001' >tree/elf32
run timeout 20 $FATBUILD check --arch 8.0,7.5 tree
run timeout 20 $FATBUILD check --arch 8.0 tree/a/fifo
