#!/usr/bin/env bash
# layout_check.sh: the direction rule of HACKING.md ("Layout"), checked on every #include "..."
# of the toolkit's own sources, and the ranks inside a part, checked on the names its files use.
#   layout_check.sh [ROOT]         check the tree at ROOT (default: the repository); exit 1 on a breach
#   layout_check.sh --self-test    also prove the check fails on planted breaches
# A quoted include is either a bare name from the file's own folder or from include/ (the public
# API), or "SUBSYSTEM/name.h" naming a private header of a subsystem the file's own may use
# (base/ lies in archprobe/, every other subsystem in fatbuild/):
#   archprobe/base    -> (nothing: not even a public header; the foundation stands below both libraries)
#   archprobe/        -> base (and its own private headers); archprobe/cli -> base
#   fatbuild/         -> base (the library's own files beside its parts)
#   fatbuild/fatbin   -> base
#   fatbuild/cache    -> base fatbin
#   fatbuild/rexec    -> base fatbin cache/cache.h, and for the REAPI channel it runs on
#                        cache/remote.h (fb_reapi) and cache/pb.h (the wire format)
#   fatbuild/compile  -> base fatbin cache/cache.h rexec/rexec.h
#   fatbuild/devlink  -> base fatbin
#   fatbuild/scan     -> base
#   fatbuild/extension -> base fatbin cache/cache.h rexec/rexec.h compile devlink scan/backend.h
#   fatbuild/check    -> base fatbin
#   fatbuild/runtime  -> fatbin/format.h only (header-only: the runtime links nothing but its own code)
#   fatbuild/cli      -> base
# base/cliutil.h (messages that print, allocation that exits) is the two CLIs' alone. Public
# headers never include private ones, and archprobe never includes fatbuild.
# A part named by one header (cache/cache.h, rexec/rexec.h) is used only through it: that header
# is the only one of the part its users include, and the names they use of the part are those it
# and the headers of its folder it includes mention, or the public API's (include/). A part named
# by several headers (cache/ for rexec/) is used through those alone, in the same way.
#
# Inside a ranked part (the RANKS table below, HACKING.md "Layout") the files form layers: a
# file may use the names (fb_/FB_ functions, macros, struct/union/enum tags, enumerators)
# defined in files of its own rank or a lower one, and include its folder's headers of its own
# rank or lower; a name or header of a higher rank is a back-call. Every .c and .h of a ranked
# part has a rank. A file of a ranked part, or of a part that uses another through one header,
# may use names of another part only where the include table allows that part. Comments and
# string literals are not uses.
set -u

allowed() {
	case $1 in
	archprobe/base) echo "" ;;
	archprobe | archprobe/cli | fatbuild | fatbuild/cli | fatbuild/fatbin) echo "base" ;;
	fatbuild/cache) echo "base fatbin" ;;
	fatbuild/rexec) echo "base fatbin cache/cache.h cache/remote.h cache/pb.h" ;;
	fatbuild/compile) echo "base fatbin cache/cache.h rexec/rexec.h" ;;
	fatbuild/devlink) echo "base fatbin" ;;
	fatbuild/scan) echo "base" ;;
	fatbuild/extension) echo "base fatbin cache/cache.h rexec/rexec.h compile devlink scan/backend.h" ;;
	fatbuild/check) echo "base fatbin" ;;
	fatbuild/launch) echo "base cache/cache.h" ;;
	fatbuild/runtime) echo "fatbin/format.h" ;;
	*) echo "" ;;
	esac
}

# folder rank files...: rank 0 is the bottom. compile/: the digests, #include scanning and
# host-header hints; the NVRTC loader and the cache (local, remote, keys, counters); the process
# side (the run's state, scheduling, the forked job, PCH workers, the compile server and its
# client), one header run.h; the driver (options, sources and jobs; fb_compile).
RANKS='
fatbuild/cache 0 entry.h hash.c hash.h key.c key.h pb.c pb.h
fatbuild/cache 1 store.h cacheroot.c store.c trim.c stats.c remote_opts.h sink.h sink.c record.h record.c
fatbuild/cache 1 reapi_msg.h reapi_msg.c reapi.h reapi.c remote.h remote.c
fatbuild/cache 2 cache.h tiers.c
fatbuild/rexec 0 input.h action.h action.c
fatbuild/rexec 1 rexec.h exec.c jobroot.c edge_action.c
fatbuild/compile 0 depfile.c depfile.h
fatbuild/compile 1 nvrtc.c nvrtc.h nvrtc_worker.c
fatbuild/compile 2 run.h schedule.c child.c worker.c server.c client.c offload.c
fatbuild/compile 3 compile.h prepare.c compile.c
fatbuild/devlink 0 jitlink.c jitlink.h
fatbuild/devlink 1 dlink.c
fatbuild/scan 0 hosthdr.c hosthdr.h ppcond.c ppcond.h
fatbuild/scan 1 backend.c backend.h
fatbuild/launch 0 plan.h splitwords.c plan.c projroot.h projroot.c
fatbuild/launch 1 stepcache.h stepcache.c
fatbuild/launch 2 launch.c
'

# RANK[fatbuild/PART/FILE]: the rank of each file of the table.
declare -A RANK
while read -r dir r files; do
	for f in $files; do RANK[$dir/$f]=$r; done
done < <(printf '%s\n' "$RANKS" | awk NF)

# "FILE D NAME" for every fb_/FB_ name FILE defines (functions at the start of a line, as the
# house style writes definitions; macros and enumerators of headers; struct, union and enum
# tags) and "FILE U NAME" for every other such name it mentions, comments and strings left out.
names() {
	perl -0777 -ne '
		my $t = $_;
		$t =~ s{(/\*.*?\*/)|(//[^\n]*)|("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)}{defined $1 || defined $2 ? " " : "\"\""}gse;
		my $h = $ARGV =~ /\.h$/;
		my %d;
		$d{$1} = 1 while $t =~ /^((?:fb|FB)_\w+)\s*\(/mg;
		$d{$1} = 1 while $t =~ /\b(?:struct|union|enum)\s+((?:fb|FB)_\w+)\s*\{/g;
		if ($h) {
			while ($t =~ /^[ \t]*#[ \t]*define[ \t]+((?:fb|FB)_\w+)/mg) { $d{$1} = 1 unless $1 =~ /_H$/ }
			while ($t =~ /\benum\b[^{;]*\{([^}]*)\}/g) {
				my $b = $1;
				$d{$1} = 1 while $b =~ /((?:fb|FB)_\w+)\s*(?:=[^,]*)?(?:,|$)/mg;
			}
		}
		my %u;
		$u{$1} = 1 while $t =~ /\b((?:fb|FB)_\w+)\b/g;
		print "$ARGV D $_\n" for sort keys %d;
		print "$ARGV U $_\n" for sort grep { !$d{$_} } keys %u;
	' "$@"
}

# "export PART/HEADER NAME" for each name the interface header PART/HEADER (an entry of the
# include table with a '/') gives its users, from the names table $3 of the tree at $1: the
# names it and the headers of its own folder it includes, at any depth, mention.
exports() {
	local root=$1 h=$2 table=$3 x inc
	local -a todo=("$h") seen=()
	while [ ${#todo[@]} -gt 0 ]; do
		x=${todo[0]} todo=("${todo[@]:1}")
		case " ${seen[*]} " in *" $x "*) continue ;; esac
		seen+=("$x")
		[ -f "$root/fatbuild/$x" ] || continue
		while IFS= read -r inc; do
			[ "${inc#*/}" = "$inc" ] && [ -e "$root/fatbuild/${x%/*}/$inc" ] && todo+=("${x%/*}/$inc")
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$root/fatbuild/$x")
	done
	for x in "${seen[@]}"; do awk -v f="fatbuild/$x" '$1 == f { print $3 }' "$table"; done | sort -u | sed "s|^|export $h |"
}

# The rank checks of the tree at $1 (see the top).
check_ranks() {
	local root=$1 bad=0 f r dir inc ri parts=""
	parts=$(printf '%s\n' "$RANKS" | awk 'NF { print $1 }' | sort -u)
	for dir in $parts; do
		while IFS= read -r f; do
			r=${RANK[${f#"$root"/}]:-}
			if [ -z "$r" ]; then
				echo "layout: ${f#"$root"/}: not in the rank table of $dir (tests/layout_check.sh RANKS, HACKING.md \"Layout\"): give it the rank of the layer it belongs to"
				bad=1
				continue
			fi
			while IFS= read -r inc; do
				[ "${inc#*/}" = "$inc" ] && [ -e "${f%/*}/$inc" ] || continue
				ri=${RANK[$dir/$inc]:-}
				if [ -n "$ri" ] && [ "$ri" -gt "$r" ]; then
					echo "layout: ${f#"$root"/}: #include \"$inc\": rank $r may not include a header of rank $ri"
					bad=1
				fi
			done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
		done < <(find "$root/$dir" -name '*.[ch]' | sort)
	done
	for f in "${!RANK[@]}"; do
		[ -e "$root/$f" ] && continue
		echo "layout: tests/layout_check.sh: RANKS names $f, which does not exist"
		bad=1
	done
	local table=$(mktemp) via="" h
	(cd "$root" && names $(find fatbuild -path fatbuild/runtime -prune -o -path fatbuild/cli -prune -o -name '*.[ch]' -print | sort)) >"$table"
	for dir in $(cd "$root" && find fatbuild -mindepth 1 -maxdepth 1 -type d | sort); do
		case " $parts " in *" $dir "*) continue ;; esac
		case " $(allowed "$dir") " in *[a-z]/[a-z]*) [ "$dir" != fatbuild/runtime ] && via="$via $dir" ;; esac
	done
	while IFS= read -r line; do
		echo "$line"
		bad=1
	done < <({
		for dir in $parts $via; do printf 'allow %s %s\n' "${dir#fatbuild/}" "$(allowed "$dir")"; done
		for dir in $parts $via; do
			for h in $(allowed "$dir"); do
				case $h in */*) exports "$root" "$h" "$table" ;; esac
			done
		done | sort -u
		(cd "$root" && names include/*.h include/fatbuild/*.h) | awk '{ print "public", $3 }'
		grep ' D ' "$table"
		grep ' U ' "$table"
	} | awk -v ranks="$RANKS" -v via="$via" '
		BEGIN {
			n = split(ranks, rl, "\n")
			for (i = 1; i <= n; i++) {
				k = split(rl[i], w, " ")
				for (j = 3; j <= k; j++) rank[w[1] "/" w[j]] = w[2]
			}
			n = split(via, vl, " ")
			for (i = 1; i <= n; i++) checked[vl[i]] = 1
		}
		$1 == "allow" {
			for (i = 3; i <= NF; i++) {
				if ($i !~ /\//) { ok[$2 " " $i] = 1; continue }
				p = $i; sub(/\/.*/, "", p); iface[$2 " " p] = iface[$2 " " p] " " $i
			}
			next
		}
		$1 == "export" { exported[$2 " " $3] = 1; next }
		$1 == "public" { public[$2] = 1; next }
		$2 == "D" { def[$3] = def[$3] " " $1; next }
		{
			user = $1; ud = user; sub(/\/[^\/]*$/, "", ud)
			if (!(user in rank) && !(ud in checked)) next
			m = split(def[$3], ds, " ")
			for (i = 1; i <= m; i++) {
				d = ds[i]; dd = d; sub(/\/[^\/]*$/, "", dd)
				up = substr(ud, 10); dp = substr(dd, 10)
				if (dd == ud) {
					if ((d in rank) && rank[d] + 0 > rank[user] + 0)
						printf "layout: %s: uses %s of %s: rank %s may not use rank %s\n", user, $3, d, rank[user], rank[d]
				} else if (dd !~ /^fatbuild\// || ok[up " " dp]) {
					continue
				} else if ((up " " dp) in iface) {
					seen = public[$3]
					k = split(iface[up " " dp], hs, " ")
					for (h = 1; h <= k; h++) if (exported[hs[h] " " $3]) seen = 1
					if (!seen)
						printf "layout: %s: uses %s of %s: %s may use %s only through%s\n", user, $3, d, up, dp, iface[up " " dp]
				} else {
					printf "layout: %s: uses %s of %s: %s may not use %s\n", user, $3, d, up, dp
				}
			}
		}')
	rm -f "$table"
	return $bad
}

# The environment is read in one place, archprobe/base/config.c (fb_config_read fills struct
# fb_config, which is passed down), by both libraries and both CLIs (HACKING.md
# "Configuration"); the runtime (fatbuild/runtime/) is a library of its own and reads its FBRT_*
# variables itself. Every reader of the environment elsewhere is reported: getenv,
# secure_getenv, and a wrapper of them by the names one would take (fb_env_get, fb_env_switch),
# called or defined (comments and strings left out); and so is every writer of it (setenv,
# unsetenv, putenv, clearenv): what a child is to see goes into the environment it is started
# with (fb_config_child_env), never into the process's own; and a variable config.c reads
# that config.h's list does not name.
check_env() {
	local root=$1 out
	out=$(cd "$root" && find archprobe fatbuild -path fatbuild/runtime -prune -o -name '*.[ch]' -print | sort |
		xargs perl -0777 -e '
		my ($envc, $listf) = ("archprobe/base/config.c", "archprobe/base/config.h");
		open(my $fh, "<", $listf) or die "layout: $listf: $!\n";
		my $list = do { local $/; <$fh> };
		for my $f (@ARGV) {
			open(my $in, "<", $f) or die "layout: $f: $!\n";
			my $t = do { local $/; <$in> };
			if ($f eq $envc) {
				for my $m ($t =~ /\bgetenv\s*\(\s*"(\w+)"/g) {
					print "layout: $f: $m is read but not listed in $listf\n" unless $list =~ /\b\Q$m\E\b/;
				}
				next;
			}
			$t =~ s{(/\*.*?\*/)|(//[^\n]*)|("(?:\\.|[^"\\\n])*")|(\x27(?:\\.|[^\x27\\\n])*\x27)}{my $q = defined $3 || defined $4; (my $k = $&) =~ tr/\n//cd; ($q ? "\"\"" : " ") . $k}gse;
			while ($t =~ /\b((?:secure_)?getenv|fb_env_get|fb_env_switch)\s*\(/g) {
				my $line = 1 + (substr($t, 0, $-[0]) =~ tr/\n//);
				print "layout: $f:$line: $1(): the environment is read only in $envc (struct fb_config, passed down)\n";
			}
			while ($t =~ /\b(setenv|unsetenv|putenv|clearenv)\s*\(/g) {
				my $line = 1 + (substr($t, 0, $-[0]) =~ tr/\n//);
				print "layout: $f:$line: $1(): the environment is changed only in $envc; a child gets its own (fb_config_child_env)\n";
			}
		}' )
	[ -z "$out" ] && return 0
	printf '%s\n' "$out"
	return 1
}

# A library's .c file does one job, and one that grows past 900 lines has taken on a second
# (HACKING.md "Layout"): every .c of archprobe/ and fatbuild/ but the two CLIs' is reported
# above that.
check_size() {
	local root=$1 bad=0 n f
	while read -r n f; do
		[ "$f" = total ] && continue
		[ "$n" -gt 900 ] || continue
		echo "layout: ${f#"$root"/}: $n lines, over the 900 a library file may have: split it by job (HACKING.md \"Layout\")"
		bad=1
	done < <(find "$root/archprobe" "$root/fatbuild" \( -path "$root/archprobe/cli" -o -path "$root/fatbuild/cli" \) -prune -o -name '*.c' -print0 | sort -z | xargs -0 wc -l)
	return $bad
}

# One name, one file: no two .c (or two .h) files of archprobe/ and fatbuild/ share a name, and
# a private header is spelled plain, name.h in its folder (HACKING.md "Layout"): no *_int.h or
# *_priv.h.
check_names() {
	local root=$1 out
	out=$(cd "$root" && find archprobe fatbuild -name '*.[ch]' | sort | awk -F/ '
		{ n = $NF; if (n ~ /_(int|priv)\.h$/) printf "layout: %s: a private header is spelled name.h, not *_int.h or *_priv.h\n", $0
		  if (n in seen) printf "layout: %s: the same name as %s: name a file for its job, once in the tree\n", $0, seen[n]
		  else seen[n] = $0 }')
	[ -z "$out" ] && return 0
	printf '%s\n' "$out"
	return 1
}

check_tree() {
	local root=$1 bad=0 f dir sub inc name hdr
	while IFS= read -r f; do
		dir=${f%/*}
		sub=${dir#"$root"/}
		while IFS= read -r inc; do
			case $inc in
			../* | */../* | /*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": no relative or absolute paths; name the subsystem (\"base/bytes.h\")"
				bad=1
				continue
				;;
			esac
			# The public API's part headers (include/fatbuild/*.h), as the umbrella fatbuild.h
			case $inc in
			fatbuild/*.h)
				if [ -e "$root/include/$inc" ]; then
					case $sub in
					archprobe | archprobe/*)
						echo "layout: ${f#"$root"/}: #include \"$inc\": archprobe may not use fatbuild"
						bad=1
						;;
					esac
					continue
				fi
				;;
			esac
			if [ "${inc#*/}" = "$inc" ]; then
				# Bare name: own folder, or the public API.
				if [ -e "$dir/$inc" ]; then
					continue
				fi
				# plumbing.h: libfatbuild's interface to its own tool (fatbuild/plumbing.h): the CLI
				# and the library files that define it, never archprobe nor the runtime.
				if [ "$inc" = plumbing.h ] && [ -e "$root/fatbuild/plumbing.h" ]; then
					case $sub in
					fatbuild/runtime | archprobe | archprobe/* | include | include/*)
						echo "layout: ${f#"$root"/}: #include \"$inc\": the tool's plumbing is libfatbuild's and its CLI's alone"
						bad=1
						;;
					esac
					continue
				fi
				if [ -e "$root/include/$inc" ]; then
					case $sub in
					archprobe/base)
						echo "layout: ${f#"$root"/}: #include \"$inc\": archprobe/base includes nothing above it, not even a public header (it stands below both libraries)"
						bad=1
						;;
					archprobe | archprobe/*)
						if [ "$inc" != archprobe.h ]; then
							echo "layout: ${f#"$root"/}: #include \"$inc\": archprobe may not use fatbuild"
							bad=1
						fi
						;;
					esac
					continue
				fi
				echo "layout: ${f#"$root"/}: #include \"$inc\": not in $sub/ nor include/"
				bad=1
				continue
			fi
			name=${inc%%/*}
			hdr=fatbuild/$inc
			[ "$name" = base ] && hdr=archprobe/$inc
			case $sub in
			fatbuild | fatbuild/* | archprobe | archprobe/cli) ;;
			*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": $sub may use no private header of another part"
				bad=1
				continue
				;;
			esac
			if [ ! -e "$root/$hdr" ]; then
				echo "layout: ${f#"$root"/}: #include \"$inc\": no such file $hdr"
				bad=1
				continue
			fi
			case $inc:$sub in
			base/cliutil.h:archprobe/cli | base/cliutil.h:fatbuild/cli) ;;
			base/cliutil.h:*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": the CLIs' helpers (they print and exit) are no library's"
				bad=1
				continue
				;;
			esac
			case " $(allowed "$sub") " in
			*" $name "* | *" $inc "*) ;;
			*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": ${sub#fatbuild/} may not use $name (allowed: $(allowed "$sub" | sed 's/^$/nothing/'))"
				bad=1
				;;
			esac
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done < <(find "$root/archprobe" "$root/fatbuild" "$root/include" -name '*.[ch]' | sort)
	# Public headers: only other public headers.
	while IFS= read -r f; do
		while IFS= read -r inc; do
			[ -e "$root/include/$inc" ] && continue
			echo "layout: ${f#"$root"/}: #include \"$inc\": a public header may include public headers only"
			bad=1
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done < <(find "$root/include" -name '*.h' | sort)
	# No source folder may carry a name that tools take for output (.gitignore templates, editors'
	# search, tree viewers leave build/, out/, dist/, bin/, target/ out of the picture).
	# In a git checkout, a folder git tracks nothing in is not source (a build/ left by an
	# in-tree pip build); a copy outside git (the self-test) counts them all.
	while IFS= read -r f; do
		if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
			[ -z "$(git -C "$root" ls-files -- "$f" 2>/dev/null | head -n 1)" ]; then
			continue
		fi
		echo "layout: ${f#"$root"/}/: a source folder named like build output; tools that skip ${f##*/}/ would not show it"
		bad=1
	done < <(find "$root/archprobe" "$root/fatbuild" "$root/include" -type d \( -name build -o -name out -o -name dist -o -name bin -o -name target \) | sort)
	check_ranks "$root" || bad=1
	check_env "$root" || bad=1
	check_size "$root" || bad=1
	check_names "$root" || bad=1
	return $bad
}

# HACKING.md's rank table ("| `compile/` | 2, ... | `run.h`, ... |") says what RANKS says.
check_hacking() {
	local root=$1 bad=0 f part r n
	for f in "${!RANK[@]}"; do
		part=${f#fatbuild/} r=${RANK[$f]}
		grep -E "^ *\| \`${part%/*}/\` \| $r[ ,|]" "$root/HACKING.md" | grep -qF "\`${f##*/}\`" && continue
		echo "layout: HACKING.md: the rank table does not give ${f#fatbuild/} rank $r as tests/layout_check.sh RANKS does"
		bad=1
	done
	n=$(grep -E '^ *\| `[a-z]+/` \| [0-9]' "$root/HACKING.md" | grep -oE '`[a-z_]+\.[ch]`' | wc -l)
	if [ "$n" != "${#RANK[@]}" ]; then
		echo "layout: HACKING.md: its rank table names $n files, tests/layout_check.sh RANKS ${#RANK[@]}"
		bad=1
	fi
	return $bad
}

here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --self-test ]; then
	check_tree "$here" || exit 1
	check_hacking "$here" || exit 1
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	fails=0 planted=0
	fresh() {
		rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -R "$here/archprobe" "$here/fatbuild" "$here/include" "$tmp/t/"
	}
	# expect WHAT FILE [NAME]: the check of the planted tree fails, and a line of its report
	# names FILE (and NAME).
	expect() {
		planted=$((planted + 1))
		if out=$(check_tree "$tmp/t"); then
			echo "layout self-test: $1 was not reported"
			fails=1
		elif ! printf '%s\n' "$out" | grep -F "$2" | grep -qF "${3:-$2}"; then
			echo "layout self-test: $1: the report does not name $2 ${3:-}: $out"
			fails=1
		fi
	}
	# Each planted include breach must be reported: between parts, and up the ranks of a part.
	for plant in 'fatbuild/fatbin/fatbin.c:compile/compile.h' 'archprobe/base/error.c:fatbin/shared.h' \
		'archprobe/base/safefs.c:archprobe.h' 'archprobe/base/strbuf.c:fatbuild.h' \
		'archprobe/probe.c:base/cliutil.h' 'fatbuild/compile/nvrtc.c:base/cliutil.h' \
		'fatbuild/cli/cmd_pack.c:fatbin/shared.h' 'fatbuild/runtime/fbrt.c:base/bytes.h' \
		'archprobe/arch.c:fatbuild.h' 'archprobe/arch.c:compile/compile.h' \
		'fatbuild/compile/nvrtc.c:../base/bytes.h' 'include/fatbuild.h:compile/compile.h' \
		'fatbuild/devlink/dlink.c:compile/compile.h' 'fatbuild/devlink/jitlink.c:compile/nvrtc.h' \
		'fatbuild/compile/nvrtc.c:run.h' 'fatbuild/compile/depfile.c:compile.h' 'fatbuild/compile/worker.c:compile.h' \
		'fatbuild/cache/store.c:compile/run.h' 'fatbuild/cache/remote.c:extension/edgecache.h' 'fatbuild/cache/hash.c:cache.h' \
		'fatbuild/cache/store.c:cache.h' 'fatbuild/compile/compile.c:cache/store.h' 'fatbuild/extension/edgecache.c:cache/remote.h' \
		'archprobe/probe.c:plumbing.h' 'fatbuild/runtime/fbrt.c:plumbing.h' 'include/fatbuild/build.h:plumbing.h' \
		'archprobe/arch.c:fatbuild/fatbin.h' 'fatbuild/cache/tiers.c:rexec/rexec.h' 'fatbuild/cache/remote.c:rexec/action.h' \
		'fatbuild/compile/offload.c:rexec/action.h' 'fatbuild/extension/edge_remote.c:rexec/input.h' \
		'fatbuild/rexec/exec.c:compile/run.h' 'fatbuild/rexec/exec.c:extension/edgecache.h' \
		'fatbuild/rexec/action.c:cache/store.h' 'fatbuild/rexec/action.c:rexec.h' 'fatbuild/rexec/action.h:rexec.h'; do
		file=${plant%%:*} inc=${plant#*:}
		fresh
		printf '#include "%s"\n' "$inc" >>"$tmp/t/$file"
		expect "including \"$inc\" from $file" "$file" "$inc"
	done
	# Each planted use of a name defined above the file (a call, a type, a macro; through the
	# header or through a prototype of its own), or in a part the file's part may not use.
	while IFS='|' read -r file name code; do
		fresh
		printf '%s\n' "$code" >>"$tmp/t/$file"
		expect "$name used in $file" "$file" "$name"
	done <<'EOF'
fatbuild/cache/store.c|fb_compile_default_jobs|static int planted(void) { return fb_compile_default_jobs(); }
fatbuild/compile/worker.c|fb_compile_result_free|static void planted(struct fb_compile_result *r) { fb_compile_result_free(r); }
fatbuild/compile/child.c|fb_run_make_jobs|static int planted(struct run *r) { return fb_run_make_jobs(r, NULL); }
fatbuild/compile/depfile.c|fb_nvrtc_close|void fb_nvrtc_close(struct fb_nvrtc *n);
fatbuild/cache/hash.c|fb_remote_counts|static uint64_t planted(const struct fb_remote_counts *c) { return c->hits; }
fatbuild/compile/nvrtc.c|FB_SERVER_IDLE_SETS|static int planted(void) { return FB_SERVER_IDLE_SETS; }
fatbuild/cache/key.c|fb_jl_out_clear|static void planted(struct fb_jl_out *o) { fb_jl_out_clear(o); }
fatbuild/cache/remote.c|fb_edge_tool_id|static int planted(char *f, char *o) { return fb_edge_tool_id("cc", f, o, 8); }
fatbuild/cache/store.c|fb_run_job_done|static void planted(struct run *r, struct job *j) { fb_run_job_done(r, j); }
fatbuild/compile/compile.c|fb_remote_quiet|static int planted(struct fb_remote *r) { return fb_remote_quiet(r); }
fatbuild/extension/edgecache.c|fb_store_remove|static void planted(const char *d, const char *k) { fb_store_remove(d, k); }
fatbuild/cache/remote.c|fb_cache_get|static int planted(struct fb_cache *c, struct fb_cache_entry *e) { return fb_cache_get(c, "", 0, e); }
fatbuild/devlink/dlink.c|fb_nvrtc_close|static void planted(struct fb_nvrtc *n) { fb_nvrtc_close(n); }
fatbuild/devlink/jitlink.c|fb_dlink_result_clear|static void planted(struct fb_dlink_result *r) { fb_dlink_result_clear(r); }
fatbuild/cache/tiers.c|fb_exec_close|static void planted(struct fb_exec *x) { fb_exec_close(x); }
fatbuild/compile/offload.c|fb_rexec_action_free|void fb_rexec_action_free(struct fb_rexec_action *a);
fatbuild/extension/edge_remote.c|fb_rexec_path_ok|static int planted(void) { return fb_rexec_path_ok("a", 1); }
fatbuild/rexec/action.c|fb_exec_run|static int planted(struct fb_exec *x) { return fb_exec_run(x, NULL, NULL, NULL); }
fatbuild/rexec/exec.c|fb_store_remove|static void planted(const char *d, const char *k) { fb_store_remove(d, k); }
fatbuild/rexec/exec.c|fb_run_job_done|static void planted(struct run *r, struct job *j) { fb_run_job_done(r, j); }
EOF
	# A file of a ranked part without a rank (new, or moved into the wrong part), and a rank
	# for a file that is gone.
	# The environment read outside config.c, by getenv or by a helper of one's own; a variable
	# config.c reads that config.h does not list.
	for file in fatbuild/extension/graph.c archprobe/cli/archprobe.c archprobe/base/words.c; do
		fresh
		printf 'static const char *planted(void) { return getenv("HOME"); }\n' >>"$tmp/t/$file"
		expect "getenv in $file" "$file" "getenv"
	done
	# The environment changed outside config.c: a child's is made for it instead.
	for plant in 'fatbuild/cli/cmd_build.c|setenv("FATBUILD_REMOTE_CACHE", "http://x", 1)' \
		'fatbuild/extension/ninja_run.c|unsetenv("FATBUILD_COMPILE_SOCKET")' \
		'fatbuild/compile/server.c|putenv((char *)"TMPDIR=/tmp")' 'archprobe/cli/archprobe.c|clearenv()'; do
		file=${plant%%|*} call=${plant#*|}
		fresh
		printf 'static void planted(void) { %s; }\n' "$call" >>"$tmp/t/$file"
		expect "${call%%(*} in $file" "$file" "${call%%(*}()"
	done
	fresh
	printf 'static const char *planted(void) { return fb_env_get("FATBUILD_LAUNCHER"); }\n' >>"$tmp/t/fatbuild/extension/graph_host.c"
	expect "fb_env_get in fatbuild/extension/graph_host.c" fatbuild/extension/graph_host.c "fb_env_get"
	fresh
	printf 'int fb_env_switch(const char *name) { return name != 0; }\n' >>"$tmp/t/archprobe/base/words.c"
	expect "an fb_env_switch in archprobe/base/words.c" archprobe/base/words.c "fb_env_switch"
	fresh
	printf 'void planted(struct fb_config *c) { c->home = getenv("FATBUILD_PLANTED"); }\n' >>"$tmp/t/archprobe/base/config.c"
	expect "an unlisted variable read in archprobe/base/config.c" archprobe/base/config.c FATBUILD_PLANTED
	fresh
	printf 'int fb_planted(void);\n' >"$tmp/t/fatbuild/compile/planted.c"
	expect "a new fatbuild/compile/planted.c without a rank" fatbuild/compile/planted.c
	fresh
	cp "$tmp/t/fatbuild/devlink/dlink.c" "$tmp/t/fatbuild/compile/dlink.c"
	expect "the device link back in fatbuild/compile/dlink.c" fatbuild/compile/dlink.c
	fresh
	rm "$tmp/t/fatbuild/cache/stats.c"
	expect "a rank for the missing fatbuild/cache/stats.c" fatbuild/cache/stats.c
	fresh
	mkdir -p "$tmp/t/fatbuild/build"
	expect "a source folder fatbuild/build/" fatbuild/build/
	# A library file past 900 lines; a CLI file may be longer.
	fresh
	for i in $(seq 901); do echo "/* planted $i */"; done >>"$tmp/t/fatbuild/extension/graph_pch.c"
	expect "fatbuild/extension/graph_pch.c over 900 lines" fatbuild/extension/graph_pch.c "900"
	fresh
	for i in $(seq 901); do echo "/* planted $i */"; done >>"$tmp/t/fatbuild/cli/cmd_pack.c"
	if ! out=$(check_tree "$tmp/t"); then
		echo "layout self-test: a CLI file over 900 lines was reported: $out"
		fails=1
	fi
	# Two files of one name; a private header spelled *_int.h.
	fresh
	cp "$tmp/t/fatbuild/check/check.c" "$tmp/t/fatbuild/extension/check.c"
	expect "a second check.c in fatbuild/extension" fatbuild/extension/check.c "the same name"
	fresh
	mv "$tmp/t/archprobe/probe.h" "$tmp/t/archprobe/probe_int.h"
	sed -i 's/"probe\.h"/"probe_int.h"/' "$tmp/t"/archprobe/*.c
	expect "archprobe/probe_int.h" archprobe/probe_int.h "_int.h"
	# Names in comments and strings are no uses.
	fresh
	printf '/* fb_compile_default_jobs() */\nstatic const char planted[] = "fb_compile_result_free(";\n' >>"$tmp/t/fatbuild/cache/store.c"
	printf '/* getenv("HOME") */\nstatic const char planted2[] = "getenv(";\n' >>"$tmp/t/fatbuild/cache/store.c"
	if ! out=$(check_tree "$tmp/t"); then
		echo "layout self-test: names in a comment and a string were taken for uses: $out"
		fails=1
	fi
	# A rank table in HACKING.md that says otherwise.
	mkdir -p "$tmp/h" && sed 's/^\(  | `cache\/` | 1, .*\)`stats\.c`, /\1/' "$here/HACKING.md" >"$tmp/h/HACKING.md"
	planted=$((planted + 1))
	if check_hacking "$tmp/h" >/dev/null; then
		echo "layout self-test: HACKING.md without stats.c in its rank table was not reported"
		fails=1
	fi
	[ $fails = 0 ] && echo "layout: ok (and $planted planted breaches reported)"
	exit $fails
fi
if [ -z "${1:-}" ]; then
	check_hacking "$here" || exit 1
fi
check_tree "${1:-$here}" && echo "layout: ok"
