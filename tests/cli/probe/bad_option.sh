# archprobe: a bad option is one line naming 'archprobe --help', exit 2 (unknown, with the option
# it is closest to; a prefix refused; a missing value; a value for an option without one). A
# near-miss --arch-list item gets the spelling it likely meant.
. "$FB_TESTS_DIR/cli/lib.sh"
run2 $ARCHPROBE --arch-lsit 8.0 --cuda-version 13.0
run2 $ARCHPROBE --frobnicate
run2 $ARCHPROBE --form cmake --arch-list 8.0 --cuda-version 13.0
run2 $ARCHPROBE --format cmake --arch-list 8.0 --cuda-version 13.0
run2 $ARCHPROBE --arch-list 8.0 --format
run2 $ARCHPROBE --strict=yes
run2 $ARCHPROBE -x
run2 $ARCHPROBE --arch-list 8.O --format cmake --cuda-version 13.0
run2 $ARCHPROBE --arch-list "8.6;sm_9O" --format cmake --cuda-version 13.0
run2 $ARCHPROBE --arch-list "8.6 Hoper" --format cmake --cuda-version 13.0
