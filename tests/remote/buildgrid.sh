# buildgrid.sh: sourced by what runs BuildGrid (pip `buildgrid`) on loopback for the REAPI
# cache: tests/remote_reapi.sh and scripts/bench-remote.sh. They set FB_SOURCE_DIR.
#
# bgd_venv VENV: BuildGrid installed into the venv VENV (once; VENV/.pkgs names what is
# there); sets venv; nonzero when pip cannot install it.
# bgd_start DIR: BuildGrid with its CAS under DIR from tests/remote/buildgrid.yml, in its own
# process group, plain and TLS (a self-signed certificate for 127.0.0.1, DIR/tls.crt), its
# log (-vv: one "Received request. ... method=NAME" line per call) in DIR/bgd.log; sets url,
# tls_url and bgd_pid. Addresses, not names: gRPC's resolver for names (c-ares 1.18) leaks 10
# bytes per process, which the asan pass would report. bgd_stop ends it; the caller traps it.
bgd_pkg="buildgrid==0.4.4"
bgd_pid=
bgd_free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
bgd_venv() {
	venv=$1
	[ "$(cat "$venv/.pkgs" 2>/dev/null)" = "$bgd_pkg" ] && return 0
	rm -rf "$venv"
	python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$bgd_pkg" &&
		echo "$bgd_pkg" >"$venv/.pkgs"
}
bgd_start() {
	local d=$1 port tport
	mkdir -p "$d"
	port=$(bgd_free_port) && tport=$(bgd_free_port) || return 1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/tls.key" -out "$d/tls.crt" -days 2 -subj /CN=127.0.0.1 \
		-addext "subjectAltName=IP:127.0.0.1" >/dev/null 2>&1 || { echo "openssl cannot make a certificate" >&2; return 1; }
	sed "s|@PORT@|$port|; s|@TLSPORT@|$tport|; s|@DIR@|$d|g" "$FB_SOURCE_DIR/tests/remote/buildgrid.yml" >"$d/bgd.yml"
	setsid "$venv/bin/bgd" server start -vv "$d/bgd.yml" >"$d/bgd.log" 2>&1 &
	bgd_pid=$!
	url=grpc://127.0.0.1:$port/main
	tls_url=grpcs://127.0.0.1:$tport/main
	for _ in $(seq 600); do
		python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' \
			"$port" 2>/dev/null && return 0
		kill -0 "$bgd_pid" 2>/dev/null || { cat "$d/bgd.log" >&2; return 1; }
		sleep 0.1
	done
	cat "$d/bgd.log" >&2
	return 1
}
bgd_stop() {
	[ -n "$bgd_pid" ] || return 0
	kill -TERM -- "-$bgd_pid" 2>/dev/null || kill -TERM "$bgd_pid" 2>/dev/null
	wait "$bgd_pid" 2>/dev/null
	bgd_pid=
}
