#!/usr/bin/env bash
# deps.sh: installs what the build and tests need with apt-get; silent and quick when all is present.
#   scripts/deps.sh           everything the test suite needs (scripts/test.sh)
#   scripts/deps.sh --build   only what building fatbuild needs (scripts/demo.sh): no servers,
#                             no second compiler, no sanitizer runtimes
set -eu
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
build_only=
case ${1:-} in
--build) build_only=1 ;;
"") ;;
*) echo "deps.sh: unknown argument '$1' (--build, or nothing)" >&2; exit 2 ;;
esac
# clang-22 and python3-venv: tests/toolchains.sh (clang 22's CUDA output; the pip venv of NVIDIA's wheels)
# man-db and groff-base: tests/manpages.sh renders the installed man pages with man -l
# libgrpc-dev and openssl: the grpc:// remote cache (fatbuild/cache/reapi.c; tests/remote_reapi.sh
# makes a certificate for grpcs://; tests/remote/nginx.sh the password file of NGINX_AUTH)
# libarchive13 (the library only; dlopen'ed, no headers): fatbuild check reads wheels and tars with it
# bubblewrap and postgresql: remote execution's test executor and farm (tests/remote/executor.sh,
# farm.sh: buildbox-run's sandbox, BuildGrid's scheduler database); iproute2: scripts/bench-rexec.sh
# (ip netns)
# time: GNU time, the peak memory of a compile in tests/remote_malicious.sh
if [ -n "$build_only" ]; then
	for p in libelf-dev liblz4-dev libzstd-dev ninja-build cmake gcc g++ pkg-config make libssl-dev; do
		have_pkg "$p" || need+=("$p")
	done
else
	for p in libelf-dev liblz4-dev libzstd-dev ninja-build cmake clang gcc g++ pkg-config valgrind make meson \
		clang-22 python3-venv ccache nginx libcurl4 python3 sccache distcc libssl-dev man-db groff-base \
		libgrpc-dev openssl libarchive13 time bubblewrap postgresql iproute2; do
		have_pkg "$p" || need+=("$p")
	done
	# libFuzzer and the sanitizer runtimes come with clang's runtime package.
	if have_pkg clang; then
		ver=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n1)
		[ -n "$ver" ] && ! have_pkg "libclang-rt-$ver-dev" && ! have_pkg "libclang-common-$ver-dev" && need+=("libclang-rt-$ver-dev")
	fi
	# The PyTorch test (tests/torch/run.sh) makes a venv with python3 and pip-installs torch into it.
	if ! python3 -m venv --help >/dev/null 2>&1; then
		have_pkg python3-venv || need+=(python3-venv)
		have_pkg python3-pip || need+=(python3-pip)
	fi
fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${need[*]}" >&2
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# Another apt or dpkg (an unattended upgrade, a second terminal) may hold the package locks: say
# so, then let apt wait for them (DPkg::Lock::Timeout) instead of failing at once with "Could not
# get lock" and exit 100. apt locks with fcntl, which flock(1) does not see: python3 asks.
lock_holder() {
	local f
	command -v python3 >/dev/null || return 1
	for f in /var/lib/dpkg/lock-frontend /var/lib/dpkg/lock /var/lib/apt/lists/lock; do
		[ -w "$f" ] || continue
		python3 -c 'import fcntl, sys
f = open(sys.argv[1], "a")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(1)' "$f" 2>/dev/null || { echo "$f"; return 0; }
	done
	return 1
}
if held=$(lock_holder); then
	echo "deps.sh: another apt or dpkg holds $held; waiting for it (up to 10 minutes)" >&2
fi
apt=($SUDO apt-get -o DPkg::Lock::Timeout=600)
"${apt[@]}" update -qq >/dev/null
"${apt[@]}" install -y -qq --no-install-recommends "${need[@]}" >/dev/null
