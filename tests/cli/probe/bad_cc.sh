# A driver that answers a compute capability no GPU has (minor > 9, major < 1 or > 99, an
# overflowing number): the device is left out like one whose query failed, never rounded into
# another arch (8.12 is not 9.2); every device bad is a driver error (5). Found while writing
# fuzz_probe: 8.12 became 9.2, 8.-3 became 7.7, and 2147483647.5 overflowed major * 10.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
run FAKECUDA_DEVICES=8.6,8.12 $ARCHPROBE --cuda-version 13.0
run FAKECUDA_DEVICES=8.6,8.12 $ARCHPROBE --cuda-version 13.0 --format cmake --strict
run FAKECUDA_DEVICES=8.6,0.5 $ARCHPROBE --cuda-version 13.0 --format json --silent
run FAKECUDA_DEVICES=8.12 $ARCHPROBE --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=8.-3 $ARCHPROBE --arch-list native --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=2147483647.5 $ARCHPROBE --arch-list auto --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=-1.0 $ARCHPROBE --format nvptx-arch
run FAKECUDA_DEVICES=9.0,100.0 $ARCHPROBE --format nvcc-query
run FAKECUDA_DEVICES=9.0,8.12 $FATBUILD flags --arch-list native --cuda-version 13.0 --format cmake
# the left-out device is reported on every path that probes, --strict makes it an error
run FAKECUDA_DEVICES=9.0,8.12 $ARCHPROBE --arch-list native --cuda-version 13.0 --format cmake
run FAKECUDA_DEVICES=9.0,8.12 $ARCHPROBE --arch-list native --cuda-version 13.0 --format cmake --strict
run FAKECUDA_DEVICES=9.0,8.6 FAKECUDA_FAIL='cuDeviceGetAttribute@1#75:999' $FATBUILD flags --arch-list auto --cuda-version 13.0 --format cmake
# fatbuild check --arch native: a device whose query failed or whose CC is impossible is left
# out with the warning (8.12 is not checked as 9.2, nor a failed query as 0.0)
printf '.version 9.0\n.target sm_80\n.address_size 64\n' >a.ptx
$FATBUILD pack -o x.fatbin a.ptx
run FAKECUDA_DEVICES=8.6,8.12 $FATBUILD check --arch native x.fatbin
run FAKECUDA_DEVICES=8.6,9.0 FAKECUDA_FAIL='cuDeviceGetAttribute@1#75:999' $FATBUILD check --arch native x.fatbin
run FAKECUDA_DEVICES=8.12 $FATBUILD check --arch native x.fatbin
