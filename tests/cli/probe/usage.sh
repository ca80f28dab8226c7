# --help teaches (stdout, exit 0); bad usage exits 2 (a bad option: one line, no usage).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
# (through files: a pipe that head closes early may stop the writer with SIGPIPE)
$ARCHPROBE --help >help.txt; rc=$?; head -3 help.txt; echo "[exit $rc]"
$ARCHPROBE -h | grep -c 'Exit codes'
$ARCHPROBE --format yaml >out.txt 2>&1; rc=$?; head -2 out.txt; echo "[exit $rc]"
run1 $ARCHPROBE --timeout -1 --format cmake
run1 $ARCHPROBE --timeout abc
run1 $ARCHPROBE --bogus
run1 $ARCHPROBE --format
run1 $ARCHPROBE extra
run ARCHPROBE_TIMEOUT=abc FAKECUDA_DEVICES=8.6 $ARCHPROBE --format cmake
run1 $ARCHPROBE --format nvptx-arch --arch-list 8.6
run $ARCHPROBE --cuda-version 9.9 --format cmake --arch-list 8.6
run $ARCHPROBE --arch-list "8.0 8.6+PTX" --format cmake --cuda-version 13.0
run $ARCHPROBE --arch-list "7.0" --format cmake --cuda-version 13.0
# the hidden helper mode refuses to run outside ap_probe (no result fd) and other protocol versions
run $ARCHPROBE --probe-child=1 3>&-
run $ARCHPROBE --probe-child=9
