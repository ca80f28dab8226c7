#!/usr/bin/env bash
# run.sh: the consumer tests. Each step builds one small project in tests/consumers/ against an
# install prefix of the current build, the way a user would, and checks its output.
#   run.sh install        cmake --install $FB_BINARY_DIR into $CONSUMER_ROOT/prefix and check the tree
#   run.sh cmake-archs    archprobe_cuda_architectures + enable_language(CUDA) (fallback or devices)
#   run.sh cmake-choices  the same function with ARCH_LIST, TORCH_CUDA_ARCH_LIST, bad input, STRICT
#   run.sh cmake-ext      fatbuild_add_extension, rebuilt only when a source changes
#   run.sh make           Makefile: fatbuild --arch-list flags, pkg-config
#   run.sh meson          meson.build: archprobe --format list, fatbuild, pkg-config
#   run.sh readme         every line of the README's embedding snippets is in a tested project
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR, CONSUMER_ROOT (scratch; the prefix lives there),
# FB_CONSUMER_CC / FB_CONSUMER_CFLAGS (compiler and flags of the build, e.g. sanitizers),
# CUDA_HOME (default /usr/local/cuda). Exit 0 pass, 1 fail, 77 skipped (only: meson not installed).
set -u
step=${1:?usage: run.sh install|cmake-archs|cmake-choices|cmake-ext|make|meson|readme}
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}" "${CONSUMER_ROOT:?}"
here=$FB_SOURCE_DIR/tests/consumers
prefix=$CONSUMER_ROOT/prefix
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${FB_CONSUMER_CC:-cc}
cflags=${FB_CONSUMER_CFLAGS:-}
work=$CONSUMER_ROOT/$step
fails=0

fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
# expect_eq WHAT GOT WANT
expect_eq() { if [ "$2" = "$3" ]; then ok "$1 = '$3'"; else fail "$1: got '$2', want '$3'"; fi; }
# expect_grep WHAT PATTERN FILE
expect_grep() { if grep -qE -- "$2" "$3"; then ok "$1"; else fail "$1: /$2/ not in $3:"; sed 's/^/  | /' "$3" >&2; fi; }
finish() { [ $fails -eq 0 ] && { echo "PASS: $step"; exit 0; }; echo "$fails check(s) failed in $step" >&2; exit 1; }

# A fresh copy of project $1 with the shared sources beside it.
copy_project() {
	rm -rf "$work" && mkdir -p "$work" && cp -r "$here/$1" "$work/src" &&
		cp "$here/saxpy.cu" "$here/libcheck.c" "$work/src/"
}
# The images in a binary, "elf sm_80" / "ptx compute_80", one per line, sorted, deduplicated
# over its containers (from the table of 'fatbuild inspect').
images() { "$prefix/bin/fatbuild" inspect "$1" | awk '$2 == "elf" || $2 == "ptx" { print $2, $3 }' | sort -u; }
# The images a CUDA_ARCHITECTURES list asks for: 80 = SASS+PTX, 80-real = SASS, 80-virtual = PTX.
cmake_images() {
	echo "$1" | tr ';' '\n' | while read -r a; do
		case $a in
		*-real) echo "elf sm_${a%-real}" ;;
		*-virtual) echo "ptx compute_${a%-virtual}" ;;
		*) echo "elf sm_$a"; echo "ptx compute_$a" ;;
		esac
	done | sort -u
}
# expect_images WHAT BINARY CMAKE-LIST
expect_images() {
	local got want
	got=$(images "$2" | tr '\n' ' ')
	want=$(cmake_images "$3" | tr '\n' ' ')
	if [ -n "$got" ] && [ "$got" = "$want" ]; then ok "$1: images $got"; else fail "$1: images '$got', want '$want'"; fi
}
# configure WHAT DIR ARGS...: cmake configure of $work/src into $work/DIR, log in $work/DIR.log.
configure() {
	local what=$1 dir=$2
	shift 2
	cmake -S "$work/src" -B "$work/$dir" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
		-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CUDA_COMPILER="$cuda/bin/nvcc" \
		"$@" >"$work/$dir.log" 2>&1
}
# Whether archprobe sees a GPU here (0) or not; its verdict decides what the fallback tests expect.
gpu_visible() { "$prefix/bin/archprobe" >/dev/null 2>&1; }

export PATH="$prefix/bin:$PATH"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset TORCH_CUDA_ARCH_LIST ARCHPROBE_ARCHS ARCHPROBE_FALLBACK CUDAARCHS

case $step in
install)
	rm -rf "$prefix"
	if ! cmake --install "$FB_BINARY_DIR" --prefix "$prefix" >"$CONSUMER_ROOT/install.log" 2>&1; then
		cat "$CONSUMER_ROOT/install.log" >&2
		fail "cmake --install"
		finish
	fi
	for f in bin/archprobe bin/fatbuild include/archprobe.h include/fatbuild.h include/fatbuild_runtime.h \
		lib/libarchprobe.so lib/libarchprobe.a lib/libfatbuild.so lib/libfatbuild.a lib/libfatbuild_runtime.a \
		lib/pkgconfig/archprobe.pc lib/pkgconfig/fatbuild.pc \
		lib/cmake/archprobe/archprobeConfig.cmake lib/cmake/archprobe/archprobeConfigVersion.cmake \
		lib/cmake/archprobe/archprobeFunctions.cmake lib/cmake/fatbuild/fatbuildConfig.cmake \
		lib/cmake/fatbuild/fatbuildConfigVersion.cmake lib/cmake/fatbuild/fatbuildFunctions.cmake \
		share/man/man1/archprobe.1 share/man/man1/fatbuild.1 \
		share/doc/archprobe-fatbuild/archprobe.txt share/doc/archprobe-fatbuild/fatbuild.txt; do
		[ -e "$prefix/$f" ] && ok "installed $f" || fail "not installed: $f"
	done
	# The help texts are the tools' own --help.
	"$prefix/bin/archprobe" --help >"$CONSUMER_ROOT/ap.help" 2>/dev/null
	cmp -s "$CONSUMER_ROOT/ap.help" "$prefix/share/doc/archprobe-fatbuild/archprobe.txt" &&
		ok "archprobe.txt is 'archprobe --help'" || fail "archprobe.txt differs from 'archprobe --help'"
	"$prefix/bin/fatbuild" flags --help >"$CONSUMER_ROOT/fl.help" 2>/dev/null
	grep -qxF "$(head -n1 "$CONSUMER_ROOT/fl.help")" "$prefix/share/doc/archprobe-fatbuild/fatbuild.txt" &&
		ok "fatbuild.txt has 'fatbuild flags --help'" || fail "fatbuild.txt lacks 'fatbuild flags --help'"
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=100 man -l "$prefix/share/man/man1/fatbuild.1" >"$CONSUMER_ROOT/man.txt" 2>&1 &&
			expect_grep "man fatbuild renders" "fatbuild flags" "$CONSUMER_ROOT/man.txt"
	fi
	# pkg-config: flags point into the prefix, wherever it was installed.
	got=$(pkg-config --cflags fatbuild)
	case $got in *"$prefix"*) ok "pkg-config --cflags fatbuild: $got" ;; *) fail "pkg-config --cflags fatbuild: '$got'" ;; esac
	expect_eq "pkg-config --variable=archprobe archprobe runs" \
		"$("$(pkg-config --variable=archprobe archprobe)" --help >/dev/null 2>&1; echo $?)" 0
	expect_eq "pkg-config --modversion fatbuild" "$(pkg-config --modversion fatbuild)" \
		"$(sed -n 's/^project(archprobe_fatbuild VERSION \([0-9.]*\).*/\1/p' "$FB_SOURCE_DIR/CMakeLists.txt")"
	;;
cmake-archs)
	copy_project cmake-archs
	if ! configure "configure" b; then
		fail "configure failed:"; sed 's/^/  | /' "$work/b.log" >&2; finish
	fi
	archs=$(sed -n 1p "$work/b/archs.txt")
	source=$(sed -n 2p "$work/b/archs.txt")
	if gpu_visible; then
		expect_eq "source (a GPU is visible)" "$source" devices
		expect_eq "archs" "$archs" "$(fatbuild --arch-list native --format cmake)"
	else
		expect_eq "source (no GPU visible)" "$source" fallback
		expect_eq "archs" "$archs" "75-real;80-real"
		expect_grep "the notice names the fallback" "using the fallback list '7.5;8.0'" "$work/b.log"
		expect_grep "the notice says why" "no CUDA (driver|device)|stub|driver" "$work/b.log"
	fi
	expect_eq "fatbuild_gencode_flags" "$(cat "$work/b/gencode.txt")" \
		"-gencode=arch=compute_80,code=sm_80;-gencode=arch=compute_86,code=sm_86;-gencode=arch=compute_86,code=compute_86"
	if ! cmake --build "$work/b" >"$work/build.log" 2>&1; then
		fail "build failed:"; sed 's/^/  | /' "$work/build.log" >&2; finish
	fi
	expect_images "libsaxpy.so" "$work/b/libsaxpy.so" "$archs"
	expect_eq "libcheck (fatbuild::fatbuild_static)" "$("$work/b/libcheck" | head -n1)" "80-real;86"
	expect_eq "libcheck_shared (fatbuild::fatbuild)" "$("$work/b/libcheck_shared" | head -n1)" "80-real;86"
	;;
*)
	echo "run.sh: unknown step '$step'" >&2
	exit 2
	;;
esac
finish
