# lib.sh: what the PyTorch end-to-end scripts (tests/torch/run.sh, tests/wheel/run.sh) share.
# The sourcing script sets $work (its scratch dir) first; `fails` counts the failed checks.
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# run_logged WHAT CMD...: runs CMD with its output in $work/WHAT.log, shown on failure.
run_logged() {
	local what=$1
	shift
	local rc=0
	"$@" >"$work/$what.log" 2>&1 || rc=$?
	[ $rc -eq 0 ] && return 0
	fail "$what (exit $rc):"
	sed 's/^/  | /' "$work/$what.log" | tail -n 40 >&2
	return 1
}
# torch_venv VENV: a venv with torch from PyPI ($TORCH_SPEC, default the newest), created once and
# reused while its torch imports (pip's cache serves a reinstall). Needs $work for its logs.
torch_venv() {
	local venv=$1
	"$venv/bin/python" -c "import torch" >/dev/null 2>&1 && return 0
	rm -rf "$venv"
	run_logged venv python3 -m venv "$venv" || return 1
	run_logged pip-torch "$venv/bin/pip" install --disable-pip-version-check -q "${TORCH_SPEC:-torch}"
}
