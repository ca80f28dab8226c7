#!/usr/bin/env bash
# toolchains.sh: one kernel through `fatbuild compile` and `fatbuild build` with each toolkit
# generation at hand: the system CUDA (13.0), NVIDIA's CUDA 13.5 pip wheels (nvidia/cu13 tree:
# via CUDA_HOME, via the nvcc on PATH, and NVRTC alone via --nvrtc), the CUDA 12.9 wheels
# (nvidia/cuda_nvcc + nvidia/cuda_nvrtc) and a toolkit newer than every built-in table (the
# 13.5 NVRTC reporting 14.1). Every image is checked with `fatbuild inspect` and with NVIDIA's
# cuobjdump (wheel nvidia-cuda-cuobjdump). clang 22's CUDA output for `--format clang` is
# checked the same way when clang-22 is installed (scripts/deps.sh installs it).
# The wheels go into a venv under the build dir ($FB_BINARY_DIR/toolchains-venv), installed
# once and reused while the pinned versions below stay the same.
set -u
: "${FB_BINARY_DIR:?}" "${FB_SOURCE_DIR:?}" "${FATBUILD_BIN:?}"
FB=$FATBUILD_BIN
fails=0 passes=0
ok() { passes=$((passes + 1)); echo "ok $*"; }
bad() { fails=$((fails + 1)); echo "FAIL $*"; }

pkgs="nvidia-cuda-nvcc==13.5.37 nvidia-cuda-nvrtc==13.5.37 nvidia-cuda-nvcc-cu12==12.9.86 nvidia-cuda-nvrtc-cu12==12.9.86 nvidia-cuda-cuobjdump==13.5.37"
venv=${FB_VENV_DIR:-$FB_BINARY_DIR}/toolchains-venv
if [ "$(cat "$venv/.pkgs" 2>/dev/null)" != "$pkgs" ]; then
	rm -rf "$venv"
	python3 -m venv "$venv" || { echo "FAIL python3 -m venv (install python3-venv)"; exit 1; }
	# --no-deps: nvcc's own dependencies (nvvm, the runtime headers) are not needed for NVRTC
	# builds, nvcc --list-gpu-code or ptxas --help
	# shellcheck disable=SC2086
	"$venv/bin/pip" install -q --disable-pip-version-check --no-deps $pkgs || { echo "FAIL pip install $pkgs"; exit 1; }
	echo "$pkgs" >"$venv/.pkgs"
fi
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cu13=$site/nvidia/cu13
cu12=$site/nvidia/cuda_nvcc
cuobjdump=$(find "$site/nvidia" -path '*/bin/cuobjdump' -type f | head -1)
[ -x "$cu13/bin/nvcc" ] && [ -e "$cu13/lib/libnvrtc.so.13" ] || { echo "FAIL no nvidia/cu13 tree in $site"; exit 1; }
[ -e "$site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12" ] || { echo "FAIL no nvidia/cuda_nvrtc in $site"; exit 1; }
[ -x "$cuobjdump" ] || { echo "FAIL no cuobjdump in $site/nvidia"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fbtc.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export FATBUILD_CACHE_DIR=$work/cache FATBUILD_BUILD_DIR=$work/builds
cat >k.cu <<'K'
extern "C" __global__ void scale(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}
K
cat >host.cpp <<'H'
#include <cstdint>
#include <fatbuild_runtime.h>
extern "C" int scale_device(std::uint64_t x, float a, int n)
{
	void *args[] = {&x, &a, &n};
	return fbrt_launch_name("scale", fbrt_dim((n + 127) / 128), fbrt_dim(128), 0, nullptr, args, nullptr);
}
H

# images as "elf sm_80" / "ptx compute_86" lines, sorted: what the list asks, what fatbuild
# inspect and cuobjdump find
want_images() { "$@" --format nvrtc | sed 's/^-arch=sm_/elf sm_/; s/^-arch=compute_/ptx compute_/' | sort; }
fb_images() { "$FB" inspect "$1" | awk '$2 == "elf" || $2 == "ptx" { print $2, $3 }' | sort; }
# cuobjdump's own reading: the "arch = sm_100f" line after each "Fatbin elf/ptx code:" header
# (its --list-elf file names drop the f of a family-specific cubin)
nv_images() {
	"$cuobjdump" -elf -ptx "$1" 2>/dev/null | awk '/^Fatbin (elf|ptx) code:/ { kind = $2; next }
		kind && /^arch = / { a = $3; if (kind == "ptx") sub(/^sm_/, "compute_", a); print kind, a; kind = "" }' | sort
}

# gen NAME LIST ENV...: compile and build the kernel for LIST in the environment ENV...
gen() {
	local name=$1 list=$2
	shift 2
	local want
	want=$(env "$@" "$FB" --arch-list "$list" --format nvrtc 2>"$name.flags.err" |
		sed 's/^-arch=sm_/elf sm_/; s/^-arch=compute_/ptx compute_/' | sort)
	[ -n "$want" ] || { bad "$name: flags for '$list': $(cat "$name.flags.err")"; return; }
	if env "$@" "$FB" compile --arch-list "$list" -o "$name.fatbin" k.cu >"$name.log" 2>&1; then
		ok "$name: fatbuild compile '$list'"
	else
		bad "$name: fatbuild compile '$list': $(tail -3 "$name.log")"
		return
	fi
	[ "$(fb_images "$name.fatbin")" = "$want" ] && ok "$name: fatbuild inspect shows $(echo $want)" ||
		bad "$name: fatbuild inspect: $(fb_images "$name.fatbin" | tr '\n' ' '), want $(echo $want)"
	[ "$(nv_images "$name.fatbin")" = "$want" ] && ok "$name: cuobjdump agrees" ||
		bad "$name: cuobjdump: $(nv_images "$name.fatbin" | tr '\n' ' '), want $(echo $want)"
	if env "$@" "$FB" build --arch-list "$list" -o "lib$name.so" k.cu host.cpp >"$name.build.log" 2>&1; then
		ok "$name: fatbuild build '$list'"
	else
		bad "$name: fatbuild build '$list': $(tail -3 "$name.build.log")"
		return
	fi
	[ "$(fb_images "lib$name.so")" = "$want" ] && ok "$name: the .so holds $(echo $want)" ||
		bad "$name: fatbuild inspect lib$name.so: $(fb_images "lib$name.so" | tr '\n' ' ')"
	[ "$(nv_images "lib$name.so")" = "$want" ] && ok "$name: cuobjdump agrees on the .so" ||
		bad "$name: cuobjdump lib$name.so: $(nv_images "lib$name.so" | tr '\n' ' ')"
}

# envline NAME WANT ENV...: `fatbuild env` names the NVRTC it will use and how it found it
envline() {
	local name=$1 want=$2
	shift 2
	local got
	got=$(env "$@" "$FB" env 2>&1 | grep '^NVRTC ')
	case $got in
	$want) ok "$name: fatbuild env: ${got%%; arches*}" ;;
	*) bad "$name: fatbuild env says '$got', want '$want'" ;;
	esac
}

sys=/usr/local/cuda
if [ -e "$sys/lib64/libnvrtc.so.13" ]; then
	envline system "NVRTC      13.0 ($sys/lib64/libnvrtc.so.13, from CUDA_HOME's tree)*" CUDA_HOME=$sys
	gen system "7.5 9.0a 10.0f+PTX 11.0" CUDA_HOME=$sys
else
	bad "no CUDA 13.0 at $sys"
fi

# CUDA 13.5 wheel: CUDA_HOME at nvidia/cu13, Rubin (10.7, new in 13.4) included
envline cu13.5-home "NVRTC      13.5 ($cu13/lib/libnvrtc.so.13, from CUDA_HOME's tree)*" CUDA_HOME=$cu13
gen cu13.5-home "7.5 Rubin 10.7a 12.1f+PTX" CUDA_HOME=$cu13
# the nvcc on PATH leads to the same tree
envline cu13.5-path "NVRTC      13.5 ($cu13/lib/libnvrtc.so.13, from CUDA_HOME's tree)*" -u CUDA_HOME PATH=$cu13/bin:$PATH
gen cu13.5-path "10.7+PTX" -u CUDA_HOME PATH=$cu13/bin:$PATH
# NVRTC alone: --nvrtc / FATBUILD_NVRTC, no toolkit at all
envline cu13.5-nvrtc "NVRTC      13.5 ($cu13/lib/libnvrtc.so.13, from FATBUILD_NVRTC or --nvrtc)*" CUDA_HOME=$work/none FATBUILD_NVRTC=$cu13/lib
gen cu13.5-nvrtc "Blackwell Rubin" CUDA_HOME=$work/none FATBUILD_NVRTC=$cu13/lib
got=$(env CUDA_HOME=$work/none "$FB" --nvrtc "$cu13/lib/libnvrtc.so.13" compile --arch-list 10.7 -o opt.fatbin k.cu 2>&1) &&
	[ "$(fb_images opt.fatbin)" = "elf sm_107" ] && ok "--nvrtc FILE compiles for sm_107" || bad "--nvrtc FILE: $got"

# CUDA 12.9 wheels: CUDA_HOME at nvidia/cuda_nvcc (ptxas only), NVRTC in nvidia/cuda_nvrtc
envline cu12.9 "NVRTC      12.9 ($site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12, from the pip wheel next to CUDA_HOME)*" CUDA_HOME=$cu12
gen cu12.9 "7.0 10.1f+PTX 12.1a" CUDA_HOME=$cu12
out=$(env CUDA_HOME=$cu12 "$FB" --arch-list 11.0 2>&1)
case $out in *"11.0 is called 10.1, sm_101, before CUDA 13.0"*) ok "cu12.9: 11.0 refused with the rename hint" ;; *) bad "cu12.9: 11.0: $out" ;; esac

# the built-in tables of 13.0, 13.5 and 12.9 against these toolkits' own ptxas, NVRTC and nvcc
if out=$(bash "$FB_SOURCE_DIR/scripts/toolkit-facts.sh" --check "$FB" "$sys" "$cu13" "$cu12" 2>&1); then
	ok "toolkit-facts.sh: the 13.0, 13.5 and 12.9 tables match their tools"
else
	bad "toolkit-facts.sh: $out"
fi

# newer than every table: the 13.5 NVRTC saying 14.1, with 13.5's ptxas: one notice, no refusal
mkdir -p newer/lib newer/bin
if cc -shared -fPIC -o newer/lib/libnvrtc.so.13 "$FB_SOURCE_DIR/tests/toolchains/newer_nvrtc.c" -ldl; then
	ln -s "$cu13/bin/ptxas" newer/bin/ptxas
	# the builtins library fatbuild loads beside NVRTC, under the name of the version it reports
	ln -s "$(ls "$cu13"/lib/libnvrtc-builtins.so.13.* | head -1)" newer/lib/libnvrtc-builtins.so.14.1
	nenv=(CUDA_HOME=$work/newer NEWER_NVRTC_REAL=$cu13/lib/libnvrtc.so.13 NEWER_NVRTC_VERSION=14.1)
	out=$(env "${nenv[@]}" "$FB" --arch-list "10.7f 12.1a" 2>&1)
	case $out in
	*"warning: CUDA 14.1 is newer than the newest built-in release table (CUDA 13.5): using the arches it reports"*"a/f from $work/newer/bin/ptxas --help"*"-gencode=arch=compute_107f,code=sm_107f -gencode=arch=compute_121a,code=sm_121a")
		ok "newer: one notice, a/f from its ptxas" ;;
	*) bad "newer: $out" ;;
	esac
	[ "$(printf '%s\n' "$out" | grep -c 'newer than')" = 1 ] && ok "newer: the notice once" || bad "newer: notices: $out"
	gen newer "8.0 10.7f+PTX" "${nenv[@]}"
else
	bad "newer: cannot build the stand-in NVRTC"
fi

# clang 22: --format clang (any clang) and --clang-version 22 give PTX exactly where asked
if command -v clang-22 >/dev/null; then
	for list in "7.5+PTX" "7.5 8.6+PTX" "8.0 9.0a+PTX 12.0" "7.5 8.0 8.6 8.9 9.0 10.0+PTX 10.3 12.0 12.1+PTX" "Ampere Hopper(A)" "12.1a+PTX 10.0a"; do
		for v in "" 22; do
			flags=$(CUDA_HOME=$sys "$FB" --arch-list "$list" --format clang ${v:+--clang-version $v} 2>/dev/null) ||
				{ bad "clang-22: flags '$list' ${v:+--clang-version $v}: $flags"; continue; }
			rm -f c.o
			# shellcheck disable=SC2086
			if clang-22 -Wno-unknown-cuda-version -x cuda --cuda-path=$sys $flags -c k.cu -o c.o >c.log 2>&1; then
				want=$(CUDA_HOME=$sys want_images "$FB" --arch-list "$list" 2>/dev/null)
				[ "$(fb_images c.o)" = "$want" ] && [ "$(nv_images c.o)" = "$want" ] &&
					ok "clang-22 '$list'${v:+ --clang-version $v}: $(echo $want)" ||
					bad "clang-22 '$list'${v:+ --clang-version $v} ($flags): $(fb_images c.o | tr '\n' ' '), want $(echo $want)"
			else
				bad "clang-22 $flags: $(tail -2 c.log)"
			fi
		done
	done
	out=$(CUDA_HOME=$sys "$FB" --arch-list 10.0f --clang-version 22 2>&1)
	case $out in *"clang 22 cannot compile CUDA for sm_100f"*) ok "clang-22: 10.0f refused up front" ;; *) bad "clang-22 10.0f: $out" ;; esac
	if clang-22 -x cuda --cuda-path=$sys --offload-arch=sm_100f -c k.cu -o f.o >/dev/null 2>&1; then
		bad "clang-22 compiled sm_100f: the --clang-version 22 table is out of date"
	else
		ok "clang-22 itself refuses sm_100f"
	fi
else
	bad "clang-22 is not installed (scripts/deps.sh installs it)"
fi

echo "$passes passed, $fails failed"
[ $fails = 0 ]
