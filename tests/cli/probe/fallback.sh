# ARCHPROBE_ARCHS replaces probing; --fallback / ARCHPROBE_FALLBACK turn failures into a list
# with exit 0 and a reason on stderr; --strict keeps the failure (docs/probe.md §8 (11)).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
run ARCHPROBE_ARCHS="8.6 9.0" ARCHPROBE_LIBCUDA=/nonexistent $ARCHPROBE --cuda-version 13.0
run ARCHPROBE_ARCHS="86;120" $ARCHPROBE --cuda-version 13.0 --format cmake
run ARCHPROBE_ARCHS="8.6" $ARCHPROBE --cuda-version 13.0 --format json
run ARCHPROBE_ARCHS="banana" $ARCHPROBE --cuda-version 13.0 --format cmake
for st in ARCHPROBE_LIBCUDA=/nonexistent FAKECUDA_INIT=100 FAKECUDA_INIT=999 FAKECUDA_DEVICES=; do
	run $st $ARCHPROBE --cuda-version 13.0 --format cmake --fallback "8.0;9.0"
	run $st $ARCHPROBE --cuda-version 13.0 --format cmake --fallback "8.0;9.0" --strict
done
run ARCHPROBE_LIBCUDA=/nonexistent ARCHPROBE_FALLBACK=all-major $ARCHPROBE --cuda-version 13.0 --format torch
run ARCHPROBE_LIBCUDA=/nonexistent $ARCHPROBE --cuda-version 13.0 --fallback 8.6 --format json
run ARCHPROBE_LIBCUDA=/nonexistent $ARCHPROBE --cuda-version 13.0 --fallback all-major
run ARCHPROBE_LIBCUDA=/nonexistent $ARCHPROBE --cuda-version 13.0 --fallback bogus --format cmake
# a working probe ignores the fallback
run FAKECUDA_DEVICES=8.6 $ARCHPROBE --cuda-version 13.0 --format cmake --fallback 9.0
