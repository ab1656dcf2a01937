# bench/phptools.bash — the phptools group of bench/run (sourced by it; not
# run on its own): the PHP section's servers (ramjet docroot mode against
# nginx + php-fpm, nothing cached) on hello.php and phpinfo.php under the
# seeds' other load tools, ApacheBench (ab -c10 -n1000) and siege (-c25
# -r50). See bench/README.md, "ab and siege".
#
# Uses from bench/run and bench/php.bash: WORK TASKSET SERVER_CPU LOAD_CPU
# ROUNDS CLK_TCK SKIP_RAMJET PHP_PAGES PHP_CONTENDERS PHP_LABEL PHP_CHECK
# PHP_WORKERS AWK_STATS, and log warn find_tool tree_ticks php_url php_check
# php_settle php_cpu_roots.

# shellcheck disable=SC2153 # WORK and the rest are set by bench/run
PT_TOOLS=(ab siege)
PT_PAGES=()
PT_TSV=""
PT_SKIP=""
AB=""
SIEGE=""
declare -A PT_CMD=([ab]="ab -l -c10 -n1000" [siege]="siege -b -c25 -r50")

phptools_validate_env() {
	local p
	for p in "${PHP_PAGES[@]}"; do
		[[ $p == hello || $p == phpinfo ]] && PT_PAGES+=("$p")
	done
	((${#PT_PAGES[@]})) || PT_SKIP="BENCH_PHP_PAGES selects neither hello nor phpinfo"
}

# phptools_siegerc: siege's settings, in the work dir (siege -R), with a
# HOME of its own there so it writes nothing into the real one: no log, no
# HTML parsing (no follow-up requests for a page's images), JSON results.
# The rest is siege 4's default, as the seeds ran it: HTTP/1.1, a new
# connection per transaction (connection = close).
phptools_siegerc() {
	mkdir -p "$WORK/siege-home/.siege"
	cat >"$WORK/siegerc" <<'EOF'
verbose = false
color = off
quiet = false
json_output = true
show-logfile = false
logging = false
parser = false
protocol = HTTP/1.1
connection = close
accept-encoding = gzip, deflate
limit = 255
internet = false
EOF
	# siege writes a template there (and says so on stdout) when it finds none
	cp "$WORK/siegerc" "$WORK/siege-home/.siege/siege.conf"
}

# ---------------------------------------------------------------- measuring
# phptools_result TOOL OUT -> "rps mean p50 p99 max reqs failed" (ms; "–"
# where the tool does not say)
phptools_result() {
	case $1 in
	ab)
		awk '/^Requests per second:/ {rps = $4}
			/^Time per request:/ && !mean {mean = $4}
			/^Complete requests:/ {n = $3}
			/^Failed requests:/ {f += $3}
			/^Non-2xx responses:/ {f += $3}
			$1 == "50%" {p50 = $2}
			$1 == "99%" {p99 = $2}
			$1 == "100%" {mx = $2}
			END {if (n == "") print "0 0 – – 0 0 0"; else printf "%s %s %s %s %s %s %d\n", rps, mean, p50, p99, mx, n, f}' "$2"
		;;
	siege)
		# the JSON object, from its first line; the mean from the average
		# concurrency ÷ the rate (Little's law): response_time has 10 ms steps
		sed -n '/^{/,$p' "$2" | jq -r '"\(.transaction_rate) \(if .transaction_rate > 0 then .concurrency / .transaction_rate * 1000 else 0 end) – – \(.longest_transaction * 1000) \(.transactions) \(.failed_transactions)"' 2>/dev/null ||
			echo "0 0 – – 0 0 0"
		;;
	esac
}

# phptools_measure ROUND PAGE TOOL CONTENDER
phptools_measure() {
	local round=$1 page=$2 tool=$3 c=$4 url out t0 t1 chk
	local -a roots cmd
	url=$(php_url "$c" "$page")
	out="$WORK/phptools/r$round-$page-$tool-$c.txt"
	read -ra roots <<<"$(php_cpu_roots "$c")"
	if [[ $tool == ab ]]; then
		cmd=("$AB" -l -c10 -n1000 "$url")
	else
		cmd=(env HOME="$WORK/siege-home" "$SIEGE" -R "$WORK/siegerc" -b -c25 -r50 "$url")
	fi
	php_settle "$c"
	php_check "$c" "$page"
	t0=$(tree_ticks "${roots[@]}")
	"$TASKSET" -c "$LOAD_CPU" timeout 120 "${cmd[@]}" >"$out" 2>"$out.err" || warn "$tool $c $page: exit status $? ($(tail -n2 "$out.err" | tr '\n' ' '))"
	t1=$(tree_ticks "${roots[@]}")
	local rps mean p50 p99 mx n f cpu_us
	read -r rps mean p50 p99 mx n f <<<"$(phptools_result "$tool" "$out")"
	[[ ${n:-} =~ ^[0-9]+$ && ${f:-} =~ ^[0-9]+$ ]] || { rps=0 mean=0 p50=– p99=– mx=0 n=0 f=0; }
	mean=$(awk -v v="$mean" 'BEGIN {printf "%.3f", v}')
	if ((n == 0)); then
		warn "$tool produced no result for $c $page:"
		sed 's/^/    /' "$out" "$out.err" >&2
	fi
	cpu_us=$(awk -v d=$((t1 - t0)) -v hz="$CLK_TCK" -v n="$n" 'BEGIN {printf "%.2f", (n > 0) ? d * 1e6 / hz / n : 0}')
	chk=${PHP_CHECK[$c.$page]}
	# round page tool contender rps mean p50 p99 max cpu requests failed check
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
		"$round" "$page" "$tool" "$c" "$rps" "$mean" "$p50" "$p99" "$mx" "$cpu_us" "$n" "$f" "$chk" >>"$PT_TSV"
	log "  $(printf '%-30s %-8s %-5s %9s req/s  mean %7s ms  p50 %4s ms  p99 %4s ms  max %6s ms  %7s us/req  %s requests  %s failed  [%s]' \
		"${PHP_LABEL[$c]}" "$page" "$tool" "$rps" "$mean" "$p50" "$p99" "$mx" "$cpu_us" "$n" "$f" "$chk")"
}

# phptools_runs: on the PHP section's running servers; each contender and
# page gets an unmeasured ab run first (the PHP section's wrk warm-up may
# not have run)
phptools_runs() {
	PT_TSV="$WORK/phptools-results.tsv"
	: >"$PT_TSV"
	[[ -z $PT_SKIP ]] || { warn "phptools group skipped: $PT_SKIP"; return 0; }
	AB=$(find_tool ab)
	SIEGE=$(find_tool siege)
	mkdir -p "$WORK/phptools"
	phptools_siegerc
	local round page tool c
	local -a order
	for page in "${PT_PAGES[@]}"; do
		for c in "${PHP_CONTENDERS[@]}"; do
			"$TASKSET" -c "$LOAD_CPU" timeout 60 "$AB" -l -c10 -n200 "$(php_url "$c" "$page")" >/dev/null 2>&1 || true
		done
	done
	for ((round = 1; round <= ROUNDS; round++)); do
		for page in "${PT_PAGES[@]}"; do
			for tool in "${PT_TOOLS[@]}"; do
				mapfile -t order < <(rotated "$round" "${PHP_CONTENDERS[@]}")
				log "phptools round $round/$ROUNDS, $page, ${PT_CMD[$tool]}: ${order[*]}"
				for c in "${order[@]}"; do
					phptools_measure "$round" "$page" "$tool" "$c"
					sleep 1
				done
			done
		done
	done
}

# ---------------------------------------------------------------- report
phptools_report() {
	echo "### PHP with ab and siege: ramjet docroot against nginx + php-fpm (issue 8)"
	echo
	if [[ -n $PT_SKIP ]]; then
		echo "_skipped: ${PT_SKIP}._"
		echo
		return 0
	fi
	cat <<EOF
The PHP section's servers and settings (nothing cached, $PHP_WORKERS PHP workers on each side, servers and PHP on
core $SERVER_CPU), under the seeds' other load tools on core $LOAD_CPU, each run after the PHP section's checks
(status, body, no cache header, no hit):

- ab (ApacheBench, Debian's apache2-utils): \`${PT_CMD[ab]}\`: 10 concurrent, 1,000 requests, HTTP/1.0, a new
  connection per request (no \`-k\`). \`-l\` accepts a varying body length (phpinfo's changes with the request), so
  only real failures count. ab's percentiles are whole milliseconds.
- siege (4.x, Debian's siege): \`${PT_CMD[siege]}\` (25 users × 50 repetitions = 1,250 requests, no delay) with its
  own siegerc in the work dir: logging and HTML parsing off, JSON output, otherwise siege's defaults (HTTP/1.1, a
  new connection per request). siege gives no percentiles, and its times come in steps of 10 ms: "mean" is its
  average concurrency ÷ its transaction rate (Little's law, finer than its own response time), "max" its longest
  transaction; its elapsed time, so its req/s, is to 10 ms too.

Both runs are short (well under a second on hello.php): trust the medians over $ROUNDS round(s) and the CPU
column, which counts the server's process tree (ramjet and its php-cgi workers; nginx and php-fpm) over the run ÷
requests, as in the PHP section. An unmeasured \`ab -c10 -n200\` per page and server runs first.

EOF
	awk -F'\t' -v L_rjphp="${PHP_LABEL[rjphp]}" -v L_fpm="${PHP_LABEL[fpm]}" -v pages="${PT_PAGES[*]}" -v tools="${PT_TOOLS[*]}" \
		-v C_ab="${PT_CMD[ab]}" -v C_siege="${PT_CMD[siege]}" "$AWK_STATS"'
	function num(v) { return v ~ /^[0-9.]+$/ }
	{
		key = $2 SUBSEP $3 SUBSEP $4
		k = ++n[key]
		rps[key, k] = $5; mean[key, k] = $6; p50[key, k] = $7; p99[key, k] = $8; mx[key, k] = $9; cpu[key, k] = $10
		reqs[key] += $11; fail[key] += $12
		if ($13 != "ok") note[key] = $13
	}
	END {
		label["rjphp"] = L_rjphp; label["fpm"] = L_fpm; cmd["ab"] = C_ab; cmd["siege"] = C_siege
		np = split(pages, pl, " "); nt = split(tools, tl, " "); split("rjphp fpm", cs, " ")
		print "| page | load | server | req/s (median) | req/s (min–max) | mean ms | p50 ms | p99 ms | max ms (worst) | server CPU µs/req | requests (all rounds) | failed | check |"
		print "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
		for (p = 1; p <= np; p++) for (t = 1; t <= nt; t++) for (i = 1; i <= 2; i++) {
			key = pl[p] SUBSEP tl[t] SUBSEP cs[i]
			if (!(key in n)) continue
			m = n[key]
			for (k = 1; k <= m; k++) { a[k] = rps[key, k]; b[k] = mean[key, k]; d[k] = p50[key, k]; e[k] = p99[key, k]; f[k] = mx[key, k]; g[k] = cpu[key, k] }
			R[key] = median(a, m); M[key] = median(b, m); C[key] = median(g, m)
			P99[key] = num(e[1]) ? median(e, m) : "–"
			chk = (key in note) ? "**" note[key] "**" : "ok"
			printf "| %s.php | `%s` | %s | %.0f | %.0f–%.0f | %.1f | %s | %s | %.0f | %.1f | %d | %d | %s |\n", pl[p], cmd[tl[t]], label[cs[i]], R[key], minv(a, m), maxv(a, m), M[key], (num(d[1]) ? median(d, m) : "–"), P99[key], maxv(f, m), C[key], reqs[key], fail[key], chk
		}
		print ""
		print "ramjet docroot ÷ nginx + php-fpm (medians; req/s above 1 = ramjet faster, latency and CPU/req below 1 = ramjet better; the last column names where ramjet is worse by more than 2 %):"
		print ""
		print "| page | load | req/s × | mean × | p99 × | CPU µs/req × | where ramjet loses |"
		print "| --- | --- | ---: | ---: | ---: | ---: | --- |"
		for (p = 1; p <= np; p++) for (t = 1; t <= nt; t++) {
			r = pl[p] SUBSEP tl[t] SUBSEP "rjphp"; x = pl[p] SUBSEP tl[t] SUBSEP "fpm"
			if (!(r in n) || !(x in n)) continue
			rr = (R[x] > 0) ? R[r] / R[x] : 0
			mr = (M[x] > 0) ? M[r] / M[x] : 0
			pr = (num(P99[x]) && P99[x] > 0) ? sprintf("%.2f", P99[r] / P99[x]) : "–"
			cr = (C[x] > 0) ? C[r] / C[x] : 0
			lose = ""
			if (rr < 0.98) lose = lose ", req/s"
			if (mr > 1.02) lose = lose ", mean"
			if (pr != "–" && pr + 0 > 1.02) lose = lose ", p99"
			if (cr > 1.02) lose = lose ", CPU/req"
			printf "| %s.php | `%s` | %.2f | %.2f | %s | %.2f | %s |\n", pl[p], cmd[tl[t]], rr, mr, pr, cr, (lose == "" ? "–" : "**" substr(lose, 3) "**")
		}
		print ""
	}' "$PT_TSV"
}
