# nginx.sh: sourced by the remote-cache tests. nginx_start DIR starts nginx with its WebDAV
# module (PUT into DIR/store) on a free loopback port, in the foreground of a background job
# with its own config, prefix and logs under DIR; sets NGINX_URL and NGINX_PID. nginx_stop
# ends it. The caller traps nginx_stop. NGINX_NO_PUT=1: a plain static server, which answers
# PUT with 405 and an error page. NGINX_AUTH=USER:PASSWORD: the configuration docs/caches.md
# recommends, anonymous GET and PUT only with that user's password (auth_basic inside
# limit_except; the password file made with openssl).
NGINX_PID=
nginx_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
nginx_start() {
	local d=$1 port
	NGINX_BIN=$(command -v nginx || echo /usr/sbin/nginx)
	[ -x "$NGINX_BIN" ] || return 77
	mkdir -p "$d/store" "$d/tmp" "$d/logs"
	port=$(nginx_free_port) || return 1
	local auth=
	if [ -n "${NGINX_AUTH:-}" ]; then
		printf '%s:%s\n' "${NGINX_AUTH%%:*}" "$(openssl passwd -apr1 "${NGINX_AUTH#*:}")" >"$d/writers" || return 1
		auth="limit_except GET { auth_basic \"fatbuild cache\"; auth_basic_user_file $d/writers; }"
	fi
	cat >"$d/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $d/nginx.pid;
error_log $d/logs/error.log;
events { worker_connections 64; }
http {
	access_log $d/logs/access.log;
	client_body_temp_path $d/tmp/body;
	proxy_temp_path $d/tmp/proxy;
	fastcgi_temp_path $d/tmp/fastcgi;
	uwsgi_temp_path $d/tmp/uwsgi;
	scgi_temp_path $d/tmp/scgi;
	client_max_body_size 0;
	server {
		listen 127.0.0.1:$port;
		root $d/store;
		location / {
			$( [ -n "${NGINX_NO_PUT:-}" ] || echo 'dav_methods PUT; create_full_put_path on; dav_access user:rw group:r all:r;' )
			$auth
		}
	}
}
CONF
	"$NGINX_BIN" -p "$d" -c "$d/nginx.conf" -e "$d/logs/error.log" &
	NGINX_PID=$!
	NGINX_URL=http://127.0.0.1:$port
	for _ in $(seq 100); do
		# any answer (404 for a missing entry) means it is up
		python3 - "$port" <<'PY' 2>/dev/null && return 0
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
PY
		kill -0 "$NGINX_PID" 2>/dev/null || { cat "$d/logs/error.log" >&2; return 1; }
		sleep 0.1
	done
	return 1
}
nginx_stop() {
	if [ -n "$NGINX_PID" ]; then
		kill "$NGINX_PID" 2>/dev/null
		wait "$NGINX_PID" 2>/dev/null
		NGINX_PID=
	fi
}
