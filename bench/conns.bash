# bench/conns.bash — the connection groups of bench/run (sourced by it; not
# run on its own), both on the cache section's servers and 725 B page:
#   tail  wrk with 1,000 concurrent connections for each cache contender,
#         p50/p90/p99/p99.9 from a wrk Lua done() hook;
#   idle  each server's RSS with 10,000 idle HTTP/1.1 keep-alive connections
#         open (bench/idleconns), in steps.
# See bench/README.md, "Connection groups".
#
# Uses from bench/run: WORK ROOT TASKSET WRK SS SERVER_CPU LOAD_CPU DURATION
# ROUNDS QUICK CONNS RESULTS_TSV MEASURE_TAG WRK_EXTRA NGINX_WORKER_CONNS
# RAMJET_ARGS VARNISH_ARGS LABEL HIT_OK, and log warn die pick_port
# write_configs start_servers stop_all measure warm url_of rss_roots
# all_descendants to_ms.

# shellcheck disable=SC2153 # ROOT, WORK and the rest are set by bench/run
TAIL_CONNS=${BENCH_TAIL_CONNS:-1000}
TAIL_TIMEOUT=10s
IDLE_CONNS=${BENCH_IDLE_CONNS:-10000}
IDLE_HOLD=${BENCH_IDLE_HOLD:-}
IDLE_STEPS=""
VARNISH_IDLE=75 # Varnish timeout_idle here: nginx's keepalive_timeout (ramjet's idle_timeout is 120 s)
CONNS_SERVERS=()
TAIL_TSV=""
TAIL_PCTL_TSV=""
IDLE_TSV=""
IDLE_SKIP=""
CONNS_NOFILE=""

conns_validate_env() {
	[[ $TAIL_CONNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_TAIL_CONNS must be a positive integer, got $TAIL_CONNS"
	[[ $IDLE_CONNS =~ ^[1-9][0-9]*$ ]] && ((IDLE_CONNS >= 10)) || die "BENCH_IDLE_CONNS must be a number from 10, got $IDLE_CONNS"
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
# server.max_conns (10,000 by default), Varnish timeout_idle.
conns_start() { # N
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
}

# ---------------------------------------------------------------- tail
tail_section() {
	TAIL_TSV="$WORK/tail-results.tsv"
	TAIL_PCTL_TSV="$WORK/tail-pctl.tsv"
	: >"$TAIL_TSV"
	: >"$TAIL_PCTL_TSV"
	log "tail: $TAIL_CONNS connections on the 725 B page"
	conns_start "$TAIL_CONNS"
	# wrk --latency prints 50/75/90/99 only: the done() hook prints the rest (µs)
	cat >"$WORK/pctl.lua" <<'EOF'
done = function(summary, latency, requests)
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("pctl\t%g\t%d\n", p, latency:percentile(p)))
  end
  io.write(string.format("pctl\tmax\t%d\n", latency.max))
end
EOF
	local conns=$CONNS tsv=$RESULTS_TSV round c out
	local -a order
	CONNS=$TAIL_CONNS
	RESULTS_TSV=$TAIL_TSV
	MEASURE_TAG=tail-
	WRK_EXTRA=(--timeout "$TAIL_TIMEOUT" -s "$WORK/pctl.lua")
	for ((round = 1; round <= ROUNDS; round++)); do
		mapfile -t order < <(rotated "$round" "${CONNS_SERVERS[@]}")
		log "tail round $round/$ROUNDS: ${order[*]}"
		for c in "${order[@]}"; do
			measure "$round" 725 "$c"
			out="$WORK/wrk/tail-r$round-725-$c.txt"
			# round contender p50 p90 p99 p99.9 max (ms)
			awk -F'\t' -v r="$round" -v c="$c" '$1 == "pctl" {v[$2] = sprintf("%.3f", $3 / 1000)}
				END {printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r, c, v["50"] + 0, v["90"] + 0, v["99"] + 0, v["99.9"] + 0, v["max"] + 0}' "$out" >>"$TAIL_PCTL_TSV"
			log "    p90 / p99.9 / max: $(tail -n1 "$TAIL_PCTL_TSV" | awk -F'\t' '{printf "%s / %s / %s ms", $4, $6, $7}')"
			sleep 1
		done
	done
	CONNS=$conns
	RESULTS_TSV=$tsv
	MEASURE_TAG=""
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
	"$TASKSET" -c "$LOAD_CPU" timeout $((IDLE_HOLD + 240)) env GOMAXPROCS=1 "$WORK/idleconns" -addr "$addr" -path "$path" \
		-n "$IDLE_CONNS" -steps "$IDLE_STEPS" -hold "${IDLE_HOLD}s" -timeout "$((IDLE_HOLD + 180))s" -pids "${pids[*]}" \
		>"$out" 2>"$WORK/logs/idle-$c.err" || warn "idle $c: idleconns failed: $(tail -n3 "$WORK/logs/idle-$c.err" | tr '\n' ' ')"
	# contender kind values...: step CONNS OPEN RSS; hold OPEN PEAK LAST; done OPENED FAILED NOT200 CLOSED
	awk -v c="$c" -v hit="${HIT_OK[$c.725]}" '{print c "\t" $0 "\t" hit}' "$out" >>"$IDLE_TSV"
	log "  $(printf '%-22s' "${LABEL[$c]}") $(awk -F'\t' '
		$1 == "step" {s = s sprintf("%s: %.1f MiB  ", $2, $4 / 1024)}
		$1 == "hold" {h = sprintf("held: %d open, peak %.1f MiB  ", $2, $3 / 1024)}
		$1 == "done" {d = sprintf("(%d opened, %d failed, %d not 200, %d closed by the server)", $2, $3, $4, $5)}
		END {print s h d}' "$out")"
}

idle_section() {
	IDLE_TSV="$WORK/idle-results.tsv"
	: >"$IDLE_TSV"
	log "idle: building bench/idleconns"
	if ! (cd "$ROOT" && go build -o "$WORK/idleconns" ./bench/idleconns) >"$WORK/logs/idleconns-build.log" 2>&1; then
		sed 's/^/    /' "$WORK/logs/idleconns-build.log" >&2
		IDLE_SKIP="go build ./bench/idleconns failed"
		warn "idle group skipped: $IDLE_SKIP"
		return 0
	fi
	log "idle: RSS with $IDLE_CONNS idle keep-alive connections (steps $IDLE_STEPS), held ${IDLE_HOLD} s"
	conns_start "$IDLE_CONNS"
	local c
	for c in "${CONNS_SERVERS[@]}"; do
		idle_one "$c"
		sleep 1
	done
	conns_stop
}

# ---------------------------------------------------------------- report
conns_setup_note() {
	cat <<EOF
Servers: the cache section's, started afresh for the group and pinned to core $SERVER_CPU as there, with room for
the connections: descriptors (\`ulimit -n\` $CONNS_NOFILE for the servers and the load, nginx
\`worker_rlimit_nofile\`), nginx \`worker_connections\`, ramjet \`server.max_conns\` (10,000 by default) and
Varnish \`-p timeout_idle=$VARNISH_IDLE\` (its default, 5 s, would close idle connections; nginx keeps them
75 s, ramjet 120 s). Every server answers the 725 B page from its cache (nginx static: the file).
EOF
}

tail_report() {
	echo "### Tail latency at $TAIL_CONNS concurrent connections (issue 8)"
	echo
	cat <<EOF
Load: \`wrk -t1 -c$TAIL_CONNS -d$DURATION --timeout $TAIL_TIMEOUT --latency -s pctl.lua\` on the 725 B page, on core $LOAD_CPU,
each run after the hit check and a $WARMUP warm-up with the same connections; $ROUNDS round(s), the order
rotating. p50, p90, p99, p99.9 and max come from wrk's latency histogram through a Lua \`done()\` hook
(\`latency:percentile(99.9)\`); medians over the rounds, "p99.9 (worst)" the worst round's. A request
slower than $TAIL_TIMEOUT counts as a timeout (in errors), not in the percentiles.
$(conns_setup_note)

EOF
	awk -F'\t' -v L_ramjet="${LABEL[ramjet]}" -v L_static="${LABEL[static]}" -v L_fcgi="${LABEL[fcgi]}" -v L_varnish="${LABEL[varnish]}" "$AWK_STATS"'
	FNR == 1 { f++ }
	f == 1 { pc[$1, $2, "p50"] = $3; pc[$1, $2, "p90"] = $4; pc[$1, $2, "p99"] = $5; pc[$1, $2, "p999"] = $6; pc[$1, $2, "max"] = $7; next }
	{
		c = $3
		if (!(c in n)) { order[++nc] = c; n[c] = 0 }
		k = ++n[c]
		rps[c, k] = $4; cpu[c, k] = $7; rss[c, k] = $8; err[c] += $10
		q50[c, k] = pc[$1, c, "p50"]; q90[c, k] = pc[$1, c, "p90"]; q99[c, k] = pc[$1, c, "p99"]; q999[c, k] = pc[$1, c, "p999"]; qmax[c, k] = pc[$1, c, "max"]
		if ($15 + 0 > other[c]) other[c] = $15 + 0
		if ($14 + 0 > wrkb[c]) wrkb[c] = $14 + 0
		if ($12 != "hit" && $12 != "n/a") note[c] = $12
	}
	END {
		label["ramjet"] = L_ramjet; label["static"] = L_static; label["fcgi"] = L_fcgi; label["varnish"] = L_varnish
		print "| server | req/s (median) | req/s (min–max) | p50 ms | p90 ms | p99 ms | p99.9 ms | p99.9 ms (worst) | max ms (worst) | server CPU µs/req | peak RSS MiB | errors | other load on server core, max % | wrk core busy, max % | hit check |"
		print "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
		for (i = 1; i <= nc; i++) {
			c = order[i]; m = n[c]
			for (k = 1; k <= m; k++) { a[k] = rps[c, k]; b[k] = q50[c, k]; d[k] = q90[c, k]; e[k] = q99[c, k]; g[k] = q999[c, k]; h[k] = qmax[c, k]; u[k] = cpu[c, k]; r[k] = rss[c, k] }
			R[c] = median(a, m); P99[c] = median(e, m); P999[c] = median(g, m); CPU[c] = median(u, m)
			hit = (c == "static") ? "n/a (file)" : "hit"
			if (c in note) hit = "**" note[c] "**"
			printf "| %s | %.0f | %.0f–%.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.1f | %d | %d | %d | %s |\n", label[c], R[c], minv(a, m), maxv(a, m), median(b, m), median(d, m), P99[c], P999[c], maxv(g, m), maxv(h, m), CPU[c], maxv(r, m) / 1024, err[c], other[c], wrkb[c], hit
		}
		print ""
		if (!("ramjet" in n)) exit
		print "ramjet vs each contender at " '"$TAIL_CONNS"' " connections (medians; req/s above 1 = ramjet faster, latency below 1 = ramjet better; the last column names where ramjet is worse by more than 2 %):"
		print ""
		print "| ramjet vs | req/s × | p99 × | p99.9 × | CPU µs/req × | where ramjet loses |"
		print "| --- | ---: | ---: | ---: | ---: | --- |"
		for (i = 1; i <= nc; i++) {
			c = order[i]; if (c == "ramjet") continue
			rr = (R[c] > 0) ? R["ramjet"] / R[c] : 0
			pr = (P99[c] > 0) ? P99["ramjet"] / P99[c] : 0
			tr = (P999[c] > 0) ? P999["ramjet"] / P999[c] : 0
			cr = (CPU[c] > 0) ? CPU["ramjet"] / CPU[c] : 0
			lose = ""
			if (rr < 0.98) lose = lose ", req/s"
			if (pr > 1.02) lose = lose ", p99"
			if (tr > 1.02) lose = lose ", p99.9"
			if (cr > 1.02) lose = lose ", CPU/req"
			printf "| %s | %.2f | %.2f | %.2f | %.2f | %s |\n", label[c], rr, pr, tr, cr, (lose == "" ? "–" : "**" substr(lose, 3) "**")
		}
		print ""
	}' "$TAIL_PCTL_TSV" "$TAIL_TSV"
}

idle_report() {
	echo "### RSS at $IDLE_CONNS idle keep-alive connections (issue 8)"
	echo
	if [[ -n $IDLE_SKIP ]]; then
		echo "_skipped: ${IDLE_SKIP}._"
		echo
		return 0
	fi
	cat <<EOF
Each server in turn, after the hit check: \`bench/idleconns\` (Go, on core $LOAD_CPU, \`GOMAXPROCS=1\`) opens $IDLE_CONNS
HTTP/1.1 connections to it on 127.0.0.1, 64 at a time, each sending one request for the 725 B page and reading the
whole response, then leaves them open and idle; it reads the server's RSS (VmRSS summed over its processes: nginx
master and worker, Varnish manager and child, ramjet; php-fpm, the caches' shared origin, is not counted) before
the first connection, and 1 s after reaching each step; then holds all $IDLE_CONNS open for ${IDLE_HOLD} s, sampling
every 0.25 s ("peak while held"). "KiB per connection" is (RSS held at the end − RSS at 0) ÷ connections open.
"closed by the server" counts connections the server closed while they were idle (should be 0). One pass per server.
$(conns_setup_note)

EOF
	local steps
	steps=$(awk -F'\t' '$2 == "step" && !seen[$3]++ {printf "%s ", $3}' "$IDLE_TSV")
	awk -F'\t' -v steps="$steps" -v L_ramjet="${LABEL[ramjet]}" -v L_static="${LABEL[static]}" -v L_fcgi="${LABEL[fcgi]}" -v L_varnish="${LABEL[varnish]}" '
	{
		c = $1
		if (!(c in seen)) { order[++nc] = c; seen[c] = 1 }
		if ($2 == "step") { rss[c, $3] = $5; open[c, $3] = $4 }
		if ($2 == "hold") { hopen[c] = $3; peak[c] = $4; last[c] = $5 }
		if ($2 == "done") { opened[c] = $3; failed[c] = $4; not200[c] = $5; closed[c] = $6 }
		hit[c] = $NF
	}
	END {
		label["ramjet"] = L_ramjet; label["static"] = L_static; label["fcgi"] = L_fcgi; label["varnish"] = L_varnish
		ns = split(steps, st, " ")
		h = "| server"; s = "| ---"
		for (i = 1; i <= ns; i++) { h = h sprintf(" | RSS MiB at %d conns", st[i]); s = s " | ---:" }
		print h " | peak RSS MiB while held | growth MiB | KiB per connection | open at the end | failed | not 200 | closed by the server | hit check |"
		print s " | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
		top = st[ns]
		for (i = 1; i <= nc; i++) {
			c = order[i]
			line = "| " label[c]
			for (j = 1; j <= ns; j++) line = line sprintf(" | %s", ((c, st[j]) in rss) ? sprintf("%.1f", rss[c, st[j]] / 1024) : "–")
			g[c] = last[c] - rss[c, 0]
			kib = (hopen[c] > 0) ? sprintf("%.1f", g[c] / hopen[c]) : "–"
			chk = (hit[c] == "hit" || hit[c] == "n/a") ? (c == "static" ? "n/a (file)" : "hit") : "**" hit[c] "**"
			printf "%s | %.1f | %.1f | %s | %d | %d | %d | %d | %s |\n", line, peak[c] / 1024, g[c] / 1024, kib, hopen[c], failed[c], not200[c], closed[c], chk
		}
		print ""
		if (!("ramjet" in seen)) exit
		print "ramjet ÷ each server (below 1 = ramjet uses less; the last column names where it uses more by more than 2 %):"
		print ""
		print "| ramjet vs | RSS held × | growth × | where ramjet loses |"
		print "| --- | ---: | ---: | --- |"
		for (i = 1; i <= nc; i++) {
			c = order[i]; if (c == "ramjet") continue
			a = (last[c] > 0) ? last["ramjet"] / last[c] : 0
			b = (g[c] > 0) ? g["ramjet"] / g[c] : 0
			lose = ""
			if (a > 1.02) lose = lose ", RSS held"
			if (b > 1.02) lose = lose ", growth"
			printf "| %s | %.2f | %.2f | %s |\n", label[c], a, b, (lose == "" ? "–" : "**" substr(lose, 3) "**")
		}
		print ""
	}' "$IDLE_TSV"
}
