# bench/conns.bash — the connection groups of bench/run (sourced by it; not
# run on its own), both on the cache section's servers and 725 B page:
#   tail  wrk with 1,000 concurrent connections for each cache contender,
#         p50/p90/p99/p99.9 from a wrk Lua done() hook;
#   idle  each server's RSS with 10,000 idle HTTP/1.1 keep-alive connections
#         open (bench/idleconns), in steps.
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
	P_STATIC=$(pick_port)
	P_FCGI=$(pick_port)
	P_ORIGIN=$(pick_port)
	P_VARNISH=$(pick_port)
	P_RAMJET=$(pick_port)
	P_ADMIN=$(pick_port)
	write_configs
	start_servers
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
	conns_start "$TAIL_CONNS" "$TAIL_CONNS"
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
	idle_records "$c" "$out" "$(quoted "${cmd[@]}")"
	log "  $(printf '%-8s' "$c") $(awk -F'\t' '
		$1 == "step" {s = s sprintf("%s: %.1f MiB  ", $2, $4 / 1024)}
		$1 == "hold" {h = sprintf("held: %d open, peak %.1f MiB  ", $2, $3 / 1024)}
		$1 == "done" {d = sprintf("(%d opened, %d failed, %d not 200, %d closed by the server)", $2, $3, $4, $5)}
		END {print s h d}' "$out")"
}

# idle_records CONTENDER OUT CMD: idleconns' lines as rows, one per event:
# step CONNS OPEN RSS; hold OPEN PEAK LAST; done OPENED FAILED NOT200 CLOSED
idle_records() {
	local c=$1 out=$2 cmdline=$3 kind a b e f
	local -a common=(check="${HIT_OK[$c.725]}" cmd="$cmdline" config="$(config_of "$c")")
	while IFS=$'\t' read -r kind a b e f; do
		case $kind in
		step) row idle 1 725 "$c" phase=step conns:="$a" open:="$b" rss_kb:="$e" "${common[@]}" ;;
		hold) row idle 1 725 "$c" phase=hold open:="$a" peak_rss_kb:="$b" last_rss_kb:="$e" "${common[@]}" ;;
		done) row idle 1 725 "$c" phase=done opened:="$a" failed:="$b" not200:="$e" closed:="$f" "${common[@]}" ;;
		esac
	done <"$out"
}

idle_section() {
	log "idle: building bench/idleconns"
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
	conns_stop
}
