# The opt-in cache (docs/probe.md §8 (12)): a hit even when the (fake) driver would now answer
# differently; a miss when the key changes (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER,
# LD_LIBRARY_PATH, the library file's mtime, another library); failures are never stored.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
cp "$FAKE" libcuda.so.1
export ARCHPROBE_LIBCUDA=$PWD/libcuda.so.1 ARCHPROBE_CACHE=$PWD/probe.cache
probe() { env "$@" $ARCHPROBE --format list --cuda-version 13.0 -v 2>&1 | grep -v 'trace: [^c]' | mask; }
echo "## first run: miss, stored"; probe FAKECUDA_DEVICES=8.6
echo "## the driver changed its answer, the key did not: hit"; probe FAKECUDA_DEVICES=9.0
echo "## CUDA_VISIBLE_DEVICES changes the key"; probe FAKECUDA_DEVICES=9.0 CUDA_VISIBLE_DEVICES=0
echo "## same again: hit"; probe FAKECUDA_DEVICES=7.5 CUDA_VISIBLE_DEVICES=0
echo "## CUDA_DEVICE_ORDER"; probe FAKECUDA_DEVICES=7.5 CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID
echo "## LD_LIBRARY_PATH"; probe FAKECUDA_DEVICES=8.0 CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID LD_LIBRARY_PATH=/nowhere
echo "## the library file changed (mtime)"
touch -d '2001-01-01' libcuda.so.1; probe FAKECUDA_DEVICES=12.0 CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID LD_LIBRARY_PATH=/nowhere
echo "## failures are not stored"
rm -f probe.cache; probe FAKECUDA_INIT=100; [ -e probe.cache ] && echo "stored a failure" || echo "nothing stored"
echo "## --cache=FILE, and no cache without it"
unset ARCHPROBE_CACHE
FAKECUDA_DEVICES=8.6 $ARCHPROBE --format list --cuda-version 13.0 --cache=my.cache; FAKECUDA_DEVICES=9.0 $ARCHPROBE --format list --cuda-version 13.0 --cache=my.cache
FAKECUDA_DEVICES=9.0 $ARCHPROBE --format list --cuda-version 13.0
echo "## a corrupt cache file is a miss"
echo garbage >my.cache; FAKECUDA_DEVICES=7.5 $ARCHPROBE --format list --cuda-version 13.0 --cache=my.cache
