# build: the build's compile server is the hidden command `fatbuild __compile-server BUILD_DIR
# JOBS READY_FD` (docs/compile-server.md §1), which only fatbuild build runs: --help lists no
# such command (so neither the man pages nor the completion offer it), bad words are a usage
# error, and `build` no longer takes the server's words.
. "$FB_TESTS_DIR/cli/lib.sh"
echo "listed in --help: $($FATBUILD --help | grep -c 'compile-server')"
run2 $FATBUILD __compile-server
run2 $FATBUILD __compile-server bd 1
run2 $FATBUILD __compile-server bd x -1
run2 $FATBUILD __compile-server bd 1 3x
mkdir -m 700 bd
run2 timeout 20 $FATBUILD __compile-server bd 1 -1
run1 $FATBUILD build --compile-server bd 1 -1
