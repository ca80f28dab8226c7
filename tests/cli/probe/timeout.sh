# A hanging driver is killed at the timeout, a crashing one is reported (docs/probe.md §8 (10)):
# both exit 6 and the caller survives.
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
export FAKECUDA_DEVICES=8.6
# under an exec prefix (valgrind) the parent itself starts slowly: allow for it (the fake hangs
# for ever, so any bound still proves the cut-off)
slack=0
[ -n "${FB_EXEC_PREFIX:-}" ] && slack=8000
start=$(date +%s%N)
run FAKECUDA_HANG=1 $ARCHPROBE --timeout 1 --format cmake
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt $((2500 + slack)) ] && echo "returned within the timeout" || echo "took $ms ms for --timeout 1"
start=$(date +%s%N)
run FAKECUDA_HANG=1 ARCHPROBE_TIMEOUT=0.3 $ARCHPROBE --format cmake
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $ms -lt $((1500 + slack)) ] && echo "returned within the timeout" || echo "took $ms ms for ARCHPROBE_TIMEOUT=0.3"
run FAKECUDA_SLEEP_MS=200 ARCHPROBE_TIMEOUT=5 $ARCHPROBE --format cmake --cuda-version 13.0
run FAKECUDA_ABORT=1 $ARCHPROBE --format cmake
# (the signal's name is left out: under ASan the child's SIGSEGV becomes an abort)
run FAKECUDA_SEGV=1 $ARCHPROBE --format json --silent | grep -e '"status"' -e exit
run FAKECUDA_ABORT=1 $ARCHPROBE --format cmake --fallback 9.0 --cuda-version 13.0
run FAKECUDA_HANG=1 $ARCHPROBE --timeout 0.2 --format nvptx-arch --silent
