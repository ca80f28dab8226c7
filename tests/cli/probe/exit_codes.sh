# Every exit code of docs/exit-codes.md is in both tools' --help ("Exit codes:", one "  CODE
# meaning" line each) and, read from it by fatbuild/cmake/manpages.sh, in the EXIT STATUS of
# their man pages: one table, the same for both.
docs=$(sed -nE 's/^\| ([0-9]([0-9, ]*[0-9])?) \|.*/\1/p' "$FB_TESTS_DIR/../docs/exit-codes.md" | tr '\n' ';')
echo "docs/exit-codes.md: $docs"
# The codes of a help text's "Exit codes:" section; of a page's EXIT STATUS items.
help_codes() { sed -n '/^Exit codes:/,/^$/p' | sed -nE 's/^  ([0-9]([0-9, ]*[0-9])?)( .*)?$/\1/p' | tr '\n' ';'; }
page_codes() {
	sed -n '/^\.SH "*EXIT STATUS/,/^\.SH /p' "$1" | awk 'prev ~ /^\.TP/ { print } { prev = $0 }' |
		sed 's/\\f[BIR]//g' | tr '\n' ';'
}
sh "$FB_TESTS_DIR/../fatbuild/cmake/manpages.sh" "$ARCHPROBE_BIN" "$FATBUILD_BIN" man || echo "manpages.sh failed"
for t in archprobe fatbuild; do
	if [ $t = archprobe ]; then h=$($ARCHPROBE --help | help_codes); else h=$($FATBUILD --help | help_codes); fi
	p=$(page_codes man/$t.1)
	echo "$t --help: $([ "$h" = "$docs" ] && echo same || echo "'$h'")"
	echo "$t.1 EXIT STATUS: $([ "$p" = "$docs" ] && echo same || echo "'$p'")"
done
