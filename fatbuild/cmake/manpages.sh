#!/bin/sh
# manpages.sh: writes the man pages of both tools from their own --help, so that a page can never
# say less than the tool does.
#   manpages.sh ARCHPROBE FATBUILD OUTDIR [VERSION]
# Writes OUTDIR/archprobe.1, OUTDIR/fatbuild.1 and OUTDIR/fatbuild-CMD.1 for every command that
# 'fatbuild --help' lists. The page date is SOURCE_DATE_EPOCH's when set (reproducible installs).
#
# The help texts follow one shape (HACKING.md "CLI"), which the awk program below reads:
#   "usage: ..." lines (and indented continuations)   -> SYNOPSIS, one .SY block per synopsis
#   unindented lines                                  -> filled paragraphs of the current section
#   "Options:", "Commands:", "Examples:", "Example: X", "Environment: X", "Exit codes: X"
#                                                     -> that section, up to the next blank line
#   other "Title:" lines                              -> a subsection of DESCRIPTION
#   an indented run holding a line "  -x ..."         -> OPTIONS, one .TP item per option line:
#                                                        the term ends at the first two spaces,
#                                                        deeper-indented lines continue the item
#   an indented "  word  text" list                   -> .TP items; other indented runs verbatim
# An option term that is not "OPTION [ARG]" groups separated by ", " (a term that runs into its
# text with one space) stops the script, so that a help layout it cannot read is noticed.
set -eu
[ $# -ge 3 ] || { echo "usage: manpages.sh ARCHPROBE FATBUILD OUTDIR [VERSION]" >&2; exit 2; }
archprobe=$1 fatbuild=$2 out=$3 version=${4:-}
mkdir -p "$out"
if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
	date=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d 2>/dev/null || date -u -r "$SOURCE_DATE_EPOCH" +%Y-%m-%d)
else
	date=$(date -u +%Y-%m-%d)
fi
tmp=$out/.help.$$
main=$out/.main.$$
trap 'rm -f "$tmp" "$main"' EXIT

# help CMD...: CMD --help into $tmp; a failing or empty --help is an error.
help() {
	if ! "$@" --help >"$tmp" 2>/dev/null || [ ! -s "$tmp" ]; then
		echo "manpages.sh: '$* --help' failed" >&2
		exit 1
	fi
}

# The docs/ pages (installed into share/doc/archprobe-fatbuild/) that say more about a page.
docs_of() {
	case $1 in
	archprobe) echo "archprobe.md probe.md archlist.md" ;;
	fatbuild) echo "fatbuild-flags.md fatbuild-build.md fatbuild-compile.md fatbuild-inspect.md fatbuild-prune.md rdc-lto.md pytorch.md caches.md build-systems.md launcher.md exit-codes.md README.md" ;;
	flags) echo "fatbuild-flags.md archlist.md" ;;
	build) echo "fatbuild-build.md backend.md compile-server.md rdc-lto.md pytorch.md security.md" ;;
	compile) echo "fatbuild-compile.md caches.md remote-cache.md" ;;
	pack | inspect | check | extract | embed) echo "fatbuild-inspect.md fatbin.md" ;;
	size | prune) echo "fatbuild-prune.md prune.md" ;;
	diff) echo "reproducibility.md" ;;
	dlink) echo "rdc-lto.md" ;;
	cache) echo "caches.md security.md" ;;
	edge) echo "caches.md remote-cache.md" ;;
	shims) echo "launcher.md caches.md" ;;
	env) echo "fatbuild-build.md toolkits.md" ;;
	*) echo "README.md" ;;
	esac
}

# The other man pages a command's page points at, besides fatbuild(1) and archprobe(1).
pages_of() {
	case $1 in
	flags) echo "fatbuild-build fatbuild-compile" ;;
	build) echo "fatbuild-compile fatbuild-env fatbuild-inspect fatbuild-check fatbuild-dlink" ;;
	compile) echo "fatbuild-build fatbuild-cache fatbuild-dlink fatbuild-inspect" ;;
	pack | extract | embed) echo "fatbuild-inspect fatbuild-compile" ;;
	inspect) echo "fatbuild-check fatbuild-size fatbuild-extract fatbuild-diff" ;;
	check) echo "fatbuild-inspect fatbuild-prune" ;;
	size) echo "fatbuild-prune fatbuild-inspect" ;;
	prune) echo "fatbuild-size fatbuild-check" ;;
	diff) echo "fatbuild-inspect" ;;
	dlink) echo "fatbuild-compile fatbuild-build" ;;
	cache) echo "fatbuild-compile" ;;
	env) echo "fatbuild-build" ;;
	shims) echo "fatbuild-cache" ;;
	esac
}

# page NAME TOOL CMD SUMMARY SEEALSO-PAGES: the roff page of the help text in $tmp.
page() {
	awk -v name="$1" -v tool="$2" -v cmd="$3" -v summary="$4" -v see="$5" -v docs="$(docs_of "${3:-$2}")" \
		-v date="$date" -v version="$version" "$awkprog" "$tmp" >"$out/$1.1"
}

awkprog='
function esc(s) {
	gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s); gsub(/\047/, "\\(aq", s); gsub(/`/, "\\(ga", s)
	if (s ~ /^\./) s = "\\&" s
	return s
}
# esc() on every line of a multi-line text.
function escl(s,   n, a, i, r) {
	n = split(s, a, /\n/); r = ""
	for (i = 1; i <= n; i++) r = r esc(a[i]) "\n"
	return r
}
function indent(s) { match(s, /^ */); return RLENGTH }
function trim(s) { sub(/^ +/, "", s); sub(/ +$/, "", s); return s }
function bold(s) { return "\\fB" esc(s) "\\fR" }
function ital(s) { return "\\fI" esc(s) "\\fR" }
# An option word in bold up to its "=" or "[" (--cache[=FILE], -arch).
function optword(w,   k) {
	k = match(w, /[=[]/)
	return k ? bold(substr(w, 1, k - 1)) esc(substr(w, k)) : bold(w)
}
# A term of an item: "-o, --output OUT" -> bold options, italic arguments.
function fmtterm(t,   n, g, i, r, sp, w) {
	if (t !~ /^-/)
		return (t ~ /^[A-Z@]/) ? ital(t) : bold(t)
	n = split(t, g, /, /)
	r = ""
	for (i = 1; i <= n; i++) {
		sp = index(g[i], " ")
		if (g[i] !~ /^-/ || (sp && index(substr(g[i], sp + 1), " "))) {
			printf "manpages.sh: %s: cannot read the option term \"%s\" (put two spaces before its text)\n", name, t > "/dev/stderr"
			exit 1
		}
		w = sp ? optword(substr(g[i], 1, sp - 1)) " " ital(substr(g[i], sp + 1)) : optword(g[i])
		r = r (i > 1 ? ", " : "") w
	}
	return r
}
# A synopsis: options bold, metavariables italic, nothing broken inside [ ].
function fmtsyn(s,   n, w, i, r, depth, core, pre, post, f) {
	n = split(s, w, / +/)
	r = ""; depth = 0
	for (i = 1; i <= n; i++) {
		core = w[i]; pre = ""; post = ""
		while (core ~ /^\[/) { pre = pre "["; core = substr(core, 2) }
		while (core ~ /\]$/ && core !~ /\[[^]]*\]$/) { post = "]" post; core = substr(core, 1, length(core) - 1) }
		if (core ~ /^-/) f = optword(core)
		else if (core ~ /^[A-Z]/) f = ital(core)
		else f = esc(core)
		if (i > 1) r = r (depth > 0 ? "\\ " : " ")
		r = r pre f post
		depth += gsub(/\[/, "[", w[i]) - gsub(/\]/, "]", w[i])
	}
	return r
}
function emit(sec, text) { body[sec] = body[sec] text }
function flushprose() {
	if (prose != "") emit(psec, ".PP\n" prose)
	prose = ""
}
function addprose(sec, s) {
	if (prose != "" && sec != psec) flushprose()
	psec = sec
	prose = prose esc(trim(s)) "\n"
}
# Splits an item line at its first run of two spaces into term[] and text[] at index k.
function itemline(s, k,   p) {
	s = trim(s)
	p = match(s, /  +/)
	if (p) { term[k] = substr(s, 1, p - 1); text[k] = trim(substr(s, p)) }
	else { term[k] = s; text[k] = "" }
}
# The indented run run[1..nrun] in section sec: options, a word list, prose or verbatim.
function flushrun(sec,   i, base, isopt, ok, k, t, s, v, prev, tpw) {
	if (nrun == 0) return
	flushprose()
	base = 99; isopt = 0
	for (i = 1; i <= nrun; i++) {
		if (indent(run[i]) < base) base = indent(run[i])
		if (run[i] ~ /^ +-[-A-Za-z]/ && indent(run[i]) <= 4 && sec != "EXAMPLES") isopt = 1
	}
	if (sec == "EXAMPLES") {
		v = ""
		for (i = 1; i <= nrun; i++) v = v esc(substr(run[i], base + 1)) "\n"
		emit(sec, ".PP\n.nf\n" v ".fi\n"); nrun = 0; return
	}
	# An item list: every line starts an item at the base indent or continues one deeper in;
	# a term alone on its line is continued on the next; an item text holds no table (3 spaces).
	ok = 1; k = 0; prev = 0
	for (i = 1; i <= nrun; i++) {
		if (indent(run[i]) == base) {
			if (prev == 1) ok = 0
			k++; itemline(run[i], k)
			if (text[k] ~ /   /) ok = 0
			prev = (text[k] == "") ? 1 : 2
		} else if (k > 0) {
			text[k] = text[k] (text[k] == "" ? "" : "\n") trim(run[i]); prev = 2
		} else ok = 0
	}
	if (prev == 1 && !isopt) ok = 0
	if (isopt || ok) {
		if (isopt) sec = "OPTIONS"
		# A word list whose words are short gets an indent that keeps each on its text line.
		tpw = ""
		if (!isopt) {
			for (i = 1; i <= k; i++) if (length(term[i]) + 2 > tpw + 0) tpw = length(term[i]) + 2
			tpw = (tpw > 7 && tpw <= 12) ? " " tpw "n" : ""
		}
		for (i = 1; i <= k; i++) {
			t = text[i]
			if (t == "this text") t = "print this help and exit"
			s = ""
			if (tool == "fatbuild" && cmd == "" && sec == "COMMANDS")
				s = "(\\fB" tool "\\-" term[i] "\\fR(1))\n"
			t = (t == "") ? "" : escl(t)
			# A text that holds a table row keeps its line breaks.
			if (t ~ /[^ \n]   +[^ ]/) { gsub(/\n/, "\n.br\n", t); sub(/\n\.br\n$/, "\n", t) }
			emit(sec, ".TP" tpw "\n" fmtterm(term[i]) "\n" t s)
		}
		nrun = 0; return
	}
	v = ""
	ok = 1
	for (i = 1; i <= nrun; i++) if (indent(run[i]) != base || trim(run[i]) ~ /  /) ok = 0
	if (ok) {
		for (i = 1; i <= nrun; i++) addprose(sec, run[i])
		flushprose()
	} else {
		for (i = 1; i <= nrun; i++) v = v esc(substr(run[i], base + 1)) "\n"
		emit(sec, ".PP\n.nf\n" v ".fi\n")
	}
	nrun = 0
}
{ lines[NR] = $0 }
END {
	n = NR; i = 1; nsyn = 0
	# SYNOPSIS: "usage: " lines; an indented line that starts with the tool name is another synopsis.
	while (i <= n && (lines[i] ~ /^usage: / || (nsyn > 0 && lines[i] ~ /^ +[^ ]/))) {
		s = lines[i]; sub(/^usage: /, "", s); s = trim(s)
		if (lines[i] ~ /^usage: / || index(s, tool " ") == 1 || s == tool) syn[++nsyn] = s
		else syn[nsyn] = syn[nsyn] " " s
		i++
	}
	if (nsyn == 0) { printf "manpages.sh: %s: the help text has no usage line\n", name > "/dev/stderr"; exit 1 }
	sec = "DESCRIPTION"; nrun = 0; prose = ""
	for (; i <= n; i++) {
		l = lines[i]
		if (l ~ /^ *$/) { flushrun(sec); flushprose(); sec = "DESCRIPTION"; continue }
		if (l ~ /^ /) { run[++nrun] = l; continue }
		flushrun(sec)
		if (l ~ /^(Options|Commands|Examples?):$/) {
			flushprose(); sec = toupper(l); sub(/:$/, "", sec)
			if (sec == "EXAMPLE") sec = "EXAMPLES"
			continue
		}
		if (l ~ /^Examples?: ./) { flushprose(); sec = "EXAMPLES"; sub(/^Examples?: /, "  ", l); run[++nrun] = l; continue }
		if (l ~ /^Environment: /) { flushprose(); sec = "ENVIRONMENT"; sub(/^Environment: /, "", l) }
		else if (l ~ /^Exit codes: /) { flushprose(); sec = "EXIT STATUS"; sub(/^Exit codes: /, "", l) }
		else if (l ~ /^[A-Z][^.,]*:$/ && length(l) < 40) {
			flushprose(); sec = "DESCRIPTION"; sub(/:$/, "", l)
			emit(sec, ".SS " esc(l) "\n"); continue
		}
		addprose(sec, l)
	}
	flushrun(sec); flushprose()

	title = toupper(name)
	printf ".TH %s 1 \"%s\" \"%s%s\" \"User Commands\"\n", esc(title), date, tool, (version == "" ? "" : " " version)
	printf ".nr HY 0\n.nh\n.ad l\n.SH NAME\n%s \\- %s\n.SH SYNOPSIS\n", esc(name), esc(summary)
	for (j = 1; j <= nsyn; j++) {
		s = syn[j]
		c = tool
		if (cmd != "" && index(s, tool " " cmd) == 1 && (length(s) == length(tool " " cmd) || substr(s, length(tool " " cmd) + 1, 1) == " "))
			c = tool " " cmd
		s = trim(substr(s, length(c) + 1))
		printf ".SY \"%s\"\n%s\n.YS\n", esc(c), fmtsyn(s)
	}
	nsec = split("DESCRIPTION|COMMANDS|OPTIONS|ENVIRONMENT|EXIT STATUS|EXAMPLES", order, /\|/)
	for (j = 1; j <= nsec; j++) {
		if (body[order[j]] == "") continue
		b = body[order[j]]
		sub(/^\.PP\n/, "", b)
		printf ".SH %s\n%s", order[j], b
	}
	printf ".SH SEE ALSO\n"
	m = split(see, sa, / /)
	for (j = 1; j <= m; j++) printf ".BR %s (1)%s\n", esc(sa[j]), (j < m ? "," : "")
	printf ".PP\nThe manual pages in \\fIshare/doc/archprobe\\-fatbuild/\\fR of the install prefix\n"
	printf "(\\fIdocs/\\fR of the source tree):\n"
	m = split(docs, sa, / /)
	for (j = 1; j <= m; j++) printf ".I %s%s\n", esc(sa[j]), (j < m ? "," : "")
}
'

help "$fatbuild"
cp "$tmp" "$main"
cmds=$(sed -n '/^Commands:$/,/^$/p' "$main" | awk 'NR > 1 && NF { print $1 }')
[ -n "$cmds" ] || { echo "manpages.sh: 'fatbuild --help' lists no commands" >&2; exit 1; }
cmdpages=
for c in $cmds; do cmdpages="$cmdpages fatbuild-$c"; done
cmdpages=${cmdpages# }

page fatbuild fatbuild "" "build CUDA code for every GPU you ship to, and check that it will load" \
	"$cmdpages archprobe nvcc"
for c in $cmds; do
	summary=$(sed -n '/^Commands:$/,/^$/p' "$main" | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print }')
	help "$fatbuild" "$c"
	see=$(pages_of "$c")
	page "fatbuild-$c" fatbuild "$c" "$summary" "fatbuild${see:+ $see} archprobe"
done
help "$archprobe"
page archprobe archprobe "" "list the visible CUDA GPUs and read GPU arch lists" "fatbuild fatbuild-flags"
