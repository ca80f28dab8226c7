# fatbuild shims DIR: makes DIR and its links (again: kept); a name something else holds makes
# nothing (exit 1); no DIR, two, or an option is usage (exit 2); run through a link with no
# other nvcc on PATH: one line naming PATH, exit 127.
. "$FB_TESTS_DIR/cli/lib.sh"
run $FATBUILD shims a/b
run sh -c 'ls a/b | tr "\n" " "; echo'
run $FATBUILD shims a/b
mkdir taken && : >taken/gcc
run $FATBUILD shims taken
run ls taken
run2 $FATBUILD shims
run2 $FATBUILD shims x y
run2 $FATBUILD shims --frobnicate
run2 $FATBUILD shims -- --odd-dir
run2 env PATH=$PWD/a/b $PWD/a/b/nvcc --version
