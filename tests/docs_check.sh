#!/usr/bin/env bash
# docs_check.sh: every citation of a docs/ page names a page and a section that exist, and no
# source or document points outside the repository (HACKING.md "Comments").
#   docs_check.sh [ROOT]         check the tree at ROOT (default: the repository); exit 1 on a bad reference
#   docs_check.sh --self-test    also prove the check fails on planted bad references
# A citation is "docs/NAME.md", optionally in backticks, optionally followed by sections:
# "docs/fatbin.md §7", "docs/fatbin.md §1-§4", "docs/fatbin.md §7, §10", "docs/archlist.md §2.1".
# A section §N exists when the page has a heading "## §N" or "### §N". Markdown links between
# the pages of docs/ ("[x](probe.md)") must name a page that exists. Outside the repository: the
# study notes (their spec folder, or "spec NAME.md", "spec §N"), the shared folder above the
# worktree, /work/, and the notes by name. (Patterns and plants below are spelt so that a plain
# grep for those paths does not find this file.)
set -u
export LC_ALL=C

self=tests/docs_check.sh
sec='§[0-9]+(\.[0-9]+)?'
cite="docs/[A-Za-z0-9_-]+\.md\`?( $sec((-|–|, | and )$sec)*)?"
outside='spe[c]/|spe[c] [A-Za-z0-9_-]+\.md|spe[c] §|\.\./shared|/work/|reference-archlist|STYLE\.md'

# Text files of the tree at $1, relative to it, one per line (build folders and .git left out).
list_files() {
	local root=$1
	if git -C "$root" rev-parse --show-toplevel >/dev/null 2>&1 &&
		[ "$(cd "$root" && pwd -P)" = "$(cd "$(git -C "$root" rev-parse --show-toplevel)" && pwd -P)" ]; then
		git -C "$root" ls-files -co --exclude-standard
	else
		(cd "$root" && find . \( -path ./.git -o -path './build*' \) -prune -o -type f -print | sed 's|^\./||')
	fi | grep -v -e '^build' -e "^$self\$" | (cd "$root" && tr '\n' '\0' | xargs -0 grep -lI '' 2>/dev/null)
}

has_section() { # page section
	local n=${2#§}
	grep -qE "^#{2,3} §${n//./\\.}( |$)" "$1"
}

check_tree() {
	local root=$1 bad=0 f line text page s files
	files=$(list_files "$root")
	[ -n "$files" ] || { echo "docs: no files found under $root"; return 1; }
	cd "$root" || return 1
	# references that leave the repository
	while IFS= read -r hit; do
		[ -n "$hit" ] || continue
		line=${hit#*:}
		echo "docs: ${hit%%:*}:${line%%:*}: points outside the repository: ${line#*:}"
		bad=1
	done < <(printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 grep -HnE "$outside" 2>/dev/null)
	# docs/ citations: the page and every section named
	while IFS= read -r hit; do
		[ -n "$hit" ] || continue
		f=${hit%%:*} line=${hit#*:} text=${line#*:} line=${line%%:*}
		page=$(printf '%s' "$text" | grep -oE 'docs/[A-Za-z0-9_-]+\.md')
		if [ ! -f "$page" ]; then
			echo "docs: $f:$line: cites $page, which does not exist"
			bad=1
			continue
		fi
		for s in $(printf '%s' "$text" | grep -oE "$sec"); do
			has_section "$page" "$s" || { echo "docs: $f:$line: cites $page $s, which has no such section"; bad=1; }
		done
	done < <(printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 grep -HnoE "$cite" 2>/dev/null)
	# links between the pages of docs/
	while IFS= read -r hit; do
		[ -n "$hit" ] || continue
		f=${hit%%:*} line=${hit#*:} text=${line#*:} line=${line%%:*}
		page=${text#](} page=${page%)}
		[ -f "docs/$page" ] || { echo "docs: $f:$line: links to $page, which is not in docs/"; bad=1; }
	done < <(printf '%s\n' "$files" | grep '^docs/.*\.md$' | tr '\n' '\0' |
		xargs -0 grep -HnoE '\]\([A-Za-z0-9_-]+\.md\)' 2>/dev/null)
	return $bad
}

here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --self-test ]; then
	(check_tree "$here") || exit 1
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/docscheck.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	fails=0 n=0
	mkdir -p "$tmp/t"
	(cd "$here" && list_files "$here" | tar -cf - -T -) | tar -xf - -C "$tmp/t"
	(check_tree "$tmp/t") >/dev/null || { echo "docs self-test: the copy of the tree does not pass"; exit 1; }
	# Each planted reference must be reported, naming the file it is in.
	for plant in 'fatbuild/fatbin/select.c:/* docs/fatbin.md §99 */' \
		'archprobe/arch.c:/* see docs/nope.md */' \
		'tests/arch_test.c:/* the vectors of docs/archlist.md §9, §42 */' \
		'include/fatbuild.h:/* spe''c/fatbin.md §7 */' \
		'tests/cli/probe/cvd.sh:# spe''c probe.md §8 (8)' \
		'HACKING.md:Read ..''/shared/STYLE.md once.' \
		'README.md:The model of `docs/fatbin.md` §3.7.' \
		'docs/README.md:[gone](gone.md)'; do
		file=${plant%%:*} text=${plant#*:}
		n=$((n + 1))
		cp "$tmp/t/$file" "$tmp/saved"
		printf '%s\n' "$text" >>"$tmp/t/$file"
		if out=$(check_tree "$tmp/t"); then
			echo "docs self-test: '$text' in $file was not reported"
			fails=1
		else
			printf '%s\n' "$out" | grep -qF "$file" || { echo "docs self-test: report does not name $file: $out"; fails=1; }
		fi
		cp "$tmp/saved" "$tmp/t/$file"
	done
	[ $fails = 0 ] && echo "docs: ok (and $n planted bad references reported)"
	exit $fails
fi
(check_tree "${1:-$here}") && echo "docs: ok"
