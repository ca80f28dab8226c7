# The failure statuses and their exit codes and advice (docs/probe.md §8 (1), (3), (4), (5)).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6
run ARCHPROBE_LIBCUDA=/nonexistent/libcuda.so.1 $ARCHPROBE
run $ARCHPROBE --libcuda /nonexistent/libcuda.so.1 --format cmake
# a shared library that is not a CUDA driver (zlib: present everywhere)
LIBZ=$(for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64 /lib /usr/lib; do
	[ -e $d/libz.so.1 ] && echo $d/libz.so.1 && break; done)
run ARCHPROBE_LIBCUDA=$LIBZ $ARCHPROBE --format cmake | sed "s|$LIBZ|LIBZ|g"
# no device: cuInit 100, and a driver that counts 0 devices
run FAKECUDA_INIT=100 $ARCHPROBE --format cmake
run FAKECUDA_DEVICES= $ARCHPROBE --format cmake
# driver errors with specific advice
for rc in 3 803 804 999 46 12345; do
	run FAKECUDA_INIT=$rc $ARCHPROBE --format list
done
# the device count failing after a good cuInit
run FAKECUDA_FAIL=cuDeviceGetCount:999 $ARCHPROBE --format list
# JSON still describes a failure, with the CUresult name from archprobe's own table
run FAKECUDA_INIT=803 $ARCHPROBE --format json
