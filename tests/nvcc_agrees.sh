#!/usr/bin/env bash
# nvcc_agrees.sh: the nvcc flags `fatbuild flags` emits are accepted by the toolkit's nvcc, and
# nvcc embeds exactly the images the list names (from `nvcc -dryrun`'s fatbinary --image3
# arguments); the combinations our resolver refuses are refused by nvcc too.
#   env: FATBUILD_BIN, CUDA_HOME (default /usr/local/cuda)
set -u
: "${FATBUILD_BIN:?}"
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$cuda/bin/nvcc
if [ ! -x "$nvcc" ]; then
	echo "nvcc_agrees: no nvcc at $nvcc" >&2
	exit 77
fi
export CUDA_HOME=$cuda
work=$(mktemp -d "${TMPDIR:-/tmp}/nvcc_agrees.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '__global__ void k(int *p) { *p = 1; }\n' >"$work/k.cu"
fail=0

for list in "9.0a" "10.0f+PTX" "12.0" "8.0 8.6+PTX" "Hopper 9.0a" "12.0a 120f-virtual 8.9" "Blackwell+Tegra" "all-major"; do
	flags=$("$FATBUILD_BIN" flags --arch-list "$list") || { echo "FAIL: fatbuild flags '$list'" >&2; fail=1; continue; }
	# what the list says: one image per target (nvrtc format: -arch=sm_X / -arch=compute_X)
	want=$("$FATBUILD_BIN" flags --arch-list "$list" --format nvrtc |
		sed -e 's/^-arch=sm_/elf /' -e 's/^-arch=compute_/ptx /' | sort)
	# shellcheck disable=SC2086
	if ! "$nvcc" -fatbin -o "$work/k.fatbin" "$work/k.cu" $flags 2>"$work/err"; then
		echo "FAIL: nvcc rejects the flags of '$list': $flags" >&2
		cat "$work/err" >&2
		fail=1
		continue
	fi
	# shellcheck disable=SC2086
	got=$("$nvcc" -dryrun -fatbin -o "$work/k.fatbin" "$work/k.cu" $flags 2>&1 | grep -o 'image3=kind=[a-z]*,sm=[0-9a-z]*' |
		sed -e 's/image3=kind=//' -e 's/,sm=/ /' | sort)
	if [ "$got" != "$want" ]; then
		echo "FAIL: '$list': nvcc embeds" >&2
		echo "$got" >&2
		echo "but the list names" >&2
		echo "$want" >&2
		fail=1
		continue
	fi
	echo "ok '$list': $flags"
done

# all-major is nvcc's -arch=all-major, image for image. (Our `all` differs on purpose: its PTX is
# for the newest arch, compute_121 on 13.0, where nvcc's -arch=all embeds compute_120.)
want=$("$FATBUILD_BIN" flags --arch-list all-major --format nvrtc | sed -e 's/^-arch=sm_/elf /' -e 's/^-arch=compute_/ptx /' | sort)
got=$("$nvcc" -dryrun -fatbin -o "$work/k.fatbin" "$work/k.cu" -arch=all-major 2>&1 | grep -o 'image3=kind=[a-z]*,sm=[0-9a-z]*' |
	sed -e 's/image3=kind=//' -e 's/,sm=/ /' | sort)
if [ -n "$got" ] && [ "$got" = "$want" ]; then
	echo "ok all-major = nvcc -arch=all-major"
else
	echo "FAIL: all-major differs from nvcc -arch=all-major: nvcc: $(echo $got) / ours: $(echo $want)" >&2
	fail=1
fi

# What we refuse, nvcc refuses: SASS of X and Xf together; 'a' where none exists; removed arches.
for bad in "-gencode=arch=compute_100,code=sm_100 -gencode=arch=compute_100f,code=sm_100f" \
	"-gencode=arch=compute_80a,code=sm_80a" "-gencode=arch=compute_70,code=sm_70" \
	"-gencode=arch=compute_101,code=sm_101"; do
	# shellcheck disable=SC2086
	if "$nvcc" -fatbin -o "$work/k.fatbin" "$work/k.cu" $bad 2>/dev/null; then
		echo "FAIL: nvcc accepts $bad, which fatbuild refuses" >&2
		fail=1
	else
		echo "ok nvcc refuses $bad"
	fi
done
for bad in "100;100f" "8.0a" "7.0" "10.1"; do
	if "$FATBUILD_BIN" flags --arch-list "$bad" >/dev/null 2>&1; then
		echo "FAIL: fatbuild accepts '$bad'" >&2
		fail=1
	fi
done
exit $fail
