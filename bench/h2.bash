# bench/h2.bash — the h2 group of bench/run (sourced by it; not run on its
# own): ramjet's TLS listener (HTTP/2 and HTTP/1.1 by ALPN) against nginx
# (TLS + HTTP/2) with the same self-signed certificate and the same TLS 1.3
# cipher, measured with the seeds' own h2load commands on loopback; plus the
# RSS of each server with 1,000 concurrent h2 connections open. ramjet's
# HTTP/3 (same listener's port, UDP) is measured beside its h2 with
# bench/h3load (h2load's command line, on quic-go's client; nginx 1.22 has
# no QUIC): the same pages, the time to first byte of fresh connections
# (1-RTT, resumed / 0-RTT) against h2+TLS, and the RSS of 1,000 idle h3
# connections. See bench/README.md, "h2 section".
#
# Uses from bench/run: WORK ROOT TASKSET NGINX PHPFPM SS SERVER_CPU LOAD_CPU
# ROUNDS QUICK CLK_TCK SKIP_RAMJET ROOTPID STARTED_PIDS CONFIG_GROUP P_*
# write_configs nginx_common start_bg start_php_fpm pick_port wait_listen
# all_descendants core_ticks busy_pct rss_kb php_calls record row quoted
# config_record log warn die.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
H2_CIPHER=TLS_AES_128_GCM_SHA256
H2_PAGES=(725 30k 2m)
H2_PROTOS=(h2 h1 h3)
H2_HANDSHAKES=${BENCH_H2_HANDSHAKES:-1000} # fresh connections timed per handshake row; 0 skips them
H3LOAD=""
H2_HOLD=${BENCH_H2_HOLD:-}     # seconds the 1,000 connections stay open
H2_IDLE_CONNS=${BENCH_H2_CONNS:-1000}
H2_SKIP=""
H2_NGINX_LISTEN=""
H2LOAD=""
declare -A H2_CHECK=()

h2_validate_env() {
	[[ -z $H2_HOLD ]] || [[ $H2_HOLD =~ ^[1-9][0-9]*$ ]] || die "BENCH_H2_HOLD must be a positive number of seconds, got $H2_HOLD"
	[[ $H2_IDLE_CONNS =~ ^[0-9]+$ ]] || die "BENCH_H2_CONNS must be a number (0 skips the RSS test), got $H2_IDLE_CONNS"
	[[ $H2_HANDSHAKES =~ ^[0-9]+$ ]] || die "BENCH_H2_HANDSHAKES must be a number (0 skips the handshake rows), got $H2_HANDSHAKES"
	if [[ -z $H2_HOLD ]]; then
		if ((QUICK)); then H2_HOLD=5; else H2_HOLD=10; fi
	fi
}

# h2_tools: find h2load and openssl; as root, install what is missing
# (nghttp2-client, openssl) with apt-get. Prints the reason to skip, or nothing.
h2_tools() {
	local -a m=()
	find_tool h2load >/dev/null || m+=(nghttp2-client)
	find_tool openssl >/dev/null || m+=(openssl)
	if ((${#m[@]})) && [[ $EUID -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
		log "h2: installing ${m[*]}" >&2
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${m[@]}"; } >&2 ||
			warn "h2: apt-get install ${m[*]} failed"
		m=()
		find_tool h2load >/dev/null || m+=(nghttp2-client)
		find_tool openssl >/dev/null || m+=(openssl)
	fi
	if ((${#m[@]})); then
		echo "h2load or openssl not found (install: apt-get install ${m[*]})"
		return 0
	fi
	local v
	v=$("$NGINX" -V 2>&1)
	[[ $v == *--with-http_v2_module* ]] || { echo "this nginx has no HTTP/2 module (--with-http_v2_module)"; return 0; }
	[[ $v == *--with-http_ssl_module* ]] || { echo "this nginx has no TLS module (--with-http_ssl_module)"; return 0; }
	return 0
}

# ---------------------------------------------------------------- setup
h2_setup() {
	# The pages and the 2 MiB file of the cache section (and the origin's
	# configs) if it did not run in this invocation: the same generator, the
	# same bytes.
	if [[ ! -f $WORK/www/page725.html || ! -f $WORK/nginx-origin.conf ]]; then
		P_STATIC=${P_STATIC:-$(pick_port)}
		P_FCGI=${P_FCGI:-$(pick_port)}
		P_ORIGIN=${P_ORIGIN:-$(pick_port)}
		P_VARNISH=${P_VARNISH:-$(pick_port)}
		write_configs
	fi
	mkdir -p "$WORK/tls" "$WORK/h2load"
	if [[ $SKIP_RAMJET != 1 ]]; then
		(cd "$ROOT" && go build -o "$WORK/h3load" ./bench/h3load) || { H2_SKIP="go build ./bench/h3load failed"; return 1; }
		H3LOAD=$WORK/h3load
	fi
	"$(find_tool openssl)" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
		-subj /CN=bench.test -addext 'subjectAltName=DNS:bench.test,IP:127.0.0.1' \
		-keyout "$WORK/tls/bench.key" -out "$WORK/tls/bench.crt" >"$WORK/logs/openssl.log" 2>&1 ||
		{ cat "$WORK/logs/openssl.log" >&2; H2_SKIP="openssl could not make the certificate"; return 1; }
	chmod 644 "$WORK/tls/bench.key" # nginx's worker runs as the invoking user

	P_H2_NGINX=$(pick_port)
	P_H2_RAMJET=$(pick_port)
	P_H2_RAMJET_PLAIN=$(pick_port)
	P_H2_ADMIN=$(pick_port)

	# nginx 1.25.1 has "http2 on"; older ones "listen ... ssl http2"
	local nv
	nv=$("$NGINX" -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')
	if printf '%s\n%s\n' 1.25.1 "$nv" | sort -V -C; then
		H2_NGINX_LISTEN="listen 127.0.0.1:$P_H2_NGINX ssl; http2 on;"
	else
		H2_NGINX_LISTEN="listen 127.0.0.1:$P_H2_NGINX ssl http2;"
	fi
	# no sendfile or tcp_nopush: over TLS nginx encrypts in user space, so it
	# cannot sendfile (short of kernel TLS) and TCP_CORK only acts with
	# sendfile; a shared TLS session cache, as nginx's TLS guides advise
	{
		nginx_common h2 | sed "s/worker_connections 1024;/worker_connections $((H2_IDLE_CONNS + 256 > 4096 ? H2_IDLE_CONNS + 256 : 4096));/"
		cat <<EOF
    open_file_cache max=1000 inactive=60s;
    open_file_cache_valid 60s;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 1h;
    server {
        $H2_NGINX_LISTEN
        ssl_certificate $WORK/tls/bench.crt;
        ssl_certificate_key $WORK/tls/bench.key;
        ssl_protocols TLSv1.3;
        ssl_conf_command Ciphersuites $H2_CIPHER;
        root $WORK/www;
        location / { }
    }
}
EOF
	} >"$WORK/nginx-h2.conf"

	cat >"$WORK/ramjet-h2.yaml" <<EOF
listen: "127.0.0.1:$P_H2_RAMJET_PLAIN"
admin:
  listen: "127.0.0.1:$P_H2_ADMIN"
origin:
  servers: ["http://127.0.0.1:$P_ORIGIN"]
cache:
  # the 2 MiB file is cached like the pages (8MiB is the default)
  max_object_size: 8MiB
tls:
  listen: "127.0.0.1:$P_H2_RAMJET"
  cert: $WORK/tls/bench.crt
  key: $WORK/tls/bench.key
  ocsp: false
  # HTTP/3 on the same port (UDP), for the h3 rows
  http3: true
EOF
	CONFIG_GROUP=h2
	config_record nginx-h2 "$WORK/nginx-h2.conf" nginx "nginx static file (h2 group)" \
		"\`worker_processes 1\`, \`$H2_NGINX_LISTEN\`, no \`sendfile\`/\`tcp_nopush\`, \`open_file_cache\`, \`ssl_session_cache shared:SSL:10m\`, TLS 1.3 \`$H2_CIPHER\`, \`keepalive_requests 100000\`, \`access_log off\`" \
		"one worker for ramjet's one core; sendfile cannot carry TLS (nginx encrypts with OpenSSL in user space; only kernel TLS lifts that) and tcp_nopush only acts with sendfile, so both are left out; a shared session cache as nginx's TLS guides advise; the same single TLS 1.3 suite as h2load offers"
	config_record ramjet-h2 "$WORK/ramjet-h2.yaml" yaml "ramjet (h2 group)" \
		"\`tls.listen\`, \`tls.http3: true\`, the same certificate, \`cache.max_object_size: 8MiB\` (the default), \`GOMAXPROCS=1\`" \
		"ramjet's defaults with its TLS listener"
	CONFIG_GROUP=cache
}

h2_start() {
	start_php_fpm
	start_nginx origin "$P_ORIGIN"
	start_nginx h2 "$P_H2_NGINX"
	if [[ $SKIP_RAMJET != 1 ]]; then
		log "h2: starting ramjet, TLS on 127.0.0.1:$P_H2_RAMJET"
		start_bg ramjet-h2 "$WORK/logs/ramjet-h2.log" env GOMAXPROCS=1 "$WORK/ramjet" serve --config "$WORK/ramjet-h2.yaml"
		wait_listen ramjet-h2 "${ROOTPID[ramjet-h2]}" "$P_H2_RAMJET" "$WORK/logs/ramjet-h2.log"
	fi
}

# ---------------------------------------------------------------- helpers
h2_url() { # SERVER PAGE
	local f
	case $1.$2 in
	ramjet.725) f=page725.php ;; ramjet.30k) f=page30k.php ;; ramjet.2m) f=file2m.php ;;
	nginx.725) f=page725.html ;; nginx.30k) f=page30k.html ;; nginx.2m) f=file2m.bin ;;
	esac
	if [[ $1 == ramjet ]]; then echo "https://127.0.0.1:$P_H2_RAMJET/$f"; else echo "https://127.0.0.1:$P_H2_NGINX/$f"; fi
}
h2_root() { if [[ $1 == ramjet ]]; then echo "${ROOTPID[ramjet-h2]}"; else echo "${ROOTPID[nginx-h2]}"; fi; }
h2_port() { if [[ $1 == ramjet ]]; then echo "$P_H2_RAMJET"; else echo "$P_H2_NGINX"; fi; }
h2_file() { # PAGE -> the expected body
	case $1 in 725) echo "$WORK/www/page725.html" ;; 30k) echo "$WORK/www/page30k.html" ;; 2m) echo "$WORK/www/file2m.bin" ;; esac
}
h2_args() { # PAGE PROTO -> the seeds' h2load arguments (plus --h1 for the HTTP/1.1 rows)
	if [[ $1 == 2m ]]; then printf '%s\n' -t1 -c100 -n1000; else printf '%s\n' -t1 -c100 -n100000 -m10; fi
	[[ $2 == h1 ]] && echo --h1
	return 0
}
h2_warm_args() { # PAGE PROTO: a tenth of the run
	if [[ $1 == 2m ]]; then printf '%s\n' -t1 -c100 -n100; else printf '%s\n' -t1 -c100 -n10000 -m10; fi
	[[ $2 == h1 ]] && echo --h1
	return 0
}

h2_rss() { # ROOTS... -> VmRSS summed over the process trees, kB
	local -a pids
	mapfile -t pids < <(all_descendants "$@")
	rss_kb "${pids[@]}"
}
h2_conns() { # PORT -> established TCP connections to it
	"$SS" -Htn state established "( sport = :$1 )" 2>/dev/null | wc -l
}

# h2_check SERVER PAGE PROTO: status 200 and the exact bytes over TLS with the
# wanted protocol; for ramjet, fetched until Cache-Status says hit
h2_check() {
	local s=$1 page=$2 proto=$3 url i st=ok r v
	local -a pf=(--http2)
	[[ $proto == h1 ]] && pf=(--http1.1)
	url=$(h2_url "$s" "$page")
	for ((i = 1; i <= 20; i++)); do
		if [[ $proto == h3 ]]; then # Debian's curl has no HTTP/3: h3load fetches once
			r="000 0"
			"$H3LOAD" -timeout 10s -o "$WORK/h2-body" -dump-header "$WORK/h2-h" "$url" 2>/dev/null &&
				r="$(head -n1 "$WORK/h2-h" | awk '{print $2}') 3"
		else
			r=$(curl -sk "${pf[@]}" --tls13-ciphers "$H2_CIPHER" --max-time 10 -o "$WORK/h2-body" -D "$WORK/h2-h" \
				-w '%{http_code} %{http_version}' "$url" || echo "000 0")
		fi
		[[ $s == nginx ]] && break
		v=$(grep -i '^Cache-Status:' "$WORK/h2-h" | tr -d '\r' | cut -d: -f2-)
		[[ ${v,,} =~ (^|[;,[:space:]])hit([;,[:space:]]|$) ]] && break
		sleep 0.2
	done
	if [[ ${r%% *} != 200 ]]; then
		st="status ${r%% *}"
	elif [[ $s == ramjet && ! ${v,,} =~ (^|[;,[:space:]])hit([;,[:space:]]|$) ]]; then
		st="HIT NOT CONFIRMED (${v# })"
	elif ! cmp -s "$WORK/h2-body" "$(h2_file "$page")"; then
		st="body differs ($(wc -c <"$WORK/h2-body") B)"
	elif [[ $proto == h2 && ${r#* } != 2 ]] || [[ $proto == h1 && ${r#* } != 1.1 ]] || [[ $proto == h3 && ${r#* } != 3 ]]; then
		st="curl got HTTP/${r#* }"
	fi
	[[ $st == ok && $s == ramjet ]] && st=hit
	H2_CHECK[$s.$page.$proto]=$st
	[[ $st == ok || $st == hit ]] || { warn "h2 $s $page $proto: check failed: $st; headers:"; sed 's/^/    /' "$WORK/h2-h" >&2 || true; }
}

# ---------------------------------------------------------------- load
# h2_measure ROUND PAGE PROTO SERVER
h2_measure() {
	local round=$1 page=$2 proto=$3 s=$4 url out tool=$H2LOAD
	local -a args wargs
	[[ $proto == h3 ]] && tool=$H3LOAD
	url=$(h2_url "$s" "$page")
	mapfile -t args < <(h2_args "$page" "$proto")
	mapfile -t wargs < <(h2_warm_args "$page" "$proto")
	h2_check "$s" "$page" "$proto"
	"$TASKSET" -c "$LOAD_CPU" timeout 120 "$tool" "${wargs[@]}" --tls13-ciphers="$H2_CIPHER" "$url" >/dev/null 2>&1 || true

	out="$WORK/h2load/r$round-$page-$proto-$s.txt"
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout 300 "$tool" "${args[@]}" --tls13-ciphers="$H2_CIPHER" "$url")
	local root s0 s1 l0 l1 t0 t1 php0 php1 sampler
	root=$(h2_root "$s")
	php0=$(php_calls)
	s0=$(core_ticks "$SERVER_CPU")
	l0=$(core_ticks "$LOAD_CPU")
	t0=$(tree_ticks "$root")
	(
		while :; do
			h2_rss "$root"
			sleep 0.5
		done
	) >"$WORK/h2-rss.samples" &
	sampler=$!
	STARTED_PIDS+=("$sampler")
	"$TASKSET" -pc "$LOAD_CPU" "$sampler" >/dev/null 2>&1 || true
	"${cmd[@]}" >"$out" 2>&1 || true
	t1=$(tree_ticks "$root")
	s1=$(core_ticks "$SERVER_CPU")
	l1=$(core_ticks "$LOAD_CPU")
	kill "$sampler" 2>/dev/null || true
	wait "$sampler" 2>/dev/null || true
	h2_rss "$root" >>"$WORK/h2-rss.samples"
	php1=$(php_calls)

	local rps ok fail tmax tmean tsd data tls cpu_us rss calls sbusy lbusy other n2xx
	rps=$(awk '/^finished in/ {gsub(/,/, ""); print $4}' "$out")
	ok=$(awk '/^requests:/ {print $8}' "$out")
	fail=$(awk '/^requests:/ {print $10 + $12 + $14}' "$out")
	n2xx=$(awk '/^status codes:/ {print $3}' "$out")
	data=$(awk '/^traffic:/ {v = $NF == "data" ? $(NF - 1) : ""; gsub(/[()]/, "", v); print v}' "$out")
	read -r _ tmax tmean tsd < <(awk '/^time for request:/ {print $4, $5, $6, $7}' "$out") || true
	tls="$(awk -F': ' '/^TLS Protocol:/ {p = $2} /^Cipher:/ {c = $2} /^Application protocol:/ {a = $2} END {print p " " c " " a}' "$out")"
	if [[ -z $rps || -z $ok || ${ok:-0} -eq 0 ]]; then
		warn "h2load produced no result for $s $page $proto:"
		sed 's/^/    /' "$out" >&2
		rps=0 ok=0 fail=${fail:-0} tmean=0ms tsd=0ms tmax=0ms data=0 n2xx=0
	fi
	# failed requests and responses other than 2xx
	fail=$((fail + ok - ${n2xx:-0}))
	tmean=$(to_ms "$tmean")
	tsd=$(to_ms "$tsd")
	tmax=$(to_ms "$tmax")
	if ((ok > 0)); then
		cpu_us=$(awk -v d=$((t1 - t0)) -v hz="$CLK_TCK" -v n="$ok" 'BEGIN {printf "%.2f", d * 1e6 / hz / n}')
		data=$(awk -v d="${data:-0}" -v n="$ok" 'BEGIN {printf "%.0f", d / n}')
	else
		cpu_us=0 data=0
	fi
	rss=$(sort -n "$WORK/h2-rss.samples" | tail -n1)
	calls=$((php1 - php0))
	sbusy=$(busy_pct "$s0" "$s1")
	lbusy=$(busy_pct "$l0" "$l1")
	other=$(busy_pct "$s0" "$s1" $((t1 - t0)))
	local chk=${H2_CHECK[$s.$page.$proto]}
	[[ ($proto == h2 && $tls == "TLSv1.3 $H2_CIPHER h2") || ($proto == h1 && $tls == "TLSv1.3 $H2_CIPHER http/1.1") ||
		($proto == h3 && $tls == "TLSv1.3 $H2_CIPHER h3") ]] || chk="$chk; load tool negotiated: $tls"
	row h2 "$round" "$page" "$s" proto="$proto" rps:="$rps" mean_ms:="$tmean" sd_ms:="$tsd" max_ms:="$tmax" \
		cpu_us:="$cpu_us" rss_kb:="$rss" requests:="$ok" failed:="$fail" bytes:="$data" php_calls:="$calls" \
		server_busy_pct:="$sbusy" load_busy_pct:="$lbusy" other_pct:="$other" check="$chk" tls="$tls" \
		cmd="$(quoted "${cmd[@]}")" config="$([[ $s == ramjet ]] && echo ramjet-h2 || echo nginx-h2)"
	log "  $(printf '%-18s %-3s %-2s %10s req/s  mean %8s ms  sd %8s ms  max %8s ms  %7s us/req  rss %7s kB  %s ok  %s failed  %s B/req  php %s  cores %s%%/%s%% (other %s%%)  [%s] %s' \
		"$s" "$page" "$proto" "$rps" "$tmean" "$tsd" "$tmax" "$cpu_us" "$rss" "$ok" "$fail" "$data" "$calls" "$sbusy" "$lbusy" "$other" "$chk" "$tls")"
}

# h2_idle SERVER: RSS with H2_IDLE_CONNS h2 connections open for H2_HOLD s
# (h2load -D, one request per second per connection on the 725 B page)
h2_idle() {
	local s=$1 url root port out pid base peak=0 maxc=0 r c i
	url=$(h2_url "$s" 725)
	root=$(h2_root "$s")
	port=$(h2_port "$s")
	out="$WORK/h2load/idle-$s.txt"
	sleep 1
	base=$(h2_rss "$root")
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout $((H2_HOLD + 60)) "$H2LOAD" -t1 -c"$H2_IDLE_CONNS" -D "$H2_HOLD" --rps 1
		--tls13-ciphers="$H2_CIPHER" "$url")
	"${cmd[@]}" >"$out" 2>&1 &
	pid=$!
	STARTED_PIDS+=("$pid")
	for ((i = 0; i < (H2_HOLD + 60) * 4; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		r=$(h2_rss "$root")
		c=$(h2_conns "$port")
		((r > peak)) && peak=$r
		((c > maxc)) && maxc=$c
		sleep 0.25
	done
	wait "$pid" 2>/dev/null || true
	local ok fail tls
	ok=$(awk '/^requests:/ {print $8}' "$out")
	fail=$(awk '/^requests:/ {print $10 + $12 + $14}' "$out")
	tls="$(awk -F': ' '/^TLS Protocol:/ {p = $2} /^Cipher:/ {c = $2} /^Application protocol:/ {a = $2} END {print p " " c " " a}' "$out")"
	[[ -n $ok ]] || { warn "h2load produced no result for the $H2_IDLE_CONNS connections to $s:"; sed 's/^/    /' "$out" >&2; }
	row h2rss 1 725 "$s" base_rss_kb:="$base" peak_rss_kb:="$peak" open:="$maxc" requests:="${ok:-0}" failed:="${fail:-0}" \
		tls="$tls" cmd="$(quoted "${cmd[@]}")" config="$([[ $s == ramjet ]] && echo ramjet-h2 || echo nginx-h2)"
	log "  $(printf '%-18s RSS before %7s kB, peak %7s kB with up to %s connections open; %s requests ok, %s failed; %s' \
		"$s" "$base" "$peak" "$maxc" "${ok:-0}" "${fail:-0}" "$tls")"
}

# h3_handshakes PROTO MODE: ramjet's time to first byte of H2_HANDSHAKES
# fresh connections, one after the other (h3load -handshakes): PROTO h3 or
# h2 (TLS + HTTP/2), MODE full (1-RTT) or resumed (session ticket; for h3 a
# 0-RTT GET)
h3_handshakes() {
	local proto=$1 mode=$2 out line p50 p99 mean n res early
	local -a flags=()
	[[ $proto == h2 ]] && flags+=(-h2)
	[[ $mode == resumed ]] && flags+=(-resume)
	out="$WORK/h2load/handshakes-$proto-$mode.txt"
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout 300 "$H3LOAD" -handshakes "$H2_HANDSHAKES" "${flags[@]}" "$(h2_url ramjet 725)")
	"${cmd[@]}" >"$out" 2>&1 || true
	line=$(grep '^ttfb:' "$out" || true)
	if [[ -z $line ]]; then
		warn "h3load -handshakes produced no result for $proto $mode:"
		sed 's/^/    /' "$out" >&2
		return 0
	fi
	read -r p50 p99 mean n res early < <(sed -E 's/^ttfb: p50 ([0-9.]+) p99 ([0-9.]+) mean ([0-9.]+) \(ms\), ([0-9]+) [a-z0-9]+ connections, ([0-9]+) resumed \(0-RTT ([0-9]+)\)/\1 \2 \3 \4 \5 \6/' <<<"$line")
	row h2hs 1 725 ramjet proto="$proto" phase="$mode" p50_ms:="$p50" p99_ms:="$p99" mean_ms:="$mean" \
		requests:="$n" opened:="$res" conns:="$early" cmd="$(quoted "${cmd[@]}")" config=ramjet-h2
	log "  $(printf 'ramjet %-2s %-7s ttfb p50 %s ms  p99 %s ms  mean %s ms over %s connections (%s resumed, %s 0-RTT)' \
		"$proto" "$mode" "$p50" "$p99" "$mean" "$n" "$res" "$early")"
}

# h3_idle: ramjet's RSS with H2_IDLE_CONNS h3 connections, one request
# each, held idle for H2_HOLD s (h3load -hold)
h3_idle() {
	local root out pid base peak=0 r i open
	root=$(h2_root ramjet)
	out="$WORK/h2load/idle-ramjet-h3.txt"
	sleep 1
	base=$(h2_rss "$root")
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout $((H2_HOLD + 120)) "$H3LOAD" -c"$H2_IDLE_CONNS" -hold "${H2_HOLD}s" "$(h2_url ramjet 725)")
	"${cmd[@]}" >"$out" 2>&1 &
	pid=$!
	STARTED_PIDS+=("$pid")
	for ((i = 0; i < (H2_HOLD + 120) * 4; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		r=$(h2_rss "$root")
		((r > peak)) && peak=$r
		sleep 0.25
	done
	wait "$pid" 2>/dev/null || true
	local ok fail
	open=$(awk '/^open:/ {print $2}' "$out")
	ok=$(awk '/^requests:/ {print $8}' "$out")
	fail=$(awk '/^requests:/ {print $10}' "$out")
	[[ -n $ok ]] || { warn "h3load -hold produced no result:"; sed 's/^/    /' "$out" >&2; }
	row h2rss 1 725 ramjet proto=h3 base_rss_kb:="$base" peak_rss_kb:="$peak" open:="${open:-0}" requests:="${ok:-0}" \
		failed:="${fail:-0}" tls="TLSv1.3 (QUIC) h3" cmd="$(quoted "${cmd[@]}")" config=ramjet-h2
	log "  $(printf 'ramjet h3 RSS before %7s kB, peak %7s kB with %s connections open; %s ok, %s failed' \
		"$base" "$peak" "${open:-0}" "${ok:-0}" "${fail:-0}")"
}

# ---------------------------------------------------------------- the section
h2_section() {
	H2_SKIP=$(h2_tools)
	if [[ -n $H2_SKIP ]]; then
		warn "h2 group skipped: $H2_SKIP"
		record kind=group group=h2 skip="$H2_SKIP"
		return 0
	fi
	H2LOAD=$(find_tool h2load)
	if ! h2_setup; then
		warn "h2 group skipped: $H2_SKIP"
		record kind=group group=h2 skip="$H2_SKIP"
		return 0
	fi
	record kind=group group=h2 cipher="$H2_CIPHER" listen="$H2_NGINX_LISTEN" idle_conns="$H2_IDLE_CONNS" hold="$H2_HOLD"
	# the 1,000 connections need as many descriptors in each server and in h2load
	local need=$((H2_IDLE_CONNS + 256))
	if (($(ulimit -n) < need)); then
		ulimit -n "$need" 2>/dev/null || warn "h2: ulimit -n is $(ulimit -n), below $need: the $H2_IDLE_CONNS connections may fail"
	fi
	h2_start
	local -a servers=(ramjet nginx) order
	[[ $SKIP_RAMJET == 1 ]] && servers=(nginx)
	local round page proto s
	for ((round = 1; round <= ROUNDS; round++)); do
		for page in "${H2_PAGES[@]}"; do
			for proto in "${H2_PROTOS[@]}"; do
				if [[ $proto == h3 ]]; then
					[[ -n $H3LOAD ]] || continue
					order=(ramjet) # nginx 1.22 has no QUIC
				else
					mapfile -t order < <(rotated "$round" "${servers[@]}")
				fi
				log "h2 round $round/$ROUNDS, $page $proto: ${order[*]}"
				for s in "${order[@]}"; do
					h2_measure "$round" "$page" "$proto" "$s"
					sleep 1
				done
			done
		done
	done
	if ((H2_HANDSHAKES > 0)) && [[ -n $H3LOAD ]]; then
		log "h2: time to first byte of $H2_HANDSHAKES fresh connections, h3 and h2+TLS, 1-RTT and resumed"
		for proto in h3 h2; do
			for mode in full resumed; do h3_handshakes "$proto" "$mode"; done
		done
	fi
	if ((H2_IDLE_CONNS > 0)); then
		log "h2: RSS with $H2_IDLE_CONNS h2 connections open for ${H2_HOLD} s"
		for s in "${servers[@]}"; do h2_idle "$s"; done
		[[ -n $H3LOAD ]] && h3_idle
	fi
	stop_all
}
