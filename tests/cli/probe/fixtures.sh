# One device, duplicates, and four devices out of order (numeric sort: 100 and 120 after 90;
# nvptx-arch keeps enumeration order and duplicates).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
for devs in 8.6 8.6,8.6 12.0,8.0,10.0,8.6 7.5,9.0,9.0,12.1; do
	echo "## FAKECUDA_DEVICES=$devs"
	for f in cmake torch list clang nvptx-arch; do
		run FAKECUDA_DEVICES=$devs $ARCHPROBE --format $f --cuda-version 13.0
	done
	run FAKECUDA_DEVICES=$devs $ARCHPROBE --format nvcc-query
	echo
done
