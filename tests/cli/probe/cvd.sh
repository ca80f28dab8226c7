# CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER (docs/probe.md §8 (8)): passed to the driver untouched
# (the fake emulates the documented driver rules) and reported verbatim.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6,9.0,12.0 FAKECUDA_DEV2='rank=-1;pci=0000:81:00.0'
for cvd in 1 2,0 GPU-fa4ec0da-0000-4000-8000-000000000001 GPU-fa4ec0da-0000-4000-8000-00000000000 \
	GPU-fa4e 0,2,-1,1 0,7,1 abc 0,0 ""; do
	run CUDA_VISIBLE_DEVICES=$cvd $ARCHPROBE --format nvptx-arch
done
run CUDA_VISIBLE_DEVICES= $ARCHPROBE --format cmake
run CUDA_VISIBLE_DEVICES=1,0 CUDA_DEVICE_ORDER=PCI_BUS_ID $ARCHPROBE --format nvptx-arch
run CUDA_VISIBLE_DEVICES=1,0 CUDA_DEVICE_ORDER=PCI_BUS_ID $ARCHPROBE --cuda-version 13.0
run CUDA_VISIBLE_DEVICES='0, 1' $ARCHPROBE --format json --cuda-version 13.0
