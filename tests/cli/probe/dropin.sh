# Installed under the names nvptx-arch / __nvcc_device_query, archprobe speaks their formats
# (exact bytes shown with od).
. "$FB_TESTS_DIR/cli/probe/prelude.inc"
ln -s "$ARCHPROBE_BIN" nvptx-arch
ln -s "$ARCHPROBE_BIN" __nvcc_device_query
export FAKECUDA_DEVICES=9.0,8.6,9.0
./nvptx-arch | od -An -c; echo "[exit ${PIPESTATUS[0]}]"
./__nvcc_device_query | od -An -c; echo "[exit ${PIPESTATUS[0]}]"
FAKECUDA_INIT=100 ./nvptx-arch | od -An -c; echo "[exit ${PIPESTATUS[0]}]"
FAKECUDA_DEVICES= ./__nvcc_device_query --silent | od -An -c; echo "[exit ${PIPESTATUS[0]}]"
