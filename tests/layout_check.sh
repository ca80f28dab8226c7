#!/usr/bin/env bash
# layout_check.sh: the direction rule of HACKING.md ("Layout"), checked on every #include "..."
# of the toolkit's own sources.
#   layout_check.sh [ROOT]         check the tree at ROOT (default: the repository); exit 1 on a breach
#   layout_check.sh --self-test    also prove the check fails on planted breaches
# A quoted include is either a bare name from the file's own folder or from include/ (the public
# API), or "SUBSYSTEM/name.h" naming a private header of a subsystem the file's own may use:
#   fatbuild/common   -> (nothing)
#   fatbuild/fatbin   -> common
#   fatbuild/compile  -> common fatbin
#   fatbuild/devlink  -> common fatbin
#   fatbuild/extension -> common fatbin compile devlink
#   fatbuild/runtime  -> fatbin/format.h only (header-only: the runtime links nothing but its own code)
#   fatbuild/cli      -> (public headers only: archprobe.h, fatbuild.h)
#   archprobe/        -> (its own *_int.h); archprobe/cli -> public headers only
# Public headers never include private ones, and archprobe never includes fatbuild.
set -u

allowed() {
	case $1 in
	fatbuild/common) echo "" ;;
	fatbuild/fatbin) echo "common" ;;
	fatbuild/compile) echo "common fatbin" ;;
	fatbuild/devlink) echo "common fatbin" ;;
	fatbuild/extension) echo "common fatbin compile devlink" ;;
	fatbuild/runtime) echo "fatbin/format.h" ;;
	*) echo "" ;;
	esac
}

check_tree() {
	local root=$1 bad=0 f dir sub inc name
	while IFS= read -r f; do
		dir=${f%/*}
		sub=${dir#"$root"/}
		while IFS= read -r inc; do
			case $inc in
			../* | */../* | /*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": no relative or absolute paths; name the subsystem (\"common/bytes.h\")"
				bad=1
				continue
				;;
			esac
			if [ "${inc#*/}" = "$inc" ]; then
				# Bare name: own folder, or the public API.
				if [ -e "$dir/$inc" ]; then
					continue
				fi
				if [ -e "$root/include/$inc" ]; then
					case $sub in
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
			case $sub in
			fatbuild/*) ;;
			*)
				echo "layout: ${f#"$root"/}: #include \"$inc\": $sub may use no private header of another part"
				bad=1
				continue
				;;
			esac
			if [ ! -e "$root/fatbuild/$inc" ]; then
				echo "layout: ${f#"$root"/}: #include \"$inc\": no such file fatbuild/$inc"
				bad=1
				continue
			fi
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
	while IFS= read -r f; do
		echo "layout: ${f#"$root"/}/: a source folder named like build output; tools that skip ${f##*/}/ would not show it"
		bad=1
	done < <(find "$root/archprobe" "$root/fatbuild" "$root/include" -type d \( -name build -o -name out -o -name dist -o -name bin -o -name target \) | sort)
	return $bad
}

here=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --self-test ]; then
	check_tree "$here" || exit 1
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	fails=0
	# Each planted breach must be reported.
	for plant in 'fatbuild/fatbin/fatbin.c:compile/compile.h' 'fatbuild/common/error.c:fatbin/fatbin_priv.h' \
		'fatbuild/cli/cmd_pack.c:fatbin/fatbin_priv.h' 'fatbuild/runtime/fbrt.c:common/bytes.h' \
		'archprobe/arch.c:fatbuild.h' 'fatbuild/compile/nvrtc.c:../common/bytes.h' 'include/fatbuild.h:compile/compile.h'; do
		file=${plant%%:*} inc=${plant#*:}
		rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -R "$here/archprobe" "$here/fatbuild" "$here/include" "$tmp/t/"
		printf '#include "%s"\n' "$inc" >>"$tmp/t/$file"
		if out=$(check_tree "$tmp/t"); then
			echo "layout self-test: including \"$inc\" from $file was not reported"
			fails=1
		else
			printf '%s\n' "$out" | grep -qF "$file" || { echo "layout self-test: report does not name $file: $out"; fails=1; }
		fi
	done
	rm -rf "$tmp/t" && mkdir -p "$tmp/t" && cp -R "$here/archprobe" "$here/fatbuild" "$here/include" "$tmp/t/"
	mkdir -p "$tmp/t/fatbuild/build"
	if out=$(check_tree "$tmp/t"); then
		echo "layout self-test: a source folder fatbuild/build/ was not reported"
		fails=1
	fi
	[ $fails = 0 ] && echo "layout: ok (and 8 planted breaches reported)"
	exit $fails
fi
check_tree "${1:-$here}" && echo "layout: ok"
