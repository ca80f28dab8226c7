# Every token form of the one parser, in the nvcc format (built-in CUDA 13.0 table).
. "$FB_TESTS_DIR/cli/lib.sh"
for l in "7.5 8.0;8.6+PTX" "Ampere" "Ampere+PTX" "Hopper 9.0a" "12.0 8.6 10.0" "8.0,8.6" "8.0  8.6;" \
	"10.0f+PTX" "80-real;86" "86-virtual 90a-real" "sm_86 compute_86 sm_90a" "blackwell" "Blackwell+Tegra" \
	"ada+ptx" "all" "all-major" "$(printf '8.0\t8.6\n9.0')"; do
	run2 $FATBUILD flags --arch-list "$l" --format list --cuda-version 13.0
	run2 $FATBUILD flags --arch-list "$l" --cuda-version 13.0
done
