# Bad usage: exit 2 with the synopsis on stderr.
run() { echo "+ fatbuild $*" >&2; out=$($FATBUILD "$@"); echo "exit=$? stdout=[$out]"; }
run flags --format yaml --arch-list 8.0
run flags --cuda-version 13 --arch-list 8.0
run flags --cuda-version 10.2 --arch-list 8.0
run flags --arch-list 8.0 extra
run flags --arch-list
$FATBUILD flags --frobnicate
