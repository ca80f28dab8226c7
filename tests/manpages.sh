#!/usr/bin/env bash
# manpages.sh: the installed man pages and bash completion (fatbuild/cmake/manpages.sh,
# fatbuild/completion/fatbuild.bash) say what the tools' --help says, and render cleanly.
#   manpages.sh [--self-test]
# Installs the build into $FB_BINARY_DIR/manpages/prefix and checks:
#   - a page per tool and per command that 'fatbuild --help' lists, each named in fatbuild(1);
#   - man -l renders each (LC_ALL=C.UTF-8, MANWIDTH=80, groff -ww: every warning) with nothing on
#     stderr, and lexgrog reads its NAME line;
#   - every option word of a --help (-x, --long, anywhere in the text) is in the rendered page, and
#     every option of the help's option lines is the tag of a .TP item;
#   - the man pages that SEE ALSO names are installed, its docs/ pages exist there and in docs/;
#   - the completion script passes bash -n and, sourced in a plain bash, completes 'fatbuild bu'
#     to build, 'fatbuild build --arch-l' to --arch-list, every option of every command and of
#     archprobe, and offers as values only words that the help of that command has.
# --self-test also proves the checks fail: on a page without its --arch-list item, and on a page
# with a request groff warns about.
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR. Exit 0 pass, 1 fail, 77 man or groff is missing.
set -u
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}"
self_test=0
[ "${1:-}" = --self-test ] && self_test=1
for t in man groff; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "SKIP: $t is not installed (scripts/deps.sh installs man-db and groff-base)"
		exit 77
	fi
done
export LC_ALL=C.UTF-8 MANWIDTH=80
root=$FB_BINARY_DIR/manpages
prefix=$root/prefix
man1=$prefix/share/man/man1
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }

rm -rf "$root" && mkdir -p "$root/empty"
if ! cmake --install "$FB_BINARY_DIR" --prefix "$prefix" >"$root/install.log" 2>&1; then
	cat "$root/install.log" >&2
	echo "FAIL: cmake --install" >&2
	exit 1
fi
ap=$prefix/bin/archprobe
fb=$prefix/bin/fatbuild
cmds=$("$fb" --help | sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$cmds" ] || { echo "FAIL: 'fatbuild --help' lists no commands" >&2; exit 1; }

# The rendered page, with the hyphens and minus signs a groff may print for \- made ASCII.
render() { man --warnings=w -l "$1" 2>"$root/stderr" | sed 's/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g'; }
# Every option word anywhere in a help text.
help_words() { grep -oE -- '(^|[][ (,|"`=/'"'"'])--?[A-Za-z][-A-Za-z0-9_]*' "$1" | sed 's/^[^-]*//' | sort -u; }
# The options of a help text's option lines ("  -x, --long ARG  text").
help_items() {
	grep -E '^ {1,4}-[-A-Za-z]' "$1" | sed 's/^ *//; s/  .*//' | tr ',' '\n' |
		awk '{ sub(/^ +/, ""); w = $1; sub(/\[.*/, "", w); if (w ~ /^-/) print w }' | sort -u
}
# The tags of a page's .TP items, as text.
page_tags() { awk 'prev == ".TP" || prev ~ /^\.TP / { print } { prev = $0 }' "$1" | sed 's/\\f[BIR]//g; s/\\-/-/g'; }

# check_page PAGE HELPFILE: the page renders without a warning and holds everything of the help.
check_page() {
	local page=$1 help=$2 name bad=0 w text tags
	name=$(basename "$page")
	text=$(render "$page")
	if [ -s "$root/stderr" ]; then
		fail "$name: man -l warns:"; sed 's/^/  | /' "$root/stderr" >&2; bad=1
	fi
	[ -n "$text" ] || { fail "$name: man -l renders nothing"; bad=1; }
	if command -v lexgrog >/dev/null 2>&1 && ! lexgrog "$page" >/dev/null 2>&1; then
		fail "$name: lexgrog finds no NAME line"; bad=1
	fi
	for w in $(help_words "$help"); do
		grep -qF -- "$w" <<<"$text" || { fail "$name: '$w' of --help is not in the page"; bad=1; }
	done
	tags=$(page_tags "$page")
	for w in $(help_items "$help"); do
		grep -qE -- "(^|[ ,])$w([ ,=[]|$)" <<<"$tags" || { fail "$name: option $w has no .TP item"; bad=1; }
	done
	return $bad
}

# The pages: one per tool and per command; fatbuild(1) names each command's page.
"$ap" --help >"$root/archprobe.help"
"$fb" --help >"$root/fatbuild.help"
pages="archprobe fatbuild"
for c in $cmds; do
	"$fb" "$c" --help >"$root/fatbuild-$c.help"
	pages="$pages fatbuild-$c"
	render "$man1/fatbuild.1" | grep -qF "fatbuild-$c(1)" || fail "fatbuild(1) does not name fatbuild-$c(1)"
done
for p in $pages; do
	if [ ! -f "$man1/$p.1" ]; then
		fail "not installed: share/man/man1/$p.1"
		continue
	fi
	check_page "$man1/$p.1" "$root/$p.help" && ok "$p.1: renders cleanly, has every option of its --help"
	for d in $(render "$man1/$p.1" | sed -n '/^SEE ALSO/,$p' | grep -oE '[a-z][-a-z]*\([1-9]\)' | sed 's/(.*//'); do
		[ "$d" = nvcc ] || [ -f "$man1/$d.1" ] || fail "$p.1 names $d(1), which is not installed"
	done
	for d in $(render "$man1/$p.1" | sed -n '/^SEE ALSO/,$p' | grep -oE '[a-z][-a-z]*\.md' | sort -u); do
		[ -f "$FB_SOURCE_DIR/docs/$d" ] || fail "$p.1 names docs/$d, which does not exist"
		[ -f "$prefix/share/doc/archprobe-fatbuild/$d" ] || fail "$p.1 names $d, which is not installed"
	done
done

# Completion: loads, and completes from the help texts.
for t in fatbuild archprobe; do
	f=$prefix/share/bash-completion/completions/$t
	if [ ! -f "$f" ]; then fail "not installed: share/bash-completion/completions/$t"; continue; fi
	bash -n "$f" || fail "bash -n $f"
done
cat >"$root/complete.sh" <<'EOF'
# complete WORDS...: what Tab offers for the last word, one per line.
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=(); "$fn"; printf '%s\n' "${COMPREPLY[@]}"; }
. "$1"
fn=_fatbuild
case $2 in
words) shift 2; [ "$1" = archprobe ] && fn=_archprobe; complete_words "$@" ;;
# values HELPFILE TOOL CMD: "OPT VALUE" for every value offered for an option of the help.
values)
	declare -A _fb_arg; _fb_parse "$(cat "$3")"
	for o in $_fb_opts; do
		case ${_fb_arg[$o]-} in CMD | PY | '') continue ;; esac
		COMPREPLY=(); _fb_values "$4" "${5-}" "$o" "${_fb_arg[$o]}" ""
		for v in "${COMPREPLY[@]}"; do echo "$o $v"; done
	done ;;
esac
EOF
comp=$prefix/share/bash-completion/completions/fatbuild
complete_words() { (cd "$root/empty" && PATH=$prefix/bin:$PATH bash --norc --noprofile "$root/complete.sh" "$comp" words "$@"); }
expect_completion() {
	local want=$1 got
	shift
	got=$(complete_words "$@" | tr '\n' ' ')
	if [ "$got" = "$want " ]; then ok "completion: '$*' -> $want"; else fail "completion: '$*' -> '$got', want '$want'"; fi
}
expect_completion build fatbuild bu
expect_completion --arch-list fatbuild build --arch-l
expect_completion nvptx-arch archprobe --format nvp
expect_offers() {
	local help=$1 offered w bad=0
	shift
	offered=$(complete_words "$@")
	for w in $(help_items "$help"); do
		grep -qxF -- "$w" <<<"$offered" || { fail "completion: '$*' does not offer $w"; bad=1; }
	done
	[ $bad = 0 ] && ok "completion: '$*' offers every option of its --help"
}
expect_offers "$root/archprobe.help" archprobe -
"$fb" flags --help >"$root/flags.help"
for c in $cmds; do
	expect_offers "$root/fatbuild-$c.help" fatbuild "$c" -
done
# Values: each one offered is a word of the help it completes (arch lists: of 'fatbuild flags').
check_values() {
	local help=$1 tool=$2 cmd=${3-} o v against bad=0
	while read -r o v; do
		against=$help
		case $o in --arch-list | --fallback) against=$root/flags.help ;; esac
		grep -qF -- "$v" "$against" || { fail "completion: $tool $cmd $o offers '$v', which its help lacks"; bad=1; }
	done < <(cd "$root/empty" && bash --norc --noprofile "$root/complete.sh" "$comp" values "$help" "$tool" "$cmd")
	[ $bad = 0 ] && ok "completion: the values offered for $tool $cmd are in its help"
}
check_values "$root/archprobe.help" archprobe
for c in $cmds; do check_values "$root/fatbuild-$c.help" fatbuild "$c"; done

if [ $self_test = 1 ]; then
	# A page that lost its --arch-list item, one with a request groff warns about, and a help
	# with an option that the page lacks.
	awk 'skip && /^\.(TP|SH)/ { skip = 0 }
		/^\.TP/ { tp = NR; hold = $0; next }
		tp && NR == tp + 1 { if (/^\\fB\\-\\-arch\\-list\\fR/) { skip = 1; next } print hold }
		skip { next }
		{ print }' "$man1/fatbuild-flags.1" >"$root/planted-noitem.1"
	sed 's/^\.SH DESCRIPTION$/.SH DESCRIPTION\n.bogusrequest/' "$man1/fatbuild-flags.1" >"$root/planted-warn.1"
	cp "$man1/fatbuild-flags.1" "$root/planted-newopt.1"
	cp "$root/fatbuild-flags.help" "$root/planted-newopt.help"
	echo "  --planted-option   a new option the page does not have" >>"$root/planted-newopt.help"
	for planted in noitem warn newopt; do
		help=$root/fatbuild-flags.help
		[ $planted = newopt ] && help=$root/planted-newopt.help
		saved=$fails
		if check_page "$root/planted-$planted.1" "$help" 2>"$root/planted-$planted.log"; then
			fails=$((saved + 1)); echo "FAIL: self-test: the planted page $planted passes" >&2
		else
			fails=$saved; ok "self-test: the planted page $planted fails ($(head -n1 "$root/planted-$planted.log"))"
		fi
	done
fi
[ $fails -eq 0 ] && { echo "PASS"; exit 0; }
echo "$fails check(s) failed" >&2
exit 1
