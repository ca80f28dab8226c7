# twouser.sh: sourced by the hardening tests that act as two local users (team_cache.sh,
# shared_tmp.sh). twouser_setup NAME UID: exits 77 unless root, fails without setpriv, then makes
# the scratch dir $w (0755, removed at exit) where UID can reach it (a private TMPDIR such as
# /root/... falls back to /tmp), cd's into it, and defines ok/bad and their counters.
twouser_setup() {
	if [ "$(id -u)" != 0 ]; then
		echo "$1.sh needs root (two uids via setpriv); CI runs it as root"
		exit 77
	fi
	command -v setpriv >/dev/null || { echo "FAIL: setpriv (util-linux) is missing"; exit 1; }
	local base=${TMPDIR:-/tmp}
	setpriv --reuid="$2" --regid="$2" --clear-groups -- test -x "$base" || base=/tmp
	w=$(mktemp -d "$base/fb$1.XXXXXX")
	trap 'rm -rf "$w"' EXIT
	chmod 0755 "$w"
	cd "$w" || exit 1
	fails=0 n=0
}
ok() { n=$((n + 1)); echo "ok   $1"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL $1"; }
