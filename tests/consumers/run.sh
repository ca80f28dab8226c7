#!/usr/bin/env bash
# run.sh: the consumer tests. Each step builds one small project in tests/consumers/ against an
# install prefix of the current build, the way a user would, and checks its output.
#   run.sh install        cmake --install $FB_BINARY_DIR into $CONSUMER_ROOT/prefix and check the tree
#   run.sh cmake-archs    archprobe_cuda_architectures + enable_language(CUDA) (fallback or devices)
#   run.sh cmake-choices  the same function with ARCH_LIST, TORCH_CUDA_ARCH_LIST, bad input, STRICT
#   run.sh cmake-ext      fatbuild_add_extension, rebuilt only when a source changes
#   run.sh make           Makefile: fatbuild --arch-list flags, pkg-config
#   run.sh meson          meson.build: archprobe --format nvcc/list --fallback, pkg-config
#   run.sh pytorch        pytorch/build.sh: TORCH_CUDA_ARCH_LIST from archprobe (pip stubbed out)
#   run.sh readme         every line of docs/build-systems.md's embedding snippets is in a tested project
# Environment: FB_SOURCE_DIR, FB_BINARY_DIR, CONSUMER_ROOT (scratch; the prefix lives there),
# FB_CONSUMER_CC / FB_CONSUMER_CFLAGS (compiler and flags of the build, e.g. sanitizers),
# CUDA_HOME (default /usr/local/cuda). Exit 0 pass, 1 fail, 77 skipped (only: meson not installed).
set -u
step=${1:?usage: run.sh install|cmake-archs|cmake-choices|cmake-ext|make|meson|pytorch|readme}
: "${FB_SOURCE_DIR:?}" "${FB_BINARY_DIR:?}" "${CONSUMER_ROOT:?}"
here=$FB_SOURCE_DIR/tests/consumers
prefix=$CONSUMER_ROOT/prefix
cuda=${CUDA_HOME:-/usr/local/cuda}
cc=${FB_CONSUMER_CC:-cc}
cflags=${FB_CONSUMER_CFLAGS:-}
work=$CONSUMER_ROOT/$step
mkdir -p "$CONSUMER_ROOT"
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
		share/man/man1/archprobe.1 share/man/man1/fatbuild.1 share/man/man1/fatbuild-build.1 \
		share/doc/archprobe-fatbuild/archprobe.txt share/doc/archprobe-fatbuild/fatbuild.txt \
		share/doc/archprobe-fatbuild/fatbuild-build.md share/bash-completion/completions/fatbuild \
		share/bash-completion/completions/archprobe; do
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
	# Relocatable: a copy elsewhere uses its own runtime, headers and .pc paths.
	moved=$CONSUMER_ROOT/moved
	rm -rf "$moved" && cp -a "$prefix" "$moved"
	"$moved/bin/fatbuild" env >"$CONSUMER_ROOT/env.out" 2>&1
	expect_grep "moved prefix: fatbuild build uses its runtime" "^runtime +$moved/lib/libfatbuild_runtime.a" "$CONSUMER_ROOT/env.out"
	expect_grep "moved prefix: and its include dir" "^include +$moved/include" "$CONSUMER_ROOT/env.out"
	got=$(PKG_CONFIG_PATH="$moved/lib/pkgconfig" pkg-config --variable=fatbuild fatbuild)
	case $got in "$moved"/*) ok "moved prefix: pkg-config points there" ;; *) fail "moved prefix: pkg-config gives '$got'" ;; esac
	rm -rf "$moved"
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
		expect_eq "archs" "$archs" "75-real;80"
		expect_grep "the notice names the fallback" "using the fallback list '7.5;8.0\\+PTX'" "$work/b.log"
		expect_grep "the notice says why" "no CUDA (driver|device)|stub|driver" "$work/b.log"
	fi
	expect_eq "fatbuild_gencode_flags" "$(cat "$work/b/gencode.txt")" \
		"-gencode=arch=compute_80,code=sm_80;-gencode=arch=compute_86,code=sm_86;-gencode=arch=compute_86,code=compute_86"
	if ! cmake --build "$work/b" >"$work/build.log" 2>&1; then
		fail "build failed:"; sed 's/^/  | /' "$work/build.log" >&2; finish
	fi
	expect_images "libsaxpy.so" "$work/b/libsaxpy.so" "$archs"
	if gpu_visible; then
		expect_eq "fatbuild check --arch native libsaxpy.so" \
			"$(fatbuild check --quiet --arch native "$work/b/libsaxpy.so" >/dev/null 2>&1; echo $?)" 0
	else
		expect_eq "fatbuild check --arch 7.5,8.6,9.0 libsaxpy.so" \
			"$(fatbuild check --quiet --arch 7.5,8.6,9.0 "$work/b/libsaxpy.so" >/dev/null 2>&1; echo $?)" 0
		expect_eq "fatbuild check --arch 7.0 libsaxpy.so (no image)" \
			"$(fatbuild check --quiet --arch 7.0 "$work/b/libsaxpy.so" >/dev/null 2>&1; echo $?)" 1
	fi
	expect_eq "libcheck (fatbuild::fatbuild_static)" "$("$work/b/libcheck" | head -n1)" "80-real;86"
	expect_eq "libcheck_shared (fatbuild::fatbuild)" "$("$work/b/libcheck_shared" | head -n1)" "80-real;86"
	;;
cmake-choices)
	# Configure-only runs of the cmake-archs project (WITH_CUDA=OFF): where the list comes from,
	# and that bad input or a misbehaving tool stops the configure instead of yielding a list.
	copy_project cmake-archs
	mkdir -p "$work/fake"
	printf '#!/bin/sh\nprintf "No CUDA devices found.-real\\n"\n' >"$work/fake/fatbuild"
	printf '#!/bin/sh\nprintf "No CUDA devices found.\\n"\n' >"$work/fake/archprobe"
	chmod +x "$work/fake/fatbuild" "$work/fake/archprobe"
	# All runs reconfigure one build dir (compiler checks once); each resets what the last one set.
	reconfigure() {
		rm -f "$work/c/archs.txt"
		configure "$1" c -DWITH_CUDA=OFF -UFATBUILD_EXECUTABLE -UARCHPROBE_EXECUTABLE -DMY_ARCHS= \
			-DMY_STRICT=OFF "${@:3}" && cp "$work/c.log" "$work/$2.log"
	}
	# expect_configure WHAT NAME WANT-ARCHS WANT-SOURCE ARGS...
	expect_configure() {
		local what=$1 dir=$2 want="$3 $4"
		shift 4
		if reconfigure "$what" "$dir" "$@"; then
			expect_eq "$what" "$(tr '\n' ' ' <"$work/c/archs.txt" | sed 's/ $//')" "$want"
		else
			fail "$what: configure failed:"; sed 's/^/  | /' "$work/c.log" >&2
		fi
	}
	# expect_refused WHAT NAME PATTERN ARGS...: the configure fails, saying PATTERN, and writes no list.
	expect_refused() {
		local what=$1 dir=$2 pat=$3
		shift 3
		if reconfigure "$what" "$dir" "$@"; then
			fail "$what: configure succeeded with '$(tr '\n' ' ' <"$work/c/archs.txt")'"
		else
			cp "$work/c.log" "$work/$dir.log"
			# CMake wraps messages: compare with the lines joined.
			tr '\n' ' ' <"$work/$dir.log" | tr -s ' ' >"$work/$dir.joined"
			expect_grep "$what: refused" "$pat" "$work/$dir.joined"
			[ ! -e "$work/c/archs.txt" ] && ok "$what: no list written" || fail "$what: a list was written"
		fi
	}
	expect_configure "ARCH_LIST 8.6+PTX;9.0a" list "86;90a-real" ARCH_LIST -DMY_ARCHS="8.6+PTX;9.0a"
	expect_configure "ARCH_LIST in CMake syntax" cmk "80-real;86" ARCH_LIST -DMY_ARCHS="80-real;86"
	TORCH_CUDA_ARCH_LIST="Ampere" expect_configure "TORCH_CUDA_ARCH_LIST=Ampere" torch "80-real;86" TORCH_CUDA_ARCH_LIST
	ARCHPROBE_ARCHS="9.0 8.6" expect_configure "ARCHPROBE_ARCHS=9.0 8.6 (replaces the probe)" override \
		"86-real;90" ARCHPROBE_ARCHS
	expect_refused "ARCH_LIST with a bad item" bad "'bogus'.*not an arch" -DMY_ARCHS="8.0;bogus"
	expect_refused "ARCH_LIST the toolkit lacks" old "sm_70 is not supported" -DMY_ARCHS="7.0"
	expect_refused "a tool that prints garbage" garbage "refusing to use it" -DMY_ARCHS="8.0" \
		-DFATBUILD_EXECUTABLE="$work/fake/fatbuild"
	if gpu_visible; then
		expect_configure "STRICT with a GPU" strict "$(fatbuild --arch-list native --format cmake)" devices -DMY_STRICT=ON
	else
		expect_refused "STRICT without a GPU" strict "archprobe_cuda_architectures\\(STRICT\\): no GPU to build for" -DMY_STRICT=ON
		expect_grep "STRICT says why" "no CUDA (driver|device)|stub|driver" "$work/strict.log"
		ARCHPROBE_FALLBACK="8.9" expect_configure "ARCHPROBE_FALLBACK does not pass for a device" envfb \
			"75-real;80" fallback
		expect_refused "a probe that prints garbage" garbage2 "GPUs \\(archprobe\\) 'No CUDA devices found\\.' cannot be used" \
			-DARCHPROBE_EXECUTABLE="$work/fake/archprobe"
	fi
	;;
cmake-ext)
	copy_project cmake-ext
	if ! configure "configure" b; then
		fail "configure failed:"; sed 's/^/  | /' "$work/b.log" >&2; finish
	fi
	if ! cmake --build "$work/b" >"$work/build.log" 2>&1; then
		fail "build failed:"; sed 's/^/  | /' "$work/build.log" >&2; finish
	fi
	ext=$work/b/libsaxpy_ext.so
	expect_images "libsaxpy_ext.so (NVRTC)" "$ext" "80-real;90"
	expect_images "libsaxpy_nvcc.so (nvcc)" "$work/b/libsaxpy_nvcc.so" "80-real"
	expect_eq "fatbuild check --arch 8.6,9.0,12.0 libsaxpy_ext.so" \
		"$(fatbuild check --quiet --arch 8.6,9.0,12.0 "$ext" >/dev/null 2>&1; echo $?)" 0
	expect_eq "fatbuild check --arch 7.5 libsaxpy_ext.so (no image)" \
		"$(fatbuild check --quiet --arch 7.5 "$ext" >/dev/null 2>&1; echo $?)" 1
	# The program linked against the extension runs and reaches the runtime.
	"$work/b/use_ext" >"$work/use_ext.out" 2>&1
	rc=$?
	if gpu_visible; then
		expect_eq "use_ext with a GPU" "$rc" 0
	else
		expect_eq "use_ext without a driver: exit" "$rc" 3
		expect_grep "use_ext reports the runtime's reason" "^saxpy_ready: 1: .+" "$work/use_ext.out"
	fi
	# Dependencies: nothing changed -> the extension is not rewritten; a source changed -> rebuilt.
	before=$(stat -c %Y.%s "$ext")
	sleep 1
	cmake --build "$work/b" >"$work/rebuild0.log" 2>&1 || fail "no-op rebuild failed"
	expect_eq "no-op build leaves the extension alone" "$(stat -c %Y.%s "$ext")" "$before"
	printf '\n/* changed */\n' >>"$work/src/saxpy_host.c"
	cmake --build "$work/b" >"$work/rebuild1.log" 2>&1 || fail "rebuild after a change failed"
	[ "$(stat -c %Y.%s "$ext")" != "$before" ] && ok "a changed source rebuilds the extension" ||
		fail "the extension was not rebuilt after saxpy_host.c changed"
	expect_images "rebuilt libsaxpy_ext.so" "$ext" "80-real;90"
	;;
make)
	copy_project make
	if ! make -C "$work/src" CC="$cc" CFLAGS="$cflags" LDFLAGS="$cflags" NVCC="$cuda/bin/nvcc" >"$work/make.log" 2>&1; then
		fail "make failed:"; sed 's/^/  | /' "$work/make.log" >&2; finish
	fi
	expect_images "saxpy.o (ARCHS=7.5 8.0)" "$work/src/saxpy.o" "75-real;80-real"
	expect_eq "libcheck (pkg-config fatbuild)" "$("$work/src/libcheck" | head -n1)" "80-real;86"
	make -C "$work/src" clean >/dev/null 2>&1
	if make -C "$work/src" ARCHS="Hopper+PTX 10.0" CC="$cc" CFLAGS="$cflags" NVCC="$cuda/bin/nvcc" saxpy.o \
		>"$work/make2.log" 2>&1; then
		expect_images "saxpy.o (ARCHS=Hopper+PTX 10.0)" "$work/src/saxpy.o" "90;100-real"
	else
		fail "make ARCHS='Hopper+PTX 10.0' failed:"; sed 's/^/  | /' "$work/make2.log" >&2
	fi
	make -C "$work/src" clean >/dev/null 2>&1
	if make -C "$work/src" ARCHS="8.0 bogus" NVCC="$cuda/bin/nvcc" saxpy.o >"$work/make3.log" 2>&1; then
		fail "make with ARCHS='8.0 bogus' succeeded"
	else
		expect_grep "a bad ARCHS stops make" "could not turn ARCHS=\"8.0 bogus\"" "$work/make3.log"
		[ ! -e "$work/src/saxpy.o" ] && ok "nothing compiled for a bad ARCHS" || fail "saxpy.o built for a bad ARCHS"
	fi
	;;
meson)
	if ! command -v meson >/dev/null 2>&1; then
		echo "SKIP: meson is not installed (pip install meson, or apt-get install meson)"
		exit 77
	fi
	copy_project meson
	if ! CC="$cc" CFLAGS="$cflags" LDFLAGS="$cflags" meson setup "$work/src" "$work/b" >"$work/setup.log" 2>&1; then
		fail "meson setup failed:"; sed 's/^/  | /' "$work/setup.log" >&2; finish
	fi
	if ! meson compile -C "$work/b" >"$work/compile.log" 2>&1; then
		fail "meson compile failed:"; sed 's/^/  | /' "$work/compile.log" >&2; finish
	fi
	if gpu_visible; then
		want=$(archprobe --format cmake)
	else
		want=$(fatbuild --arch-list "7.5;8.0+PTX" --format cmake 2>/dev/null)
		expect_grep "archprobe's notice is shown" "building for the fallback list" "$work/setup.log"
	fi
	expect_images "saxpy.o" "$work/b/saxpy.o" "$want"
	for a in $(echo "$want" | tr ';' ' '); do
		sm=${a%-real}
		expect_images "saxpy.sm_$sm.cubin" "$work/b/saxpy.sm_$sm.cubin" "$sm-real"
	done
	expect_eq "libcheck (dependency('fatbuild'))" "$("$work/b/libcheck" | head -n1)" "80-real;86"
	;;
pytorch)
	# build.sh with a stand-in pip (PyTorch is not needed): what TORCH_CUDA_ARCH_LIST pip gets.
	rm -rf "$work" && mkdir -p "$work/bin" "$work/ext"
	printf '#!/bin/sh\nprintf "%%s\\n" "$TORCH_CUDA_ARCH_LIST" >"%s"\nprintf "%%s\\n" "$*" >>"%s"\n' \
		"$work/pip.got" "$work/pip.got" >"$work/bin/pip"
	chmod +x "$work/bin/pip"
	(cd "$work/ext" && PATH="$work/bin:$PATH" sh "$here/pytorch/build.sh") >"$work/build.out" 2>"$work/build.err"
	expect_eq "build.sh exit" "$?" 0
	got=$(sed -n 1p "$work/pip.got" 2>/dev/null)
	expect_eq "pip's arguments" "$(sed -n 2p "$work/pip.got" 2>/dev/null)" "install --no-build-isolation ."
	if gpu_visible; then
		expect_eq "TORCH_CUDA_ARCH_LIST (a GPU is visible)" "$got" "$(archprobe --format torch)"
	else
		expect_eq "TORCH_CUDA_ARCH_LIST (no GPU: the fallback)" "$got" "8.0 9.0+PTX"
		expect_grep "the notice says why" "no CUDA driver|no visible|stub|driver" "$work/build.err"
		# Why the recipe keeps '|| exit 1': without --fallback there is no answer, only an exit code.
		out=$(archprobe --format torch 2>/dev/null)
		rc=$?
		[ "$rc" -ne 0 ] && [ -z "$out" ] && ok "without --fallback: exit $rc, no output" ||
			fail "without --fallback: exit $rc, output '$out'"
	fi
	# The value reads back as the same list (fatbuild's reader is PyTorch's syntax).
	expect_eq "round trip through fatbuild" "$(fatbuild --arch-list "$got" --format torch 2>/dev/null)" "$got"
	# Where PyTorch is installed, its own reader gives the same nvcc flags as fatbuild.
	if python3 -c 'import torch.utils.cpp_extension' >/dev/null 2>&1; then
		torch_flags=$(TORCH_CUDA_ARCH_LIST="$got" python3 -c \
			'from torch.utils.cpp_extension import _get_cuda_arch_flags as f; print(" ".join(sorted(f())))')
		expect_eq "PyTorch's flags" "$torch_flags" "$(fatbuild --arch-list "$got" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
	else
		echo "note: PyTorch is not installed; its own reading of the list is not compared"
	fi
	;;
readme)
	# Each block of docs/build-systems.md that follows "<!-- from tests/consumers/FILE -->" must be made of lines of
	# FILE (compared without leading and trailing blanks): the snippets are the tested projects.
	readme=$FB_SOURCE_DIR/docs/build-systems.md
	n=0
	while IFS=$'\t' read -r file line; do
		n=$((n + 1))
		trimmed=$(printf '%s' "$line" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ -z "$trimmed" ] && continue
		if sed 's/^[[:space:]]*//; s/[[:space:]]*$//' "$here/$file" | grep -qxF -- "$trimmed"; then :; else
			fail "docs/build-systems.md line not in tests/consumers/$file: $trimmed"
		fi
	done < <(awk '
		/<!-- from tests\/consumers\/[^ ]+ -->/ { match($0, /tests\/consumers\/[^ ]+/); f = substr($0, RSTART + 16, RLENGTH - 16); want = 1; next }
		want && /^```/ { if (inblock) { inblock = 0; want = 0 } else inblock = 1; next }
		inblock { print f "\t" $0 }' "$readme")
	[ $n -gt 0 ] && ok "$n docs/build-systems.md snippet lines checked" || fail "no '<!-- from tests/consumers/... -->' snippets in docs/build-systems.md"
	;;
*)
	echo "run.sh: unknown step '$step'" >&2
	exit 2
	;;
esac
finish
