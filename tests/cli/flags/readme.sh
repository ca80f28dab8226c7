# The examples of docs/fatbuild-flags.md (the arch-list manual page) are real: every "$ fatbuild ..." line in a block
# marked "checked by tests/cli/flags/readme.sh" runs and prints exactly the lines after it.
readme=$FB_TESTS_DIR/../docs/fatbuild-flags.md
export CUDA_HOME=$FB_CUDA_HOME
unset TORCH_CUDA_ARCH_LIST ARCHPROBE_ARCHS ARCHPROBE_FALLBACK
awk '/<!-- BEGIN archlist -->/ { on = 1 } /<!-- END archlist -->/ { on = 0 }
	on && /checked by tests\/cli\/flags\/readme.sh/ { want = 1; next }
	on && want && /^```/ { if (inb) { inb = 0; want = 0 } else inb = 1; next }
	on && inb { print }' "$readme" >examples
[ -s examples ] || { echo "no checked examples in docs/fatbuild-flags.md" >&2; exit 1; }
n=0 fail=0
run_one() { # command, expected file
	local cmd=${1#\$ }
	cmd=$(printf '%s' "$cmd" | sed 's/\(^\|[[:space:]]\)fatbuild /\1$FATBUILD /')
	eval "$cmd" >got 2>&1
	if ! diff -u "$2" got >&2; then echo "docs/fatbuild-flags.md example differs: $1" >&2; fail=1; fi
	n=$((n + 1))
}
cmd= : >want
while IFS= read -r line; do
	case $line in
	'$ '*)
		[ -n "$cmd" ] && run_one "$cmd" want
		cmd=$line; : >want ;;
	*) printf '%s\n' "$line" >>want ;;
	esac
done <examples
[ -n "$cmd" ] && run_one "$cmd" want
echo "$n docs/fatbuild-flags.md examples checked"
exit $fail
