# bench/conns.bash — the connection groups of bench/run (sourced by it; not
# run on its own), both on the cache section's servers and 725 B page:
#   tail  wrk with 1,000 concurrent connections for each cache contender,
#         p50/p90/p99/p99.9 from a wrk Lua done() hook;
#   idle  each server's RSS with 10,000 idle HTTP/1.1 keep-alive connections
#         open (bench/idleconns), in steps; then ramjet's TLS listener and
#         nginx static over TLS (http2, the same certificate) with 10,000
#         idle TLS + HTTP/2 connections (idleconns -proto h2), one GET each.
# See bench/README.md, "Connection groups".
#
# Uses from bench/run: WORK ROOT TASKSET WRK SS SERVER_CPU LOAD_CPU DURATION
# ROUNDS QUICK CONNS MEASURE_GROUP MEASURE_TAG WRK_EXTRA MEASURE_EXTRA
# NGINX_WORKER_CONNS RAMJET_ARGS VARNISH_ARGS VARNISH_THREADS_MIN
# CONFIG_GROUP HIT_OK, and log warn die record row quoted pick_port
# write_configs start_servers stop_all measure warm url_of rss_roots
# all_descendants to_ms.

# shellcheck disable=SC2153,SC2034 # ROOT, WORK and the rest are set by bench/run; what this file sets, bench/run and its other parts read
TAIL_CONNS=${BENCH_TAIL_CONNS:-1000}
TAIL_TIMEOUT=10s
IDLE_CONNS=${BENCH_IDLE_CONNS:-10000}
IDLE_HOLD=${BENCH_IDLE_HOLD:-}
IDLE_STEPS=""
VARNISH_IDLE=75 # Varnish timeout_idle here: nginx's keepalive_timeout (ramjet's idle_timeout is 120 s)
CONNS_SERVERS=()
IDLE_SKIP=""
CONNS_NOFILE=""

conns_validate_env() {
	[[ $TAIL_CONNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_TAIL_CONNS must be a positive integer, got $TAIL_CONNS"
	if ! [[ $IDLE_CONNS =~ ^[1-9][0-9]*$ ]] || ((IDLE_CONNS < 10)); then
		die "BENCH_IDLE_CONNS must be a number from 10, got $IDLE_CONNS"
	fi
	((IDLE_CONNS <= 100000)) || die "BENCH_IDLE_CONNS: at most 100000, got $IDLE_CONNS"
	[[ -z $IDLE_HOLD ]] || [[ $IDLE_HOLD =~ ^[1-9][0-9]*$ ]] || die "BENCH_IDLE_HOLD must be a positive number of seconds, got $IDLE_HOLD"
	if [[ -z $IDLE_HOLD ]]; then
		if ((QUICK)); then IDLE_HOLD=5; else IDLE_HOLD=10; fi
	fi
	IDLE_STEPS="$((IDLE_CONNS / 10)),$((IDLE_CONNS / 4)),$((IDLE_CONNS / 2))"
}

# conns_start: the cache section's servers, started afresh and sized for
# N connections: descriptors (this shell's limit, inherited by varnishd and
# ramjet; nginx's worker_rlimit_nofile), nginx worker_connections, ramjet
# server.max_conns (10,000 by default), Varnish timeout_idle and the worker
# threads made before the load (THREADS: one per active connection).
conns_start() { # N THREADS
	local n=$1 nofile
	nofile=$((n + 4096))
	if (($(ulimit -n) < nofile)); then
		# the hard limit too where allowed (root with CAP_SYS_RESOURCE), else the soft one up to it
		ulimit -n "$nofile" 2>/dev/null || ulimit -Sn "$(ulimit -Hn)" 2>/dev/null || true
		(($(ulimit -n) >= n + 2048)) || warn "ulimit -n is $(ulimit -n), below $((n + 2048)): the $n connections may fail"
	fi
	CONNS_NOFILE=$(ulimit -n)
	NGINX_WORKER_CONNS=$((n + 1024))
	printf 'server:\n  max_conns: %d\n' $((n + 1024)) >"$WORK/ramjet-conns.yaml"
	RAMJET_ARGS=(--config "$WORK/ramjet-conns.yaml")
	VARNISH_ARGS=(-p "timeout_idle=$VARNISH_IDLE")
	VARNISH_THREADS_MIN=$2
	start_servers_anew
}

conns_stop() {
	stop_all
	NGINX_WORKER_CONNS=1024
	RAMJET_ARGS=()
	VARNISH_ARGS=()
	VARNISH_THREADS_MIN=100
	CONFIG_GROUP=cache
}

# ---------------------------------------------------------------- tail
# tail_pctl OUT: the row's percentiles from the pctl.lua done() hook (µs):
# wrk --latency prints 50/75/90/99 only
tail_pctl() {
	awk -F'\t' '$1 == "pctl" {v[$2] = sprintf("%.3f", $3 / 1000)}
		END {printf "p50_ms:=%s\np90_ms:=%s\np99_ms:=%s\np999_ms:=%s\nmax_ms:=%s\n", v["50"] + 0, v["90"] + 0, v["99"] + 0, v["99.9"] + 0, v["max"] + 0}' "$1"
}

tail_section() {
	log "tail: $TAIL_CONNS connections on the 725 B page"
	CONFIG_GROUP="tail"
	# a Varnish thread per connection, and never fewer than its default
	# thread_pool_min (100): at 1 or 5 connections a tuned Varnish keeps
	# that, and varnishd refuses one under 5
	conns_start "$TAIL_CONNS" "$((TAIL_CONNS < 100 ? 100 : TAIL_CONNS))"
	record kind=group group=tail conns="$TAIL_CONNS" timeout="$TAIL_TIMEOUT" varnish_idle="$VARNISH_IDLE" nofile="$CONNS_NOFILE"
	cat >"$WORK/pctl.lua" <<'EOF'
done = function(summary, latency, requests)
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("pctl\t%g\t%d\n", p, latency:percentile(p)))
  end
  io.write(string.format("pctl\tmax\t%d\n", latency.max))
end
EOF
	local conns=$CONNS round c
	local -a order
	CONNS=$TAIL_CONNS
	MEASURE_GROUP="tail"
	MEASURE_TAG=tail-
	MEASURE_EXTRA=tail_pctl
	WRK_EXTRA=(--timeout "$TAIL_TIMEOUT" -s "$WORK/pctl.lua")
	for ((round = 1; round <= ROUNDS; round++)); do
		mapfile -t order < <(rotated "$round" "${CONNS_SERVERS[@]}")
		log "tail round $round/$ROUNDS: ${order[*]}"
		for c in "${order[@]}"; do
			measure "$round" 725 "$c"
			log "    p90 / p99.9 / max: $(tail_pctl "$WORK/wrk/tail-r$round-725-$c.txt" | sed -n 's/^p90_ms:=//p; s/^p999_ms:=//p; s/^max_ms:=//p' | paste -sd/ -) ms"
			sleep 1
		done
	done
	CONNS=$conns
	MEASURE_GROUP=cache
	MEASURE_TAG=""
	MEASURE_EXTRA=""
	WRK_EXTRA=()
	conns_stop
}

# ---------------------------------------------------------------- idle
# idle_one CONTENDER: IDLE_CONNS keep-alive connections, each after one
# request of the 725 B page (a hit), held IDLE_HOLD s; the server's RSS at
# 0, at each step and while held
idle_one() {
	local c=$1 url addr path out
	local -a pids
	url=$(url_of "$c" 725)
	addr=${url#http://}
	path=/${addr#*/}
	addr=${addr%%/*}
	warm "$c" 725
	# shellcheck disable=SC2046
	mapfile -t pids < <(all_descendants $(rss_roots "$c"))
	out="$WORK/idle-$c.txt"
	sleep 1
	local -a cmd=("$TASKSET" -c "$LOAD_CPU" timeout $((IDLE_HOLD + 240)) env GOMAXPROCS=1 "$WORK/idleconns" -addr "$addr"
		-path "$path" -n "$IDLE_CONNS" -steps "$IDLE_STEPS" -hold "${IDLE_HOLD}s" -timeout "$((IDLE_HOLD + 180))s" -pids "${pids[*]}")
	"${cmd[@]}" >"$out" 2>"$WORK/logs/idle-$c.err" || warn "idle $c: idleconns failed: $(tail -n3 "$WORK/logs/idle-$c.err" | tr '\n' ' ')"
	idle_records idle "$c" "$out" check="${HIT_OK[$c.725]}" cmd="$(quoted "${cmd[@]}")" config="$(config_of "$c")"
	log "  $(printf '%-8s' "$c") $(idle_summary "$out")"
}

# idle_records GROUP CONTENDER OUT FIELDS...: idleconns' lines as rows of
# GROUP, one per event, each with FIELDS: step CONNS OPEN RSS; hold OPEN
# PEAK LAST; done OPENED FAILED NOT200 CLOSED
idle_records() {
	local g=$1 c=$2 out=$3 kind a b e f
	shift 3
	while IFS=$'\t' read -r kind a b e f; do
		case $kind in
		step) row "$g" 1 725 "$c" phase=step conns:="$a" open:="$b" rss_kb:="$e" "$@" ;;
		hold) row "$g" 1 725 "$c" phase=hold open:="$a" peak_rss_kb:="$b" last_rss_kb:="$e" "$@" ;;
		done) row "$g" 1 725 "$c" phase=done opened:="$a" failed:="$b" not200:="$e" closed:="$f" "$@" ;;
		esac
	done <"$out"
}

# idle_summary OUT: idleconns' lines as one log line
idle_summary() {
	awk -F'\t' '
		$1 == "step" {s = s sprintf("%s: %.1f MiB  ", $2, $4 / 1024)}
		$1 == "hold" {h = sprintf("held: %d open, peak %.1f MiB  ", $2, $3 / 1024)}
		$1 == "done" {d = sprintf("(%d opened, %d failed, %d not 200, %d closed by the server)", $2, $3, $4, $5)}
		END {print s h d}' "$1"
}

idle_section() {
	log "idle: building bench/idleconns"
	mkdir -p "$WORK/logs" # with BENCH_RAMJET_BIN nothing made it yet
	if ! (cd "$ROOT" && go build -o "$WORK/idleconns" ./bench/idleconns) >"$WORK/logs/idleconns-build.log" 2>&1; then
		sed 's/^/    /' "$WORK/logs/idleconns-build.log" >&2
		IDLE_SKIP="go build ./bench/idleconns failed"
		warn "idle group skipped: $IDLE_SKIP"
		record kind=group group=idle conns="$IDLE_CONNS" skip="$IDLE_SKIP"
		return 0
	fi
	log "idle: RSS with $IDLE_CONNS idle keep-alive connections (steps $IDLE_STEPS), held ${IDLE_HOLD} s"
	CONFIG_GROUP=idle
	conns_start "$IDLE_CONNS" 100 # opened 64 at a time, then idle: Varnish's default threads
	record kind=group group=idle conns="$IDLE_CONNS" hold="$IDLE_HOLD" varnish_idle="$VARNISH_IDLE" nofile="$CONNS_NOFILE"
	local c
	for c in "${CONNS_SERVERS[@]}"; do
		idle_one "$c"
		sleep 1
	done
	idle_tls_section
	conns_stop
}

# idle_tls_section: the TLS + HTTP/2 row. nginx static gets a TLS server
# (TLS 1.3, http2, a shared session cache, as in the h2 group) in a process
# of its own, ramjet a second process with tls.listen, both on one
# self-signed P-256 certificate; each is started after the plain row ran.
idle_tls_section() {
	local want=" ${CONNS_SERVERS[*]} " openssl listen nv
	[[ $want == *" ramjet "* || $want == *" static "* ]] || return 0
	openssl=$(find_tool openssl) || { warn "idle TLS row skipped: no openssl"; return 0; }
	mkdir -p "$WORK/tls"
	"$openssl" req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 -subj /CN=bench.test \
		-addext 'subjectAltName=DNS:bench.test,IP:127.0.0.1' -keyout "$WORK/tls/idle.key" -out "$WORK/tls/idle.crt" \
		>"$WORK/logs/openssl-idle.log" 2>&1 || { warn "idle TLS row skipped: openssl could not make the certificate"; return 0; }
	chmod 644 "$WORK/tls/idle.key" # nginx's worker runs as the invoking user
	P_IDLE_TLS_NGINX=$(pick_port)
	P_IDLE_TLS_RAMJET=$(pick_port)
	nv=$("$NGINX" -v 2>&1 | sed -n 's|.*nginx/\([0-9.]*\).*|\1|p')
	if printf '%s\n%s\n' 1.25.1 "$nv" | sort -V -C; then
		listen="listen 127.0.0.1:$P_IDLE_TLS_NGINX ssl; http2 on;"
	else
		listen="listen 127.0.0.1:$P_IDLE_TLS_NGINX ssl http2;"
	fi
	{
		nginx_common idletls
		cat <<EOF
    open_file_cache max=1000 inactive=60s;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 1h;
    server {
        $listen
        ssl_certificate $WORK/tls/idle.crt;
        ssl_certificate_key $WORK/tls/idle.key;
        ssl_protocols TLSv1.3;
        root $WORK/www;
        location / { }
    }
}
EOF
	} >"$WORK/nginx-idletls.conf"
	cp "$WORK/ramjet-conns.yaml" "$WORK/ramjet-idletls.yaml"
	printf 'tls:\n  listen: "127.0.0.1:%s"\n  cert: %s\n  key: %s\n  ocsp: false\n' \
		"$P_IDLE_TLS_RAMJET" "$WORK/tls/idle.crt" "$WORK/tls/idle.key" >>"$WORK/ramjet-idletls.yaml"
	config_record nginx-idletls "$WORK/nginx-idletls.conf" nginx "nginx static over TLS (idle TLS + HTTP/2 row)" \
		"\`worker_processes 1\`, \`$listen\`, TLS 1.3, \`ssl_session_cache shared:SSL:10m\`, \`worker_connections $NGINX_WORKER_CONNS\`" \
		"the h2 group's nginx, sized for the connections"
	config_record ramjet-idletls "$WORK/ramjet-idletls.yaml" yaml "ramjet with its TLS listener (idle TLS + HTTP/2 row)" \
		"\`tls.listen\`, the same certificate, \`server.max_conns\` for the connections, \`GOMAXPROCS=1\`" \
		"ramjet's defaults with its TLS listener"
	record kind=group group=idletls conns="$IDLE_CONNS" hold="$IDLE_HOLD" nofile="$CONNS_NOFILE"
	local c port root path out url
	local -a pids cmd
	for c in ramjet static; do
		[[ $want == *" $c "* ]] || continue
		if [[ $c == static ]]; then
			start_nginx idletls "$P_IDLE_TLS_NGINX"
			port=$P_IDLE_TLS_NGINX root=${ROOTPID[nginx-idletls]} path=/page725.html
		else
			start_bg ramjet-idletls "$WORK/logs/ramjet-idletls.log" env GOMAXPROCS=1 "$WORK/ramjet" serve --config "$WORK/ramjet-idletls.yaml" \
				--listen "127.0.0.1:$(pick_port)" --admin "127.0.0.1:$(pick_port)" --origin "http://127.0.0.1:$P_ORIGIN"
			wait_listen ramjet-idletls "${ROOTPID[ramjet-idletls]}" "$P_IDLE_TLS_RAMJET" "$WORK/logs/ramjet-idletls.log"
			port=$P_IDLE_TLS_RAMJET root=${ROOTPID[ramjet-idletls]} path=/page725.php
		fi
		url="https://127.0.0.1:$port$path"
		{ curl -sk -o /dev/null --http2 "$url" && curl -sk -o /dev/null --http2 "$url"; } || warn "idle TLS $c: $url does not answer"
		mapfile -t pids < <(all_descendants "$root")
		out="$WORK/idle-tls-$c.txt"
		sleep 1
		cmd=("$TASKSET" -c "$LOAD_CPU" timeout $((IDLE_HOLD + 240)) env GOMAXPROCS=1 "$WORK/idleconns" -proto h2
			-addr "127.0.0.1:$port" -path "$path" -n "$IDLE_CONNS" -steps "$IDLE_STEPS" -hold "${IDLE_HOLD}s"
			-timeout "$((IDLE_HOLD + 180))s" -pids "${pids[*]}")
		"${cmd[@]}" >"$out" 2>"$WORK/logs/idle-tls-$c.err" || warn "idle TLS $c: idleconns failed: $(tail -n3 "$WORK/logs/idle-tls-$c.err" | tr '\n' ' ')"
		# a group of its own: bench/report renders its table after the idle one (no chart)
		idle_records idletls "$c" "$out" proto=h2 cmd="$(quoted "${cmd[@]}")" \
			config="$([[ $c == ramjet ]] && echo ramjet-idletls || echo nginx-idletls)"
		log "  $(printf '%-8s TLS+h2 ' "$c") $(idle_summary "$out")"
		sleep 1
	done
}
